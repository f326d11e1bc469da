/* The footprint floor of issue 17 on the ATmega128: seed000_bare's tree
 * node (bench/seed000/seed000.c, SEED000_BARE) with no kernel. The same
 * function: its parameter block in flash with the same checks (32 bytes,
 * a bad one exits with status 2); a sensing job of l_s ms every second,
 * `samples` of them; forwarding jobs of l_p = 4,000 cycles arriving as
 * the same Poisson process (bench/seed000/arrivals.c, the same draw, made
 * when the arrival before it comes); each raised by a timer interrupt at
 * its deadline, tickless, on Timer1 counting cycles as the tern port's
 * clock does; forwarding before sensing; at most 8 jobs waiting (tern's
 * pool in seed000_bare), one more is dropped and counted; the CPU sleeps
 * in idle mode when nothing waits; exit when the window has closed and
 * every job has run. What it does not have is what the kernel adds: no
 * messages (a job is a count), no tasks, priorities or preemption, no
 * 64-bit time (a 32-bit tick: the window is below 2^31 cycles), no alarm
 * list (three deadlines), no sleep-state choice, no stack guard, no
 * console. avr-libc's start-up and vector table. Built and run without the
 * kernel's build:
 *
 *   avr-gcc -mmcu=atmega128 -DF_CPU=4000000UL -Os -o build/seed000_floor.elf \
 *       -Itools/simavr -Ibench/seed000 bench/floor/seed000_floor.c bench/seed000/arrivals.c
 *   avr-size build/seed000_floor.elf
 *   tools/simavr/build/tern-simavr build/seed000_floor.elf
 *
 * (flash = text + data, static RAM = data + bss, as `tern size`.) Built
 * with -DFLOOR_REPORT=1 it prints "FLOOR seed000 arrivals=A jobs=J
 * sensing=S dropped=D" before it exits (tests/target/test_seed000_bare.py
 * checks it against the host's draw); that build is not the floor's size. */
#include <avr/interrupt.h>
#include <avr/io.h>
#include <avr/sleep.h>
#include <stdint.h>

#include "arrivals.h"
#include "tern_simavr_abi.h"

#ifndef FLOOR_REPORT
#define FLOOR_REPORT 0
#endif
#if FLOOR_REPORT
#include "../../tests/harness/guests/console.h"
#endif

#define CPU_HZ 4000000ul  /* Timer1 at clk/1: a tick is a cycle */
#define L_P_CYCLES 4000ul /* forwarding job length */
#define PARAMS_MAGIC 0x7465726eul
#define QUEUE 8 /* jobs that may wait, as seed000_bare's 8 messages */

/* seed000_bare's default parameter block: magic, n, l_s in ms, samples,
 * seed (its eight words). */
#ifndef FLOOR_N
#define FLOOR_N 1
#endif
#ifndef FLOOR_LS_MS
#define FLOOR_LS_MS 1
#endif
#ifndef FLOOR_SAMPLES
#define FLOOR_SAMPLES 3
#endif
static const volatile __flash uint32_t params[8] = {PARAMS_MAGIC, FLOOR_N, FLOOR_LS_MS,
                                                    FLOOR_SAMPLES, 1, 0, 0, 0};

enum { SENSE, ARRIVE, END, N_DEADLINES };

static uint16_t clock_high; /* Timer1's wraps: the tick's high half */
static uint32_t deadline[N_DEADLINES];
static uint8_t armed; /* bit per deadline */
static uint32_t t0, window, period, ls_cycles;
static uint32_t arrival, arrival_mean; /* the last arrival drawn, ticks after t0 */
static uint32_t samples, sensed;
static arrivals_rng rng;
static volatile uint8_t forward_waiting, sense_waiting, done;
static uint32_t dropped; /* as tern's drop counter */
#if FLOOR_REPORT
static uint16_t arrivals, jobs, sensing;
#endif

/* The 32-bit tick, interrupts masked: a wrap not yet counted is one whose
 * overflow flag is up (TCNT1 read after the flag, as the port's read). */
static uint32_t now(void)
{
    uint16_t low = TCNT1;
    uint16_t high = clock_high;
    if ((TIFR & _BV(TOV1)) && low < 0x8000)
        high++;
    union { /* the halves side by side: no 32-bit shift */
        uint32_t v;
        uint16_t h[2];
    } c = {.h = {low, high}};
    return c.v;
}

static void arm(uint8_t i, uint32_t at)
{
    deadline[i] = at;
    armed |= (uint8_t)(1u << i);
}

