# Chosen before project(): the CPU's toolchain.
set(CMAKE_TOOLCHAIN_FILE ${CMAKE_SOURCE_DIR}/cmake/toolchain-avr.cmake)
