/* Heap with owner tags (seed 002 V-C.1): address-ordered first fit with
 * coalescing. Every block belongs to a task; exhaustion is an error code. */
#ifndef TERN_MEM_H
#define TERN_MEM_H

#include "tern/types.h"

#define TERN_OWNER_KERNEL ((tern_task_id)0xFE) /* allocations outside a task */
#define TERN_OWNER_TRANSIT ((tern_task_id)0xFD) /* payload of a message in flight */

/* Allocate for the running task (or the kernel). NULL when exhausted; the
 * failure is counted. */
void *tern_alloc(size_t size);
/* Growing may move the block (NULL on failure: p stays valid); shrinking
 * keeps it in place and returns its tail to the heap. */
void *tern_realloc(void *p, size_t size);
void tern_free(void *p);

/* Bytes currently owned by a task (payload bytes, headers excluded). */
size_t tern_heap_used_by(tern_task_id owner);
size_t tern_heap_free_bytes(void);
size_t tern_heap_largest_free(void);

#endif
