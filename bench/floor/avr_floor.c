/* The floor of issue 17's interrupt-to-handler path on the ATmega128: the
 * same path with no kernel. Timer1 counts cycles as the tern port's clock
 * does; the CPU sleeps in idle mode; output compare A's vector (a C ISR,
 * as the port's) calls a handler, which notes TCNT1. Printed: the cycles
 * from the compare match to the handler's first TCNT1 read, averaged over
 * ROUNDS. What a kernel adds to this is its own work: finding the alarm,
 * the post, the dispatch. A second line gives the whole event: from the
 * match until the interrupted idle loop runs again (the handler's own
 * ~13 cycles included), what one job costs at least besides its work.
 * Built and run without the kernel's build:
 *
 *   avr-gcc -mmcu=atmega128 -DF_CPU=4000000UL -Os -o build/avr_floor.elf \
 *       -Itools/simavr -Itests/harness/guests bench/floor/avr_floor.c
 *   tools/simavr/build/tern-simavr build/avr_floor.elf
 *
 * (docs/seed000/avr-cycles.md; tern-simavr --trace and `./tern profile
 * --from __vector_12 --to handler` split it by function.)
 *
 * Built with -DFLOOR_PARTS=1 (-o build/avr_floor1.elf), the vector does
 * the kernel's parts in their most minimal C form instead, each a
 * function of its own so that the profile (--to task_handler.isra.0, the
 * name avr-gcc gives it) gives each part's floor: a 32-bit clock (TCNT1
 * and a software high half), a sorted alarm list with its due test and
 * unlink, a callback that posts (a pool pop, the message's fields, a
 * 32-bit stamp, a priority-sorted queue), the next deadline from the head,
 * and the dispatch of the queued message to its task's handler with
 * interrupts enabled (as the stack model runs it). No counters, no
 * checks, no 64-bit time: what is left when every part does only its
 * work. */
#include <avr/interrupt.h>
#include <avr/io.h>
#include <avr/sleep.h>
#include <stddef.h>
#include <stdint.h>

#include "console.h"

#ifndef FLOOR_PARTS
#define FLOOR_PARTS 0
#endif

#define ROUNDS 16
#define GAP 4000u /* cycles from arming to the match, as apps/ordering's L */

static volatile uint16_t match_at, seen_at;
static uint16_t back_at;
static volatile uint8_t fired;

#if !FLOOR_PARTS
/* The "handler": its first statement reads the clock, as apps/ordering's. */
__attribute__((noinline)) static void handler(void)
{
    seen_at = TCNT1;
    fired = 1;
}

ISR(TIMER1_COMPA_vect) { handler(); }
#else
typedef struct msg {
    struct msg *next;
    uint8_t dst, port, prio;
    uint32_t posted;
} msg;
typedef struct alarm {
    struct alarm *next;
    uint32_t deadline;
    void (*fn)(struct alarm *);
} alarm;

static uint16_t clock_high, last_low;
static alarm *alarms;
static msg pool[4], *free_list, *queue;
static uint8_t dispatch_pending;
static alarm the_alarm, far_alarm;
static const uint8_t prio_of[2] = {0, 6};

__attribute__((noinline)) static uint32_t clock_read(void)
{
    uint16_t low = TCNT1;
    if (low < last_low)
        clock_high++;
    last_low = low;
    union { /* the halves side by side: no 32-bit shift (as the port's read) */
        uint32_t v;
        uint16_t h[2];
    } c = {.h = {low, clock_high}};
    return c.v;
}

__attribute__((noinline)) static void task_handler(msg *m)
{
    seen_at = TCNT1;
    fired = 1;
    (void)m;
}

/* the post: pool pop, fields, stamp, sorted insert, dispatch flag */
__attribute__((noinline)) static void post(uint8_t dst, uint8_t port)
{
    msg *m = free_list;
    if (!m)
        return;
    free_list = m->next;
    m->dst = dst;
    m->port = port;
    m->prio = prio_of[dst];
    m->posted = clock_read();
    msg **pp = &queue;
    while (*pp && (*pp)->prio >= m->prio)
        pp = &(*pp)->next;
    m->next = *pp;
    *pp = m;
    dispatch_pending = 1;
}

