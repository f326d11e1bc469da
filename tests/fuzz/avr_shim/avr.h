/* Host stand-in for arch/avr/avr.h: what drivers/cc2420/cc2420.c uses. */
#ifndef TERN_FUZZ_AVR_H
#define TERN_FUZZ_AVR_H
#include "tern/types.h"
/* Busy waits (wait_us, xosc_start) read tern_now(), which the host port
 * advances only when told: with no cycles per microsecond they end at once. */
#define F_CPU 0u
tern_time avr_timer1_capture_time(uint16_t icr);
#endif
