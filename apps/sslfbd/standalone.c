/* SSL without tern: the baseline of seed 002's Tables II and V (docs/comos.md).
 * The same processing (ssl_dsp.c) and sampler (ssl_sampler.c, built with
 * SSL_STANDALONE: its interrupts only set flags here) as apps/sslfbd, but
 * one C file of hand-written control: static buffers, no messages, no
 * heap, a polling main loop, and on five modules the bus's registers used
 * directly with a private frame format. Only SSL runs, as in the seed's
 * measurement ("we used only the SSL portion"). The pins are apps/sslfbd's:
 * PA0 high at a round's timer interrupt (ssl_sampler.c), low when channel
 * 0's SC is done; PA1 a pulse when HT has its direction; PA2 high during an
 * FFT.
 *
 * Built by `tern bench comos ssl` (tools/terntools/comos_ssl.py) with
 * avr-gcc -Os for SSL_MODULES=1 (ATmega1284P, every channel) or 5 (the bus
 * address says what the module does: 0 Vote and HT, a = 1..4 channel a-1). */
#include <avr/interrupt.h>
#include <avr/io.h>

#include "ssl.h"
#include "tern_simavr_abi.h"

#define REG(a) (*(volatile uint8_t *)(a))

static ssl_block blocks[SSL_CHANNELS > 1 && SSL_MODULES == 1 ? SSL_CHANNELS : 1];
static volatile uint8_t round_due, full; /* bit per slot */
static volatile uint8_t round_no;
static ssl_sc scs[SSL_MODULES == 1 ? SSL_CHANNELS : 1];

void ssl_on_round(uint8_t round)
{
    round_no = round;
    round_due = 1;
}

void ssl_on_block(uint8_t slot, ssl_block *b)
{
    (void)b;
    full |= (uint8_t)(1u << slot);
}

void ssl_on_temp(uint16_t code) { (void)code; }

static void arm_all(uint8_t nch)
{
    for (uint8_t s = 0; s < nch; s++) {
        blocks[s].round = round_no;
        blocks[s].channel = ssl_sampler_channel(s);
        ssl_sampler_arm(s, &blocks[s]);
    }
}

static void fft(ssl_block *b)
{
    PA_HIGH(PIN_FFT);
    ssl_fft(b->data);
    PA_LOW(PIN_FFT);
}

#if SSL_MODULES == 1

static int16_t bins[SSL_CHANNELS][2 * SSL_BINS];
static uint8_t ht_work[2 * 1024];

int main(void)
{
    ssl_pins_init();
    for (uint8_t c = 0; c < SSL_CHANNELS; c++)
        ssl_sampler_add(c);
    ssl_ht *ht = (ssl_ht *)ht_work;
    if (ssl_ht_size() > sizeof ht_work)
        tern_simavr_exit(3);
    ssl_ht_init(ht);
    ssl_sampler_start(0xFFFF);
    sei();
    for (;;) {
        if (round_due) {
            round_due = 0;
            arm_all(SSL_CHANNELS);
        }
        if (full != (1u << SSL_CHANNELS) - 1)
            continue;
        full = 0;
        uint8_t voices = 0;
        for (uint8_t c = 0; c < SSL_CHANNELS; c++) {
            fft(&blocks[c]);
            voices = (uint8_t)(voices + ssl_sc_measure(&scs[c], blocks[c].data));
            for (uint8_t i = 0; i < SSL_BINS; i++) {
                bins[c][2 * i] = ssl_bin(blocks[c].data, i)[0];
                bins[c][2 * i + 1] = ssl_bin(blocks[c].data, i)[1];
            }
        }
        if (voices >= SSL_VOTES_NEEDED) {
            PA_LOW(PIN_ROUND);
            ssl_ht_direction(ht, bins);
            PA_HIGH(PIN_HT);
            PA_LOW(PIN_HT);
        } else {
            for (uint8_t c = 0; c < SSL_CHANNELS; c++) {
                ssl_sc_noise_update(&scs[c]);
                if (c == 0)
                    PA_LOW(PIN_ROUND);
            }
        }
    }
}

#else /* five modules over the bus */

enum { F_VOTE = 'V', F_VERDICT = 'D', F_BINS = 'H' };

