/* The interface every arch + board pair implements for the kernel. Kept
 * small on purpose: a port is a counter, a one-shot deadline, interrupt
 * masking, a way to wait, a console and an exit. */
#ifndef TERN_PORT_H
#define TERN_PORT_H

#include "tern/idle.h"
#include "tern/types.h"

#if defined(__AVR__)
typedef uint8_t tern_irq_state; /* SREG: one register, not four, at every critical section */
#else
typedef uint32_t tern_irq_state;
#endif

/* Disable interrupts, returning the previous state / restore it. */
#if defined(__AVR__) && !defined(TERN_MODEL_threads) && !defined(TERN_MODEL_adaptive)
/* The AVR's run-to-completion models: the I bit of SREG, saved with the
 * rest of SREG. Inline: a call costs more than the two instructions, and
 * a post or a dispatch passes through several critical sections. */
#define TERN_IRQ_STATE_IS_SREG 1 /* assembly may save and restore it itself */
static inline __attribute__((always_inline)) tern_irq_state port_irq_save(void)
{
    tern_irq_state s;
    __asm__ volatile("in %0, __SREG__\n\tcli" : "=r"(s) : : "memory");
    return s;
}

static inline __attribute__((always_inline)) void port_irq_restore(tern_irq_state s)
{
    __asm__ volatile("out __SREG__, %0" : : "r"(s) : "memory");
}

static inline __attribute__((always_inline)) void port_irq_enable(void)
{
    __asm__ volatile("sei" : : : "memory");
}
#else
tern_irq_state port_irq_save(void);
void port_irq_restore(tern_irq_state s);
void port_irq_enable(void);
#endif

/* The free-running counter's width, a fact of the board known when the
 * image is built (its board.cmake sets TERN_COUNTER_BITS unless it is 32),
 * so the clock's hot reads test it at compile time; port_board.counter_bits
 * is the same number, for the host tools. */
#ifndef TERN_COUNTER_BITS
#define TERN_COUNTER_BITS 32
#endif
_Static_assert(TERN_COUNTER_BITS >= 16 && TERN_COUNTER_BITS <= 32,
               "TERN_COUNTER_BITS: the counter is 16..32 bits wide");

/* Static facts about the board's clock and sleep states. */
typedef struct {
    uint32_t clock_hz;       /* counter ticks per second (virtual time) */
    uint8_t counter_bits;    /* TERN_COUNTER_BITS */
    /* One tick stands for cycles_per_tick_num / cycles_per_tick_den cycles
     * of the CPU being studied (instructions on QEMU boards, where one
     * instruction stands for one cycle of the 4 MHz sensor CPU). */
    uint16_t cycles_per_tick_num;
    uint16_t cycles_per_tick_den;
    uint8_t n_sleep_states;
    const TERN_FLASH tern_sleep_state *sleep_states;
    /* The devices the board has, TERN_HW_* bits (tern/types.h): what a
     * module_hw entry of a multi-processor app may claim for it. */
    uint8_t hw;
} tern_board_info;
/* Constant, so TERN_FLASH: on the AVR it is read in place from flash
 * (13 bytes of RAM otherwise); a no-op elsewhere. */
extern const TERN_FLASH tern_board_info port_board;

/* Free-running up-counter, TERN_COUNTER_BITS wide. */
uint32_t port_counter_read(void);
/* Program the one-shot deadline `ticks` after now (1 <= ticks <= half a
 * counter wrap); on expiry the port calls tern_isr_enter(),
 * tern_clock_isr(), tern_isr_exit(). Replaces any earlier deadline. */
void port_deadline_set(uint32_t ticks);
/* Ports with a 32-bit counter (the clock's low half; the kernel uses it on
 * the AVR): the one-shot at counter value `at`, less than half a wrap
 * away; an `at` already passed, or too near to program, fires at once. */
void port_deadline_at(uint32_t at);
void port_deadline_cancel(void);

/* An interrupt posted a message that must preempt up to `level`: a port
 * with hardware dispatch (built with TERN_PORT_HW_DISPATCH=1, called from
 * the post) pends the vector of that level; a software port calls
 * tern_sched_preempt() (called when the outermost interrupt returns). */
#if defined(__AVR__)
void tern_sched_preempt(void);
/* Software dispatch, from tern_isr_exit() at the end of the outermost
 * interrupt, still inside it (I clear): the preempting handlers run here,
 * above whatever the interrupt interrupted, each with interrupts enabled;
 * the interrupt's reti resumes the code below afterwards. */
static inline __attribute__((always_inline)) void port_dispatch(uint8_t level)
{
    (void)level;
    tern_sched_preempt();
}
#else
void port_dispatch(uint8_t level);
#endif
/* The running dispatch level changed (-1 = none): a hardware-dispatch port
 * masks the vectors of levels <= level. */
#if defined(__AVR__)
/* Software dispatch masks nothing: no call, twice per handler. */
static inline __attribute__((always_inline)) void port_set_level(int8_t level) { (void)level; }
#else
void port_set_level(int8_t level);
#endif

/* Wait, interrupts enabled, until at least one interrupt has been handled;
 * return with interrupts disabled and true (false: nothing can ever wake
 * the system, only the host port says so). `state` is the sleep state the kernel
 * chose and `max_ticks` the time to the next deadline (UINT64_MAX: none). */
bool port_idle(uint8_t state, tern_time max_ticks);
/* From now on enter the sleep states' real modes (tern_power_init; AVR
 * boards): until then a port may account a deep state and sleep shallow. */
void port_sleep_modes(bool on);
/* Non-zero while the kernel waits in port_idle(); cleared by the first
 * interrupt. A port that idles by spinning (emulated boards) spins on it. */
extern volatile uint8_t tern_idle_waiting;

/* Exactly `cycles` cycles of work (instructions on QEMU boards), give or
 * take a constant call overhead the port documents; interrupts may preempt
 * it. Benchmarks build their workloads from it. */
void port_work(uint32_t cycles);

/* Software-triggered device interrupts, for tests and demos (not on the
 * host port, which injects interrupts by time instead): after
 * port_swirq_raise(k) interrupt k is pending, and its handler runs fn(arg)
 * between tern_isr_enter() and tern_isr_exit(), exactly like a driver. */
#define TERN_SWIRQS 2
typedef void (*tern_swirq_fn)(void *arg);
void port_swirq_set(unsigned k, tern_swirq_fn fn, void *arg);
void port_swirq_raise(unsigned k);

/* Deepest use of the main stack so far in bytes (the port paints it at
 * reset), 0 if the port cannot tell. Reported as max_stack_bytes. */
uint32_t port_stack_used(void);

void port_putc(char c);
_Noreturn void port_exit(int status);

/* Kernel entry points for ports. */
void tern_isr_enter(void);
void tern_isr_exit(void);
void tern_clock_isr(void);
/* Ports with a 32-bit counter (the AVR): the whole deadline interrupt,
 * tern_isr_enter(), tern_clock_isr() and tern_isr_exit(), for a vector that
 * has read the counter (port_counter_read()) and kept interrupts masked
 * since: that one read is the clock, and the idle period's end. */
void tern_clock_vector(uint32_t counter);
void tern_sched_preempt(void);
/* Hardware-dispatch ports: the vector of task level `level` was taken. */
void tern_sched_dispatch_level(uint8_t level);

#endif
