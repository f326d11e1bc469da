/* Seed 002's SSL + FBD application on tern (Fig. 4; docs/comos.md): one
 * application description for the whole node, each task naming its module.
 * SSL_MODULES=5 is Fig. 8's mapping over five processors (module 0 the
 * computational one, modules 1..4 the sensing ones, channel c on module
 * c+1, Radio on module 1, the temperature sensor on module 2);
 * SSL_MODULES=1 puts every task on one processor. Nothing else differs.
 *
 *   Sampler --ROUND/BLOCK--> Mic c --> FFT c --> SC c --> Vote --SC2 (multicast)--> SC c --> HT
 *   Temp (4 Hz timer) --SAMPLE--> Temp --> EWMA --> Alert --> Radio
 *
 * Priorities as in seed 002 VI-B: SSL 1, FBD 2, Radio the highest (7);
 * but Mic at 2 (below).
 * Every message carries its round or sample number; Vote, HT and Radio
 * count what is missing or comes twice. After SSL_ROUNDS rounds (and a
 * grace period) every processor prints its counters and exits 0; a check
 * that fails prints "bad" and exits 4. */
#include <avr/io.h>
#include <stddef.h>

#include "ssl.h"
#include "tern/port.h"
#include "tern/tern.h"
#include "tern_simavr_abi.h"
#if SSL_MODULES > 1
#include "procbus.h"
#include "procbus_remote.h"
#endif

/* At least SSL_ROUNDS rounds (the signal files' length); a longer run
 * (tern-sim tells the guest its duration) goes on as long as it allows. */
#define SSL_ROUNDS 8
/* SSL_FBD=0 (the sslfbd_ssl images): Temp never starts sampling, so only
 * SSL runs, as seed 002 measured its overhead (tern bench comos ssl). */
#ifndef SSL_FBD
#define SSL_FBD 1
#endif
#define ROUND_MS (1000ul * SSL_ROUND_SAMPLES / SSL_FS)
#define GRACE_MS 500ul
#define TEMP_START_MS 100u
#define MAX_DIRS 8 /* HT's results kept for the summary */

enum {
    T_MIC0, T_MIC1, T_MIC2, T_MIC3,
    T_FFT0, T_FFT1, T_FFT2, T_FFT3,
    T_SC0, T_SC1, T_SC2, T_SC3,
    T_VOTE, T_HT, T_TEMP, T_EWMA, T_ALERT, T_RADIO,
    N_TASKS
};
_Static_assert(N_TASKS <= TERN_MAX_TASKS, "CMakeLists.txt sets TERN_MAX_TASKS");

#define PORT_A TERN_PORT_APP(0) /* mic: ROUND; fft, vote, ht, ewma, alert, radio: in; sc: BLOCK; temp: SAMPLE */
#define PORT_B TERN_PORT_APP(1) /* mic: BLOCK; sc: VERDICT (SC2) */
#define G_SC 0                  /* the multicast group of the four SCs */

/* --- where each task runs: the only thing the two builds change ---------- */
#if SSL_MODULES == 5
#define AT(a) TERN_MODULE(a)
#elif SSL_MODULES == 1
#define AT(a) TERN_MODULE_THIS
#else
#error "SSL_MODULES is 1 or 5"
#endif

/* --- probes: the pins of Fig. 6's per-message latencies ------------------ */

static uint8_t module_of(tern_task_id t)
{
#if SSL_MODULES > 1
    return tern_remote_module_of(t);
#else
    (void)t;
    return 0;
#endif
}

static void probe_send(uint8_t kind) { PORTC |= (uint8_t)(1u << (2 * kind)); }
static void probe_sent(uint8_t kind) { PORTC &= (uint8_t) ~(1u << (2 * kind)); }
/* At the receiver: (the sender's module + 1) pulses. */
static void probe_recv(uint8_t kind, tern_task_id src)
{
    uint8_t bit = (uint8_t)(1u << (2 * kind + 1));
    for (uint8_t n = (uint8_t)(module_of(src) + 1); n; n--) {
        PORTC |= bit;
        PORTC &= (uint8_t)~bit;
    }
}

/* --- counters ----------------------------------------------------------- */

