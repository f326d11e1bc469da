# A processor module of a multi-processor node (seed 002's mPlatform): the
# MicaZ's ATmega128L at 7.3728 MHz without the radio, on the node's
# processor bus, under tools/simavr (tern-simavr alone, tern-sim with the
# bus). The small, slow module beside module-m1284; the CPU side is the
# atmega128 board's (arch/avr/avr_board.c, its linker script and RAM
# limits).
set(TERN_ARCH avr)
set(TERN_BOARD_BUS procbus) # apps/CMakeLists.txt builds the bus apps
set(TERN_PORT_SOURCES
  ${CMAKE_SOURCE_DIR}/arch/avr/startup.c
  ${CMAKE_SOURCE_DIR}/arch/avr/port_avr.c
  ${CMAKE_SOURCE_DIR}/arch/avr/avr_board.c)
set(TERN_CPU_FLAGS -mmcu=atmega128 -DF_CPU=7372800UL
  -include ${CMAKE_SOURCE_DIR}/boards/module-m128/board_config.h
  -I${CMAKE_SOURCE_DIR}/tools/simavr) # tern_simavr_abi.h: exit port, bus registers
set(TERN_LINK_FLAGS -T${CMAKE_SOURCE_DIR}/boards/atmega128/atmega128.ld)
set(TERN_LINK_LIBS gcc)
include(${CMAKE_SOURCE_DIR}/cmake/target.cmake)
