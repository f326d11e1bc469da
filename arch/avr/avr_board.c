/* The AVR boards under tools/simavr (atmega128, micaz, module-m128 on the
 * ATmega128; module-m1284 on the ATmega1284P): USART0 console,
 * Timer/Counter1 as the clock and the one-shot deadline, two external
 * interrupts as the software-triggered interrupts, idle and power-save
 * sleep states. What differs between the parts (register names, which
 * INTn sits on which pin) is arch/avr/avr_mcu.h's; between the boards, the
 * CPU clock (F_CPU, from board.cmake) and which INTn pins are free for the
 * software interrupts, plus the board's own pins: its board.h says.
 *
 * Clock: Timer1 counts CPU cycles (prescaler 1); its wraps, counted in
 * software, give the high 16 bits, so the kernel sees a 32-bit cycle counter
 * (port_counter_read) that it extends to 64 bits. One tick = one cycle.
 *
 * Deadline: output compare A of Timer1 matches the low 16 bits of the
 * deadline once per 65,536 cycles; the match interrupt ignores every
 * match before the deadline itself, so deadlines of any length up to the
 * kernel's half wrap (2^31 cycles) work. */
#include <avr/interrupt.h>
#include <avr/io.h>

#include "avr.h"
#include "avr_mcu.h"
#include "board.h"
#include "tern/port.h"
#include "tern/power.h"
#include "tern/time.h"

/* Sleep states, in cycles. Idle stops only the CPU clock: waking costs the
 * 4 cycles every AVR wake-up adds to the interrupt response. Power-save
 * also stops the main oscillator: waking pays its start-up time, 1K CK
 * for a ceramic resonator (datasheet, clock sources), plus those 4 cycles;
 * it pays off (break-even) for idle periods of 4,000 cycles and more (1 ms
 * at 4 MHz). Both costs are counted in CPU cycles, so the figures hold at
 * any F_CPU.
 *
 * Power-save is accounted, not entered: on the real part it stops
 * Timer1, which is this port's clock (only the asynchronous timer runs on),
 * so board_sleep() uses idle mode for both, unless the app called
 * tern_power_init() (tern/power.h) on a module board: then it enters the
 * real modes and keeps time with the asynchronous timer, as board_sleep()
 * explains. */
static const TERN_FLASH char idle_name[] = "idle", save_name[] = "power-save";
#ifndef BOARD_WAKE_CYCLES
static const TERN_FLASH tern_sleep_state sleep_states[] = {
    {.name = idle_name, .residency = 0, .exit_latency = 4},
    {.name = save_name, .residency = 4000, .exit_latency = 1004},
};
#else
/* Boards with power figures (board.h; the module boards): power-save's
 * residency is seed 002's break-even time from them, and power-down, entered
 * only when another processor allowed it and nothing is due (kernel/power.c),
 * has none ("never" by the residency rule). */
static const TERN_FLASH char down_name[] = "power-down";
static const TERN_FLASH tern_sleep_state sleep_states[] = {
    {.name = idle_name, .residency = 0, .exit_latency = 4},
    {.name = save_name,
     .residency = TERN_BREAK_EVEN(BOARD_POWER_IDLE_UW, BOARD_POWER_SAVE_UW, BOARD_POWER_WAKE_UW,
                                  BOARD_WAKE_CYCLES),
     .exit_latency = BOARD_WAKE_CYCLES + 4},
    {.name = down_name, .residency = UINT64_MAX, .exit_latency = BOARD_WAKE_CYCLES + 4},
};
#endif

const TERN_FLASH tern_board_info port_board = {
    .clock_hz = F_CPU,
    .counter_bits = TERN_COUNTER_BITS,
    .cycles_per_tick_num = 1, /* kernel/clock.c counts on it (TICK_IS_CYCLE) */
    .cycles_per_tick_den = 1,
    .n_sleep_states = sizeof sleep_states / sizeof sleep_states[0],
    .sleep_states = sleep_states,
    .hw = TERN_BOARD_HW,
};

