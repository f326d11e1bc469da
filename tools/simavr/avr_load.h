/*
 * avr_load.h - what tern-simavr and tern-sim both need around libsimavr 1.6:
 * loading an image it alone would load only in part, mending a part it
 * gets wrong, and printing its error messages.
 */
#ifndef TERN_AVR_LOAD_H
#define TERN_AVR_LOAD_H

#include <stdarg.h>
#include <stddef.h>

#include <sim_avr.h>
#include <sim_irq.h>

/* Why avr_harness_core gave no core: the image (tern-simavr exits 101) or
 * the MCU, unknown or without USART0 (100). */
enum avr_core_error { AVR_CORE_OK, AVR_CORE_EIMAGE, AVR_CORE_EMCU };

/* A core running `image` the way both simulators want it: every flash
 * segment loaded, the clock at freq_hz whatever the image's .mmcu says,
 * libsimavr's part quirks mended, errors only in its log, no gdb server on a
 * crash, SLEEP a jump in simulated time (no usleep), and USART0's bytes
 * handed to uart_out(param) without simavr's line echo or its usleep() on
 * every UCSR0A poll. NULL with *why and a message in err otherwise. */
avr_t *avr_harness_core(const char *image, const char *mcu, uint32_t freq_hz, avr_irq_notify_t uart_out,
			void *param, enum avr_core_error *why, char *err, size_t errlen);

/* libsimavr 1.6 loads only the sections named .text and .data (.data right
 * after .text). Load every program segment that lies in flash at its load
 * address as well, so other flash sections (tern's .tern_params, patched by
 * avr-objcopy) reach the guest. 0, or -1 with a message in err. */
int avr_load_flash_segments(avr_t *avr, const char *image, char *err, size_t errlen);

/* Put right what libsimavr 1.6 gets wrong about a part, after avr_init():
 * the ATmega164/324/644/1284 family's INT2 is wired to PB3, where the
 * datasheet has PB2 (an edge on PB2 never reached the INT2 vector). */
void avr_fix_part_quirks(avr_t *avr);

/* One of libsimavr's log messages as "simavr: MESSAGE" on stderr, one line,
 * without the terminal colour codes it wraps them in. */
void avr_log_plain(const char *fmt, va_list ap);

#endif
