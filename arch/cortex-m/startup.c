/* Reset and fault handling for every Cortex-M board.
 *
 * Reset: paint the main stack (so the deepest use can be measured later),
 * copy .data from flash, zero .bss, set the exception priorities, let the
 * board bring up its console and timers, run main(). */
#include <stdint.h>

#include "cm3.h"
#include "cortex_m.h"
#include "tern/console.h"
#include "tern/port.h"
#include "tern/task.h"

#define STACK_PAINT 0x5354414bu /* "STAK" */

extern uint32_t __data_load[], __data_start[], __data_end[];
extern uint32_t __bss_start[], __bss_end[];
extern uint32_t __stack_limit[];

int main(void);

static void check_vectors(void);

/* Set every exception's priority (see cortex_m.h) and enable the task-level
 * dispatch vectors. Device interrupts keep their reset priority, 0. */
static void exceptions_init(void)
{
    /* Report MemManage, BusFault and UsageFault as themselves rather than
     * as an escalated HardFault: the fault registers then say more. */
    SCB_SHCSR |= SHCSR_MEMFAULTENA | SHCSR_BUSFAULTENA | SHCSR_USGFAULTENA;
    for (int k = 0; k < TERN_PRIO_LEVELS; k++) {
        uint8_t irq = board_level_irq[k];
        NVIC_IPR8(irq) = (uint8_t)CM_PRIO_LEVEL(k);
        NVIC_ICPR(irq) = NVIC_BIT(irq);
        NVIC_ISER(irq) = NVIC_BIT(irq);
    }
    for (int k = 0; k < TERN_SWIRQS; k++) {
        uint8_t irq = board_test_irq[k];
        NVIC_IPR8(irq) = CM_PRIO_DEVICE;
        NVIC_ICPR(irq) = NVIC_BIT(irq);
        NVIC_ISER(irq) = NVIC_BIT(irq);
    }
}

void cm_reset(void)
{
    __asm volatile("cpsid i" ::: "memory");
    /* Everything below the current stack pointer is free; volatile keeps
     * the compiler from turning this into a memset call that would use the
     * very stack being painted. */
    uint32_t *sp;
    __asm volatile("mov %0, sp" : "=r"(sp));
    for (volatile uint32_t *p = __stack_limit; p < sp; p++)
        *p = STACK_PAINT;
    for (uint32_t *src = __data_load, *dst = __data_start; dst < __data_end;)
        *dst++ = *src++;
    for (uint32_t *dst = __bss_start; dst < __bss_end;)
        *dst++ = 0;

    SCB_VTOR = (uint32_t)(uintptr_t)board_vectors;
    exceptions_init();
    board_init();
    check_vectors();
    __asm volatile("cpsie i" ::: "memory");
    port_exit(main());
}

/* The board's table and its IRQ lists must agree: a level whose vector is
 * not cm_level_irq would never dispatch. Checked once, at boot. */
static void check_vectors(void)
{
    for (int k = 0; k < TERN_PRIO_LEVELS; k++) {
        if (board_vectors[16 + board_level_irq[k]] != cm_level_irq) {
            tern_printf("tern: vector of IRQ %u (task level %d) is not cm_level_irq\n",
                        board_level_irq[k], k);
            port_exit(CM_EXIT_FAULT);
        }
    }
    for (int k = 0; k < TERN_SWIRQS; k++) {
        if (board_vectors[16 + board_test_irq[k]] != cm_test_irq) {
            tern_printf("tern: vector of IRQ %u (test interrupt %d) is not cm_test_irq\n",
                        board_test_irq[k], k);
            port_exit(CM_EXIT_FAULT);
        }
    }
}

uint32_t port_stack_size(void)
{
    return (uint32_t)((uintptr_t)__stack_top - (uintptr_t)__stack_limit);
}

uint32_t port_stack_used(void)
{
    const uint32_t *p = __stack_limit;
    while (p < __stack_top && *p == STACK_PAINT)
        p++;
    return (uint32_t)((uintptr_t)__stack_top - (uintptr_t)p);
}

/* --- Faults -------------------------------------------------------------- */

static const char *exception_name(uint32_t n)
{
    switch (n) {
    case 2: return "NMI";
    case 3: return "HardFault";
    case 4: return "MemManage";
    case 5: return "BusFault";
    case 6: return "UsageFault";
    case 11: return "SVCall";
    case 12: return "DebugMonitor";
    case 14: return "PendSV";
    case 15: return "SysTick";
    default: return n >= 16 ? "IRQ" : "reserved";
    }
}

/* Called by cm_fault with the exception frame (r0-r3, r12, lr, pc, xpsr)
 * of the code that faulted. Never returns. */
/* The thread models tell a stack overflow (a write into a thread's MPU
 * guard) from other faults (context_cm.c); elsewhere nothing to add. */
__attribute__((weak)) void cm_fault_explain(const uint32_t *frame) { (void)frame; }

__attribute__((used, noreturn)) static void fault_report(const uint32_t *frame)
{
    __asm volatile("cpsid i" ::: "memory");
    cm_fault_explain(frame);
    uint32_t n = cm_get_ipsr() & 0x1ffu;
    tern_task_id task = tern_self();
    tern_printf("\ntern: FAULT %s (exception %lu)\n", exception_name(n), (unsigned long)n);
    tern_printf("  CFSR=%08lx HFSR=%08lx MMFAR=%08lx BFAR=%08lx\n", (unsigned long)SCB_CFSR,
                (unsigned long)SCB_HFSR, (unsigned long)SCB_MMFAR, (unsigned long)SCB_BFAR);
    tern_printf("  PC=%08lx LR=%08lx xPSR=%08lx SP=%08lx\n", (unsigned long)frame[6],
                (unsigned long)frame[5], (unsigned long)frame[7],
                (unsigned long)(uintptr_t)(frame + 8));
    if (task == TERN_NO_TASK)
        tern_printf("  task=none (interrupt or idle)\n");
    else
        tern_printf("  task=%s (id %u)\n", tern_task_name(task), task);
    port_exit(CM_EXIT_FAULT);
}

/* Find the frame on whichever stack the faulting code used (EXC_RETURN
 * bit 2), then report. Naked: the frame must be located before anything
 * else is pushed. */
__attribute__((naked)) void cm_fault(void)
{
    __asm volatile("tst lr, #4\n\t"
                   "ite eq\n\t"
                   "mrseq r0, msp\n\t"
                   "mrsne r0, psp\n\t"
                   "b fault_report\n");
}

/* Replaced by the thread models' context switch (context_cm.c). */
void cm_pendsv(void) __attribute__((weak, alias("cm_unexpected_irq")));

void cm_unexpected_irq(void)
{
    __asm volatile("cpsid i" ::: "memory");
    uint32_t n = cm_get_ipsr() & 0x1ffu;
    tern_printf("\ntern: unexpected exception %lu (%s", (unsigned long)n, exception_name(n));
    if (n >= 16)
        tern_printf(" %lu", (unsigned long)(n - 16));
    tern_printf(")\n");
    port_exit(CM_EXIT_FAULT);
}
