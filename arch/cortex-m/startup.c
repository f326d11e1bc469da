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
#include "tern/thread.h" /* TERN_EXIT_STACK_OVERFLOW */

#define STACK_PAINT 0x5354414bu /* "STAK" */

extern uint32_t __data_load[], __data_start[], __data_end[];
extern uint32_t __bss_start[], __bss_end[];
extern uint32_t __stack_limit[];

int main(void);

static void main_stack_guard(void);

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
    main_stack_guard();
    board_init();
    __asm volatile("cpsie i" ::: "memory");
    port_exit(main());
}

/* The port's diagnostics print with tern_puts/tern_putu and this, not the
 * formatter: an image whose app does not format then links none of it
 * (~600 B on Cortex-M3, issue 17), as the AVR's minimal images. */
void cm_puthex(uint32_t v)
{
    char s[9];
    for (int i = 7; i >= 0; i--, v >>= 4)
        s[i] = "0123456789abcdef"[v & 0xfu];
    s[8] = '\0';
    tern_puts(s);
}

/* Text, then a number in decimal (put_su) or hex (put_sx): one call
 * where a diagnostic has a number, not two. */
static void put_su(const char *s, uint32_t v)
{
    tern_puts(s);
    tern_putu(v);
}

static void put_sx(const char *s, uint32_t v)
{
    tern_puts(s);
    cm_puthex(v);
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

/* --- The main stack's guard ---------------------------------------------
 * fifo, priority, stack and hybrid run every handler on the main stack
 * (the thread models their interrupts), at the bottom of RAM. Its lowest
 * CM_MAIN_GUARD bytes are an MPU region the CPU may only read, so an
 * overflow faults at its first write there instead of running on below
 * RAM (QEMU's mps2-an385 ignores writes there: the fault report came
 * later and read a garbage frame). Region 6: the thread models' guard of
 * the running thread is region 7. HardFault runs with the MPU off
 * (MPU_CTRL.HFNMIENA clear), so a fault escalated while its frame is
 * pushed into the guard is still taken; cm_fault then moves off the guard
 * before it calls C. */
#define CM_MAIN_GUARD 32u
#define MAIN_GUARD_REGION 6u
/* What fault_report and its printing need below the stack pointer: a
 * handler entered with less than this above the guard moves to the top of
 * the main stack (its frame stays where it is, read-only to the report). */
#define CM_FAULT_ROOM 512

static bool main_guarded;

static void main_stack_guard(void)
{
    if (MPU_TYPE_DREGION(MPU_TYPE) == 0)
        return; /* no MPU: an overflow runs off the bottom of RAM */
    MPU_RNR = MAIN_GUARD_REGION;
    MPU_RBAR = (uint32_t)(uintptr_t)__stack_limit;
    MPU_RASR = MPU_RASR_XN | MPU_RASR_AP_PRIV_RO | MPU_RASR_SIZE(__builtin_ctz(CM_MAIN_GUARD)) |
               MPU_RASR_ENABLE;
    MPU_CTRL = MPU_CTRL_ENABLE | MPU_CTRL_PRIVDEFENA;
    cm_dsb_isb();
    main_guarded = true;
}

/* A write into the guard (MemManage with its address), an exception frame
 * pushed into it or below (MSTKERR), or a precise bus error just below RAM
 * (an overflow that jumped the guard with a large frame): the main stack
 * overflowed. Named with the stack's size and how deep the write went. */
static void main_stack_explain(const uint32_t *frame)
{
    uintptr_t lo = (uintptr_t)__stack_limit, hi = lo + CM_MAIN_GUARD;
    uint32_t cfsr = SCB_CFSR;
    uintptr_t at = 0;
    if ((cfsr & CFSR_MMARVALID) && SCB_MMFAR < hi && SCB_MMFAR + port_stack_size() >= lo)
        at = SCB_MMFAR; /* below lo: a board's no-access region under RAM (lm3s6965evb) */
    else if ((cfsr & CFSR_BFARVALID) && SCB_BFAR < lo && SCB_BFAR + port_stack_size() >= lo)
        at = SCB_BFAR;
    else if ((cfsr & CFSR_MSTKERR) && (uintptr_t)frame < hi + 32u)
        at = (uintptr_t)frame; /* the 8-word frame ran into the guard */
    if (!at || !main_guarded)
        return;
    put_su("\ntern: stack overflow in the shared stack: its ", CM_MAIN_GUARD);
    put_sx("-byte MPU guard at ", lo);
    put_sx(" was written at ", at);
    put_su(" (", (uint32_t)((uintptr_t)__stack_top - at));
    put_su(" of ", port_stack_size());
    tern_puts(" bytes used)\n");
    port_exit(TERN_EXIT_STACK_OVERFLOW);
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

/* fault_report's two lines of registers, "  CFSR=... HFSR=... MMFAR=...
 * BFAR=..." and "  PC=... LR=... xPSR=... SP=..." (at file scope, where
 * tern bench micro's kernel_text counts it). */
static const char *const fault_fields[8] = {"  CFSR=", " HFSR=", " MMFAR=", " BFAR=",
                                            "  PC=",   " LR=",   " xPSR=",  " SP="};

__attribute__((used, noreturn)) static void fault_report(const uint32_t *frame)
{
    __asm volatile("cpsid i" ::: "memory");
    main_stack_explain(frame); /* first: a thread's guard check would claim its frame */
    cm_fault_explain(frame);
    uint32_t n = cm_get_ipsr() & 0x1ffu;
    tern_task_id task = tern_self();
    tern_puts("\ntern: FAULT ");
    tern_puts(exception_name(n));
    put_su(" (exception ", n);
    tern_puts(")\n");
    const uint32_t values[8] = {SCB_CFSR, SCB_HFSR, SCB_MMFAR, SCB_BFAR,
                                frame[6], frame[5], frame[7], (uint32_t)(uintptr_t)(frame + 8)};
    for (int i = 0; i < 8; i++) {
        put_sx(fault_fields[i], values[i]);
        if (i % 4 == 3)
            tern_puts("\n");
    }
    if (task == TERN_NO_TASK) {
        tern_puts("  task=none (interrupt or idle)\n");
    } else {
        tern_puts("  task=");
        tern_puts(tern_task_name(task));
        put_su(" (id ", task);
        tern_puts(")\n");
    }
    port_exit(CM_EXIT_FAULT);
}

/* Find the frame on whichever stack the faulting code used (EXC_RETURN
 * bit 2), then report. Naked: the frame must be located before anything
 * else is pushed, and nothing is pushed while the stack pointer may lie in
 * the main stack's guard (less than CM_FAULT_ROOM above it: the report
 * runs from the top of the main stack instead). */
__attribute__((naked)) void cm_fault(void)
{
    __asm volatile("tst lr, #4\n\t"
                   "ite eq\n\t"
                   "mrseq r0, msp\n\t"
                   "mrsne r0, psp\n\t"
                   "movw r1, #:lower16:__stack_limit\n\t"
                   "movt r1, #:upper16:__stack_limit\n\t"
                   "add r1, r1, %0\n\t"
                   "cmp sp, r1\n\t"
                   "bhs 1f\n\t"
                   "movw r1, #:lower16:__stack_top\n\t"
                   "movt r1, #:upper16:__stack_top\n\t"
                   "mov sp, r1\n"
                   "1:\n\t"
                   "b fault_report\n"
                   :
                   : "i"(CM_MAIN_GUARD + CM_FAULT_ROOM));
}

/* Replaced by the thread models' context switch (context_cm.c). */
void cm_pendsv(void) __attribute__((weak, alias("cm_unexpected_irq")));

void cm_unexpected_irq(void)
{
    __asm volatile("cpsid i" ::: "memory");
    uint32_t n = cm_get_ipsr() & 0x1ffu;
    put_su("\ntern: unexpected exception ", n);
    tern_puts(" (");
    tern_puts(exception_name(n));
    if (n >= 16)
        put_su(" ", n - 16);
    tern_puts(")\n");
    port_exit(CM_EXIT_FAULT);
}