/* A deadline closer than this (or passed) is moved out to it: from reading
 * TCNT1 to writing OCR1A takes ~40 cycles, ~50 with a wrap (avr-objdump of
 * match_at in port_deadline_at, on every AVR board: the module boards'
 * sleep arithmetic comes before the read), and a match value already passed
 * would only match a wrap (65,536 cycles) later. */
#define DEADLINE_MIN_TICKS 80u

static uint16_t clock_high; /* Timer1 wraps seen so far */

#ifdef BOARD_WAKE_CYCLES
/* Power-save stops Timer1 (every sleep mode but idle halts clk_I/O; tern-sim
 * does so too, tools/simavr/node.c). The asynchronous timer runs on, from
 * its 32,768 Hz crystal, and keeps the time: a timed power-save sleep
 * starts on one of its ticks and ends on its compare match n ticks later
 * (or on any other interrupt, when its count says how many), and the clock
 * is advanced by those ticks less what Timer1 counted itself between the
 * tick and its stop. The clock is Timer1's count plus `slept`, all the
 * advances so far. The first read of the clock after the wake (an
 * interrupt handler's, or board_sleep's own) does the accounting, so that
 * nobody reads a clock that still lags. */
#define ASYNC_HZ 32768u
#define CYCLES_PER_ASYNC (F_CPU / ASYNC_HZ) /* rounded down: 225 at 7.3728 MHz, 610 at 20 MHz */
#define SAVE_MIN_TICKS 2u   /* a shorter sleep idles: Timer1's compare ends it to the cycle */
#define SAVE_EARLY_TICKS 1u /* the async wake comes this much before the deadline, Timer1 ends the rest in idle */
#define SAVE_MAX_TICKS 250u /* within one turn of the 8-bit async counter */
/* Cycles Timer1 counts that the formula below does not see, from the
 * instruction timings (avr-objdump of sleep_save): from the async tick to
 * the TCNT1 read after the polling loop (half its 5-cycle turn and the
 * read), and from the TCNT1 read before SLEEP to the stop (LDS, STS, LDS,
 * STS, SEI, SLEEP). tests/sim/test_power.py bounds what remains. */
#define SAVE_EDGE_CYCLES 5u
#define SAVE_STOP_CYCLES 10u
static uint32_t slept;
static bool save_pending;          /* a power-save sleep is not yet accounted */
static volatile bool async_woke;   /* its compare match came */
static uint8_t save_t0, save_n;    /* the async count at the start, ticks asked */
static uint16_t save_c0;           /* TCNT1 at the start's tick */
uint16_t save_cs __attribute__((used)); /* TCNT1 before the SLEEP (stored by sleep_save's asm) */
static uint16_t async_frac;        /* remainder of ticks * F_CPU / ASYNC_HZ, carried */

ISR(AVR_ASYNC_COMP_vect) { async_woke = true; }

#endif
static uint32_t deadline;            /* counter value of the programmed deadline */

static tern_swirq_fn swirq_fn[TERN_SWIRQS];
static void *swirq_arg[TERN_SWIRQS];
/* Two external interrupts whose pins are driven as outputs: every edge
 * interrupts, so toggling the pin raises the interrupt. board.h picks the
 * two; both must sense any edge and sit on one port, so that a raise is one
 * toggle of one register, whichever swirq it is. */
_Static_assert(AVR_EXTINT_ANY_EDGE_OK(BOARD_SWIRQ0_INT) && AVR_EXTINT_ANY_EDGE_OK(BOARD_SWIRQ1_INT) &&
                   BOARD_SWIRQ0_INT != BOARD_SWIRQ1_INT,
               "software interrupts use two different INTn that can sense any edge (avr_mcu.h)");
_Static_assert(AVR_EXTINT_PORT_ID(BOARD_SWIRQ0_INT) == AVR_EXTINT_PORT_ID(BOARD_SWIRQ1_INT),
               "both software-interrupt pins must be on one port");
