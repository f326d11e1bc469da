/* lm3s6965evb (Stellaris LM3S6965, Cortex-M3) under QEMU, the machine
 * Zephyr calls qemu_cortex_m3: PL011 UART0 console, SysTick as the
 * free-running clock, general-purpose timer 0A as the one-shot deadline.
 *
 * Why this split: QEMU cannot read a GPTM counter (its TAR reads as 0), so
 * the clock must be SysTick; but a GPTM one-shot does interrupt on time,
 * so SysTick never has to be stopped or rewritten for a deadline, and the
 * clock loses no tick when a deadline is programmed. SysTick is 24 bits
 * wide; the kernel extends it (TERN_COUNTER_BITS = 24) and never programs a
 * deadline more than half a wrap ahead, so it reads the counter at least
 * once per wrap.
 *
 * Time mapping (docs/boards.md): both timers count the system clock, which
 * the QEMU model derives from RCC at reset: 200 MHz / (SYSDIV + 1) =
 * 12.5 MHz, 80 ns a tick. QEMU runs with -icount shift=7, 128 ns an
 * instruction, so a tick is 5/8 of an instruction and the clock resolves
 * single instructions. Benchmarks let one instruction stand for one cycle
 * of the 4 MHz sensor CPU. */
#include <stdint.h>

#include "cm3.h"
#include "cortex_m.h"
#include "tern/port.h"

/* System control: clock gating of the peripherals used here. */
#define SYSCTL_RCGC1 CM_REG(0x400FE104u)
#define RCGC1_UART0 (1u << 0)
#define RCGC1_TIMER0 (1u << 16)

/* PL011 UART0 */
#define UART0_BASE 0x4000C000u
#define UART_DR CM_REG(UART0_BASE + 0x000u)
#define UART_FR CM_REG(UART0_BASE + 0x018u)
#define UART_IBRD CM_REG(UART0_BASE + 0x024u)
#define UART_FBRD CM_REG(UART0_BASE + 0x028u)
#define UART_LCRH CM_REG(UART0_BASE + 0x02Cu)
#define UART_CR CM_REG(UART0_BASE + 0x030u)
#define UART_FR_TXFF (1u << 5)
#define UART_LCRH_FEN (1u << 4)
#define UART_LCRH_WLEN8 (3u << 5)
#define UART_CR_UARTEN (1u << 0)
#define UART_CR_TXE (1u << 8)

/* General-purpose timer 0, used as one 32-bit one-shot timer (A). */
#define GPTM0_BASE 0x40030000u
#define GPTM_CFG CM_REG(GPTM0_BASE + 0x00u)
#define GPTM_TAMR CM_REG(GPTM0_BASE + 0x04u)
#define GPTM_CTL CM_REG(GPTM0_BASE + 0x0Cu)
#define GPTM_IMR CM_REG(GPTM0_BASE + 0x18u)
#define GPTM_ICR CM_REG(GPTM0_BASE + 0x24u)
#define GPTM_TAILR CM_REG(GPTM0_BASE + 0x28u)
#define GPTM_CFG_32BIT 0u
#define GPTM_TAMR_ONESHOT 1u
#define GPTM_CTL_TAEN (1u << 0)
#define GPTM_INT_TATO (1u << 0) /* timer A time-out */
#define DEADLINE_IRQ 19u        /* Timer 0A */

#define SYSTICK_MAX 0x00FFFFFFu /* 24-bit reload: a period of 2^24 ticks */
_Static_assert(SYSTICK_MAX == (1u << TERN_COUNTER_BITS) - 1u,
               "board.cmake's TERN_COUNTER_BITS must be SysTick's width");

/* Memory protection unit: what cm3.h does not define */
#define MPU_RASR_AP_NONE (0u << 24)
#define MPU_RASR_AP_FULL (3u << 24)
#define MPU_RASR_AP_RO (6u << 24)
#define MPU_RASR_NORMAL_WT (1u << 17) /* TEX=0 C=1 B=0: flash */
#define MPU_RASR_NORMAL_WB (3u << 17) /* TEX=0 C=1 B=1: SRAM */

