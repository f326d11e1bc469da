/*
 * adc.c - signal files on the nodes' ADC channels (adc.h). simavr raises
 * ADC_IRQ_OUT_TRIGGER when a conversion starts, naming the channel; the
 * value the conversion returns is the one last raised on ADC_IRQ_ADCn, in
 * millivolts. So on each trigger for a channel we have a file for, we
 * raise its next sample there, converted so that simavr's scaling gives
 * back the code exactly. It runs on the node's thread, at the cycle of the
 * conversion: deterministic.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <simavr/avr_adc.h>
#include <simavr/sim_avr.h>

#include "adc.h"

/* tern-sim sets every reference (VCC, AVCC, AREF) to this: 5 V. */
#define VREF_MV 5000u

struct adc_source {
	uint16_t *codes;
	size_t n, next;
	struct adc_counters counters;
};

struct adc_node {
	struct sim_node *node;
	struct adc_source *src[ADC_CHANNELS];
};

struct adc_source *adc_load(const char *path, char *err, size_t err_len)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		snprintf(err, err_len, "adc file %s: %s", path, strerror(errno));
		return NULL;
	}
	struct adc_source *s = calloc(1, sizeof *s);
	size_t cap = 0;
	char line[256];
	unsigned lineno = 0;
	while (s && fgets(line, sizeof line, f)) {
		lineno++;
		char *p = line + strspn(line, " \t\r\n");
		if (!*p || *p == '#')
			continue;
		char *end;
		long v = strtol(p, &end, 10);
		end += strspn(end, " \t\r\n");
		if (end == p || (*end && *end != '#') || v < 0 || v > 1023) {
			snprintf(err, err_len, "adc file %s:%u: a sample is a 10-bit code 0..1023, not '%.*s'", path,
				 lineno, (int)strcspn(p, "\r\n"), p);
			goto fail;
		}
		if (s->n == cap) {
			cap = cap ? 2 * cap : 1024;
			uint16_t *c = realloc(s->codes, cap * sizeof *c);
			if (!c) {
				snprintf(err, err_len, "adc file %s: out of memory", path);
				goto fail;
			}
			s->codes = c;
		}
		s->codes[s->n++] = (uint16_t)v;
	}
	if (!s) {
		snprintf(err, err_len, "adc file %s: out of memory", path);
		fclose(f);
		return NULL;
	}
	if (!s->n) {
		snprintf(err, err_len, "adc file %s: no samples", path);
		goto fail;
	}
	fclose(f);
	return s;
fail:
	fclose(f);
	free(s->codes);
	free(s);
	return NULL;
}

/* simavr computes code = mV * 0x3ff / vref, truncated: the smallest mV
 * that gives the code back. */
static uint32_t code_to_mv(uint16_t code)
{
	return (code * VREF_MV + 0x3ffu - 1) / 0x3ffu;
}

static void on_trigger(struct avr_irq_t *irq, uint32_t value, void *param)
{
	(void)irq;
	struct adc_node *an = param;
	union {
		avr_adc_mux_t mux;
		uint32_t v;
	} e = { .v = value };
	if (e.mux.kind != ADC_MUX_SINGLE || e.mux.src >= ADC_CHANNELS || !an->src[e.mux.src])
		return;
	struct adc_source *s = an->src[e.mux.src];
	uint16_t code = s->codes[s->next++];
	s->counters.samples++;
	if (s->next == s->n) {
		s->next = 0;
		s->counters.wraps++;
	}
	avr_raise_irq(avr_io_getirq(an->node->avr, AVR_IOCTL_ADC_GETIRQ, ADC_IRQ_ADC0 + e.mux.src), code_to_mv(code));
}

int adc_attach(struct sim_node *node, unsigned channel, struct adc_source *src)
{
	avr_irq_t *trig = avr_io_getirq(node->avr, AVR_IOCTL_ADC_GETIRQ, ADC_IRQ_OUT_TRIGGER);
	if (!trig || channel >= ADC_CHANNELS)
		return -1;
	struct adc_node *an = node->adc;
	if (!an) {
		an = calloc(1, sizeof *an);
		if (!an)
			return -1;
		an->node = node;
		avr_irq_register_notify(trig, on_trigger, an);
		node->avr->vcc = node->avr->avcc = node->avr->aref = VREF_MV;
		node->adc = an;
	}
	if (an->src[channel])
		return -1;
	an->src[channel] = src;
	return 0;
}

void adc_summary(const struct sim_node *node, FILE *f)
{
	if (!node->adc)
		return;
	fprintf(f, ",\n   \"adc\": {");
	const char *sep = "";
	for (unsigned c = 0; c < ADC_CHANNELS; c++) {
		const struct adc_source *s = node->adc->src[c];
		if (!s)
			continue;
		fprintf(f, "%s\"%u\": {\"samples\": %" PRIu64 ", \"wraps\": %" PRIu64 "}", sep, c,
			s->counters.samples, s->counters.wraps);
		sep = ", ";
	}
	fputc('}', f);
}

