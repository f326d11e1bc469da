set(TERN_ARCH cortex-m)
set(TERN_PORT_SOURCES
  ${CMAKE_SOURCE_DIR}/arch/cortex-m/startup.c
  ${CMAKE_SOURCE_DIR}/arch/cortex-m/port_cm.c
  ${CMAKE_SOURCE_DIR}/boards/lm3s6965evb/board.c)
set(TERN_CPU_FLAGS -mcpu=cortex-m3 -mthumb)
set(TERN_LINK_FLAGS -T${CMAKE_SOURCE_DIR}/boards/lm3s6965evb/lm3s6965evb.ld
  -L${CMAKE_SOURCE_DIR}/arch/cortex-m --specs=nano.specs)
set(TERN_LINK_LIBS c gcc)
include(${CMAKE_SOURCE_DIR}/cmake/target.cmake)