/* Sleep states as a Cortex-M3 sensor MCU would offer them, stated in
 * cycles of the 4 MHz sensor CPU the benchmarks model (one instruction
 * each) and converted to ticks (8 ticks = 5 cycles): WFI sleep costs
 * nothing to leave; deep sleep stops the high-speed clock, so it pays off
 * only for idle periods of 1 ms (4000 cycles) and takes 50 us (200
 * cycles) to wake. */
#define CYCLES_TO_TICKS(c) ((c) * 8u / 5u)
static const tern_sleep_state sleep_states[] = {
    {.name = "sleep", .residency = 0, .exit_latency = 0},
    {.name = "deep-sleep", .residency = CYCLES_TO_TICKS(4000), .exit_latency = CYCLES_TO_TICKS(200)},
};

const tern_board_info port_board = {
    .clock_hz = 12500000,
    .counter_bits = TERN_COUNTER_BITS,
    .cycles_per_tick_num = 5,
    .cycles_per_tick_den = 8,
    .n_sleep_states = 2,
    .sleep_states = sleep_states,
    .hw = 0, /* no radio or ADC driven by tern on the QEMU board */
};

/* IRQs the LM3S6965 reserves (parts of the Stellaris family that it lacks:
 * comparator 2, GPIO port H, SSI1, CAN0-2, USB, PWM generator 3, uDMA), so
 * no device can raise them: eight dispatch vectors (one per task level)
 * and two software-triggered test IRQs. */
#define BOARD_LEVEL_IRQ0 27
#define BOARD_LEVEL_IRQ1 32
#define BOARD_LEVEL_IRQ2 34
#define BOARD_LEVEL_IRQ3 39
#define BOARD_LEVEL_IRQ4 40
#define BOARD_LEVEL_IRQ5 41
#define BOARD_LEVEL_IRQ6 44
#define BOARD_LEVEL_IRQ7 45
#define BOARD_TEST_IRQ0 46
#define BOARD_TEST_IRQ1 47
CM_BOARD_IRQS;

static void deadline_irq(void);

/* QEMU's NVIC for this machine has 64 external lines; every one has a
 * vector, so a stray interrupt is reported rather than jumping to 0.
 * 0-7: GPIO A-E, UART0, UART1, SSI0; 8-15: I2C0, PWM fault, PWM 0-2, QEI0,
 * ADC sequences 0-1; 16-18: ADC sequences 2-3, watchdog; 19: Timer 0A
 * (the deadline); 20-26: Timer 0B, 1A, 1B, 2A, 2B, comparators 0-1; 27:
 * level 0; 28-31: system control, flash, GPIO F-G; 32: level 1; 33:
 * UART2; 34: level 2; 35-38: Timer 3A-3B, I2C1, QEI1; 39-41: levels 3-5;
 * 42-43: Ethernet, hibernation; 44-45: levels 6-7; 46-47: test
 * interrupts; 48-63: beyond the LM3S6965's table. */
#define BOARD_DEVICE_VECTOR(n) ((n) == DEADLINE_IRQ ? deadline_irq : cm_unexpected_irq)
__attribute__((section(".vectors"), used)) const cm_vector board_vectors[16 + 64] = {
    CM_CORE_VECTORS(cm_unexpected_irq),
    CM_EXT_VECTORS8(0),  CM_EXT_VECTORS8(8),  CM_EXT_VECTORS8(16), CM_EXT_VECTORS8(24),
    CM_EXT_VECTORS8(32), CM_EXT_VECTORS8(40), CM_EXT_VECTORS8(48), CM_EXT_VECTORS8(56),
};

/* The real LM3S6965 answers an access to an address with nothing behind
 * it with a BusFault; QEMU's lm3s6965evb is a legacy machine that ignores
 * bus errors (the access reads 0 and writes vanish). The MPU restores the
 * trap: everything outside flash, SRAM, the peripherals and the private
 * peripheral bus (which the MPU never checks) is no-access, so a wild
 * pointer ends in a MemManage fault report naming the address (MMFAR).
 * On overlap the higher region number wins (regions 6 and 7: the stack
 * guards, arch/cortex-m). */
