/* Build-time limits. Every limit can be overridden with -D from the build. */
#ifndef TERN_CONFIG_H
#define TERN_CONFIG_H

#ifndef TERN_MAX_TASKS
#define TERN_MAX_TASKS 16 /* task ids are 0 .. TERN_MAX_TASKS-1 */
#endif
#ifndef TERN_PRIO_LEVELS
#define TERN_PRIO_LEVELS 8 /* priorities 0 (lowest) .. TERN_PRIO_LEVELS-1 */
#endif
#ifndef TERN_MAX_APP_PORTS
#define TERN_MAX_APP_PORTS 16 /* application input ports per task */
#endif
#ifndef TERN_MAX_OUT_PORTS
#define TERN_MAX_OUT_PORTS 16 /* output ports (routing table entries) per task */
#endif
#ifndef TERN_MAX_GROUPS
#define TERN_MAX_GROUPS 8 /* multicast groups */
#endif
#ifndef TERN_MAX_GROUP_MEMBERS
#define TERN_MAX_GROUP_MEMBERS 8
#endif
#ifndef TERN_MAX_INIT_DATA
#define TERN_MAX_INIT_DATA 64 /* bytes of init data per task */
#endif
#ifndef TERN_MSG_POOL
#define TERN_MSG_POOL 32 /* messages in flight (queued, held or being handled) */
#endif
#ifndef TERN_REMOTE_QUEUE_MAX
/* messages waiting for the processor bus (kernel/remote.c), at most: the
 * rest of the pool stays for local messages */
#define TERN_REMOTE_QUEUE_MAX (TERN_MSG_POOL / 2)
#endif
#ifndef TERN_REMOTE_PROCESSORS_MAX
#define TERN_REMOTE_PROCESSORS_MAX 16 /* processors on a tern_bus (kernel/remote.c) */
#endif
#ifndef TERN_TIMERS_PER_TASK
#define TERN_TIMERS_PER_TASK 4 /* TIMEOUT0..3 */
#endif
#ifndef TERN_HEAP_SIZE
#define TERN_HEAP_SIZE 4096 /* bytes */
#endif
/* Emulated boards stop a run after this many seconds of virtual time (an
 * alarm, so a handler that never returns is caught as long as interrupts
 * are enabled); exit status TERN_EXIT_RUN_LIMIT. 0: no limit. */
#ifndef TERN_RUN_LIMIT_S
#define TERN_RUN_LIMIT_S 0
#endif
#define TERN_EXIT_RUN_LIMIT 125

/* 1: the application description was validated when the image was built
 * (cmake tern_app_build_check, tools/appcheck), so the image carries no
 * validator; what is refused at run time (a second app, a missing bus, an
 * INIT the pool cannot take) names the code and the field only. */
#ifndef TERN_APP_BUILD_CHECK
#define TERN_APP_BUILD_CHECK 0
#endif

/* 0: the idle loop keeps no statistics (tern_idle_get_stats reads zeros);
 * the idle hook still sees every period. */
#ifndef TERN_IDLE_STATS
#define TERN_IDLE_STATS 1
#endif

/* 0: the kernel keeps only the counters of faults (drops by reason,
 * handler errors, allocation failures, leaks, hardware refusals); the
 * statistics (posts, dispatches, queued and held messages, queue and
 * stack depths, preemptions, switches, interrupts) are neither stored nor
 * counted, and tern_stats() reads them as zeros. */
#ifndef TERN_STATS
#define TERN_STATS 1
#endif

#ifndef TERN_TRACE_EVENTS
#define TERN_TRACE_EVENTS 64 /* trace ring capacity, a power of two; 0 disables */
#endif

#endif
