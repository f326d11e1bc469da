/* The monotonic clock and interrupt-context alarms (tickless). */
#ifndef TERN_TIME_H
#define TERN_TIME_H

#include "tern/types.h"

/* Board clock ticks since boot, extended to 64 bits from the hardware
 * counter. Callable from any context. */
tern_time tern_now(void);

/* Ticks per second of the board clock (virtual time on emulated boards). */
uint32_t tern_clock_hz(void);

/* Board ticks <-> cycles of the CPU being studied (instructions on QEMU
 * boards, where one instruction stands for one cycle of the 4 MHz sensor
 * CPU), through the board's exact ratio; rounded down. */
uint64_t tern_ticks_to_cycles(tern_time ticks);
tern_time tern_cycles_to_ticks(uint64_t cycles);

struct tern_alarm;
typedef void (*tern_alarm_fn)(struct tern_alarm *alarm, void *arg);

/* An alarm calls fn in interrupt context at its deadline. Owned by the
 * caller; periodic alarms are re-armed from their previous deadline so they
 * never drift. A periodic alarm is re-armed before fn runs: inside fn,
 * alarm->deadline is already the next one. */
typedef struct tern_alarm {
    struct tern_alarm *next;
    tern_time deadline;
    tern_time period; /* 0 = one-shot */
    tern_alarm_fn fn;
    void *arg;
    uint8_t armed; /* non-zero while armed (kernel/timer.c) */
} tern_alarm;

void tern_alarm_init(tern_alarm *a, tern_alarm_fn fn, void *arg);
/* Arm for an absolute deadline (a past deadline fires at once). */
void tern_alarm_set(tern_alarm *a, tern_time deadline, tern_time period);
void tern_alarm_cancel(tern_alarm *a);

#endif
