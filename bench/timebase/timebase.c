/* How the board's clock ticks map to the CPU's work, measured rather than
 * assumed (docs/boards.md): port_work(n) is exactly n units of work
 * (instructions on QEMU boards, cycles on AVR) plus a constant, so
 *
 *   work N:   the clock ticks port_work(N) takes, minus those of
 *             port_work(0): N units, so N / ticks = cycles_per_tick;
 *   calls K:  the ticks of K back-to-back port_work(0) calls, minus an
 *             empty pair of clock reads: K times the whole cost of one
 *             call (the work loop's own overhead plus the call).
 *
 * Interrupts stay masked while measuring, so nothing else is counted. The
 * board's own description (port_board) is printed too, so a test can
 * check board.c, board.json and the measurement against each other. */
#include "tern/port.h"
#include "tern/tern.h"

#define CALLS 64

static tern_time ticks_of_work(uint32_t n)
{
    tern_time a = tern_now();
    port_work(n);
    return tern_now() - a;
}

static tern_time ticks_of_calls(void)
{
#define CALL8 port_work(0), port_work(0), port_work(0), port_work(0), \
              port_work(0), port_work(0), port_work(0), port_work(0)
    tern_time a = tern_now();
    CALL8, CALL8, CALL8, CALL8, CALL8, CALL8, CALL8, CALL8;
    return tern_now() - a;
#undef CALL8
}

static tern_time ticks_of_nothing(void)
{
    tern_time a = tern_now();
    return tern_now() - a;
}

int main(void)
{
    static const uint32_t sizes[] = {1000, 10000, 40000};
    tern_init();
    tern_irq_state s = port_irq_save();
    tern_printf("TIMEBASE board=%s clock_hz=%lu counter_bits=%u cycles_per_tick=%u/%u\n",
                TERN_BOARD_NAME, (unsigned long)port_board.clock_hz, port_board.counter_bits,
                port_board.cycles_per_tick_num, port_board.cycles_per_tick_den);
    tern_time zero = ticks_of_work(0);
    for (unsigned i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        tern_time t = ticks_of_work(sizes[i]) - zero;
        tern_printf("work %lu: %lu ticks\n", (unsigned long)sizes[i], (unsigned long)t);
    }
    tern_time calls = ticks_of_calls() - ticks_of_nothing();
    tern_printf("calls %u port_work(0): %lu ticks\n", CALLS, (unsigned long)calls);
    port_irq_restore(s);
    return 0;
}