static void bus_send(uint8_t dst, const uint8_t *p, uint8_t len)
{
    while (!(REG(TERN_BUS_STATUS_ADDR) & TERN_BUS_TX_FREE))
        ;
    REG(TERN_BUS_TX_DST_ADDR) = dst;
    for (uint8_t i = 0; i < len; i++)
        REG(TERN_BUS_TX_DATA_ADDR) = p[i];
    REG(TERN_BUS_TX_SEND_ADDR) = TERN_BUS_SEND;
}

/* The next frame into buf, its length; 0 when none waits. */
static uint8_t bus_recv(uint8_t *buf)
{
    if (!(REG(TERN_BUS_STATUS_ADDR) & TERN_BUS_RX_READY))
        return 0;
    uint8_t len = REG(TERN_BUS_RX_LEN_ADDR);
    for (uint8_t i = 0; i < len; i++)
        buf[i] = REG(TERN_BUS_RX_DATA_ADDR);
    REG(TERN_BUS_RX_NEXT_ADDR) = 1;
    return len;
}

static uint8_t frame[TERN_BUS_FRAME_MAX];

static void sensing(uint8_t channel)
{
    ssl_sampler_add(channel);
    ssl_sampler_start(0xFFFF);
    sei();
    ssl_sc *sc = &scs[0];
    for (;;) {
        if (round_due) {
            round_due = 0;
            arm_all(1);
        }
        if (!full)
            continue;
        full = 0;
        ssl_block *b = &blocks[0];
        fft(b);
        uint8_t vote[4] = {F_VOTE, b->round, channel, ssl_sc_measure(sc, b->data)};
        bus_send(0, vote, sizeof vote);
        while (bus_recv(frame) == 0 || frame[0] != F_VERDICT) /* the verdict */
            ;
        if (frame[2]) {
            for (uint8_t first = 0; first < SSL_BINS; first = (uint8_t)(first + SSL_CHUNK_BINS)) {
                uint8_t n = SSL_BINS - first < SSL_CHUNK_BINS ? SSL_BINS - first : SSL_CHUNK_BINS;
                frame[0] = F_BINS;
                frame[1] = b->round;
                frame[2] = channel;
                frame[3] = first;
                frame[4] = n;
                int16_t *d = (int16_t *)&frame[5];
                for (uint8_t i = 0; i < n; i++) {
                    d[2 * i] = ssl_bin(b->data, (uint8_t)(first + i))[0];
                    d[2 * i + 1] = ssl_bin(b->data, (uint8_t)(first + i))[1];
                }
                bus_send(0, frame, (uint8_t)(5 + 4 * n));
            }
        } else {
            ssl_sc_noise_update(sc);
        }
        if (channel == 0)
            PA_LOW(PIN_ROUND);
    }
}

static int16_t bins[SSL_CHANNELS][2 * SSL_BINS];
static uint8_t ht_work[2 * 1024];

static void computational(void)
{
    ssl_ht *ht = (ssl_ht *)ht_work;
    if (ssl_ht_size() > sizeof ht_work)
        tern_simavr_exit(3);
    ssl_ht_init(ht);
    uint8_t votes = 0, voices = 0, chunks = 0;
    for (;;) {
        if (!bus_recv(frame))
            continue;
        if (frame[0] == F_VOTE) {
            voices = (uint8_t)(voices + (frame[3] != 0));
            if (++votes < SSL_CHANNELS)
                continue;
            uint8_t verdict[3] = {F_VERDICT, frame[1], voices >= SSL_VOTES_NEEDED};
            votes = voices = 0;
            bus_send(TERN_BUS_BROADCAST, verdict, sizeof verdict);
        } else if (frame[0] == F_BINS) {
            const int16_t *d = (const int16_t *)&frame[5];
            for (uint8_t i = 0; i < 2 * frame[4]; i++)
                bins[frame[2]][2 * frame[3] + i] = d[i];
            if (++chunks < SSL_CHANNELS * SSL_CHUNKS)
                continue;
            chunks = 0;
            ssl_ht_direction(ht, bins);
            PA_HIGH(PIN_HT);
            PA_LOW(PIN_HT);
        }
    }
}

int main(void)
{
    ssl_pins_init();
    uint8_t a = REG(TERN_BUS_ADDRESS_ADDR);
    if (a == 0)
        computational();
    else
        sensing((uint8_t)(a - 1));
}

#endif
