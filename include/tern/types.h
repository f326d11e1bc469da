/* Basic types and status codes shared by the whole API. */
#ifndef TERN_TYPES_H
#define TERN_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tern/config.h"

/* Board clock ticks since boot; 64 bits never wrap in the life of a node. */
typedef uint64_t tern_time;
typedef uint8_t tern_task_id;
typedef uint8_t tern_port;

#define TERN_NO_TASK ((tern_task_id)0xFF)

typedef enum {
    TERN_OK = 0,
    TERN_EINVAL,     /* bad argument or malformed description */
    TERN_ENOTASK,    /* destination task does not exist */
    TERN_ENOPORT,    /* destination input port does not exist */
    TERN_ENOROUTE,   /* output port has no route */
    TERN_EDUPLICATE, /* an id is used twice */
    TERN_ERANGE,     /* a value is out of its allowed range */
    TERN_EFULL,      /* message pool exhausted: the message was not sent */
    TERN_ENOMEM,     /* heap exhausted */
    TERN_ESTATE,     /* call not allowed in the current state */
    TERN_EOWNER,     /* memory block not owned by the caller */
    TERN_EPINNED,    /* the task may not move to another processor (not movable) */
    TERN_ETIMEOUT,   /* a peer did not answer in time (a processor that died or stalled) */
    TERN_ENOHW,      /* this processor's board lacks hardware the description gives it */
    TERN_STATUS_COUNT
} tern_status;

/* Hardware a board has (tern_board_info.hw, from TERN_BOARD_HW in its
 * board.h) and a task drives (TERN_TASK_NEEDS_*, tern/app.h): one bit each. */
#define TERN_HW_RADIO 0x10
#define TERN_HW_ADC 0x20

/* A short stable name such as "TERN_EFULL", for error messages. */
const char *tern_status_name(tern_status s);

#endif