static struct {
    uint16_t rounds, blocks, ffts, votes_sent, votes_got, verdicts_sent, verdicts_got;
    uint16_t chunks_sent, chunks_got, hts, temps, alerts_sent, alerts_got;
    uint16_t no_memory, post_failed, isr_send_failed, dup, lost, wrong_round;
    uint16_t voice_rounds, noise_rounds;
    uint8_t dirs[MAX_DIRS], n_dirs;     /* HT: direction / 5 degrees per sound round */
    uint16_t alert_seq[4];
    uint8_t n_alerts;
    uint32_t tmr_min, tmr_max, tmr_sum; /* delta-timer message latency, ticks */
    uint16_t tmr_n;
} c;

static void *heap_copy(const void *src, uint16_t len)
{
    uint8_t *p = tern_alloc(len);
    if (!p) {
        c.no_memory++;
        return 0;
    }
    for (uint16_t i = 0; i < len; i++)
        p[i] = ((const uint8_t *)src)[i];
    return p;
}

/* Post heap block p (ownership travels), probed when kind < PROBE_KINDS. */
static void post_heap(uint8_t out, void *p, uint16_t len, uint8_t kind)
{
    if (kind < PROBE_KINDS)
        probe_send(kind);
    tern_status st = tern_post(out, p, len, TERN_MSG_HEAP);
    if (kind < PROBE_KINDS)
        probe_sent(kind);
    if (st != TERN_OK) {
        tern_free(p);
        c.post_failed++;
    }
}

/* Post a heap copy of msg. */
static void post(uint8_t out, const void *msg, uint16_t len, uint8_t kind)
{
    void *p = heap_copy(msg, len);
    if (p)
        post_heap(out, p, len, kind);
}

/* --- the sampler's hooks (interrupt context) ------------------------------ */

static tern_task_id mic_of_slot[SSL_CHANNELS];

static void isr_send(tern_task_id t, tern_port p)
{
    if (tern_send(t, p, 0, 0, 0) != TERN_OK)
        c.isr_send_failed++;
}

void ssl_on_round(uint8_t round)
{
    (void)round;
    c.rounds++;
    for (uint8_t s = 0; s < SSL_CHANNELS && mic_of_slot[s] != TERN_NO_TASK; s++)
        isr_send(mic_of_slot[s], PORT_A);
}

void ssl_on_block(uint8_t slot, ssl_block *b)
{
    (void)b; /* the mic task armed it and knows it */
    isr_send(mic_of_slot[slot], PORT_B);
}

void ssl_on_temp(uint16_t code)
{
    static uint16_t seq;
    PA_HIGH(PIN_FBD);
    fbd_sample s = {seq++, code};
    void *p = heap_copy(&s, sizeof s);
    if (p && tern_send(T_TEMP, PORT_A, p, sizeof s, TERN_MSG_HEAP) != TERN_OK) {
        tern_free(p);
        c.isr_send_failed++;
    }
}

/* --- SSL tasks ---------------------------------------------------------- */

typedef struct {
    uint8_t channel, slot, round;
    ssl_block *block; /* armed, being filled */
} mic_state;

static tern_status mic(void *state, tern_msg *m)
{
    mic_state *s = state;
    if (m->port == PORT_A) { /* a round starts: a block to fill */
        ssl_block *b = tern_alloc(sizeof *b);
        uint8_t round = s->round++;
        if (!b) {
            c.no_memory++;
            return TERN_ENOMEM;
        }
        b->round = round;
        b->channel = s->channel;
        s->block = b;
        ssl_sampler_arm(s->slot, b);
    } else if (m->port == PORT_B && s->block) { /* full: to FFT, ownership too */
        ssl_block *b = s->block;
        s->block = 0;
        c.blocks++;
        post_heap(0, b, sizeof *b, PROBE_FFT);
    }
    return TERN_OK;
}

static tern_status fft(void *state, tern_msg *m)
{
    (void)state;
    if (m->port != PORT_A)
        return TERN_OK;
    probe_recv(PROBE_FFT, m->src);
    ssl_block *b = tern_take(m);
    if (!b)
        return TERN_ENOMEM;
    PA_HIGH(PIN_FFT);
    ssl_fft(b->data);
    PA_LOW(PIN_FFT);
    c.ffts++;
    post_heap(0, b, sizeof *b, 0xFF);
    return TERN_OK;
}

