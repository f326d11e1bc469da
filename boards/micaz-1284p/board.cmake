# micaz-1284p: the MicaZ's CC2420 beside an ATmega1284P (16 KB of RAM) at
# 16 MHz, the clock 3.3 V ATmega1284P radio boards such as the Moteino
# MEGA run at (the CC2420's SPI then runs at f/2 = 8 MHz, within its
# 10 MHz), under tools/simavr (tern-simavr alone, tern-sim for networks). It exists for 1,000-byte UDP datagrams: their 1,280-byte
# reassembly buffer does not fit the micaz's 4 KB (docs/boards.md). The
# port is every AVR board's (arch/avr/avr_board.c, the part's registers
# from arch/avr/mcu_atmega1284p.h), the linker script module-m1284's.
set(TERN_ARCH avr)
set(TERN_BOARD_RADIO cc2420) # apps/CMakeLists.txt builds the radio apps
set(TERN_NET_DATAGRAM 1280) # apps/udp*: IPv6's minimum MTU, reassembled
set(TERN_PORT_SOURCES
  ${CMAKE_SOURCE_DIR}/arch/avr/startup.c
  ${CMAKE_SOURCE_DIR}/arch/avr/port_avr.c
  ${CMAKE_SOURCE_DIR}/arch/avr/avr_board.c)
set(TERN_CPU_FLAGS -mmcu=atmega1284p -DF_CPU=16000000UL
  -include ${CMAKE_SOURCE_DIR}/boards/micaz-1284p/board_config.h
  -I${CMAKE_SOURCE_DIR}/tools/simavr) # tern_simavr_abi.h: exit port, node id
set(TERN_LINK_FLAGS -T${CMAKE_SOURCE_DIR}/boards/atmega128/atmega128.ld
  -Wl,--defsym=__tern_ram_bytes=16384)
set(TERN_LINK_LIBS gcc)
include(${CMAKE_SOURCE_DIR}/cmake/target.cmake)
