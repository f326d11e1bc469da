# Kernel sources of each execution model. The run-to-completion models
# (fifo, priority, stack) share the message scheduler kernel/sched.c and
# differ only in kernel/policy_<model>.c; the thread models (threads,
# adaptive) replace sched.c with the thread scheduler and need the arch's
# context switch (arch/<arch>/context_*.c).
#
# tern_model_sources(<out-var> <model> <arch>)
set(TERN_THREAD_MODELS threads adaptive)
set(TERN_CONTEXT_SOURCE_cortex-m ${CMAKE_SOURCE_DIR}/arch/cortex-m/context_cm.c)

function(tern_model_sources out model arch)
  set(sources ${TERN_KERNEL_SOURCES} ${CMAKE_SOURCE_DIR}/kernel/policy_${model}.c)
  if(model IN_LIST TERN_THREAD_MODELS)
    list(REMOVE_ITEM sources ${CMAKE_SOURCE_DIR}/kernel/sched.c)
    if(NOT DEFINED TERN_CONTEXT_SOURCE_${arch})
      message(FATAL_ERROR "tern: model ${model} needs a context switch for arch '${arch}' "
        "(arch/${arch}/context_*.c), which is not written yet")
    endif()
    list(APPEND sources ${CMAKE_SOURCE_DIR}/kernel/thread.c
      ${CMAKE_SOURCE_DIR}/kernel/sched_threads.c ${TERN_CONTEXT_SOURCE_${arch}})
  endif()
  set(${out} ${sources} PARENT_SCOPE)
endfunction()