typedef struct {
    ssl_sc sc;
    ssl_block *held; /* this round's SSL_BINS bins (the block, shrunk), until the verdict */
    uint8_t channel;
} sc_state;

enum { SC_OUT_VOTE, SC_OUT_HT };

static tern_status sc(void *state, tern_msg *m)
{
    sc_state *s = state;
    if (m->port == PORT_A) { /* a spectrum: measure, keep its bins, vote */
        if (s->held) { /* the last round's verdict never came */
            c.lost++;
            tern_free(s->held);
        }
        ssl_block *b = tern_take(m);
        if (!b)
            return TERN_ENOMEM;
        bool voice = ssl_sc_measure(&s->sc, b->data);
        /* keep only the bins HT needs, at the front: the block shrinks in
         * place to 100 bytes and its 1 KB goes back to the heap */
        for (uint8_t i = 0; i < SSL_BINS; i++) {
            const int16_t *x = ssl_bin(b->data, i);
            b->data[2 * i] = x[0];
            b->data[2 * i + 1] = x[1];
        }
        s->held = tern_realloc(b, offsetof(ssl_block, data) + 4 * SSL_BINS);
        ssl_vote v = {b->round, s->channel, voice, 0, s->sc.energy};
        post(SC_OUT_VOTE, &v, sizeof v, PROBE_VOTE);
        c.votes_sent++;
    } else if (m->port == PORT_B) { /* SC2: the verdict */
        probe_recv(PROBE_SC2, m->src);
        const ssl_verdict *v = m->payload;
        ssl_block *k = s->held;
        c.verdicts_got++;
        if (!k || v->round != k->round) {
            c.wrong_round++;
            return TERN_OK;
        }
        s->held = 0;
        if (v->voice) {
            /* each chunk built in its own heap block (no 52 bytes on the stack) */
            for (uint8_t first = 0; first < SSL_BINS; first = (uint8_t)(first + SSL_CHUNK_BINS)) {
                uint8_t n = SSL_BINS - first < SSL_CHUNK_BINS ? SSL_BINS - first : SSL_CHUNK_BINS;
                uint16_t len = (uint16_t)(4 + 4 * n);
                ssl_chunk *ch = tern_alloc(len);
                if (!ch) {
                    c.no_memory++;
                    continue;
                }
                ch->round = v->round;
                ch->channel = s->channel;
                ch->first = first;
                ch->n = n;
                for (uint8_t i = 0; i < 2 * n; i++)
                    ch->bins[i] = k->data[2 * first + i];
                post_heap(SC_OUT_HT, ch, len, PROBE_HT);
                c.chunks_sent++;
            }
        } else {
            ssl_sc_noise_update(&s->sc);
        }
        tern_free(k);
        if (s->channel == 0)
            PA_LOW(PIN_ROUND);
    }
    return TERN_OK;
}

static struct {
    uint8_t round, got, voices;
    bool open;
} vote_s;

static tern_status vote(void *state, tern_msg *m)
{
    (void)state;
    if (m->port != PORT_A)
        return TERN_OK;
    probe_recv(PROBE_VOTE, m->src);
    const ssl_vote *v = m->payload;
    c.votes_got++;
    if (!vote_s.open || v->round != vote_s.round) {
        if (vote_s.open)
            c.lost++; /* a round that never got all its votes */
        vote_s.open = true;
        vote_s.round = v->round;
        vote_s.got = vote_s.voices = 0;
    }
    uint8_t bit = (uint8_t)(1u << v->channel);
    if (v->channel >= SSL_CHANNELS || (vote_s.got & bit)) {
        c.dup++;
        return TERN_OK;
    }
    vote_s.got |= bit;
    vote_s.voices = (uint8_t)(vote_s.voices + (v->voice != 0));
    if (vote_s.got == (1u << SSL_CHANNELS) - 1) {
        ssl_verdict verdict = {vote_s.round, vote_s.voices >= SSL_VOTES_NEEDED};
        vote_s.open = false;
        if (verdict.voice)
            c.voice_rounds++;
        else
            c.noise_rounds++;
        post(0, &verdict, sizeof verdict, PROBE_SC2);
        c.verdicts_sent++;
    }
    return TERN_OK;
}

