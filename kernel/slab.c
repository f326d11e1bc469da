/* Fixed slab of message objects, sized at build time: allocation is O(1),
 * never fragments, and exhaustion is a counted error, not a crash. */
#include "kernel.h"

static tern_msg pool[TERN_MSG_POOL];
tern_msg *msg_free_list;

void msg_pool_init(void)
{
    msg_free_list = NULL;
    for (int i = TERN_MSG_POOL - 1; i >= 0; i--) {
        pool[i].next = msg_free_list;
        msg_free_list = &pool[i];
    }
}

void msg_free(tern_msg *m)
{
    m->next = msg_free_list;
    msg_free_list = m;
}
