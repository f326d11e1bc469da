/* The floors of issue 17's dispatch paths on mps2-an385 (Cortex-M3 under
 * QEMU): the paths bench/micro measures, with no kernel. The NVIC is the
 * scheduler, as in the stack model's hardware dispatch: a task level is an
 * interrupt vector (level 0 = IRQ 16 at 0x80, level 5 = IRQ 17 at 0x30),
 * a post to a task is a pend of its level's vector, the "handler" is the
 * vector's own C function. The same clock as the port (TIMER0, 25 MHz,
 * read as an up-counter), the same deadline timer (TIMER1, IRQ 9) and the
 * same test interrupt (IRQ 24, device priority) as boards/mps2-an385.
 * Printed per path, in instructions (a tick is 5/8 of one at -icount
 * shift=6), the read pair's cost subtracted as bench/micro does:
 *
 *   irq_to_handler_preempt  a level-0 handler reads the clock and pends
 *       the device interrupt; its vector pends level 5 (the post); level
 *       5's vector reads the clock. What a kernel adds to this is the
 *       post's work (a message, its checks, a queue) and the dispatch's
 *       (which message, which task, the nesting bookkeeping).
 *   msg_roundtrip  A (level 0) reads the clock, calls B's handler (a post
 *       from a task to a higher one runs nested at once), B pends A's
 *       vector (A is running: its message waits), both return and the
 *       NVIC takes A's vector again: one start of A to the next.
 *   timer_delay  TIMER1 armed for a deadline; its vector stops it and
 *       pends level 5 (the TIMEOUT post), whose vector reads the clock:
 *       deadline to the handler's first statement (the deadline is the
 *       counter value read right after the timer is started, plus the
 *       ticks programmed: a tick or two late, so the floor a tick or two
 *       low).
 *
 * Built and run without the kernel's build (docs/dispatch-cost.md):
 *
 *   arm-none-eabi-gcc -mcpu=cortex-m3 -mthumb -Os -ffreestanding -nostdlib \
 *       -T boards/mps2-an385/mps2-an385.ld -Larch/cortex-m \
 *       -o build/cm_floor.elf bench/floor/cm_floor.c -lgcc
 *   ./tern run --board mps2-an385 build/cm_floor.elf
 */
#include <stdint.h>

#define REG(a) (*(volatile uint32_t *)(a))
#define UART_DATA REG(0x40004000u)
#define UART_STATE REG(0x40004004u)
#define UART_CTRL REG(0x40004008u)
#define UART_BAUDDIV REG(0x40004010u)
#define TIMER_CTRL(b) REG((b) + 0x00u)
#define TIMER_VALUE(b) REG((b) + 0x04u)
#define TIMER_RELOAD(b) REG((b) + 0x08u)
#define TIMER_INTCLEAR(b) REG((b) + 0x0Cu)
#define CLOCK 0x40000000u    /* TIMER0 */
#define DEADLINE 0x40001000u /* TIMER1, IRQ 9 */
#define NVIC_ISER0 REG(0xE000E100u)
#define NVIC_ICPR0 REG(0xE000E280u)
#define NVIC_IPR(n) (*(volatile uint8_t *)(0xE000E400u + (n)))
#define NVIC_STIR REG(0xE000EF00u)

enum { IRQ_DEADLINE = 9, IRQ_LOW = 16, IRQ_HIGH = 17, IRQ_DEV = 24 };
#define ROUNDS 1000
#define GAP 4000u /* ticks from arming to the deadline */

static inline uint32_t now(void) { return ~TIMER_VALUE(CLOCK); }

/* As the port's cm_pend_irq: no store moves after the pend. */
static inline void pend(uint32_t irq)
{
    __asm volatile("" ::: "memory");
    NVIC_STIR = irq;
    __asm volatile("dsb\n\tisb" ::: "memory");
}

static enum { IRQ, ROUNDTRIP, TIMER } path;
static volatile uint32_t t_start, rounds_left;
static volatile uint8_t done;
static uint32_t sum, lo, hi, n;

static void sample(uint32_t ticks)
{
    sum += ticks;
    n++;
    if (ticks < lo)
        lo = ticks;
    if (ticks > hi)
        hi = ticks;
}

/* Task B's handler (level 5), called nested by A in the round trip. */
__attribute__((noinline)) static void b_handler(void) { pend(IRQ_LOW); /* the post back to A */ }

static void low_irq(void) /* task A, level 0 */
{
    uint32_t t = now();
    if (path == IRQ) {
        t_start = t;
        pend(IRQ_DEV);
        return;
    }
    /* the round trip: one start of A to the next */
    if (t_start)
        sample(t - t_start);
    t_start = t;
    if (--rounds_left == 0) {
        done = 1;
        return;
    }
    b_handler();
}

static void high_irq(void) /* task B, level 5: the handler the interrupt posts to */
{
    uint32_t t = now();
    sample(t - t_start);
    done = 1;
}

