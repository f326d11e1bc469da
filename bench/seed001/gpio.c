/* Seed 001's GPIO experiments (thesis chapter 5.4, table 6.1) and issue
 * 16's interrupt latency, on a MicaZ in tern-sim. Driven by
 * tools/terntools/seed001_gpio.py (`tern bench seed001 gpio|irq|power`),
 * which patches the run parameters into .tern_params, drives PE4 with
 * tern-sim's signal generator and reads the pins with its logic analyser,
 * as the thesis read its oscilloscope:
 *
 *   mode 0, toggle (from a task handler, after INIT; then exit):
 *     PC0  `PORTC ^= bit` in a loop, `count` times: the toggle frequency
 *     PC3  `PORTC |= bit; PORTC &= ~bit` in a loop, `count` times: the
 *          minimal on- and off-times of dedicated on/off commands
 *     PC4  toggled once per message: the task sends itself the next
 *          message, so each toggle is one pass through the kernel's
 *          dispatch (the execution model's cost)
 *   mode 1, react (exit after `count` edges have been answered):
 *     PE4  the input: INT4 on its rising edge
 *     PC1  pulsed by the interrupt handler's first statement: the
 *          interrupt latency (edge -> handler)
 *     PC2  pulsed first thing by the task that handles the interrupt's
 *          message: the input-to-output delay (edge -> application)
 *   With load_period_us > 0 a lower-priority task works load_cycles every
 *   load_period_us, so that edges meet a busy CPU and the kernel's
 *   critical sections (the jitter); otherwise the CPU sleeps in between.
 *
 * Parameters, 8 little-endian u32 words:
 *   [0] magic "s01g"  [1] mode  [2] count  [3] load_period_us
 *   [4] load_cycles  [5..7] 0
 * Console: "S01G ..." summary lines; exit status 0 when done. */
#include <avr/interrupt.h>
#include <avr/io.h>

#include "tern/port.h"
#include "tern/tern.h"
#include "tern_params.h"

#define MAGIC 0x73303167u /* "s01g" */
enum { MODE_TOGGLE = 0, MODE_REACT = 1 };
TERN_PARAMS_DEFAULTS(MAGIC, MODE_TOGGLE, 100, 0, 0, 0, 0, 0);

#define PIN_XOR _BV(PC0)
#define PIN_ISR _BV(PC1)
#define PIN_TASK _BV(PC2)
#define PIN_ONOFF _BV(PC3)
#define PIN_MSG _BV(PC4)
#define PROBES (PIN_XOR | PIN_ISR | PIN_TASK | PIN_ONOFF | PIN_MSG)

/* PE4/INT4 is free on the MicaZ (INT5/INT7 are the software interrupts,
 * INT6 the CC2420's FIFOP: boards/micaz/board.h). */
#define INPUT_BIT _BV(PE4)

enum { TASK_REACT = 0, TASK_LOAD = 1 };
#define PORT_EDGE TERN_PORT_APP(0)
#define PORT_NEXT TERN_PORT_APP(1) /* mode toggle: the next message toggle */

static uint32_t mode, count, load_period_us, load_cycles;
static volatile uint32_t edges_isr;
static volatile uint32_t sent_refused; /* written by the interrupt handler */
static uint32_t answered, loads;

static void finish(void)
{
    tern_printf("S01G done model=%s mode=%lu count=%lu edges=%lu answered=%lu refused=%lu loads=%lu\n",
                tern_model_name, (unsigned long)mode, (unsigned long)count, (unsigned long)edges_isr,
                (unsigned long)answered, (unsigned long)sent_refused, (unsigned long)loads);
    port_exit(0);
}

/* The first statement is the probe: what comes before it (the AVR's
 * interrupt response, the vector's jump, the registers GCC saves for the
 * call below) is the latency the thesis's "input to output" starts with. */
ISR(INT4_vect)
{
    PORTC |= PIN_ISR;
    PORTC &= (uint8_t)~PIN_ISR;
    tern_isr_enter();
    edges_isr++;
    if (tern_send(TASK_REACT, PORT_EDGE, NULL, 0, 0) != TERN_OK)
        sent_refused++;
    tern_isr_exit();
}

/* A local 16-bit counter, as an application's loop would have it: the
 * loop's own cost (the counter, the branch) is part of the figure, as it
 * was in the thesis's loops. */
static void toggle_loops(void)
{
    uint16_t n = (uint16_t)count;
    while (n--)
        PORTC ^= PIN_XOR;
    PORTC &= (uint8_t)~PIN_XOR;
    n = (uint16_t)count;
    while (n--) {
        PORTC |= PIN_ONOFF;
        PORTC &= (uint8_t)~PIN_ONOFF;
    }
}

static tern_status react_task(void *state, tern_msg *m)
{
    (void)state;
    if (m->port == PORT_EDGE) {
        PORTC |= PIN_TASK;
        PORTC &= (uint8_t)~PIN_TASK;
        if (++answered == count)
            finish();
        return TERN_OK;
    }
    if (m->port != TERN_PORT_INIT)
        return TERN_OK;
    if (mode == MODE_TOGGLE) {
        toggle_loops();
        return tern_send(TASK_REACT, PORT_NEXT, NULL, 0, 0);
    }
    EICRB = (uint8_t)((EICRB & ~(_BV(ISC41) | _BV(ISC40))) | _BV(ISC41) | _BV(ISC40)); /* rising edge */
    EIFR = _BV(INTF4);
    EIMSK |= _BV(INT4);
    return TERN_OK;
}

/* Mode toggle, after the loops: one toggle of PC4 per message. */
static tern_status react_next(void)
{
    static uint32_t n;
    PORTC ^= PIN_MSG;
    if (++n == count)
        finish();
    return tern_send(TASK_REACT, PORT_NEXT, NULL, 0, 0);
}

static tern_status react(void *state, tern_msg *m)
{
    return m->port == PORT_NEXT ? react_next() : react_task(state, m);
}

static tern_status load_task(void *state, tern_msg *m)
{
    (void)state;
    if (m->port == TERN_PORT_INIT) {
        if (load_period_us) {
            tern_time period = (tern_time)tern_clock_hz() * load_period_us / 1000000u;
            return tern_timer_start(0, period, period);
        }
        return TERN_OK;
    }
    if (m->port == TERN_PORT_TIMEOUT(0)) {
        loads++;
        port_work(load_cycles);
    }
    return TERN_OK;
}

int main(void)
{
    static const tern_task_desc tasks[] = {
        {.name = "react", .id = TASK_REACT, .priority = 3, .handler = react, .n_in_ports = 2},
        {.name = "load", .id = TASK_LOAD, .priority = 1, .handler = load_task},
    };
    static const tern_app_desc app = {.name = "seed001_gpio", .tasks = tasks, .n_tasks = 2};
    tern_app_error err;

    mode = tern_params[1];
    count = tern_params[2];
    load_period_us = tern_params[3];
    load_cycles = tern_params[4];
    DDRC |= PROBES;
    PORTC &= (uint8_t)~PROBES;
    DDRE &= (uint8_t)~INPUT_BIT;
    PORTE &= (uint8_t)~INPUT_BIT;
    tern_init();
    if (tern_params[0] != MAGIC || mode > MODE_REACT || count == 0 || count > 0xffffu) {
        tern_printf("S01G bad parameters\n");
        port_exit(2);
    }
    if (tern_app_start(&app, &err) != TERN_OK) {
        tern_printf("S01G %s\n", err.text);
        return 1;
    }
    tern_run();
}