#define SWIRQ_INT(k) ((k) ? BOARD_SWIRQ1_INT : BOARD_SWIRQ0_INT)
#define SWIRQ_PIN(k) AVR_EXTINT_BIT(SWIRQ_INT(k))
#define SWIRQ_PORT AVR_EXTINT_PORT(BOARD_SWIRQ0_INT)
#define SWIRQ_DDR AVR_EXTINT_DDR(BOARD_SWIRQ0_INT)
#define SWIRQ_EICR AVR_EXTINT_EICR(BOARD_SWIRQ0_INT)
#define SWIRQ_ANY_EDGE(k) ((uint8_t)(AVR_EXTINT_ANY_EDGE << AVR_EXTINT_ISC_SHIFT(SWIRQ_INT(k))))
#define SWIRQ_EDGE_MASK(k) ((uint8_t)(3u << AVR_EXTINT_ISC_SHIFT(SWIRQ_INT(k))))
#define SWIRQ_MASK(k) AVR_EXTINT_MASK(SWIRQ_INT(k))

void board_init(void)
{
    /* USART0, 8N1 at the fastest setting, F_CPU / 8 (U2X0, UBRR0 = 0):
     * 500 kbit/s at 4 MHz, 921.6 kbit/s at 7.3728 MHz, 2.5 Mbit/s at
     * 20 MHz; the console is the simulator's, so no standard baud rate is
     * needed. simavr computes the frame time when UBRR0L is written, so it
     * comes last. */
    UCSR0A = _BV(U2X0);
    UCSR0C = _BV(UCSZ01) | _BV(UCSZ00);
    UCSR0B = _BV(TXEN0);
    UBRR0H = 0;
    UBRR0L = 0;

    /* Timer1: normal mode, prescaler 1, overflow interrupt. */
    TCCR1A = 0;
    TCCR1B = _BV(CS10);
    AVR_TIMER1_IMSK = (uint8_t)((AVR_TIMER1_IMSK & ~_BV(OCIE1A)) | _BV(TOIE1));

    /* Software interrupts: their pins outputs, any edge. */
    SWIRQ_PORT &= (uint8_t)~(SWIRQ_PIN(0) | SWIRQ_PIN(1));
    SWIRQ_DDR |= SWIRQ_PIN(0) | SWIRQ_PIN(1);
    SWIRQ_EICR = (uint8_t)((SWIRQ_EICR & ~(SWIRQ_EDGE_MASK(0) | SWIRQ_EDGE_MASK(1))) |
                           SWIRQ_ANY_EDGE(0) | SWIRQ_ANY_EDGE(1));
    EIFR = SWIRQ_MASK(0) | SWIRQ_MASK(1);
    EIMSK |= SWIRQ_MASK(0) | SWIRQ_MASK(1);

    board_init_pins();
}

/* simavr 1.6 treats a write to UCSR0A as a plain store (it would clear
 * UDRE0 for good), so the console never writes it after init. */
void port_putc(char c)
{
    while (!(UCSR0A & _BV(UDRE0)))
        ;
    UDR0 = (uint8_t)c;
}

/* The harness prints a byte when its frame has been sent. Once UDR0 is
 * empty, at most one byte is still in the shift register: wait two frames
 * (11 bit times each in simavr, 8 cycles a bit at U2X0 with UBRR0 = 0, at
 * any F_CPU) before the exit port stops the run. */
#define UART_FRAME_CYCLES 88u

void board_flush(void)
{
    while (!(UCSR0A & _BV(UDRE0)))
        ;
    port_work(2 * UART_FRAME_CYCLES);
}

/* --- Clock and deadline ------------------------------------------------- */

