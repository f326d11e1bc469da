/* Fixed slab of message objects, sized at build time: allocation is O(1),
 * never fragments, and exhaustion is a counted error, not a crash. */
#include "kernel.h"

static tern_msg pool[TERN_MSG_POOL];
static tern_msg *free_list;

void msg_pool_init(void)
{
    free_list = NULL;
    for (int i = TERN_MSG_POOL - 1; i >= 0; i--) {
        pool[i].next = free_list;
        free_list = &pool[i];
    }
}

/* Interrupts are disabled by the callers. */
tern_msg *msg_alloc(void)
{
    tern_msg *m = free_list;
    if (m)
        free_list = m->next;
    return m;
}

void msg_free(tern_msg *m)
{
    m->next = free_list;
    free_list = m;
}
