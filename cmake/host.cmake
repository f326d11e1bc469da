# Host build: one kernel library per model, linked with the host port, and
# the unit tests, all under AddressSanitizer and UndefinedBehaviorSanitizer.
enable_testing()
find_package(PkgConfig REQUIRED)
pkg_check_modules(CMOCKA REQUIRED IMPORTED_TARGET cmocka)

set(TERN_SANITIZE -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)

foreach(model ${TERN_MODELS})
  add_library(tern_host_${model} STATIC ${TERN_KERNEL_SOURCES}
    ${CMAKE_SOURCE_DIR}/kernel/policy_${model}.c
    ${CMAKE_SOURCE_DIR}/arch/host/port_host.c)
  target_include_directories(tern_host_${model} PUBLIC
    ${CMAKE_SOURCE_DIR}/include ${CMAKE_SOURCE_DIR}/arch/host)
  target_compile_options(tern_host_${model} PUBLIC ${TERN_SANITIZE} -g -O1)
  target_compile_options(tern_host_${model} PRIVATE ${TERN_WARNINGS})
  target_link_options(tern_host_${model} PUBLIC ${TERN_SANITIZE})
endforeach()

# The stack model's kernel with the 8-bit CPUs' 32-bit tick timers
# (kernel/timer.c), for the timer tests on the host.
add_library(tern_host_stack_tick32 STATIC ${TERN_KERNEL_SOURCES}
  ${CMAKE_SOURCE_DIR}/kernel/policy_stack.c
  ${CMAKE_SOURCE_DIR}/arch/host/port_host.c)
target_include_directories(tern_host_stack_tick32 PUBLIC
  ${CMAKE_SOURCE_DIR}/include ${CMAKE_SOURCE_DIR}/arch/host)
target_compile_definitions(tern_host_stack_tick32 PRIVATE TERN_TICK32=1)
target_compile_options(tern_host_stack_tick32 PUBLIC ${TERN_SANITIZE} -g -O1)
target_compile_options(tern_host_stack_tick32 PRIVATE ${TERN_WARNINGS})
target_link_options(tern_host_stack_tick32 PUBLIC ${TERN_SANITIZE})

# tern_host_test(<name> <model> <sources...>)
function(tern_host_test name model)
  add_executable(${name} ${ARGN})
  target_link_libraries(${name} PRIVATE tern_host_${model} PkgConfig::CMOCKA)
  target_compile_options(${name} PRIVATE ${TERN_WARNINGS} -Wno-missing-prototypes)
  add_test(NAME ${name} COMMAND ${name})
  set_tests_properties(${name} PROPERTIES ENVIRONMENT "CMOCKA_MESSAGE_OUTPUT=stdout")
endfunction()

add_subdirectory(tests/unit)