/* A wrap is seen as TCNT1 going backwards since the previous read, which
 * is exact as long as the counter is read at least once per 65,536 cycles:
 * the overflow interrupt makes sure of that while nothing else reads it.
 * Testing TOV1 instead would depend on the overflow being serviced within
 * half a wrap, and it is not under simavr 1.6 when the compare interrupt
 * (a lower vector, served first) keeps firing under load: the clock then
 * went back 65,536 cycles. */
static uint16_t last_low;

ISR(TIMER1_OVF_vect) { (void)port_counter_read(); }

/* Timer1's count, extended by its wraps: the clock, less the sleeps on
 * module boards (`slept`). Interrupts masked by the caller; inline where it
 * is used (a call would make port_deadline_at save the registers it keeps). */
static inline __attribute__((always_inline)) uint32_t timer1_read(void)
{
    uint16_t low = TCNT1;
    if (low < last_low)
        clock_high++;
    last_low = low;
    /* the two halves stored side by side: avr-gcc builds
     * ((uint32_t)high << 16) | low with a 32-bit OR and a spare copy */
    union {
        uint32_t v;
        uint16_t h[2];
    } c = {.h = {low, clock_high}};
    return c.v;
}

/* Match Timer1 at `at`, a value of its extended count; one closer than
 * DEADLINE_MIN_TICKS, or passed, is moved out to it. All other arithmetic
 * (the sleeps on module boards) comes before the count is read, so that
 * the read and the OCR1A write stay a short, fixed path apart. Returns the
 * value matched. Interrupts masked. */
static inline __attribute__((always_inline)) uint32_t match_at(uint32_t at)
{
    uint32_t now = timer1_read();
    uint32_t ahead = at - now; /* passed: above half a wrap */
    if (ahead < DEADLINE_MIN_TICKS || ahead > UINT32_C(1) << 31)
        at = now + DEADLINE_MIN_TICKS;
    OCR1A = (uint16_t)at;
    return at;
}

#ifdef BOARD_WAKE_CYCLES
/* Interrupts disabled. */
static void save_account(void)
{
    save_pending = false;
    AVR_ASYNC_IMSK &= (uint8_t)~_BV(AVR_ASYNC_OCIE);
    uint8_t ticks;
    if (async_woke || (AVR_ASYNC_IFR & _BV(AVR_ASYNC_OCF))) {
        ticks = save_n;
        AVR_ASYNC_IFR = _BV(AVR_ASYNC_OCF);
    } else {
        /* another interrupt woke it: the whole ticks since the start, so
         * the clock lags by less than one and never runs ahead (on silicon
         * the count is valid one crystal cycle after the wake: up to one
         * tick less) */
        ticks = (uint8_t)(AVR_ASYNC_TCNT - save_t0);
    }
    async_woke = false;
    uint32_t part = (uint32_t)ticks * (F_CPU % ASYNC_HZ) + async_frac;
    async_frac = (uint16_t)(part % ASYNC_HZ);
    uint32_t cycles = (uint32_t)ticks * CYCLES_PER_ASYNC + part / ASYNC_HZ;
    uint32_t counted = (uint16_t)(save_cs - save_c0) + SAVE_EDGE_CYCLES + SAVE_STOP_CYCLES;
    if (cycles > counted) /* never backwards */
        slept += cycles - counted;
    /* the sleep moved the deadline's match in Timer1's count */
    if (AVR_TIMER1_IMSK & _BV(OCIE1A))
        (void)match_at(deadline - slept);
}
#endif

/* The clock. Interrupts masked by the caller. */
static inline __attribute__((always_inline)) uint32_t counter_read(void)
{
#ifdef BOARD_WAKE_CYCLES
    if (save_pending)
        save_account();
    return timer1_read() + slept;
#else
    return timer1_read();
#endif
}

uint32_t port_counter_read(void)
{
    uint8_t s = SREG;
    cli();
    uint32_t c = counter_read();
    SREG = s;
    return c;
}

void port_deadline_set(uint32_t ticks) { port_deadline_at(port_counter_read() + ticks); }

