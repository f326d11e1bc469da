/* Thread contexts on Cortex-M3 (the thread models' half of the port, see
 * kernel/thread.h): threads run in thread mode on the process stack (PSP),
 * interrupts on the main stack. A switch is PendSV at the lowest priority,
 * so it happens only once every interrupt handler has returned and
 * interrupts are unmasked; the hardware has stacked r0-r3, r12, lr, pc and
 * xPSR on the thread's stack, PendSV adds r4-r11. The MPU keeps the running
 * thread's stack guard read-only, so an overflow faults at the first write
 * (MemManage, reported with the task by the fault handler). */
#include "cm3.h"
#include "cortex_m.h"
#include "../../kernel/thread.h" /* the thread models' port interface */

#define GUARD_REGION 7u /* the highest number wins where regions overlap */

#define ICSR_PENDSVSET (1u << 28)
#define XPSR_THUMB 0x01000000u
#define PRIO_PENDSV 0xffu

/* A MemManage fault whose address (or, when the exception frame itself
 * could not be pushed, whose stack pointer) lies in the running thread's
 * guard is that thread's stack overflow. */
void cm_fault_explain(const uint32_t *frame)
{
    const thread *t = thread_current();
    if (!threads_started() || !t)
        return;
    uintptr_t lo = (uintptr_t)t->stack_lo, hi = lo + TERN_STACK_GUARD;
    uint32_t cfsr = SCB_CFSR;
    uintptr_t addr = (uintptr_t)SCB_MMFAR;
    bool hit = (cfsr & CFSR_MMARVALID) && addr >= lo && addr < hi;
    if (!hit && (cfsr & CFSR_MSTKERR)) {
        addr = (uintptr_t)frame;
        hit = addr < hi + 32u; /* the 8-word frame ran into the guard */
    }
    if (hit) {
        tern_puts("\ntern: MemManage: write at ");
        cm_puthex(addr);
        tern_puts(", in the MPU guard ");
        cm_puthex(lo);
        tern_puts("..");
        cm_puthex(hi - 1);
        tern_puts("\n");
        thread_stack_overflow(t, frame);
    }
}

/* A thread that returns from its entry function: the kernel's bodies loop
 * forever, so this is a bug worth stopping for. */
static void thread_returned(void)
{
    tern_puts("\ntern: a thread returned from its entry function\n");
    port_exit(CM_EXIT_FAULT);
}

/* The first frame: what PendSV pops when the thread first runs. */
void *port_thread_init(uint8_t *stack_lo, uint32_t size, void (*entry)(void *), void *arg)
{
    uint32_t *sp = (uint32_t *)(void *)(((uintptr_t)stack_lo + size) & ~(uintptr_t)7);
    *--sp = XPSR_THUMB;
    *--sp = (uint32_t)(uintptr_t)entry & ~1u; /* pc */
    *--sp = (uint32_t)(uintptr_t)thread_returned; /* lr */
    *--sp = 0;                                    /* r12 */
    *--sp = 0;                                    /* r3 */
    *--sp = 0;                                    /* r2 */
    *--sp = 0;                                    /* r1 */
    *--sp = (uint32_t)(uintptr_t)arg;             /* r0 */
    for (int r = 11; r >= 4; r--)
        *--sp = 0; /* r11 .. r4 */
    return sp;
}

/* The compiler barrier first, as cm_pend_irq's: the volatile ICSR store is
 * ordered only against other volatile accesses, and with link-time
 * optimisation the ready queues' plain stores before it (inlined from the
 * kernel) could move after it; PendSV taken in between would switch on a
 * stale queue. */
void port_thread_switch(void)
{
    __asm volatile("" ::: "memory");
    SCB_ICSR = ICSR_PENDSVSET;
}

/* Every guard is TERN_STACK_GUARD bytes, so a switch only moves the region:
 * one RBAR write that names the region itself (VALID), no RNR, RASR or
 * CTRL write (port_thread_start made those once). The DSB completes the
 * write before PendSV's own stores; the exception return that follows is
 * the context synchronisation an ISB would be. */
void port_thread_guard(uint8_t *stack_lo)
{
#if TERN_MPU_GUARD
    MPU_RBAR = (uint32_t)(uintptr_t)stack_lo | MPU_RBAR_VALID | GUARD_REGION;
    __asm volatile("dsb" ::: "memory");
#else
    (void)stack_lo;
#endif
}

/* The guard region's attributes, the same for every thread: read-only,
 * never executed, TERN_STACK_GUARD bytes (size = 2^(SIZE+1)). */
static void guard_enable(void)
{
#if TERN_MPU_GUARD
    uint32_t size_field = (uint32_t)__builtin_ctz(TERN_STACK_GUARD) - 1u;
    MPU_RNR = GUARD_REGION;
    MPU_RASR = MPU_RASR_XN | MPU_RASR_AP_PRIV_RO | (size_field << 1) | MPU_RASR_ENABLE;
    MPU_CTRL = MPU_CTRL_ENABLE | MPU_CTRL_PRIVDEFENA;
    cm_dsb_isb();
#endif
}

/* Become the first thread: PendSV at the lowest priority, thread mode on
 * the process stack at `stack_top`, then the entry function. The main
 * stack keeps main()'s frame (an app may have handed the kernel pointers
 * into it, since tern_run never returns); interrupts nest below it. */
void port_thread_start(uint8_t *stack_top, void (*entry)(void *), void *arg)
{
    guard_enable(); /* at the base threads_start placed (port_thread_guard) */
    SCB_SHPR3 = (SCB_SHPR3 & ~(0xffu << 16)) | (PRIO_PENDSV << 16);
    __asm volatile("cpsid i\n\t"
                   "msr psp, %0\n\t"
                   "movs r0, #2\n\t" /* CONTROL.SPSEL: thread mode uses PSP */
                   "msr control, r0\n\t"
                   "isb\n\t"
                   "mov r0, %2\n\t"
                   "cpsie i\n\t"
                   "blx %1\n\t"
                   :
                   : "r"(stack_top), "r"(entry), "r"(arg)
                   : "r0", "memory");
    thread_returned();
    for (;;)
        ;
}

/* PendSV: save r4-r11 below the hardware frame, let the kernel choose, and
 * resume whichever thread it returns. r4 carries EXC_RETURN across the
 * call (thread_switch preserves it as a callee-saved register). The kernel
 * chooses with interrupts masked; PendSV, the lowest priority, only runs
 * when PRIMASK is clear, so it is cleared again after. */
__attribute__((naked)) void cm_pendsv(void)
{
    __asm volatile("mrs r0, psp\n\t"
                   "stmdb r0!, {r4-r11}\n\t"
                   "mov r4, lr\n\t"
                   "cpsid i\n\t"
                   "bl thread_switch\n\t"
                   "mov lr, r4\n\t"
                   "ldmia r0!, {r4-r11}\n\t"
                   "msr psp, r0\n\t"
                   "cpsie i\n\t"
                   "bx lr\n");
}
