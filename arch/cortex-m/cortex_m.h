/* The Cortex-M port: what arch/cortex-m provides to boards and apps, and
 * what every Cortex-M board must provide to it.
 *
 * Exception priorities (lower number = more urgent; the port needs at least
 * 4 implemented priority bits, QEMU implements 8):
 *   0x00                      device interrupts (timers, test interrupts)
 *   (LEVELS - k) << 4         the dispatch vector of task priority k,
 *                             k = LEVELS-1 -> 0x10 ... k = 0 -> 0x80
 * port_set_level(k) writes BASEPRI = (LEVELS - k) << 4, which masks the
 * dispatch vectors of levels <= k and never a device interrupt. Critical
 * sections use PRIMASK, so they nest freely with BASEPRI. */
#ifndef TERN_CORTEX_M_H
#define TERN_CORTEX_M_H

#include <stdint.h>

#include "tern/config.h"
#include "tern/port.h"
#include "tern/types.h"

#define CM_PRIO_DEVICE 0x00u
#define CM_PRIO_LEVEL(k) ((uint32_t)(TERN_PRIO_LEVELS - (k)) << 4)
_Static_assert(TERN_PRIO_LEVELS <= 15, "task levels need NVIC priorities 0x10..0xf0");

/* Exit status of a run that ended in a fault or an unexpected exception. */
#define CM_EXIT_FAULT 3

typedef void (*cm_vector)(void);

/* Handlers provided by the arch, for the boards' vector tables. */
void cm_reset(void);
void cm_fault(void);          /* HardFault, MemManage, BusFault, UsageFault */
void cm_unexpected_irq(void); /* any vector nobody should raise */
/* The dispatch vector of task level k, and of software-triggered
 * interrupt k (CM_EXT_VECTOR places them in a board's table). */
void cm_level_irq0(void), cm_level_irq1(void), cm_level_irq2(void), cm_level_irq3(void),
    cm_level_irq4(void), cm_level_irq5(void), cm_level_irq6(void), cm_level_irq7(void);
void cm_test_irq0(void), cm_test_irq1(void);
/* PendSV: the thread models' context switch (context_cm.c); in the other
 * models a weak alias of cm_unexpected_irq. */
void cm_pendsv(void);
/* Called first by the fault handler with the faulting frame; may report
 * the fault more precisely and exit (weak, a no-op by default). */
void cm_fault_explain(const uint32_t *frame);

extern uint32_t __stack_top[];

/* The 16 core vectors; `systick` is the board's SysTick handler. */
#define CM_CORE_VECTORS(systick)                                                       \
    (cm_vector)(uintptr_t)__stack_top, cm_reset, cm_unexpected_irq /* NMI */, cm_fault, \
        cm_fault, cm_fault, cm_fault, 0, 0, 0, 0, cm_unexpected_irq /* SVCall */,      \
        cm_unexpected_irq /* DebugMonitor */, 0, cm_pendsv, (systick)

/* Provided by each board. */
extern const cm_vector board_vectors[];
/* One otherwise unused external interrupt per task level, and one per
 * software-triggered interrupt, pended by port_swirq_raise() through NVIC
 * STIR (IRQ numbers, vector = 16 + IRQ). A board defines them as
 * BOARD_LEVEL_IRQ0..7 and BOARD_TEST_IRQ0..1, and its device handlers as
 * BOARD_DEVICE_VECTOR(n), and builds board_vectors with CM_EXT_VECTORS8:
 * each level's and test interrupt's vector is then where its number says
 * by construction, checked when the image is built rather than at every
 * boot (issue 17: the run-time check and its message were ~150 B of a
 * minimal image). CM_BOARD_IRQS defines the two lists below. */
extern const uint8_t board_level_irq[TERN_PRIO_LEVELS];
extern const uint8_t board_test_irq[TERN_SWIRQS];
_Static_assert(TERN_PRIO_LEVELS == 8 && TERN_SWIRQS == 2, "CM_EXT_VECTOR names 8 levels, 2 test IRQs");
#define CM_BOARD_IRQS                                                                        \
    const uint8_t board_level_irq[TERN_PRIO_LEVELS] = {                                      \
        BOARD_LEVEL_IRQ0, BOARD_LEVEL_IRQ1, BOARD_LEVEL_IRQ2, BOARD_LEVEL_IRQ3,              \
        BOARD_LEVEL_IRQ4, BOARD_LEVEL_IRQ5, BOARD_LEVEL_IRQ6, BOARD_LEVEL_IRQ7};             \
    const uint8_t board_test_irq[TERN_SWIRQS] = {BOARD_TEST_IRQ0, BOARD_TEST_IRQ1}
/* The vector of external interrupt n: a level's, a test interrupt's, else
 * the board's (a constant expression: the table stays in flash). */
#define CM_EXT_VECTOR(n)                                                                     \
    ((n) == BOARD_LEVEL_IRQ0   ? cm_level_irq0                                               \
     : (n) == BOARD_LEVEL_IRQ1 ? cm_level_irq1                                               \
     : (n) == BOARD_LEVEL_IRQ2 ? cm_level_irq2                                               \
     : (n) == BOARD_LEVEL_IRQ3 ? cm_level_irq3                                               \
     : (n) == BOARD_LEVEL_IRQ4 ? cm_level_irq4                                               \
     : (n) == BOARD_LEVEL_IRQ5 ? cm_level_irq5                                               \
     : (n) == BOARD_LEVEL_IRQ6 ? cm_level_irq6                                               \
     : (n) == BOARD_LEVEL_IRQ7 ? cm_level_irq7                                               \
     : (n) == BOARD_TEST_IRQ0  ? cm_test_irq0                                                \
     : (n) == BOARD_TEST_IRQ1  ? cm_test_irq1                                                \
                               : BOARD_DEVICE_VECTOR(n))
/* External interrupts b..b+7. */
#define CM_EXT_VECTORS8(b)                                                                   \
    CM_EXT_VECTOR(b), CM_EXT_VECTOR((b) + 1), CM_EXT_VECTOR((b) + 2), CM_EXT_VECTOR((b) + 3), \
        CM_EXT_VECTOR((b) + 4), CM_EXT_VECTOR((b) + 5), CM_EXT_VECTOR((b) + 6),              \
        CM_EXT_VECTOR((b) + 7)
/* Console, clock and deadline hardware; called by cm_reset before main(). */
void board_init(void);

/* v as 8 lower-case hex digits on the console (the port's diagnostics,
 * without the formatter). */
void cm_puthex(uint32_t v);

/* Size of the main stack region (its deepest use: port_stack_used()). */
uint32_t port_stack_size(void);

/* Instructions port_work(n) executes beyond n, counted from its first
 * instruction to its return (bx lr); the caller adds its own bl and
 * argument set-up (measured: 2 more, see docs/boards.md). */
#define CM_WORK_OVERHEAD 4u

#endif
