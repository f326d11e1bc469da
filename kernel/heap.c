/* Heap with owner tags (seed 002 V-C.1). Blocks lie back to back in address
 * order, each behind a header holding its size, owner and use flag, so
 * first fit is a walk from the lowest address (less external
 * fragmentation than next fit) and a freed block merges with free
 * neighbours. Sizes are small on a sensor node: a walk is cheap. */
#include <string.h>

#include "kernel.h"

#define HEAP_ALIGN (_Alignof(max_align_t) < 8 ? _Alignof(max_align_t) : 8)
#define HDR_SIZE (HEAP_ALIGN < 4 ? 4 : HEAP_ALIGN)

typedef struct {
    uint16_t size; /* whole block, header included */
    uint8_t owner;
    uint8_t used;
} hdr;

static tern_task_id current_owner(void)
{
    tern_task_id self = tern_self();
    return self == TERN_NO_TASK ? TERN_OWNER_KERNEL : self;
}

#if TERN_HEAP_SIZE == 0
/* No heap (an app that posts without payloads, e.g. seed000_bare): every
 * allocation fails and is counted, no pointer is a live block; the same
 * results as a heap too small for any block, without the walk. */
void heap_init(void) {}

void *heap_alloc_for(size_t size, tern_task_id owner)
{
    (void)size;
    tern_counters_.alloc_failures++;
    tern_trace(TERN_EV_ALLOC, owner, 0);
    return NULL;
}

void *tern_alloc(size_t size) { return heap_alloc_for(size, current_owner()); }
void heap_free(void *p) { (void)p; }
void tern_free(void *p) { (void)p; }
void *tern_realloc(void *p, size_t size) { return p ? NULL : tern_alloc(size); }
tern_status heap_check_owner(void *p, tern_task_id owner)
{
    (void)p;
    (void)owner;
    return TERN_EOWNER;
}
void heap_set_owner(void *p, tern_task_id owner)
{
    (void)p;
    (void)owner;
}
size_t tern_heap_used_by(tern_task_id owner)
{
    (void)owner;
    return 0;
}
size_t tern_heap_free_bytes(void) { return 0; }
size_t tern_heap_largest_free(void) { return 0; }
void heap_reclaim_task(tern_task_id owner, size_t *bytes, uint32_t *blocks)
{
    (void)owner;
    *bytes = 0;
    *blocks = 0;
}
#else
_Static_assert(TERN_HEAP_SIZE <= 65535 - HDR_SIZE, "heap sizes are 16-bit");
_Static_assert(TERN_HEAP_SIZE % HDR_SIZE == 0, "heap size must be a multiple of the header");

static _Alignas(8) uint8_t heap[TERN_HEAP_SIZE];

static hdr *at(size_t off) { return (hdr *)(void *)&heap[off]; }
static void *payload_of(hdr *h) { return (uint8_t *)h + HDR_SIZE; }
static size_t offset_of(const hdr *h) { return (size_t)((const uint8_t *)h - heap); }

void heap_init(void)
{
    hdr *h = at(0);
    h->size = TERN_HEAP_SIZE;
    h->owner = TERN_OWNER_KERNEL;
    h->used = 0;
}

/* The header of a live block, or NULL if p is not one. */
static hdr *block_of(void *p)
{
    uint8_t *b = (uint8_t *)p;
    if (!p || b < heap + HDR_SIZE || b >= heap + TERN_HEAP_SIZE)
        return NULL;
    for (size_t off = 0; off < TERN_HEAP_SIZE; off += at(off)->size) {
        if (payload_of(at(off)) == p)
            return at(off)->used ? at(off) : NULL;
    }
    return NULL;
}

void *heap_alloc_for(size_t size, tern_task_id owner)
{
    /* A size beyond the heap fails here: rounded up, a size near SIZE_MAX
     * would wrap to a few bytes and "succeed". */
    size_t need = size > TERN_HEAP_SIZE ? SIZE_MAX
                                        : (size + HDR_SIZE + HDR_SIZE - 1) / HDR_SIZE * HDR_SIZE;
    if (size == 0)
        need = HDR_SIZE * 2;
    tern_irq_state s = port_irq_save();
    for (size_t off = 0; need <= TERN_HEAP_SIZE && off < TERN_HEAP_SIZE; off += at(off)->size) {
        hdr *h = at(off);
        if (h->used || h->size < need)
            continue;
        if (h->size - need >= 2 * HDR_SIZE) { /* split: the rest stays free */
            hdr *rest = at(off + need);
            rest->size = (uint16_t)(h->size - need);
            rest->used = 0;
            rest->owner = TERN_OWNER_KERNEL;
            h->size = (uint16_t)need;
        }
        h->used = 1;
        h->owner = owner;
        tern_trace(TERN_EV_ALLOC, owner, (uint16_t)size);
        port_irq_restore(s);
        return payload_of(h);
    }
    tern_counters_.alloc_failures++;
    tern_trace(TERN_EV_ALLOC, owner, 0);
    port_irq_restore(s);
    return NULL;
}

