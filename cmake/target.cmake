# Cross builds: every app is linked from its own sources plus the kernel,
# the execution model's policy, the arch port and the board, all compiled
# with the app's definitions (an app may resize kernel pools or compile the
# trace out with target_compile_definitions on <name>.elf).
#
# A board's board.cmake sets, then includes this file:
#   TERN_ARCH              directory under arch/ (cortex-m, avr)
#   TERN_PORT_SOURCES      arch and board sources (absolute paths)
#   TERN_CPU_FLAGS         compile and link flags for the CPU
#   TERN_LINK_FLAGS        linker script and other link-only flags
#   TERN_LINK_LIBS         libraries after the objects (libgcc, libc)

set(TERN_BOARD_DIR ${CMAKE_SOURCE_DIR}/boards/${TERN_BOARD})
include(${CMAKE_SOURCE_DIR}/cmake/models.cmake)
tern_model_sources(TERN_MODEL_SOURCES ${TERN_MODEL} ${TERN_ARCH})

# tern_add_app(<name> <sources...>) -> target <name>.elf in the current
# binary directory, with <name>.map beside it.
function(tern_add_app name)
  set(target ${name}.elf)
  add_executable(${target} ${ARGN} ${TERN_MODEL_SOURCES} ${TERN_PORT_SOURCES})
  target_include_directories(${target} PRIVATE ${CMAKE_SOURCE_DIR}/include
    ${CMAKE_SOURCE_DIR}/arch/${TERN_ARCH} ${TERN_BOARD_DIR})
  # Every board is emulated: a run that never ends is stopped after
  # TERN_APP_RUN_LIMIT_S (default 600) seconds of virtual time.
  if(NOT DEFINED TERN_APP_RUN_LIMIT_S)
    set(TERN_APP_RUN_LIMIT_S 600)
  endif()
  target_compile_definitions(${target} PRIVATE TERN_RUN_LIMIT_S=${TERN_APP_RUN_LIMIT_S}
    TERN_MODEL_${TERN_MODEL}=1
    TERN_MODEL_NAME="${TERN_MODEL}" TERN_BOARD_NAME="${TERN_BOARD}")
  target_compile_options(${target} PRIVATE ${TERN_CPU_FLAGS} ${TERN_WARNINGS}
    -Os -g -ffunction-sections -fdata-sections)
  target_link_options(${target} PRIVATE ${TERN_CPU_FLAGS} ${TERN_LINK_FLAGS}
    -nostartfiles -Wl,--gc-sections
    -Wl,-Map=${CMAKE_CURRENT_BINARY_DIR}/${name}.map)
  target_link_libraries(${target} PRIVATE ${TERN_LINK_LIBS})
endfunction()