static void alarm_fires(alarm *a)
{
    (void)a;
    post(1, 8);
}

/* the due test and unlink of every due alarm, with the callback */
__attribute__((noinline)) static void alarms_due(uint32_t now)
{
    alarm *a;
    while ((a = alarms) != NULL && (int32_t)(a->deadline - now) <= 0) {
        alarms = a->next;
        a->fn(a);
    }
}

/* the next deadline from the head */
__attribute__((noinline)) static void program(void)
{
    if (alarms)
        OCR1A = (uint16_t)alarms->deadline;
}

/* the dispatch: the queue's head to its handler, interrupts enabled */
__attribute__((noinline)) static void dispatch(void)
{
    msg *m = queue;
    queue = m->next;
    dispatch_pending = 0;
    sei();
    task_handler(m);
    cli();
    m->next = free_list;
    free_list = m;
}

ISR(TIMER1_COMPA_vect)
{
    alarms_due(clock_read());
    program();
    if (dispatch_pending)
        dispatch();
}
#endif

int main(void)
{
    console_init();
    TCCR1A = 0;
    TCCR1B = _BV(CS10);
    uint32_t sum = 0, event_sum = 0;
    uint16_t min = UINT16_MAX, max = 0, event_min = UINT16_MAX, event_max = 0;
    set_sleep_mode(SLEEP_MODE_IDLE);
#if FLOOR_PARTS
    for (uint8_t i = 0; i < 4; i++) {
        pool[i].next = free_list;
        free_list = &pool[i];
    }
    the_alarm.fn = far_alarm.fn = alarm_fires;
#endif
    for (uint8_t i = 0; i < ROUNDS; i++) {
        cli();
        fired = 0;
        match_at = (uint16_t)(TCNT1 + GAP);
#if FLOOR_PARTS
        /* the alarm due now, then one far out (as apps/ordering's control timer) */
        uint32_t now = clock_read();
        the_alarm.deadline = now + GAP;
        far_alarm.deadline = now + 40000u;
        the_alarm.next = &far_alarm;
        far_alarm.next = NULL;
        alarms = &the_alarm;
#endif
        OCR1A = match_at;
        TIFR = _BV(OCF1A);
        TIMSK |= _BV(OCIE1A);
        while (!fired) {
            sleep_enable();
            sei();
            sleep_cpu();
            cli();
        }
        back_at = TCNT1; /* the idle loop runs again: the event is over */
        TIMSK &= (uint8_t)~_BV(OCIE1A);
        uint16_t d = (uint16_t)(seen_at - match_at);
        sum += d;
        if (d < min)
            min = d;
        if (d > max)
            max = d;
        uint16_t e = (uint16_t)(back_at - match_at);
        event_sum += e;
        if (e < event_min)
            event_min = e;
        if (e > event_max)
            event_max = e;
        sei();
    }
    console_puts(FLOOR_PARTS ? "FLOOR parts irq_to_handler_idle min=" : "FLOOR irq_to_handler_idle min=");
    console_dec(min);
    console_puts(" avg=");
    console_dec((uint16_t)(sum / ROUNDS));
    console_puts(" max=");
    console_dec(max);
    console_puts(FLOOR_PARTS ? "\nFLOOR parts event min=" : "\nFLOOR event min=");
    console_dec(event_min);
    console_puts(" avg=");
    console_dec((uint16_t)(event_sum / ROUNDS));
    console_puts(" max=");
    console_dec(event_max);
    console_puts("\n");
    while (!(UCSR0A & _BV(UDRE0)))
        ;
    for (volatile uint16_t w = 0; w < 200; w++)
        ;
    *(volatile uint8_t *)TERN_SIMAVR_EXIT_ADDR = 0;
    for (;;)
        ;
}
