/* Everything an application needs. */
#ifndef TERN_H
#define TERN_H

#include "tern/app.h"
#include "tern/console.h"
#include "tern/idle.h"
#include "tern/mem.h"
#include "tern/msg.h"
#include "tern/remote.h"
#include "tern/stats.h"
#include "tern/task.h"
#include "tern/time.h"
#include "tern/trace.h"
#include "tern/types.h"

/* Name of the execution model this kernel was built with ("fifo", ...). */
extern const char *const tern_model_name;

/* Initialise the kernel (clock, memory, trace). Call once before
 * tern_app_start(). */
void tern_init(void);

/* Dispatch messages and idle forever. */
_Noreturn void tern_run(void);

/* One step of the main loop: dispatch one message, or idle until the next
 * interrupt if none is ready. Returns false only on the host when the fake
 * clock has nothing left to wake it. */
bool tern_run_once(void);

#endif