/* HT's state, from the heap at INIT: only the module HT runs on pays. */
static struct ht_state {
    int16_t bins[SSL_CHANNELS][2 * SSL_BINS];
    uint16_t got; /* one bit per (channel, chunk) */
    uint8_t round;
    bool open;
    ssl_ht *work;
} *ht_p;

static tern_status ht(void *state, tern_msg *m)
{
    (void)state;
    if (m->port == TERN_PORT_INIT) {
        ht_p = tern_alloc(sizeof *ht_p);
        if (ht_p)
            ht_p->work = tern_alloc(ssl_ht_size());
        if (!ht_p || !ht_p->work) {
            c.no_memory++;
            return TERN_ENOMEM;
        }
        ht_p->open = false;
        ssl_ht_init(ht_p->work);
        return TERN_OK;
    }
    if (m->port != PORT_A || !ht_p)
        return TERN_OK;
    probe_recv(PROBE_HT, m->src);
    struct ht_state *h = ht_p;
    const ssl_chunk *ch = m->payload;
    c.chunks_got++;
    if (!h->open || ch->round != h->round) {
        if (h->open)
            c.lost++;
        h->open = true;
        h->round = ch->round;
        h->got = 0;
    }
    uint8_t k = (uint8_t)(ch->first / SSL_CHUNK_BINS);
    uint16_t bit = (uint16_t)(1u << (ch->channel * SSL_CHUNKS + k));
    if (ch->channel >= SSL_CHANNELS || ch->first + ch->n > SSL_BINS || (h->got & bit)) {
        c.dup++;
        return TERN_OK;
    }
    h->got |= bit;
    for (uint8_t i = 0; i < 2 * ch->n; i++)
        h->bins[ch->channel][2 * ch->first + i] = ch->bins[i];
    if (h->got == (1u << (SSL_CHANNELS * SSL_CHUNKS)) - 1) {
        h->open = false;
        uint16_t dir = ssl_ht_direction(h->work, h->bins);
        PA_HIGH(PIN_HT);
        PA_LOW(PIN_HT);
        c.hts++;
        if (c.n_dirs < MAX_DIRS)
            c.dirs[c.n_dirs++] = (uint8_t)(dir / 5);
    }
    return TERN_OK;
}

/* --- FBD tasks ---------------------------------------------------------- */

/* FBD's 4 Hz clock: an alarm in the kernel's delta-timer list whose
 * message wakes Temp (no task timers at all: TERN_TIMERS_PER_TASK=0 saves
 * 23 bytes in each of the 18 TCBs, which the ATmega128 needs). */
static tern_alarm temp_tick;
static tern_time temp_base; /* the first deadline */

static void temp_alarm(tern_alarm *a, void *arg)
{
    (void)a;
    (void)arg;
    isr_send(T_TEMP, PORT_B);
}

static tern_status temp(void *state, tern_msg *m)
{
    (void)state;
    tern_time period = (tern_time)tern_clock_hz() * SSL_TEMP_MS / 1000u;
    if (m->port == TERN_PORT_INIT) {
        if (!SSL_FBD)
            return TERN_OK;
        temp_base = tern_now() + (tern_time)tern_clock_hz() * TEMP_START_MS / 1000u;
        tern_alarm_init(&temp_tick, temp_alarm, 0);
        tern_alarm_set(&temp_tick, temp_base, period);
    } else if (m->port == PORT_B) {
        /* the delta timer's message: how late after its deadline */
        uint32_t late = (uint32_t)(tern_now() - (temp_base + period * c.tmr_n));
        c.tmr_min = c.tmr_n == 0 || late < c.tmr_min ? late : c.tmr_min;
        c.tmr_max = late > c.tmr_max ? late : c.tmr_max;
        c.tmr_sum += late;
        c.tmr_n++;
        ssl_sampler_temp();
    } else if (m->port == PORT_A) { /* the sample, from the ADC interrupt */
        c.temps++;
        void *p = tern_take(m);
        if (p)
            post_heap(0, p, sizeof(fbd_sample), 0xFF);
    }
    return TERN_OK;
}

static fbd_state ewma_s, alert_s;

