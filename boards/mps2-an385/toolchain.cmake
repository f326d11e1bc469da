# Chosen before project(): the CPU's toolchain and the models this board runs.
set(CMAKE_TOOLCHAIN_FILE ${CMAKE_SOURCE_DIR}/cmake/toolchain-arm-none-eabi.cmake)
set(TERN_BOARD_MODELS fifo priority stack)
