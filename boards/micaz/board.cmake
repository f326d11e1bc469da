# MicaZ: an ATmega128L at 7.3728 MHz with a CC2420 radio, under
# tools/simavr (tern-simavr alone, tern-sim for networks). The CPU side is
# the atmega128 board's (arch/avr/avr_board.c, its linker script and RAM
# limits); boards/micaz/board.h moves the software interrupts off the
# radio's FIFOP pin and adds the LEDs.
set(TERN_ARCH avr)
set(TERN_BOARD_RADIO cc2420) # apps/CMakeLists.txt builds the radio apps
set(TERN_PORT_SOURCES
  ${CMAKE_SOURCE_DIR}/arch/avr/startup.c
  ${CMAKE_SOURCE_DIR}/arch/avr/port_avr.c
  ${CMAKE_SOURCE_DIR}/arch/avr/avr_board.c)
set(TERN_CPU_FLAGS -mmcu=atmega128 -DF_CPU=7372800UL
  -include ${CMAKE_SOURCE_DIR}/boards/micaz/board_config.h
  -I${CMAKE_SOURCE_DIR}/tools/simavr) # tern_simavr_abi.h: exit port, node id
set(TERN_LINK_FLAGS -T${CMAKE_SOURCE_DIR}/boards/atmega128/atmega128.ld)
set(TERN_LINK_LIBS gcc)
include(${CMAKE_SOURCE_DIR}/cmake/target.cmake)
