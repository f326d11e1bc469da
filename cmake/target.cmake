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
#   TERN_LTO_FLAGS         link-time optimisation (compile and link), if any
#   TERN_COUNTER_BITS      the free-running counter's width, if not 32

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
  if(DEFINED TERN_COUNTER_BITS)
    target_compile_definitions(${target} PRIVATE TERN_COUNTER_BITS=${TERN_COUNTER_BITS})
  endif()
  if(TERN_ARCH IN_LIST TERN_HYBRID_ARCHS) # dispatch vectors: sched.c pends them from a post
    target_compile_definitions(${target} PRIVATE TERN_PORT_HW_DISPATCH=1)
  endif()
  target_compile_options(${target} PRIVATE ${TERN_CPU_FLAGS} ${TERN_WARNINGS}
    -Os -g -ffunction-sections -fdata-sections ${TERN_LTO_FLAGS})
  target_link_options(${target} PRIVATE ${TERN_CPU_FLAGS} ${TERN_LINK_FLAGS} ${TERN_LTO_FLAGS} -Os
    -nostartfiles -Wl,--gc-sections
    -Wl,-Map=${CMAKE_CURRENT_BINARY_DIR}/${name}.map)
  target_link_libraries(${target} PRIVATE ${TERN_LINK_LIBS})
endfunction()

# tern_app_build_check(<name> <app sources...>): validate <name>.elf's
# application description when the image is built, not when it runs
# (nesC checks its wiring at compile time). The app's sources, with the
# image's definitions and board limits, and kernel/app_check.c are compiled
# for the build machine (tools/appcheck) and run before the link: a refused
# description fails the build with its named error. The image is built
# with TERN_APP_BUILD_CHECK=1 and carries no validator, and with
# TERN_APP_FLASH=1: its description, declared TERN_DESC, stays in flash
# on the AVR (tern/app.h). The sources name the description with
# TERN_APP_CHECKED(desc).
find_program(TERN_HOST_CC NAMES cc gcc clang)
function(tern_app_build_check name)
  set(target ${name}.elf)
  if(NOT TERN_HOST_CC)
    message(FATAL_ERROR "tern: tern_app_build_check(${name}) needs a C compiler for the build machine")
  endif()
  target_compile_definitions(${target} PRIVATE TERN_APP_BUILD_CHECK=1 TERN_APP_FLASH=1)
  set(sources)
  foreach(src ${ARGN})
    get_filename_component(abs ${src} ABSOLUTE)
    list(APPEND sources ${abs})
  endforeach()
  set(config)
  if(EXISTS ${TERN_BOARD_DIR}/board_config.h)
    set(config -include ${TERN_BOARD_DIR}/board_config.h)
  endif()
  set(checker ${CMAKE_CURRENT_BINARY_DIR}/${name}.appcheck)
  set(defs $<TARGET_PROPERTY:${target},COMPILE_DEFINITIONS>)
  add_custom_command(TARGET ${target} PRE_LINK
    COMMAND ${TERN_HOST_CC} -std=gnu11 -O0 -w -no-pie ${config}
      "$<$<BOOL:${defs}>:-D$<JOIN:${defs},;-D>>" -DTERN_APPCHECK=1 -Dmain=tern_appcheck_app_main
      -I${CMAKE_SOURCE_DIR}/include -I${CMAKE_SOURCE_DIR}/arch/host -I${CMAKE_SOURCE_DIR}/kernel
      ${sources} ${CMAKE_SOURCE_DIR}/kernel/app_check.c ${CMAKE_SOURCE_DIR}/kernel/console.c
      ${CMAKE_SOURCE_DIR}/kernel/status.c ${CMAKE_SOURCE_DIR}/tools/appcheck/appcheck.c
      -Wl,--unresolved-symbols=ignore-all -o ${checker}
    COMMAND ${checker} ${target}
    COMMAND_EXPAND_LISTS VERBATIM)
endfunction()