static void dev_irq(void) { pend(IRQ_HIGH); }

static void deadline_irq(void)
{
    TIMER_CTRL(DEADLINE) = 0;
    TIMER_INTCLEAR(DEADLINE) = 1;
    pend(IRQ_HIGH);
}

static void putc_(char c)
{
    while (UART_STATE & 1u)
        ;
    UART_DATA = (uint8_t)c;
}

static void puts_(const char *s)
{
    while (*s)
        putc_(*s++);
}

/* ticks as instructions (5/8 of a tick each), to a tenth */
static void put_instr(uint32_t ticks)
{
    uint32_t tenths = (ticks * 50u + 4u) / 8u;
    char buf[12];
    int i = 0;
    uint32_t whole = tenths / 10u;
    do
        buf[i++] = (char)('0' + whole % 10u);
    while ((whole /= 10u) != 0);
    while (i)
        putc_(buf[--i]);
    putc_('.');
    putc_((char)('0' + tenths % 10u));
}

static void report(const char *name, uint32_t pair)
{
    puts_("FLOOR name=");
    puts_(name);
    puts_(" min=");
    put_instr(lo - pair);
    puts_(" avg=");
    put_instr((sum + n / 2u) / n - pair);
    puts_(" max=");
    put_instr(hi - pair);
    puts_(" overhead=");
    put_instr(pair);
    puts_(" unit=instructions\n");
}

static void reset_stats(void)
{
    sum = n = hi = 0;
    lo = UINT32_MAX;
}

static void wait_done(void)
{
    while (!done)
        ;
    done = 0;
}

__attribute__((noreturn)) static void exit_(uint32_t status)
{
    volatile uint32_t block[2] = {0x20026u, status};
    register uint32_t r0 __asm("r0") = 0x20u;
    register volatile uint32_t *r1 __asm("r1") = block;
    __asm volatile("bkpt 0xab" ::"r"(r0), "r"(r1) : "memory");
    for (;;)
        ;
}

static void fault(void) { exit_(3); }

extern uint32_t __stack_top, __data_start, __data_end, __data_load, __bss_start, __bss_end;

__attribute__((noreturn)) void cm_reset(void); /* the linker script's entry */
__attribute__((noreturn)) void cm_reset(void)
{
    for (uint32_t *d = &__data_start, *s = &__data_load; d < &__data_end;)
        *d++ = *s++;
    for (uint32_t *b = &__bss_start; b < &__bss_end;)
        *b++ = 0;
    UART_BAUDDIV = 16;
    UART_CTRL = 1;
    TIMER_RELOAD(CLOCK) = 0xFFFFFFFFu;
    TIMER_VALUE(CLOCK) = 0xFFFFFFFFu;
    TIMER_CTRL(CLOCK) = 1;
    NVIC_IPR(IRQ_DEV) = 0x00;      /* a device */
    NVIC_IPR(IRQ_DEADLINE) = 0x00; /* a device */
    NVIC_IPR(IRQ_HIGH) = 0x30;     /* level 5 */
    NVIC_IPR(IRQ_LOW) = 0x80;      /* level 0 */
    NVIC_ISER0 = (1u << IRQ_DEV) | (1u << IRQ_DEADLINE) | (1u << IRQ_HIGH) | (1u << IRQ_LOW);
    __asm volatile("cpsie i" ::: "memory");

    uint32_t pair = UINT32_MAX; /* one back-to-back pair of reads */
    for (int i = 0; i < 16; i++) {
        uint32_t a = now(), b = now();
        if (b - a < pair)
            pair = b - a;
    }

    path = IRQ;
    reset_stats();
    for (int i = 0; i < ROUNDS; i++) {
        pend(IRQ_LOW);
        wait_done();
    }
    report("irq_to_handler_preempt", pair);

    path = ROUNDTRIP;
    reset_stats();
    t_start = 0;
    rounds_left = ROUNDS + 1;
    pend(IRQ_LOW);
    wait_done();
    report("msg_roundtrip", pair);

    path = TIMER;
    reset_stats();
    for (int i = 0; i < ROUNDS; i++) {
        uint32_t gap = GAP + (uint32_t)(i * 7 % 64); /* every phase of the clock's ticks */
        TIMER_VALUE(DEADLINE) = gap;
        TIMER_CTRL(DEADLINE) = 1u | (1u << 3); /* enable, interrupt */
        t_start = now() + gap;
        wait_done();
    }
    report("timer_delay", pair);
    exit_(0);
}

__attribute__((section(".vectors"), used)) static void (*const vectors[16 + 32])(void) = {
    [0] = (void (*)(void))&__stack_top,
    [1] = cm_reset,
    [2] = fault, [3] = fault, [4] = fault, [5] = fault, [6] = fault,
    [16 + IRQ_DEADLINE] = deadline_irq,
    [16 + IRQ_LOW] = low_irq,
    [16 + IRQ_HIGH] = high_irq,
    [16 + IRQ_DEV] = dev_irq,
};