static const struct {
    uint32_t base, attr;
} mpu_regions[] = {
    {0x00000000u, MPU_RASR_SIZE(29) | MPU_RASR_AP_NONE | MPU_RASR_XN}, /* code space */
    {0x20000000u, MPU_RASR_SIZE(29) | MPU_RASR_AP_NONE | MPU_RASR_XN}, /* SRAM space */
    {0x60000000u, MPU_RASR_SIZE(29) | MPU_RASR_AP_NONE | MPU_RASR_XN}, /* external RAM */
    {0x80000000u, MPU_RASR_SIZE(31) | MPU_RASR_AP_NONE | MPU_RASR_XN}, /* devices, system */
    {0x00000000u, MPU_RASR_SIZE(18) | MPU_RASR_AP_RO | MPU_RASR_NORMAL_WT}, /* 256K flash */
    {0x20000000u, MPU_RASR_SIZE(16) | MPU_RASR_AP_FULL | MPU_RASR_NORMAL_WB | MPU_RASR_XN}, /* 64K SRAM */
};

static void mpu_init(void)
{
    MPU_CTRL = 0;
    for (uint32_t r = 0; r < sizeof mpu_regions / sizeof mpu_regions[0]; r++) {
        MPU_RBAR = mpu_regions[r].base | MPU_RBAR_VALID | r;
        MPU_RASR = mpu_regions[r].attr | MPU_RASR_ENABLE;
    }
    MPU_CTRL = MPU_CTRL_ENABLE | MPU_CTRL_PRIVDEFENA;
    cm_dsb_isb();
}

void board_init(void)
{
    mpu_init();
    SYSCTL_RCGC1 |= RCGC1_UART0 | RCGC1_TIMER0;

    /* 115200 baud 8N1 from the 12.5 MHz clock (QEMU ignores the rate):
     * 12.5e6 / (16 * 115200) = 6.78 -> IBRD 6, FBRD round(0.78 * 64) = 50. */
    UART_CR = 0;
    UART_IBRD = 6;
    UART_FBRD = 50;
    UART_LCRH = UART_LCRH_WLEN8 | UART_LCRH_FEN;
    UART_CR = UART_CR_UARTEN | UART_CR_TXE;

    /* Free-running: count the processor clock down from 2^24 - 1 and
     * reload it on zero, no interrupt. Writing CVR clears it. */
    SYST_CSR = 0;
    SYST_RVR = SYSTICK_MAX;
    SYST_CVR = 0;
    SYST_CSR = SYST_CSR_ENABLE | SYST_CSR_CLKSOURCE;

    GPTM_CTL = 0;
    GPTM_CFG = GPTM_CFG_32BIT;
    GPTM_TAMR = GPTM_TAMR_ONESHOT;
    GPTM_ICR = GPTM_INT_TATO;
    GPTM_IMR = GPTM_INT_TATO;
    NVIC_IPR8(DEADLINE_IRQ) = CM_PRIO_DEVICE;
    NVIC_ICPR(DEADLINE_IRQ) = NVIC_BIT(DEADLINE_IRQ);
    NVIC_ISER(DEADLINE_IRQ) = NVIC_BIT(DEADLINE_IRQ);
}

void port_putc(char c)
{
    while (UART_FR & UART_FR_TXFF)
        ;
    UART_DR = (uint8_t)c;
}

/* The down-counter, presented as a 24-bit up-counter. */
uint32_t port_counter_read(void) { return SYSTICK_MAX - (SYST_CVR & SYSTICK_MAX); }

static void deadline_stop(void)
{
    GPTM_CTL = 0;
    GPTM_ICR = GPTM_INT_TATO;
    NVIC_ICPR(DEADLINE_IRQ) = NVIC_BIT(DEADLINE_IRQ);
}

void port_deadline_set(uint32_t ticks)
{
    deadline_stop();
    GPTM_TAILR = ticks;
    GPTM_CTL = GPTM_CTL_TAEN; /* a one-shot stops itself at time-out */
}

void port_deadline_cancel(void) { deadline_stop(); }

static void deadline_irq(void)
{
    deadline_stop();
    tern_isr_enter();
    tern_clock_isr();
    tern_isr_exit();
}
