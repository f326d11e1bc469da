/* The sampler (ssl.h): Timer3 in CTC mode paces the microphones, the ADC's
 * conversion-complete interrupt stores each sample and starts whatever
 * waits (a microphone whose tick came while the ADC was busy, then a
 * temperature request). tern-sim plays a signal file into each channel,
 * one sample per conversion (docs/tern-sim.md, [[adc]]). The tern build
 * wraps the hooks, which post messages, in tern_isr_enter/exit, and only
 * them: the 16,000 interrupts a second that only start or store a sample
 * stay a few dozen cycles each (and leave an idle CPU asleep). The
 * standalone build (SSL_STANDALONE) needs no wrapping. */
#include <avr/interrupt.h>
#include <avr/io.h>

#include "avr_mcu.h"
#include "ssl.h"

#ifdef SSL_STANDALONE
#define ISR_ENTER()
#define ISR_EXIT()
#else
#include "tern/port.h"
#define ISR_ENTER() tern_isr_enter()
#define ISR_EXIT() tern_isr_exit()
#endif

#define NONE 0xFF
#define TEMP 0xFE
/* ADC clock F_CPU / 16: 13 ADC clocks = 208 CPU cycles a conversion. */
#define ADC_ON (_BV(ADEN) | _BV(ADIE) | _BV(ADPS2))

static struct {
    uint8_t nch, slot, busy, pend, round;
    uint8_t channel[SSL_CHANNELS];
    ssl_block *block[SSL_CHANNELS];
    uint16_t fill[SSL_CHANNELS];
    uint16_t tick;
    uint16_t rounds_left;
    uint8_t temp_req;
} s;

void ssl_pins_init(void)
{
    DDRA = 0xFF;
    PORTA = 0;
    DDRC = 0xFF;
    PORTC = 0;
}

void ssl_sampler_add(uint8_t channel)
{
    if (s.nch < SSL_CHANNELS)
        s.channel[s.nch++] = channel;
}

uint8_t ssl_sampler_channel(uint8_t slot) { return s.channel[slot]; }

static void convert(uint8_t what)
{
    s.busy = what;
    ADMUX = (uint8_t)(_BV(REFS0) | (what == TEMP ? SSL_TEMP_CHANNEL : s.channel[what]));
    ADCSRA = ADC_ON | _BV(ADSC);
}

void ssl_sampler_start(uint16_t rounds)
{
    s.busy = NONE;
    s.tick = SSL_ROUND_SAMPLES - 1; /* the first round starts at the first tick */
    s.rounds_left = rounds;
    ADCSRA = ADC_ON;
    if (!s.nch) /* no microphone here: the ADC serves temperature requests only */
        return;
    TCCR3A = 0;
    TCCR3B = _BV(WGM32) | _BV(CS30); /* CTC on OCR3A, no prescaler */
    OCR3A = (uint16_t)(F_CPU / ((uint32_t)SSL_FS * s.nch) - 1);
    AVR_TIMER3_IMSK |= _BV(OCIE3A);
}

void ssl_sampler_arm(uint8_t slot, ssl_block *b)
{
    uint8_t sreg = SREG;
    cli();
    s.fill[slot] = 0;
    s.block[slot] = b;
    SREG = sreg;
}

void ssl_sampler_temp(void)
{
    uint8_t sreg = SREG;
    cli();
    if (s.busy == NONE)
        convert(TEMP);
    else
        s.temp_req = 1;
    SREG = sreg;
}

ISR(TIMER3_COMPA_vect)
{
    uint8_t slot = s.slot;
    s.slot = (uint8_t)(slot + 1 == s.nch ? 0 : slot + 1);
    if (s.block[slot]) {
        if (s.busy == NONE)
            convert(slot);
        else
            s.pend |= (uint8_t)(1u << slot);
    }
    /* The hook last: the kernel may run handlers (and let further ticks
     * in) before ISR_EXIT returns, so nothing of this tick may follow it. */
    if (slot == 0 && ++s.tick == SSL_ROUND_SAMPLES) {
        s.tick = 0;
        if (s.rounds_left) {
            s.rounds_left--;
            PA_HIGH(PIN_ROUND);
            ISR_ENTER();
            ssl_on_round(s.round++);
            ISR_EXIT();
        }
    }
}

ISR(ADC_vect)
{
    uint16_t v = ADC;
    uint8_t what = s.busy;
    s.busy = NONE;
    bool hook = false;
    ssl_block *full = 0;
    if (what == TEMP) {
        hook = true;
    } else if (what != NONE && s.block[what]) {
        ssl_block *b = s.block[what];
        b->data[s.fill[what]++] = (int16_t)v;
        if (s.fill[what] == SSL_N) {
            s.block[what] = 0;
            full = b;
            hook = true;
        }
    }
    /* A tick that waited for the ADC converts only if its block is still
     * open: the conversion that just filled it may be the waiting slot's
     * own, and one more would take a sample of the next block (tern-sim
     * plays one sample per conversion) and shift that channel by one. */
    uint8_t next = NONE;
    while (s.pend && next == NONE) {
        uint8_t k = 0;
        while (!(s.pend & (1u << k)))
            k++;
        s.pend &= (uint8_t) ~(1u << k);
        if (s.block[k])
            next = k;
    }
    if (next != NONE) {
        convert(next);
    } else if (s.temp_req) {
        s.temp_req = 0;
        convert(TEMP);
    }
    if (hook) { /* after the next conversion has started */
        ISR_ENTER();
        if (full)
            ssl_on_block(what, full);
        else
            ssl_on_temp(v);
        ISR_EXIT();
    }
}
