# AVR toolchain (Debian's gcc-avr, binutils-avr, avr-libc). The MCU
# (-mmcu) and clock (F_CPU) are set per board, not here.
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR avr)

set(TERN_TOOLCHAIN_PREFIX avr-)
set(CMAKE_C_COMPILER ${TERN_TOOLCHAIN_PREFIX}gcc)
set(CMAKE_ASM_COMPILER ${TERN_TOOLCHAIN_PREFIX}gcc)
set(CMAKE_OBJCOPY ${TERN_TOOLCHAIN_PREFIX}objcopy CACHE FILEPATH "objcopy")
set(CMAKE_SIZE ${TERN_TOOLCHAIN_PREFIX}size CACHE FILEPATH "size")

# No OS to link a test program against: compiler checks build a static
# library instead of an executable.
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)

set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
