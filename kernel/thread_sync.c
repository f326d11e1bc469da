/* Synchronisation between threads: wait lists (highest priority first,
 * then oldest), counting semaphores, and a mutex with priority
 * inheritance. A thread blocks through thread.c (thread_block) and is
 * woken with thread_make_ready; thread_requeue moves a ready thread
 * whose priority an inheritance changes. */
#include <string.h>

#include "thread.h"

/* --- Wait lists: highest priority first, then oldest ------------------------ */

static void wait_insert(thread **list, thread *t)
{
    thread **pp = list;
    while (*pp && (*pp)->prio >= t->prio)
        pp = &(*pp)->next;
    t->next = *pp;
    *pp = t;
    t->wait_list = list;
}

static thread *wait_pop(thread **list)
{
    thread *t = *list;
    if (t) {
        *list = t->next;
        t->next = NULL;
        t->wait_list = NULL;
    }
    return t;
}

static void wait_remove(thread *t)
{
    thread **list = t->wait_list;
    for (thread **pp = list; *pp; pp = &(*pp)->next) {
        if (*pp == t) {
            *pp = t->next;
            break;
        }
    }
    t->next = NULL;
    t->wait_list = NULL;
}

/* --- Semaphores ------------------------------------------------------------- */

void tern_sem_init(tern_sem *sem, uint16_t count, uint16_t max)
{
    sem->waiters = NULL;
    sem->max = max ? max : 1;
    sem->count = count < sem->max ? count : sem->max;
}

tern_status tern_sem_try_take(tern_sem *sem)
{
    tern_irq_state s = port_irq_save();
    tern_status st = TERN_ESTATE;
    if (sem->count) {
        sem->count--;
        st = TERN_OK;
    }
    port_irq_restore(s);
    return st;
}

tern_status tern_sem_take(tern_sem *sem)
{
    tern_irq_state s = port_irq_save();
    if (sem->count) {
        sem->count--;
        port_irq_restore(s);
        return TERN_OK;
    }
    if (!thread_may_block(s)) {
        port_irq_restore(s);
        return TERN_ESTATE;
    }
    thread *self = thread_running;
    wait_insert(&sem->waiters, self);
    thread_block(self, T_SEM); /* give hands the unit over: nothing to take on return */
    port_irq_restore(s);
    return TERN_OK;
}

tern_status tern_sem_give(tern_sem *sem)
{
    tern_irq_state s = port_irq_save();
    tern_status st = TERN_OK;
    thread *t = wait_pop(&sem->waiters);
    if (t)
        thread_make_ready(t);
    else if (sem->count < sem->max)
        sem->count++;
    else
        st = TERN_EFULL;
    port_irq_restore(s);
    return st;
}

/* --- Mutex with priority inheritance ------------------------------------------ */

void tern_mutex_init(tern_mutex *m) { memset(m, 0, sizeof *m); }

/* Give t the effective priority p, moving it in whatever queue it is in;
 * follow the chain when t itself waits for a mutex. */
static void set_priority(thread *t, int8_t p)
{
    while (t && t->prio != p) {
        if (t->state == T_READY) {
            thread_requeue(t, p);
            return;
        }
        t->prio = p;
        if (t->wait_list) {
            thread **list = t->wait_list;
            wait_remove(t);
            wait_insert(list, t);
        }
        if (t->state != T_MUTEX)
            return;
        thread *owner = t->blocked_on->owner;
        if (!owner || owner->prio >= p)
            return;
        t = owner;
    }
}

/* What t inherits: the best waiter of any mutex it holds, or its own. */
static int8_t inherited_priority(const thread *t)
{
    int8_t p = t->base_prio;
    for (const tern_mutex *m = t->held; m; m = m->next_held)
        if (m->waiters && m->waiters->prio > p)
            p = m->waiters->prio;
    return p;
}

tern_status tern_mutex_lock(tern_mutex *m)
{
    tern_irq_state s = port_irq_save();
    if (!thread_may_block(s)) {
        port_irq_restore(s);
        return TERN_ESTATE;
    }
    thread *self = thread_running;
    if (m->owner == self) {
        m->depth++;
    } else if (!m->owner) {
        m->owner = self;
        m->depth = 1;
        m->next_held = self->held;
        self->held = m;
    } else {
        wait_insert(&m->waiters, self);
        self->blocked_on = m;
        if (m->owner->prio < self->prio)
            set_priority(m->owner, self->prio);
        thread_block(self, T_MUTEX); /* the switch happens at the restore below; unlock
                         * makes us the owner and clears blocked_on */
    }
    port_irq_restore(s);
    return TERN_OK;
}

tern_status tern_mutex_unlock(tern_mutex *m)
{
    tern_irq_state s = port_irq_save();
    thread *self = thread_running;
    if (!threads_live || sched_in_isr() || m->owner != self) {
        port_irq_restore(s);
        return TERN_EOWNER;
    }
    if (--m->depth) {
        port_irq_restore(s);
        return TERN_OK;
    }
    for (tern_mutex **pp = &self->held; *pp; pp = &(*pp)->next_held) {
        if (*pp == m) {
            *pp = m->next_held;
            break;
        }
    }
    m->next_held = NULL;
    thread *t = wait_pop(&m->waiters);
    m->owner = t;
    if (t) {
        t->blocked_on = NULL;
        m->depth = 1;
        m->next_held = t->held;
        t->held = m;
        t->prio = inherited_priority(t);
        thread_make_ready(t);
    }
    int8_t lent = self->prio;
    self->prio = inherited_priority(self); /* drop what this mutex lent */
    if (self->prio < lent)
        tpolicy_level_dropped();
    thread_reschedule();
    port_irq_restore(s);
    return TERN_OK;
}
