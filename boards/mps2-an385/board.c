/* mps2-an385 (Cortex-M3) under QEMU: CMSDK UART0 console, CMSDK TIMER0 as
 * the free-running clock, CMSDK TIMER1 as the one-shot deadline. Both
 * timers count down at PCLK = 25 MHz of virtual time.
 *
 * Time mapping (docs/boards.md): QEMU runs with -icount shift=6, so one
 * instruction takes 64 ns of virtual time and one timer tick is 40 ns; a
 * tick is 5/8 of an instruction, so the clock resolves single
 * instructions. Benchmarks let one instruction stand for one cycle of the
 * 4 MHz sensor CPU. */
#include <stdint.h>

#include "cm3.h"
#include "cortex_m.h"
#include "tern/port.h"

#define UART0_BASE 0x40004000u
#define UART_DATA CM_REG(UART0_BASE + 0x00u)
#define UART_STATE CM_REG(UART0_BASE + 0x04u)
#define UART_CTRL CM_REG(UART0_BASE + 0x08u)
#define UART_BAUDDIV CM_REG(UART0_BASE + 0x10u)
#define UART_STATE_TXFULL (1u << 0)
#define UART_CTRL_TXEN (1u << 0)

/* CMSDK APB timer registers */
#define TIMER_CTRL(base) CM_REG((base) + 0x00u)
#define TIMER_VALUE(base) CM_REG((base) + 0x04u)
#define TIMER_RELOAD(base) CM_REG((base) + 0x08u)
#define TIMER_INTCLEAR(base) CM_REG((base) + 0x0Cu)
#define TIMER_CTRL_EN (1u << 0)
#define TIMER_CTRL_IRQEN (1u << 3)
#define CLOCK_TIMER 0x40000000u    /* TIMER0 */
#define DEADLINE_TIMER 0x40001000u /* TIMER1 */
#define DEADLINE_IRQ 9u

/* Sleep states as a Cortex-M3 sensor MCU would offer them, in ticks (5/8
 * of a cycle of the 4 MHz-equivalent CPU): WFI sleep costs nothing to
 * leave; deep sleep stops the high-speed clock, so it pays off only for
 * idle periods of 1 ms (4000 cycles = 6400 ticks) and takes 50 us (200
 * cycles = 320 ticks) to wake. The same in cycles as lm3s6965evb. */
static const tern_sleep_state sleep_states[] = {
    {.name = "sleep", .residency = 0, .exit_latency = 0},
    {.name = "deep-sleep", .residency = 6400, .exit_latency = 320},
};

const tern_board_info port_board = {
    .clock_hz = 25000000,
    .counter_bits = TERN_COUNTER_BITS,
    .cycles_per_tick_num = 5,
    .cycles_per_tick_den = 8,
    .n_sleep_states = 2,
    .sleep_states = sleep_states,
    .hw = 0, /* no radio or ADC driven by tern on the QEMU board */
};

/* IRQs 16..25 have no device behind them on the AN385: eight dispatch
 * vectors (one per task level) and two software-triggered test IRQs. */
#define BOARD_LEVEL_IRQ0 16
#define BOARD_LEVEL_IRQ1 17
#define BOARD_LEVEL_IRQ2 18
#define BOARD_LEVEL_IRQ3 19
#define BOARD_LEVEL_IRQ4 20
#define BOARD_LEVEL_IRQ5 21
#define BOARD_LEVEL_IRQ6 22
#define BOARD_LEVEL_IRQ7 23
#define BOARD_TEST_IRQ0 24
#define BOARD_TEST_IRQ1 25
CM_BOARD_IRQS;

static void deadline_irq(void);

/* 0-7: UARTs, GPIO; 8: TIMER0 (the clock, no interrupt); 9: TIMER1 (the
 * deadline); the rest unused. */
#define BOARD_DEVICE_VECTOR(n) ((n) == DEADLINE_IRQ ? deadline_irq : cm_unexpected_irq)
__attribute__((section(".vectors"), used)) const cm_vector board_vectors[16 + 32] = {
    CM_CORE_VECTORS(cm_unexpected_irq),
    CM_EXT_VECTORS8(0), CM_EXT_VECTORS8(8), CM_EXT_VECTORS8(16), CM_EXT_VECTORS8(24),
};

void board_init(void)
{
    UART_BAUDDIV = 16;
    UART_CTRL = UART_CTRL_TXEN;

    /* Free-running: count down from 2^32 - 1 and reload it on zero. */
    TIMER_CTRL(CLOCK_TIMER) = 0;
    TIMER_RELOAD(CLOCK_TIMER) = 0xFFFFFFFFu;
    TIMER_VALUE(CLOCK_TIMER) = 0xFFFFFFFFu;
    TIMER_CTRL(CLOCK_TIMER) = TIMER_CTRL_EN;

    TIMER_CTRL(DEADLINE_TIMER) = 0;
    /* Set once (port_deadline_set writes only the value): the reload only
     * matters if the interrupt were ignored for a whole counter period;
     * the handler stops the timer first. */
    TIMER_RELOAD(DEADLINE_TIMER) = 0xFFFFFFFFu;
    TIMER_INTCLEAR(DEADLINE_TIMER) = 1;
    NVIC_IPR8(DEADLINE_IRQ) = CM_PRIO_DEVICE;
    NVIC_ICPR(DEADLINE_IRQ) = NVIC_BIT(DEADLINE_IRQ);
    NVIC_ISER(DEADLINE_IRQ) = NVIC_BIT(DEADLINE_IRQ);
}

void port_putc(char c)
{
    while (UART_STATE & UART_STATE_TXFULL)
        ;
    UART_DATA = (uint8_t)c;
}

/* The down-counter, presented as an up-counter. */
uint32_t port_counter_read(void) { return ~TIMER_VALUE(CLOCK_TIMER); }

void port_deadline_set(uint32_t ticks)
{
    TIMER_CTRL(DEADLINE_TIMER) = 0;
    TIMER_INTCLEAR(DEADLINE_TIMER) = 1;
    NVIC_ICPR(DEADLINE_IRQ) = NVIC_BIT(DEADLINE_IRQ);
    TIMER_VALUE(DEADLINE_TIMER) = ticks;
    TIMER_CTRL(DEADLINE_TIMER) = TIMER_CTRL_EN | TIMER_CTRL_IRQEN;
}

void port_deadline_cancel(void)
{
    TIMER_CTRL(DEADLINE_TIMER) = 0;
    TIMER_INTCLEAR(DEADLINE_TIMER) = 1;
    NVIC_ICPR(DEADLINE_IRQ) = NVIC_BIT(DEADLINE_IRQ);
}

static void deadline_irq(void)
{
    TIMER_CTRL(DEADLINE_TIMER) = 0;
    TIMER_INTCLEAR(DEADLINE_TIMER) = 1;
    tern_isr_enter();
    tern_clock_isr();
    tern_isr_exit();
}
