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
