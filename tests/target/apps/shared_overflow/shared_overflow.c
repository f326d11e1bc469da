/* A handler whose stack use runs into the guard of the one shared stack
 * (arch/avr: AVR_STACK_GUARD bytes right above .bss): a buffer on the
 * stack that reaches down to 4 bytes above .bss, all of it written. The
 * kernel must name the overflow at its next idle and stop with
 * TERN_EXIT_STACK_OVERFLOW, not go on with .bss rewritten. Nothing below
 * the guard is touched, so what the kernel prints is still true. */
#include <avr/io.h>

#include "avr.h"
#include "tern/port.h"
#include "tern/tern.h"

static __attribute__((noinline)) uint8_t fill_down_to_guard(void)
{
    uint16_t room = (uint16_t)(SP - (uint16_t)(__stack_limit + 4)); /* the buffer is the deepest thing */
    volatile uint8_t deep[room];
    for (uint16_t i = 0; i < room; i++)
        deep[i] = (uint8_t)i;
    return deep[0];
}

/* Interrupts masked while the buffer is there: an interrupt's frame would
 * land below it, past the guard, into .bss (on a 16 KB part the fill takes
 * long enough for one to come). */
static uint8_t dig(void)
{
    uint8_t sreg = SREG;
    __asm__ volatile("cli" ::: "memory");
    uint8_t first = fill_down_to_guard();
    SREG = sreg;
    return first;
}

static tern_status digger(void *state, tern_msg *m)
{
    (void)state;
    if (m->port == TERN_PORT_INIT) {
        tern_printf("shared_overflow: digging\n");
        (void)dig();
        tern_printf("shared_overflow: back from the deep\n");
    }
    return TERN_OK;
}

int main(void)
{
    static const tern_task_desc tasks[] = {
        {.name = "digger", .id = 0, .priority = 1, .handler = digger},
    };
    static const tern_app_desc app = {.name = "shared_overflow", .tasks = tasks, .n_tasks = 1};

    tern_init();
    tern_app_run(&app);
}
