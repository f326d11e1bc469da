# Kernel sources of each execution model. Every model has the shared
# message layer kernel/msg.c (in TERN_KERNEL_SOURCES). The run-to-completion
# models (fifo, priority, stack) share the message scheduler kernel/sched.c
# and differ only in kernel/policy_<model>.c; the thread models (threads,
# adaptive) replace sched.c with the thread scheduler and need the arch's
# context switch (arch/<arch>/context_*.c). hybrid replaces sched.c with
# kernel/sched_hybrid.c (the stack model for most tasks, the thread
# scheduler for the flagged ones) and needs the context switch too.
#
# tern_model_sources(<out-var> <model> <arch>)
set(TERN_THREAD_MODELS threads adaptive)
# The message layer that replaces sched.c in each model that switches contexts.
set(TERN_SCHED_SOURCE_threads ${CMAKE_SOURCE_DIR}/kernel/sched_threads.c)
set(TERN_SCHED_SOURCE_adaptive ${CMAKE_SOURCE_DIR}/kernel/sched_threads.c)
set(TERN_SCHED_SOURCE_hybrid ${CMAKE_SOURCE_DIR}/kernel/sched_hybrid.c)
set(TERN_CONTEXT_SOURCE_cortex-m ${CMAKE_SOURCE_DIR}/arch/cortex-m/context_cm.c)
set(TERN_CONTEXT_SOURCE_avr ${CMAKE_SOURCE_DIR}/arch/avr/context_avr.c)
# hybrid runs its run-to-completion handlers in hardware dispatch vectors on
# the main stack, above the threads (Cortex-M NVIC); a software-dispatch port
# would run them on the interrupted thread's stack.
set(TERN_HYBRID_ARCHS cortex-m)

function(tern_model_sources out model arch)
  set(sources ${TERN_KERNEL_SOURCES} ${CMAKE_SOURCE_DIR}/kernel/policy_${model}.c)
  if(model STREQUAL "hybrid" AND NOT arch IN_LIST TERN_HYBRID_ARCHS)
    message(FATAL_ERROR "tern: model hybrid needs hardware dispatch vectors, which arch "
      "'${arch}' does not have (hybrid runs on: ${TERN_HYBRID_ARCHS})")
  endif()
  if(DEFINED TERN_SCHED_SOURCE_${model})
    list(REMOVE_ITEM sources ${CMAKE_SOURCE_DIR}/kernel/sched.c)
    if(NOT DEFINED TERN_CONTEXT_SOURCE_${arch})
      message(FATAL_ERROR "tern: model ${model} needs a context switch for arch '${arch}' "
        "(arch/${arch}/context_*.c), which is not written yet")
    endif()
    list(APPEND sources ${CMAKE_SOURCE_DIR}/kernel/thread.c
      ${CMAKE_SOURCE_DIR}/kernel/thread_ready.c ${CMAKE_SOURCE_DIR}/kernel/thread_sync.c
      ${CMAKE_SOURCE_DIR}/kernel/thread_stats.c
      ${TERN_SCHED_SOURCE_${model}} ${TERN_CONTEXT_SOURCE_${arch}})
  endif()
  set(${out} ${sources} PARENT_SCOPE)
endfunction()
