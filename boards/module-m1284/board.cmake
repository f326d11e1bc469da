# A processor module of a multi-processor node (seed 002's mPlatform): an
# ATmega1284P at 20 MHz with 16 KB of RAM, on the node's processor bus,
# under tools/simavr (tern-simavr alone, tern-sim with the bus). The port is
# every AVR board's (arch/avr/avr_board.c, the part's registers from
# arch/avr/mcu_atmega1284p.h); the linker script is the atmega128's with
# the 1284P's 16 KB of RAM (same flash size, same RAM start, same 35
# vectors).
set(TERN_ARCH avr)
set(TERN_BOARD_BUS procbus) # apps/CMakeLists.txt builds the bus apps
set(TERN_PORT_SOURCES
  ${CMAKE_SOURCE_DIR}/arch/avr/startup.c
  ${CMAKE_SOURCE_DIR}/arch/avr/port_avr.c
  ${CMAKE_SOURCE_DIR}/arch/avr/avr_board.c)
set(TERN_CPU_FLAGS -mmcu=atmega1284p -DF_CPU=20000000UL
  -include ${CMAKE_SOURCE_DIR}/boards/module-m1284/board_config.h
  -I${CMAKE_SOURCE_DIR}/tools/simavr) # tern_simavr_abi.h: exit port, bus registers
set(TERN_LINK_FLAGS -T${CMAKE_SOURCE_DIR}/boards/atmega128/atmega128.ld
  -Wl,--defsym=__tern_ram_bytes=16384)
set(TERN_LINK_LIBS gcc)
include(${CMAKE_SOURCE_DIR}/cmake/target.cmake)
