# ATmega128 at 4 MHz under tools/simavr/build/tern-simavr (seed 000's node).
set(TERN_ARCH avr)
set(TERN_PORT_SOURCES
  ${CMAKE_SOURCE_DIR}/arch/avr/startup.c
  ${CMAKE_SOURCE_DIR}/arch/avr/port_avr.c
  ${CMAKE_SOURCE_DIR}/arch/avr/avr_board.c)
# board_config.h shrinks the kernel's default pools to 4 KB of RAM; it is
# included before every source, so an app's own -D still wins.
set(TERN_CPU_FLAGS -mmcu=atmega128 -DF_CPU=4000000UL
  -include ${CMAKE_SOURCE_DIR}/boards/atmega128/board_config.h
  -I${CMAKE_SOURCE_DIR}/tools/simavr) # tern_simavr_abi.h: the exit port
set(TERN_LINK_FLAGS -T${CMAKE_SOURCE_DIR}/boards/atmega128/atmega128.ld)
set(TERN_LINK_LIBS gcc)
include(${CMAKE_SOURCE_DIR}/cmake/target.cmake)
