/* Seed 002's SSL + FBD application (Fig. 4), the parts shared by the tern
 * build (sslfbd.c) and the standalone build without tern (standalone.c):
 * the signal processing (ssl_dsp.c), the sampler (ssl_sampler.c), the
 * messages and the pins the measurements read. docs/comos.md.
 *
 * SSL: four microphones at the corners of a 10 cm square, 8 kHz; every
 * SSL_ROUND_SAMPLES sample periods a round starts: each channel takes a
 * block of SSL_N samples, a 512-point real FFT, noise estimation (SC),
 * votes; if more than two channels hear a source, each sends SSL_BINS bins
 * of its spectrum to HT, which finds the direction (SRP-PHAT).
 * FBD: the temperature (ADC channel 7) at 4 Hz, an EWMA, an alert on a
 * sustained rise. */
#ifndef SSL_H
#define SSL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SSL_CHANNELS 4
#define SSL_N 512              /* samples per block: a 512-point real FFT */
#define SSL_FS 8000            /* samples per second and channel (nominal) */
#define SSL_ROUND_SAMPLES 4096 /* a round every 512 ms */
#define SSL_TEMP_CHANNEL 7     /* the temperature sensor's ADC channel */
#define SSL_TEMP_MS 250        /* FBD samples at 4 Hz */

/* The spectrum bins HT uses: SSL_BINS bins from SSL_BIN0, every
 * SSL_BIN_STEP (375 Hz .. 2.2 kHz at 15.6 Hz a bin): two bus frames. */
#define SSL_BINS 24
#define SSL_BIN0 24
#define SSL_BIN_STEP 5
/* SC's voice band for the energy: bins 16 .. 191 (250 Hz .. 3 kHz). */
#define SSL_BAND_LO 16
#define SSL_BAND_HI 192
#define SSL_NOISE_LEARN 2 /* rounds that only learn the noise */
#define SSL_VOICE_RATIO 4 /* voice: band energy above 4x the noise (6 dB) */
#define SSL_VOTES_NEEDED 3 /* "more than two channels" */

/* HT: SSL_DIRS directions, 360 / SSL_DIRS degrees apart. */
#define SSL_DIRS 72
#define SSL_PAIRS 6

/* FBD's detector: baseline = the EWMA after FBD_LEARN samples; an alert
 * when the EWMA rises FBD_RISE codes above it (re-armed below half). */
#define FBD_LEARN 4
#define FBD_RISE 10

/* Pins the logic analyser records (docs/sim/sslfbd*.toml). PORTA:
 * round latency and the FBD chain; PORTC: one send / receive pair per
 * message kind of Fig. 6 (tern build only). */
#define PIN_ROUND 0 /* PA0: high at a round's timer interrupt, low when SC 0 is done (noise) */
#define PIN_HT 1    /* PA1: a pulse when HT has found the direction */
#define PIN_FFT 2   /* PA2: high while an FFT runs */
#define PIN_FBD 3   /* PA3: high when a temperature sample is in, low when Alert is done */
#define PIN_ALERT_S 4 /* PA4/PA5: the alert to Radio, sent / received */
#define PIN_ALERT_R 5

/* Message kinds whose latency is probed: send pin PC(2k), receive pin
 * PC(2k+1); the receiver pulses (sender's module + 1) times, so that
 * concurrent senders are told apart. */
enum { PROBE_FFT, PROBE_VOTE, PROBE_SC2, PROBE_HT, PROBE_KINDS };

/* A block of samples, then (in place) its spectrum: SSL_N/2 complex bins
 * re, im (bin 0 holds DC and Nyquist). */
typedef struct {
    uint8_t round, channel;
    int16_t data[SSL_N];
} ssl_block;

typedef struct {
    uint8_t round, channel, voice, pad;
    uint32_t energy;
} ssl_vote;

typedef struct {
    uint8_t round, voice;
} ssl_verdict;

#define SSL_CHUNK_BINS 12 /* 4 + 12 * 4 = 52 bytes: one bus frame */
#define SSL_CHUNKS ((SSL_BINS + SSL_CHUNK_BINS - 1) / SSL_CHUNK_BINS)
typedef struct {
    uint8_t round, channel, first, n;
    int16_t bins[2 * SSL_CHUNK_BINS];
} ssl_chunk;

typedef struct {
    uint16_t seq, code;
} fbd_sample;

typedef struct {
    uint16_t seq, code, ewma_q4; /* EWMA in 1/16 codes */
} fbd_avg;

/* --- ssl_dsp.c ------------------------------------------------------------ */

/* ADC codes (0..1023) in data[] -> SSL_N/2 complex bins in place, scaled
 * by 1/512 of the DFT of (code - 512) * 32. */
void ssl_fft(int16_t *data);

/* SC's state for one channel (the spectrum itself stays in its block
 * until the vote: no copy). */
typedef struct {
    uint32_t noise;  /* EWMA of the band energy over noise rounds */
    uint32_t energy; /* this round's */
    uint8_t rounds;
} ssl_sc;

/* The band energy of a spectrum; true for voice. */
bool ssl_sc_measure(ssl_sc *sc, const int16_t *spectrum);
/* Selected bin i (0 .. SSL_BINS-1) of a spectrum: re, im. */
static inline const int16_t *ssl_bin(const int16_t *spectrum, uint8_t i)
{
    return &spectrum[2 * (SSL_BIN0 + i * SSL_BIN_STEP)];
}
/* The vote said noise: learn this round's energy. */
void ssl_sc_noise_update(ssl_sc *sc);

/* HT: its working memory (ssl_ht_size() bytes, 2 KB, from the heap of
 * the module it runs on), the steering delays once; then the direction
 * (degrees) of the source from the four channels' selected bins. */
typedef struct ssl_ht ssl_ht;
size_t ssl_ht_size(void);
void ssl_ht_init(ssl_ht *h);
uint16_t ssl_ht_direction(ssl_ht *h, int16_t bins[SSL_CHANNELS][2 * SSL_BINS]);

/* FBD. */
typedef struct {
    uint16_t ewma_q4, baseline_q4;
    bool started, fire;
} fbd_state;
uint16_t fbd_ewma(fbd_state *s, uint16_t code);
/* Sample seq's EWMA: true when it starts a fire (once per crossing; the
 * baseline is the EWMA of sample FBD_LEARN - 1). */
bool fbd_alert(fbd_state *s, uint16_t seq, uint16_t ewma_q4);

/* --- ssl_sampler.c -------------------------------------------------------- */

/* The sampler: Timer3 ticks at SSL_FS x (channels here); each tick
 * converts the next channel into its armed block; every SSL_ROUND_SAMPLES
 * sample periods a round starts (ssl_on_round). A temperature request is
 * converted between two microphone samples. Each build defines the hooks,
 * called in interrupt context. */
void ssl_sampler_add(uint8_t channel);     /* before start; slot = order added */
void ssl_sampler_start(uint16_t rounds);    /* rounds in all */
void ssl_sampler_arm(uint8_t slot, ssl_block *b); /* fill b from the next tick */
void ssl_sampler_temp(void);                /* one temperature conversion */
uint8_t ssl_sampler_channel(uint8_t slot);
extern void ssl_on_round(uint8_t round);
extern void ssl_on_block(uint8_t slot, ssl_block *b);
extern void ssl_on_temp(uint16_t code);

/* Pins: PORTA and PORTC outputs. */
void ssl_pins_init(void);
#define PA_HIGH(b) (PORTA |= (uint8_t)(1u << (b)))
#define PA_LOW(b) (PORTA &= (uint8_t) ~(1u << (b)))

#endif