void port_deadline_at(uint32_t at)
{
    uint8_t s = SREG;
    cli();
#ifdef BOARD_WAKE_CYCLES
    if (save_pending)
        save_account();
    deadline = match_at(at - slept) + slept;
#else
    deadline = match_at(at);
#endif
    AVR_TIMER1_IMSK |= _BV(OCIE1A);
    SREG = s;
}

void port_deadline_cancel(void)
{
    uint8_t s = SREG;
    cli();
    AVR_TIMER1_IMSK &= (uint8_t)~_BV(OCIE1A);
    SREG = s;
}

/* The capture unit latches TCNT1, the clock's low 16 bits (one tick is
 * one cycle; on module boards less the sleeps accounted since, `slept`),
 * so the capture lies (now - icr) mod 2^16 ticks in the past, which is
 * exact while the capture is younger than one wrap (65,536 cycles) and no
 * power-save sleep came between. */
tern_time avr_timer1_capture_time(uint16_t icr)
{
    tern_time now = tern_now();
#ifdef BOARD_WAKE_CYCLES
    return now - (uint16_t)((uint16_t)(now - slept) - icr);
#else
    return now - (uint16_t)((uint16_t)now - icr);
#endif
}

ISR(TIMER1_COMPA_vect)
{
    /* A match of the low 16 bits in an earlier counter period. */
    uint32_t now = port_counter_read();
    if ((int32_t)(now - deadline) < 0)
        return;
    AVR_TIMER1_IMSK &= (uint8_t)~_BV(OCIE1A);
    tern_clock_vector(now); /* that read is the clock: no second one */
}

/* --- Sleep ---------------------------------------------------------------- */

/* Called with interrupts disabled: SEI's one-instruction delay makes
 * "sei; sleep" atomic, so an interrupt that arrives before the SLEEP wakes
 * it instead of being lost. The two NOPs are for simavr 1.6: it skips a
 * SLEEP while an interrupt is pending, but services interrupts only two
 * instructions after a SEI; without them the CLI would come first and a
 * pending interrupt would never run. The real part runs the handler
 * before the instruction after SLEEP, so they cost two cycles there. */
static bool real_modes; /* port_sleep_modes(): tern_power_init() was called */

void port_sleep_modes(bool on)
{
    real_modes = on;
#ifdef BOARD_WAKE_CYCLES
    if (on) {
        /* On silicon the crystal needs about a second to settle after
         * AS0/AS2 is set (datasheet, "Asynchronous Operation"). */
        AVR_ASYNC_ENABLE();
        AVR_ASYNC_START();
        while (ASSR & AVR_ASYNC_BUSY)
            ;
    }
#endif
}

static void sleep_now(uint8_t sm)
{
    AVR_SLEEP_CTRL = (uint8_t)((AVR_SLEEP_CTRL & ~(_BV(SM0) | _BV(SM1) | _BV(SM2))) | sm | _BV(SE));
    __asm__ volatile("sei\n\t"
                     "sleep\n\t"
                     "nop\n\t"
                     "nop\n\t"
                     "cli\n" ::: "memory");
    AVR_SLEEP_CTRL &= (uint8_t)~_BV(SE);
}

#ifdef BOARD_WAKE_CYCLES
/* Power-save until the deadline, kept by the asynchronous timer (above).
 * Interrupts disabled. */
