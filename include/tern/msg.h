/* System ports and the message that travels between tasks. */
#ifndef TERN_MSG_H
#define TERN_MSG_H

#include "tern/types.h"

/* Input ports 0..7 are the system ports of seed 002 (Table I); application
 * ports follow them. */
enum {
    TERN_PORT_INIT = 0,
    TERN_PORT_FINAL = 1,
    TERN_PORT_TIMEOUT0 = 2, /* TIMEOUT0..3 = 2..5, one per task timer */
    TERN_PORT_SERIALIZE = 6,
    TERN_PORT_DESERIALIZE = 7,
    TERN_PORT_APP0 = 8,
};
#define TERN_PORT_TIMEOUT(k) ((tern_port)(TERN_PORT_TIMEOUT0 + (k)))
#define TERN_PORT_APP(n) ((tern_port)(TERN_PORT_APP0 + (n)))

/* Message flags. */
#define TERN_MSG_HEAP 0x01     /* payload is a heap block; ownership travels */
#define TERN_MSG_FROM_ISR 0x02 /* posted from interrupt context (set by the kernel) */
#define TERN_MSG_TAKEN 0x04    /* receiver took the payload (set by the kernel) */

typedef struct tern_msg {
    struct tern_msg *next;
    void *payload;
    uint16_t len;
    tern_task_id src; /* TERN_NO_TASK when posted from an interrupt */
    tern_task_id dst;
    tern_port port;
    uint8_t flags;
    uint8_t prio;     /* destination priority, cached for ordering */
    uint32_t seq;     /* creation order among equal priorities (kernel/msg.h) */
    /* The clock's low 32 bits at post time (tern_now() minus it is the
     * age of a message younger than 2^32 ticks): a stamp without the
     * 64-bit extension, which costs an 8-bit CPU ~100 cycles a post.
     * remote.c keeps a leaving message's bus address here instead. */
    uint32_t posted;
} tern_msg;

#endif
