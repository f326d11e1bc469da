/* The SSL + FBD signal processing (ssl.h), the same code in the tern and
 * the standalone builds. Fixed point for the FFT and the steering (the AVR
 * has a 2-cycle 8x8 multiplier and no FPU); float only for HT's 192 PHAT
 * normalisations and its one-time delay table. Why these sizes: docs/comos.md. */
#include <math.h>
#include <stdlib.h>

#include "ssl.h"

#ifdef __AVR__
#include <avr/pgmspace.h>
#define ROM_WORD(p) ((int16_t)pgm_read_word(p))
#else
#define PROGMEM
#define ROM_WORD(p) (*(p))
#endif

/* round(32767 sin(2 pi i / 512)), i = 0 .. 128: a quarter wave, 258 bytes
 * of flash instead of 1 KB of RAM. */
static const int16_t quarter[129] PROGMEM = {
    0, 402, 804, 1206, 1608, 2009, 2410, 2811, 3212, 3612, 4011, 4410,
    4808, 5205, 5602, 5998, 6393, 6786, 7179, 7571, 7962, 8351, 8739, 9126,
    9512, 9896, 10278, 10659, 11039, 11417, 11793, 12167, 12539, 12910, 13279, 13645,
    14010, 14372, 14732, 15090, 15446, 15800, 16151, 16499, 16846, 17189, 17530, 17869,
    18204, 18537, 18868, 19195, 19519, 19841, 20159, 20475, 20787, 21096, 21403, 21705,
    22005, 22301, 22594, 22884, 23170, 23452, 23731, 24007, 24279, 24547, 24811, 25072,
    25329, 25582, 25832, 26077, 26319, 26556, 26790, 27019, 27245, 27466, 27683, 27896,
    28105, 28310, 28510, 28706, 28898, 29085, 29268, 29447, 29621, 29791, 29956, 30117,
    30273, 30424, 30571, 30714, 30852, 30985, 31113, 31237, 31356, 31470, 31580, 31685,
    31785, 31880, 31971, 32057, 32137, 32213, 32285, 32351, 32412, 32469, 32521, 32567,
    32609, 32646, 32678, 32705, 32728, 32745, 32757, 32765, 32767,
};

/* sin and cos of 2 pi i / 512, Q15. */
static int16_t sin512(uint16_t i)
{
    i &= 511;
    if (i < 128)
        return ROM_WORD(&quarter[i]);
    if (i < 256)
        return ROM_WORD(&quarter[256 - i]);
    if (i < 384)
        return (int16_t)-ROM_WORD(&quarter[i - 256]);
    return (int16_t)-ROM_WORD(&quarter[512 - i]);
}

static int16_t cos512(uint16_t i) { return sin512((uint16_t)(i + 128)); }

/* Q15 product: the high word of 2ab. On the AVR a shift by 16 is a byte
 * move and one by 15 a loop of 15 (75 cycles): this is 4x faster. */
static inline int16_t hi16(int32_t x) { return (int16_t)((uint32_t)(x * 2) >> 16); }
static inline int16_t mulq15(int16_t a, int16_t b) { return hi16((int32_t)a * b); }

#define N2 (SSL_N / 2) /* the complex FFT's length */

/* In-place radix-2 decimation-in-time FFT of N2 complex values, each
 * stage halved so nothing overflows (block scaling 1/N2). */
static void cfft(int16_t *z)
{
    /* bit reversal of 8-bit indices */
    for (uint16_t i = 0; i < N2; i++) {
        uint8_t r = (uint8_t)i;
        r = (uint8_t)((r & 0xF0) >> 4 | (r & 0x0F) << 4);
        r = (uint8_t)((r & 0xCC) >> 2 | (r & 0x33) << 2);
        r = (uint8_t)((r & 0xAA) >> 1 | (r & 0x55) << 1);
        if (r > i) {
            int16_t t = z[2 * i];
            z[2 * i] = z[2 * r];
            z[2 * r] = t;
            t = z[2 * i + 1];
            z[2 * i + 1] = z[2 * r + 1];
            z[2 * r + 1] = t;
        }
    }
    for (uint16_t len = 2; len <= N2; len <<= 1) {
        uint16_t half = len >> 1, step = (uint16_t)(SSL_N / len);
        for (uint16_t j = 0; j < half; j++) {
            int16_t wr = cos512((uint16_t)(j * step)), wi = (int16_t)-sin512((uint16_t)(j * step));
            for (uint16_t i = j; i < N2; i += len) {
                int16_t *a = &z[2 * i], *b = &z[2 * (i + half)];
                int16_t tr = hi16((int32_t)b[0] * wr - (int32_t)b[1] * wi);
                int16_t ti = hi16((int32_t)b[0] * wi + (int32_t)b[1] * wr);
                int16_t ar = a[0], ai = a[1];
                a[0] = (int16_t)((ar + tr) >> 1);
                a[1] = (int16_t)((ai + ti) >> 1);
                b[0] = (int16_t)((ar - tr) >> 1);
                b[1] = (int16_t)((ai - ti) >> 1);
            }
        }
    }
}

