/* The board-independent half of tern/port.h on Cortex-M: interrupt
 * masking, hardware dispatch for the stack model, idle, exact-length work,
 * exit. The board half (board.c) is the console, clock and deadline. */
#include "cm3.h"
#include "cortex_m.h"
#include "tern/port.h"

/* Critical sections mask everything with PRIMASK. BASEPRI belongs to
 * port_set_level alone, so neither can undo the other. */
tern_irq_state port_irq_save(void)
{
    uint32_t s;
    __asm volatile("mrs %0, primask\n\tcpsid i" : "=r"(s)::"memory");
    return s;
}

void port_irq_restore(tern_irq_state s)
{
    __asm volatile("msr primask, %0" ::"r"(s) : "memory");
}

void port_irq_enable(void) { __asm volatile("cpsie i" ::: "memory"); }

/* Stack model, RTIC style: the NVIC is the scheduler. A message that must
 * preempt pends its level's vector; the hardware takes it as soon as the
 * running level (BASEPRI, or the active vector's own priority) is below it,
 * i.e. right after the posting interrupt returns, by tail-chaining. */
/* PORT_HOT: a step of every dispatch, a few instructions long; inlined
 * into the kernel by link-time optimisation, which -Os would otherwise
 * leave a call (issue 17). */
#define PORT_HOT inline __attribute__((always_inline))

/* STIR takes the IRQ number itself: no register address and bit to work
 * out, as NVIC_ISPR would need. No DSB/ISB after it (issue 17: 2 to 7
 * instructions under QEMU): the kernel pends a level only from an
 * interrupt handler or with PRIMASK set, so the vector cannot be taken
 * before that handler returns or PRIMASK is restored, and that restore
 * (an MSR without ISB) already lets a few instructions pass before a
 * pending interrupt is taken. RTIC pends with a plain store too. */
PORT_HOT void port_dispatch(uint8_t level)
{
    cm_pend_irq_lazy(board_level_irq[level]);
}

/* BASEPRI for each level, the kernel's TERN_LEVEL_IDLE (-1) first: one
 * load instead of a test for idle and a shift on every handler's entry
 * and exit (issue 17). */
static const uint8_t level_basepri[1 + TERN_PRIO_LEVELS] = {
    0, /* idle: nothing masked */
#define L(k) (uint8_t)CM_PRIO_LEVEL(k)
    L(0), L(1), L(2), L(3), L(4), L(5), L(6), L(7),
#undef L
};
_Static_assert(TERN_PRIO_LEVELS == 8, "one L(k) per task level");

PORT_HOT void port_set_level(int8_t level)
{
    cm_set_basepri((level_basepri + 1)[level]);
}

/* The vectors of the task levels: run that level's queued messages,
 * nested on the main stack like any interrupt. One stub per level, so the
 * level is a constant rather than something to look up on every dispatch
 * (issue 17). CM_EXT_VECTOR puts them in the board's table. */
#define LEVEL_VECTOR(k) \
    void cm_level_irq##k(void) { tern_sched_dispatch_level(k); }
LEVEL_VECTOR(0)
LEVEL_VECTOR(1)
LEVEL_VECTOR(2)
LEVEL_VECTOR(3)
LEVEL_VECTOR(4)
LEVEL_VECTOR(5)
LEVEL_VECTOR(6)
LEVEL_VECTOR(7)
_Static_assert(TERN_PRIO_LEVELS == 8, "one LEVEL_VECTOR per task level");

/* Spin rather than WFI: under QEMU -icount sleep=off a WFI advances
 * virtual time by twice the time to the next deadline. The chosen sleep
 * state is accounted by the kernel, not entered. */
bool port_idle(uint8_t state, tern_time max_ticks)
{
    (void)state;
    (void)max_ticks;
    port_irq_enable();
    while (tern_idle_waiting)
        ;
    __asm volatile("cpsid i" ::: "memory");
    return true;
}

/* Exactly `cycles` instructions plus CM_WORK_OVERHEAD (4): lsrs, bcc, cbz
 * and bx; the loop is 2 instructions per iteration and an odd count adds
 * one nop. Under -icount every instruction is one unit of virtual time,
 * taken branch or not. */
__attribute__((naked)) void port_work(uint32_t cycles)
{
    (void)cycles;
    __asm volatile("lsrs r1, r0, #1\n\t" /* r1 = cycles / 2, carry = cycles & 1 */
                   "bcc 1f\n\t"
                   "nop\n"
                   "1:\n\t"
                   "cbz r1, 3f\n"
                   "2:\n\t"
                   "subs r1, r1, #1\n\t"
                   "bne 2b\n"
                   "3:\n\t"
                   "bx lr\n");
}

/* Semihosting SYS_EXIT_EXTENDED (0x20) with ADP_Stopped_ApplicationExit:
 * QEMU (-semihosting-config enable=on,target=native) exits with `status`. */
_Noreturn void port_exit(int status)
{
    __asm volatile("cpsid i" ::: "memory");
    volatile uint32_t block[2] = {0x20026u, (uint32_t)status};
    register uint32_t r0 __asm("r0") = 0x20u;
    register volatile uint32_t *r1 __asm("r1") = block;
    __asm volatile("bkpt 0xab" ::"r"(r0), "r"(r1) : "memory");
    for (;;) /* no semihosting: stop here */
        ;
}

/* --- Software-triggered device interrupts ------------------------------- */

static tern_swirq_fn swirq_fn[TERN_SWIRQS];
static void *swirq_arg[TERN_SWIRQS];

void port_swirq_set(unsigned k, tern_swirq_fn fn, void *arg)
{
    tern_irq_state s = port_irq_save();
    swirq_fn[k] = fn;
    swirq_arg[k] = arg;
    port_irq_restore(s);
}

void port_swirq_raise(unsigned k)
{
    cm_pend_irq(board_test_irq[k]);
}

/* One vector per software-triggered interrupt, like a device's own: no
 * search for which one fired. */
static inline __attribute__((always_inline)) void test_irq(unsigned k)
{
    tern_isr_enter();
    if (swirq_fn[k])
        swirq_fn[k](swirq_arg[k]);
    tern_isr_exit();
}

void cm_test_irq0(void) { test_irq(0); }
void cm_test_irq1(void) { test_irq(1); }
_Static_assert(TERN_SWIRQS == 2, "one cm_test_irq per software-triggered interrupt");