void *tern_alloc(size_t size) { return heap_alloc_for(size, current_owner()); }

/* Merge h with the free blocks after it. */
static void merge_following(hdr *h)
{
    size_t next = offset_of(h) + h->size;
    while (next < TERN_HEAP_SIZE && !at(next)->used) {
        h->size = (uint16_t)(h->size + at(next)->size);
        next = offset_of(h) + h->size;
    }
}

void heap_free(void *p)
{
    tern_irq_state s = port_irq_save();
    hdr *h = block_of(p);
    if (h) {
        tern_trace(TERN_EV_FREE, h->owner, (uint16_t)(h->size - HDR_SIZE));
        h->used = 0;
        merge_following(h);
        /* merge into the previous block when it is free */
        hdr *prev = NULL;
        for (size_t off = 0; off < offset_of(h); off += at(off)->size)
            prev = at(off);
        if (prev && !prev->used)
            merge_following(prev);
    }
    port_irq_restore(s);
}

void tern_free(void *p) { heap_free(p); }

void *tern_realloc(void *p, size_t size)
{
    if (!p)
        return tern_alloc(size);
    hdr *h = block_of(p);
    if (!h)
        return NULL;
    size_t have = h->size - HDR_SIZE;
    if (size <= have) {
        /* Shrinking keeps the block where it is and gives its tail back when
         * the tail can be a block of its own: a task that keeps a little of
         * a large buffer does not hold all of it. */
        size_t need = size == 0 ? HDR_SIZE * 2 : (size + HDR_SIZE + HDR_SIZE - 1) / HDR_SIZE * HDR_SIZE;
        tern_irq_state s = port_irq_save();
        if (h->size - need >= 2 * HDR_SIZE) {
            hdr *rest = at(offset_of(h) + need);
            rest->size = (uint16_t)(h->size - need);
            rest->used = 0;
            rest->owner = TERN_OWNER_KERNEL;
            h->size = (uint16_t)need;
            merge_following(rest);
        }
        port_irq_restore(s);
        return p;
    }
    void *q = heap_alloc_for(size, h->owner);
    if (!q)
        return NULL; /* the old block stays valid, as with realloc() */
    memcpy(q, p, have);
    heap_free(p);
    return q;
}

tern_status heap_check_owner(void *p, tern_task_id owner)
{
    hdr *h = block_of(p);
    return h && h->owner == owner ? TERN_OK : TERN_EOWNER;
}

void heap_set_owner(void *p, tern_task_id owner)
{
    hdr *h = block_of(p);
    if (h)
        h->owner = owner;
}

size_t tern_heap_used_by(tern_task_id owner)
{
    size_t bytes = 0;
    tern_irq_state s = port_irq_save();
    for (size_t off = 0; off < TERN_HEAP_SIZE; off += at(off)->size)
        if (at(off)->used && at(off)->owner == owner)
            bytes += at(off)->size - HDR_SIZE;
    port_irq_restore(s);
    return bytes;
}

static size_t free_stat(bool largest)
{
    size_t total = 0, max = 0;
    tern_irq_state s = port_irq_save();
    for (size_t off = 0; off < TERN_HEAP_SIZE; off += at(off)->size) {
        if (at(off)->used)
            continue;
        size_t n = at(off)->size - HDR_SIZE;
        total += n;
        if (n > max)
            max = n;
    }
    port_irq_restore(s);
    return largest ? max : total;
}

size_t tern_heap_free_bytes(void) { return free_stat(false); }
size_t tern_heap_largest_free(void) { return free_stat(true); }

void heap_reclaim_task(tern_task_id owner, size_t *bytes, uint32_t *blocks)
{
    *bytes = 0;
    *blocks = 0;
    for (size_t off = 0; off < TERN_HEAP_SIZE;) {
        hdr *h = at(off);
        if (h->used && h->owner == owner) {
            *bytes += h->size - HDR_SIZE;
            (*blocks)++;
            heap_free(payload_of(h));
            off = 0; /* merging may have moved block boundaries */
            continue;
        }
        off += h->size;
    }
}
#endif
