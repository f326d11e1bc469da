/* Queue insertion shared by the priority-ordered policies: destination
 * priority first (higher first), then creation order: behind the messages
 * of m's priority whose seq is not above m's (kernel/msg.h, msg_next_seq:
 * a new message goes behind all of them, a released held one behind the
 * ones made before it). */
#ifndef TERN_POLICY_ORDER_H
#define TERN_POLICY_ORDER_H

#include "kernel.h"

static inline void insert_by_priority(tern_msg **queue, tern_msg *m)
{
    tern_msg **pp = queue;
    while (*pp && ((*pp)->prio > m->prio || ((*pp)->prio == m->prio && (*pp)->seq <= m->seq)))
        pp = &(*pp)->next;
    m->next = *pp;
    *pp = m;
}

#endif