void ssl_fft(int16_t *data)
{
    /* codes -> signed, x32: +-16384, headroom for the split's sums */
    for (uint16_t i = 0; i < SSL_N; i++)
        data[i] = (int16_t)(((int16_t)data[i] - 512) * 32);
    /* even samples are the real parts, odd ones the imaginary parts */
    cfft(data);
    /* the real FFT from the half-length complex one:
     * X[k] = (Fe + W^k Fo) / 2, X[N2-k] = conj(Fe - W^k Fo) / 2 */
    int16_t r0 = data[0], i0 = data[1];
    data[0] = (int16_t)((r0 + i0) >> 1); /* DC */
    data[1] = (int16_t)((r0 - i0) >> 1); /* Nyquist, packed */
    for (uint16_t k = 1; k <= N2 / 2; k++) {
        int16_t *a = &data[2 * k], *b = &data[2 * (N2 - k)];
        /* Fe and Fo halved: each fits 16 bits (inputs are +-16384 / 2^8) */
        int16_t fer = (int16_t)((a[0] + b[0]) >> 1), fei = (int16_t)((a[1] - b[1]) >> 1);
        int16_t for_ = (int16_t)((a[1] + b[1]) >> 1), foi = (int16_t)(-((a[0] - b[0]) >> 1));
        int16_t wr = cos512(k), wi = (int16_t)-sin512(k);
        int16_t tr = hi16((int32_t)for_ * wr - (int32_t)foi * wi);
        int16_t ti = hi16((int32_t)for_ * wi + (int32_t)foi * wr);
        a[0] = (int16_t)((fer + tr) >> 1);
        a[1] = (int16_t)((fei + ti) >> 1);
        b[0] = (int16_t)((fer - tr) >> 1);
        b[1] = (int16_t)(-(fei - ti) >> 1);
    }
}

bool ssl_sc_measure(ssl_sc *sc, const int16_t *x)
{
    uint32_t e = 0;
    for (uint16_t k = SSL_BAND_LO; k < SSL_BAND_HI; k++)
        e += (uint32_t)(((int32_t)x[2 * k] * x[2 * k] + (int32_t)x[2 * k + 1] * x[2 * k + 1]) >> 4);
    sc->energy = e;
    if (sc->rounds < SSL_NOISE_LEARN)
        return false;
    return e / SSL_VOICE_RATIO > sc->noise;
}

void ssl_sc_noise_update(ssl_sc *sc)
{
    if (sc->rounds == 0)
        sc->noise = sc->energy;
    else /* EWMA, 1/8 */
        sc->noise = sc->noise - (sc->noise >> 3) + (sc->energy >> 3);
    if (sc->rounds < 255)
        sc->rounds++;
}

/* --- HT: SRP-PHAT over SSL_DIRS directions --------------------------------- */

/* Microphone m at (MX[m], MY[m]) * 5 cm: the corners of a 10 cm square. */
static const int8_t MX[SSL_CHANNELS] = {1, -1, -1, 1}, MY[SSL_CHANNELS] = {1, 1, -1, -1};
static const uint8_t PI_[SSL_PAIRS] = {0, 0, 0, 1, 1, 2}, PJ[SSL_PAIRS] = {1, 2, 3, 2, 3, 3};
#define SOUND_M_S 343.0f
#define HALF_SIDE_M 0.05f