static tern_status ewma(void *state, tern_msg *m)
{
    (void)state;
    if (m->port != PORT_A)
        return TERN_OK;
    const fbd_sample *s = m->payload;
    fbd_avg a = {s->seq, s->code, fbd_ewma(&ewma_s, s->code)};
    post(0, &a, sizeof a, 0xFF);
    return TERN_OK;
}

static tern_status alert(void *state, tern_msg *m)
{
    (void)state;
    if (m->port != PORT_A)
        return TERN_OK;
    const fbd_avg *a = m->payload;
    if (fbd_alert(&alert_s, a->seq, a->ewma_q4)) {
        void *p = heap_copy(a, sizeof *a);
        if (p) {
            PA_HIGH(PIN_ALERT_S);
            tern_status st = tern_post(0, p, sizeof *a, TERN_MSG_HEAP);
            PA_LOW(PIN_ALERT_S);
            if (st != TERN_OK) {
                tern_free(p);
                c.post_failed++;
            }
            c.alerts_sent++;
        }
    }
    PA_LOW(PIN_FBD);
    return TERN_OK;
}

static tern_status radio(void *state, tern_msg *m)
{
    (void)state;
    if (m->port != PORT_A)
        return TERN_OK;
    PA_HIGH(PIN_ALERT_R);
    PA_LOW(PIN_ALERT_R);
    const fbd_avg *a = m->payload;
    if (c.n_alerts < 4)
        c.alert_seq[c.n_alerts++] = a->seq;
    c.alerts_got++;
    return TERN_OK;
}

/* --- the description -------------------------------------------------------- */

/* Under the thread models (one module only: tern bench comos ssl) every
 * task is a thread with this private stack; the run-to-completion models
 * ignore it. 18 of the default 384 bytes would not fit beside the heap. */
#ifndef SSL_THREAD_STACK
#define SSL_THREAD_STACK 256
#endif
#define IN(n) .n_in_ports = (n), .stack_size = SSL_THREAD_STACK
/* movable between modules: nowhere to go on one (validation refuses it) */
#define MOVABLE .flags = SSL_MODULES > 1 ? TERN_TASK_MOVABLE : 0

static mic_state mics[SSL_CHANNELS] = {{0, 0, 0, 0}, {1, 0, 0, 0}, {2, 0, 0, 0}, {3, 0, 0, 0}};
static sc_state scs[SSL_CHANNELS] = {{.channel = 0}, {.channel = 1}, {.channel = 2}, {.channel = 3}};

static const tern_route mic_routes[SSL_CHANNELS][1] = {
    {TERN_TO_TASK(T_FFT0, PORT_A)}, {TERN_TO_TASK(T_FFT1, PORT_A)},
    {TERN_TO_TASK(T_FFT2, PORT_A)}, {TERN_TO_TASK(T_FFT3, PORT_A)}};
static const tern_route fft_routes[SSL_CHANNELS][1] = {
    {TERN_TO_TASK(T_SC0, PORT_A)}, {TERN_TO_TASK(T_SC1, PORT_A)},
    {TERN_TO_TASK(T_SC2, PORT_A)}, {TERN_TO_TASK(T_SC3, PORT_A)}};
static const tern_route sc_routes[] = {[SC_OUT_VOTE] = TERN_TO_TASK(T_VOTE, PORT_A),
                                       [SC_OUT_HT] = TERN_TO_TASK(T_HT, PORT_A)};
static const tern_route vote_routes[] = {TERN_TO_GROUP(G_SC)};
static const tern_route temp_routes[] = {TERN_TO_TASK(T_EWMA, PORT_A)};
static const tern_route ewma_routes[] = {TERN_TO_TASK(T_ALERT, PORT_A)};
static const tern_route alert_routes[] = {TERN_TO_TASK(T_RADIO, PORT_A)};
static const tern_endpoint sc_members[] = {
    {T_SC0, PORT_B}, {T_SC1, PORT_B}, {T_SC2, PORT_B}, {T_SC3, PORT_B}};
static const tern_group_desc groups[] = {{.id = G_SC, .n_members = 4, .members = sc_members}};

