set(TERN_ARCH cortex-m)
set(TERN_PORT_SOURCES
  ${CMAKE_SOURCE_DIR}/arch/cortex-m/startup.c
  ${CMAKE_SOURCE_DIR}/arch/cortex-m/port_cm.c
  ${CMAKE_SOURCE_DIR}/boards/lm3s6965evb/board.c)
set(TERN_CPU_FLAGS -mcpu=cortex-m3 -mthumb)
set(TERN_COUNTER_BITS 24) # SysTick
# The kernel's hot paths cross files (post, queue, dispatch, port): link-time
# optimisation inlines them as one (issue 17: about 100 instructions a post).
if(NOT DEFINED TERN_LTO_FLAGS) # -DTERN_LTO_FLAGS= builds without, to compare
  set(TERN_LTO_FLAGS -flto)
endif()
set(TERN_LINK_FLAGS -T${CMAKE_SOURCE_DIR}/boards/lm3s6965evb/lm3s6965evb.ld
  -L${CMAKE_SOURCE_DIR}/arch/cortex-m --specs=nano.specs)
set(TERN_LINK_LIBS c gcc)
include(${CMAKE_SOURCE_DIR}/cmake/target.cmake)