static void next_arrival(void)
{
    arrival += arrivals_next_gap(&rng, arrival_mean);
    if (arrival < window)
        arm(ARRIVE, t0 + arrival);
}

static void queue_job(volatile uint8_t *waiting)
{
    if (*waiting == QUEUE)
        dropped++;
    else
        ++*waiting;
}

/* Every due deadline, then the compare for the earliest if it falls in
 * this wrap of Timer1 (the overflow vector looks again at the next). */
static void deadlines(void)
{
    for (;;) {
        uint32_t t = now(), next = UINT32_MAX;
        for (uint8_t i = 0; i < N_DEADLINES; i++) {
            if (!(armed & (1u << i)))
                continue;
            if ((int32_t)(deadline[i] - t) > 0) {
                if (deadline[i] - t < next)
                    next = deadline[i] - t;
                continue;
            }
            armed &= (uint8_t)~(1u << i);
            if (i == ARRIVE) {
#if FLOOR_REPORT
                arrivals++;
#endif
                next_arrival();
                queue_job(&forward_waiting);
            } else if (i == SENSE) {
                queue_job(&sense_waiting);
                if (++sensed < samples)
                    arm(SENSE, deadline[SENSE] + period);
            } else {
                done = 1;
            }
            next = 0; /* look again: a deadline may have come meanwhile */
        }
        if (next == 0)
            continue;
        if (next < 0x10000ul - (uint16_t)t) { /* before the wrap */
            OCR1A = (uint16_t)(t + next);
            TIFR = _BV(OCF1A);
            TIMSK |= _BV(OCIE1A);
            if ((int32_t)(t + next - now()) > 0)
                return;
            continue; /* passed while it was programmed */
        }
        TIMSK &= (uint8_t)~_BV(OCIE1A);
        return;
    }
}

ISR(TIMER1_COMPA_vect) { deadlines(); }

ISR(TIMER1_OVF_vect)
{
    clock_high++;
    deadlines();
}

/* Busy for `cycles` (the job's work, as port_work). */
static void work(uint32_t cycles)
{
    cli();
    uint32_t until = now() + cycles;
    sei();
    for (;;) {
        cli();
        int32_t left = (int32_t)(until - now());
        sei();
        if (left <= 0)
            return;
    }
}

static void bad_params(void)
{
    *(volatile uint8_t *)TERN_SIMAVR_EXIT_ADDR = 2;
    for (;;)
        ;
}

int main(void)
{
    TCCR1A = 0;
    TCCR1B = _BV(CS10);
    TIMSK = _BV(TOIE1);
    if (params[0] != PARAMS_MAGIC)
        bad_params();
    uint32_t n = params[1];
    ls_cycles = params[2] * (CPU_HZ / 1000);
    samples = params[3];
    if (n < 1 || n > 12 || samples < 1 || samples >= INT32_MAX / CPU_HZ)
        bad_params(); /* the window fits 31 bits of ticks */
    arrivals_seed(&rng, params[4]);
    arrival_mean = CPU_HZ / ((1ul << n) - 1);
    window = samples * CPU_HZ;
    period = CPU_HZ;
#if FLOOR_REPORT
    console_init();
#endif
    set_sleep_mode(SLEEP_MODE_IDLE);
    cli();
    t0 = now() + L_P_CYCLES;
    arm(SENSE, t0);
    arm(END, t0 + window);
    next_arrival();
    deadlines();
    for (;;) {
        /* interrupts masked here: test, then sleep with the SEI before
         * SLEEP, so an interrupt between them wakes the sleep at once */
        if (forward_waiting) {
            forward_waiting--;
            sei();
            work(L_P_CYCLES);
#if FLOOR_REPORT
            jobs++;
#endif
        } else if (sense_waiting) {
            sense_waiting--;
            sei();
            work(ls_cycles);
#if FLOOR_REPORT
            sensing++;
#endif
        } else if (done) {
            break;
        } else {
            sleep_enable();
            sei();
            sleep_cpu();
            sleep_disable();
        }
        cli();
    }
#if FLOOR_REPORT
    console_puts("FLOOR seed000 arrivals=");
    console_dec(arrivals);
    console_puts(" jobs=");
    console_dec(jobs);
    console_puts(" sensing=");
    console_dec(sensing);
    console_puts(" dropped=");
    console_dec((uint16_t)dropped);
    console_puts("\n");
    while (!(UCSR0A & _BV(UDRE0)))
        ;
    for (volatile uint16_t w = 0; w < 200; w++)
        ;
#endif
    *(volatile uint8_t *)TERN_SIMAVR_EXIT_ADDR = 0;
    for (;;)
        ;
}
