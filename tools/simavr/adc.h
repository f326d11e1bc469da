/*
 * adc.h - a signal file on one ADC channel of one node: every conversion
 * the guest starts on that channel reads the file's next sample (seed 002's
 * microphones and temperature sensor, played back).
 *
 * File: text, one sample a line, a 10-bit ADC code 0..1023 (what ADC will
 * read), blank lines and '#' comments ignored. After the last sample the
 * file starts again (`wraps` counts it): a short recording loops.
 */
#ifndef TERN_SIM_ADC_H
#define TERN_SIM_ADC_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#include "sim.h"

#define ADC_CHANNELS 8

struct adc_source;

struct adc_counters {
	uint64_t samples;	/* conversions served from the file */
	uint64_t wraps;		/* times the file started again */
};

/* Read the file (err: why not, a named error with the file and line);
 * NULL on error. */
struct adc_source *adc_load(const char *path, char *err, size_t err_len);

/* Serve channel (0..7) of node's ADC from src (one source per node and
 * channel). -1 if the node's MCU has no ADC in simavr. */
int adc_attach(struct sim_node *node, unsigned channel, struct adc_source *src);

/* ",\n   \"adc\": {\"CHANNEL\": {\"samples\": N, \"wraps\": N}, ...}" for summary.json;
 * nothing for a node without signal files. */
void adc_summary(const struct sim_node *node, FILE *f);

#endif
