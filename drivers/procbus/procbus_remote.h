/* tern-sim's processor bus (procbus.h) as the bus of tern's bus manager
 * (tern/remote.h). */
#ifndef TERN_PROCBUS_REMOTE_H
#define TERN_PROCBUS_REMOTE_H

#include "tern/remote.h"

/* After tern_init(), before tern_app_start(): sets the bus up (procbus_init
 * with tern_remote_receive as its receiver) and attaches it. TERN_ESTATE
 * without a bus (procbus_init failed: e.g. tern-simavr alone). */
tern_status procbus_remote_attach(void);

#endif