/* Mic, the sampling driver, at 2 (seed 002: every SSL task at 1): its
 * block then waits for FFT instead of FFT running nested in Mic's post,
 * which with FBD's chain preempting the FFT on top of it overflowed the
 * ATmega128's stack (docs/comos.md). */
#define MIC(k) {.name = "mic" #k, .id = T_MIC0 + k, .priority = 2, .handler = mic, .state = &mics[k], \
                .module = AT(k + 1), IN(2), .n_out_ports = 1, .routes = mic_routes[k],          \
                .flags = TERN_TASK_NEEDS_ADC}
#define FFT(k) {.name = "fft" #k, .id = T_FFT0 + k, .priority = 1, .handler = fft, .module = AT(k + 1), \
                IN(1), .n_out_ports = 1, .routes = fft_routes[k], MOVABLE}
#define SC(k) {.name = "sc" #k, .id = T_SC0 + k, .priority = 1, .handler = sc, .state = &scs[k], \
               .module = AT(k + 1), IN(2), .n_out_ports = 2, .routes = sc_routes, MOVABLE}

static const tern_task_desc tasks[] = {
    MIC(0), MIC(1), MIC(2), MIC(3),
    FFT(0), FFT(1), FFT(2), FFT(3),
    SC(0), SC(1), SC(2), SC(3),
    {.name = "vote", .id = T_VOTE, .priority = 1, .handler = vote, .module = AT(0), IN(1),
     .n_out_ports = 1, .routes = vote_routes, MOVABLE},
    {.name = "ht", .id = T_HT, .priority = 1, .handler = ht, .module = AT(0), IN(1), MOVABLE},
    {.name = "temp", .id = T_TEMP, .priority = 2, .handler = temp, .module = AT(2), IN(2),
     .n_out_ports = 1, .routes = temp_routes, .flags = TERN_TASK_NEEDS_ADC},
    {.name = "ewma", .id = T_EWMA, .priority = 2, .handler = ewma, .module = AT(2), IN(1),
     .n_out_ports = 1, .routes = ewma_routes, MOVABLE},
    {.name = "alert", .id = T_ALERT, .priority = 2, .handler = alert, .module = AT(2), IN(1),
     .n_out_ports = 1, .routes = alert_routes, MOVABLE},
    {.name = "radio", .id = T_RADIO, .priority = 7, .handler = radio, .module = AT(1), IN(1)},
};
/* Every module samples through its ATmega's ADC (the radio task is a
 * stand-in: tern-sim's modules have no CC2420, so none claims the radio). */
static const uint8_t module_hw[] = {TERN_TASK_NEEDS_ADC, TERN_TASK_NEEDS_ADC, TERN_TASK_NEEDS_ADC,
                                    TERN_TASK_NEEDS_ADC, TERN_TASK_NEEDS_ADC};
static const tern_app_desc app = {.name = "sslfbd", .tasks = tasks, .n_tasks = N_TASKS,
                                  .groups = groups, .n_groups = 1,
                                  .n_modules = SSL_MODULES > 1 ? SSL_MODULES : 0,
                                  .module_hw = module_hw};

/* --- the end: counters, then exit ------------------------------------------ */

static uint8_t here(void)
{
#if SSL_MODULES > 1
    return tern_remote_address();
#else
    return 0;
#endif
}

static tern_alarm stop;