/* HT's working memory: on the heap of the module HT runs on, nowhere else. */
struct ssl_ht {
    int16_t delay_q8[SSL_PAIRS][SSL_DIRS]; /* tau_i - tau_j per pair and direction, samples, Q8 */
    int16_t cr[SSL_PAIRS][SSL_BINS], ci[SSL_PAIRS][SSL_BINS]; /* PHAT cross spectra, Q14 */
};

size_t ssl_ht_size(void) { return sizeof(ssl_ht); }

void ssl_ht_init(ssl_ht *h)
{
    for (uint8_t p = 0; p < SSL_PAIRS; p++)
        for (uint8_t d = 0; d < SSL_DIRS; d++) {
            float th = 2.0f * (float)M_PI * d / SSL_DIRS;
            /* arrival delay tau_m = -(p_m . u) / c: earlier at the mics facing the source */
            float dx = (float)(MX[PI_[p]] - MX[PJ[p]]) * HALF_SIDE_M;
            float dy = (float)(MY[PI_[p]] - MY[PJ[p]]) * HALF_SIDE_M;
            float tau = -(dx * cosf(th) + dy * sinf(th)) / SOUND_M_S * SSL_FS;
            h->delay_q8[p][d] = (int16_t)lroundf(tau * 256.0f);
        }
}

uint16_t ssl_ht_direction(ssl_ht *h, int16_t bins[SSL_CHANNELS][2 * SSL_BINS])
{
    /* PHAT: each pair's cross spectrum, normalised to unit magnitude (Q14) */
    int16_t (*cr)[SSL_BINS] = h->cr, (*ci)[SSL_BINS] = h->ci;
    for (uint8_t p = 0; p < SSL_PAIRS; p++) {
        const int16_t *a = bins[PI_[p]], *b = bins[PJ[p]];
        for (uint8_t k = 0; k < SSL_BINS; k++) {
            float ar = a[2 * k], ai = a[2 * k + 1], br = b[2 * k], bi = b[2 * k + 1];
            float re = ar * br + ai * bi, im = ai * br - ar * bi; /* a conj(b) */
            float mag = sqrtf(re * re + im * im);
            cr[p][k] = mag > 0 ? (int16_t)(re / mag * 16384.0f) : 0;
            ci[p][k] = mag > 0 ? (int16_t)(im / mag * 16384.0f) : 0;
        }
    }
    int32_t best = INT32_MIN;
    uint8_t best_d = 0;
    for (uint8_t d = 0; d < SSL_DIRS; d++) {
        int32_t srp = 0;
        for (uint8_t p = 0; p < SSL_PAIRS; p++) {
            int16_t dq = h->delay_q8[p][d];
            for (uint8_t k = 0; k < SSL_BINS; k++) {
                /* steer by exp(+j 2 pi bin (tau_i - tau_j) / N): bin * delay in 2pi/512 units */
                int16_t bin = (int16_t)(SSL_BIN0 + k * SSL_BIN_STEP);
                uint16_t ph = (uint16_t)((((int32_t)bin * dq) + 128) >> 8);
                srp += mulq15(cr[p][k], cos512(ph)) - mulq15(ci[p][k], sin512(ph));
            }
        }
        if (srp > best) {
            best = srp;
            best_d = d;
        }
    }
    return (uint16_t)(best_d * (360u / SSL_DIRS));
}

/* --- FBD -------------------------------------------------------------------- */

uint16_t fbd_ewma(fbd_state *s, uint16_t code)
{
    uint16_t x = (uint16_t)(code << 4);
    if (!s->started)
        s->ewma_q4 = x;
    else /* alpha 1/4 */
        s->ewma_q4 = (uint16_t)(s->ewma_q4 + ((int16_t)(x - s->ewma_q4) >> 2));
    s->started = true;
    return s->ewma_q4;
}

bool fbd_alert(fbd_state *s, uint16_t seq, uint16_t ewma_q4)
{
    if (seq + 1u < FBD_LEARN)
        return false;
    if (seq + 1u == FBD_LEARN) {
        s->baseline_q4 = ewma_q4;
        return false;
    }
    int16_t rise = (int16_t)(ewma_q4 - s->baseline_q4);
    if (!s->fire && rise > FBD_RISE * 16) {
        s->fire = true;
        return true;
    }
    if (s->fire && rise < FBD_RISE * 8)
        s->fire = false;
    return false;
}