static void sleep_save(void)
{
    uint32_t left = deadline - port_counter_read();
    if (!(AVR_TIMER1_IMSK & _BV(OCIE1A)) || (int32_t)left < 0 ||
        left < (SAVE_MIN_TICKS + SAVE_EARLY_TICKS + 1) * CYCLES_PER_ASYNC) {
        sleep_now(0); /* no deadline, or too close: Timer1 ends it in idle */
        return;
    }
    uint32_t n = left / CYCLES_PER_ASYNC - SAVE_EARLY_TICKS - 1; /* the wait for a tick is one */
    if (n > SAVE_MAX_TICKS)
        n = SAVE_MAX_TICKS;
    /* start on a tick: up to one (225 to 610 cycles) spent waiting */
    uint8_t t = AVR_ASYNC_TCNT;
    while (AVR_ASYNC_TCNT == t)
        ;
    save_c0 = TCNT1;
    save_t0 = (uint8_t)(t + 1);
    save_n = (uint8_t)n;
    /* the match is flagged as the count leaves OCR: n ticks on */
    AVR_ASYNC_OCR = (uint8_t)(save_t0 + n - 1);
    while (ASSR & AVR_ASYNC_BUSY)
        ;
    AVR_ASYNC_IFR = _BV(AVR_ASYNC_OCF);
    AVR_ASYNC_IMSK |= _BV(AVR_ASYNC_OCIE);
    async_woke = false;
    save_pending = true;
    AVR_SLEEP_CTRL = (uint8_t)((AVR_SLEEP_CTRL & ~(_BV(SM0) | _BV(SM1) | _BV(SM2))) | _BV(SM1) |
                               _BV(SM0) | _BV(SE));
    /* TCNT1 read last and stored, then SLEEP (SAVE_STOP_CYCLES between the
     * read and the stop): the handler of the interrupt that wakes it runs
     * before the next instruction and may read the clock (save_account). */
    uint8_t tmp;
    __asm__ volatile("lds %0, %1\n\t"
                     "sts save_cs, %0\n\t"
                     "lds %0, %2\n\t"
                     "sts save_cs+1, %0\n\t"
                     "sei\n\t"
                     "sleep\n\t"
                     "nop\n\t"
                     "nop\n\t"
                     "cli\n"
                     : "=&r"(tmp)
                     : "n"(_SFR_MEM_ADDR(TCNT1L)), "n"(_SFR_MEM_ADDR(TCNT1H))
                     : "memory");
    AVR_SLEEP_CTRL &= (uint8_t)~_BV(SE);
    (void)port_counter_read(); /* accounts the sleep, if no handler has read the clock yet */
}
#endif

/* With real modes (module boards, tern_power_init): power-save (state 1)
 * stops Timer1, as on the part: sleep_save keeps the time and the deadline
 * with the asynchronous timer. Power-down (state 2) stops every timer, the
 * asynchronous one too: the kernel's clock stands still until a bus frame
 * (or any interrupt) wakes the CPU; power-down is only chosen with no
 * deadline, and kernel/power.c tells time sync (a step at its next
 * sample). On silicon the bus's pin would have to wake it as a level or
 * pin-change interrupt (an edge on INT4..7 needs the I/O clock); simavr
 * wakes on any. */
void board_sleep(uint8_t state)
{
    if (!real_modes || state == 0) {
        sleep_now(0); /* idle; deeper states accounted, not entered (see above) */
        return;
    }
#ifdef BOARD_WAKE_CYCLES
    if (state == 2)
        sleep_now(_BV(SM1));
    else
        sleep_save();
#else
    sleep_now(0); /* no asynchronous timer to keep time with: idle */
#endif
}

/* --- Software-triggered device interrupts --------------------------------- */

void port_swirq_set(unsigned k, tern_swirq_fn fn, void *arg)
{
    uint8_t s = SREG;
    cli();
    swirq_fn[k] = fn;
    swirq_arg[k] = arg;
    SREG = s;
}

void port_swirq_raise(unsigned k)
{
    uint8_t s = SREG;
    cli();
    SWIRQ_PORT ^= SWIRQ_PIN(k);
    SREG = s;
}

static void swirq(unsigned k)
{
    tern_isr_enter();
    if (swirq_fn[k])
        swirq_fn[k](swirq_arg[k]);
    tern_isr_exit();
}

#define INT_VECT(n) INT_VECT_(n)
#define INT_VECT_(n) INT##n##_vect
ISR(INT_VECT(BOARD_SWIRQ0_INT)) { swirq(0); }
ISR(INT_VECT(BOARD_SWIRQ1_INT)) { swirq(1); }