static void finish(tern_alarm *a, void *arg)
{
    (void)a;
    (void)arg;
    tern_printf("sslfbd %u: summary rounds=%u blocks=%u ffts=%u votes_sent=%u votes_got=%u "
                "verdicts_sent=%u verdicts_got=%u chunks_sent=%u chunks_got=%u hts=%u "
                "voice_rounds=%u noise_rounds=%u temps=%u alerts_sent=%u alerts_got=%u "
                "no_memory=%u post_failed=%u isr_send_failed=%u dup=%u lost=%u wrong_round=%u",
                here(), c.rounds, c.blocks, c.ffts, c.votes_sent, c.votes_got, c.verdicts_sent,
                c.verdicts_got, c.chunks_sent, c.chunks_got, c.hts, c.voice_rounds, c.noise_rounds,
                c.temps, c.alerts_sent, c.alerts_got, c.no_memory, c.post_failed,
                c.isr_send_failed, c.dup, c.lost, c.wrong_round);
    if (c.tmr_n)
        tern_printf(" timer_n=%u timer_min_us=%lu timer_mean_us=%lu timer_max_us=%lu", c.tmr_n,
                    (unsigned long)(c.tmr_min * 1000000ull / tern_clock_hz()),
                    (unsigned long)(c.tmr_sum / c.tmr_n * 1000000ull / tern_clock_hz()),
                    (unsigned long)(c.tmr_max * 1000000ull / tern_clock_hz()));
#if SSL_MODULES > 1
    const tern_remote_counters *r = tern_remote_stats();
    tern_printf(" tx_frames=%lu rx_frames=%lu tx_mcast=%lu rx_mcast=%lu", (unsigned long)r->tx_frames,
                (unsigned long)r->rx_frames, (unsigned long)r->tx_mcast, (unsigned long)r->rx_mcast);
    for (uint8_t i = 0; i < TERN_REMOTE_DROP_REASONS; i++)
        tern_printf(" %s=%lu", tern_remote_drop_name((tern_remote_drop_reason)i),
                    (unsigned long)r->dropped[i]);
#endif
    const tern_counters *k = tern_stats();
    tern_printf(" kernel_posted=%lu kernel_dispatched=%lu kernel_no_port=%lu kernel_pool_full=%lu"
                " heap_free=%u max_stack=%lu\n", (unsigned long)k->posted, (unsigned long)k->dispatched,
                (unsigned long)k->dropped[TERN_DROP_NO_PORT],
                (unsigned long)k->dropped[TERN_DROP_POOL_FULL], (unsigned)tern_heap_free_bytes(),
                (unsigned long)port_stack_used());
    for (uint8_t i = 0; i < c.n_dirs; i++)
        tern_printf("sslfbd %u: direction %u deg\n", here(), c.dirs[i] * 5u);
    for (uint8_t i = 0; i < c.n_alerts; i++)
        tern_printf("sslfbd %u: alert at sample %u\n", here(), c.alert_seq[i]);
    bool bad = c.no_memory || c.post_failed || c.isr_send_failed || c.dup || c.lost || c.wrong_round;
    if (bad)
        tern_printf("sslfbd %u: bad\n", here());
    port_exit(bad ? 4 : 0);
}

/* Out of main's frame: the error report (150 bytes) is gone once the app
 * runs, which the ATmega128's stack needs. */
static __attribute__((noinline)) bool start(void)
{
    tern_app_error err;
    if (tern_app_start(&app, &err) != TERN_OK) {
        tern_printf("sslfbd: %s\n", err.text);
        return false;
    }
    return true;
}

int main(void)
{
    tern_init();
    ssl_pins_init();
#if SSL_MODULES > 1
    tern_status st = procbus_remote_attach();
    if (st != TERN_OK) {
        tern_printf("sslfbd: no processor bus: %s\n", tern_status_name(st));
        return 2;
    }
#endif
    tern_printf("sslfbd %u: %u module(s), board %s, model %s, %lu Hz\n", here(), SSL_MODULES,
                TERN_BOARD_NAME, TERN_MODEL_NAME, (unsigned long)tern_clock_hz());
    if (!start())
        return 1;
    /* the microphones on this module, in slot order */
    uint8_t slots = 0;
    for (uint8_t k = 0; k < SSL_CHANNELS; k++)
        mic_of_slot[k] = TERN_NO_TASK;
    for (uint8_t k = 0; k < SSL_CHANNELS; k++) {
        if (module_of(T_MIC0 + k) == here()) {
            mics[k].slot = slots;
            mic_of_slot[slots++] = (tern_task_id)(T_MIC0 + k);
            ssl_sampler_add(k);
        }
    }
    uint32_t run_ms = tern_sim_duration_s() * 1000u;
    uint16_t rounds = SSL_ROUNDS;
    if (run_ms > 700u + (SSL_ROUNDS + 1) * ROUND_MS)
        rounds = (uint16_t)((run_ms - 700u) / ROUND_MS);
    ssl_sampler_start(rounds);
    tern_alarm_init(&stop, finish, 0);
    tern_alarm_set(&stop, tern_now() + (tern_time)tern_clock_hz() / 1000u * (rounds * ROUND_MS + GRACE_MS), 0);
    tern_run();
}
