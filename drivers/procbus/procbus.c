/* Processor-bus driver (procbus.h) over tern-sim's bus registers
 * (tern_simavr_abi.h: TERN_BUS_*, data addresses 0xF0..0xFA, reached with
 * LDS/STS). The bus pin is the board's BOARD_BUS_INT (board.h); which port
 * pin and sense register that is, avr_mcu.h says for each part. */
#include <avr/interrupt.h>
#include <avr/io.h>
#include <string.h>

#include "avr_mcu.h"
#include "board.h"
#include "procbus.h"
#include "tern/mem.h"
#include "tern/port.h"
#include "tern/task.h"
#include "tern_simavr_abi.h"

_Static_assert(PROCBUS_FRAME_MAX == TERN_BUS_FRAME_MAX && PROCBUS_BROADCAST == TERN_BUS_BROADCAST,
               "procbus.h repeats the simulator's limits");
_Static_assert(BOARD_BUS_INT >= 0 && BOARD_BUS_INT < AVR_EXTINT_COUNT,
               "BOARD_BUS_INT names an external interrupt of this part");
_Static_assert(BOARD_BUS_INT != BOARD_SWIRQ0_INT && BOARD_BUS_INT != BOARD_SWIRQ1_INT,
               "the bus pin is not one of the software-interrupt pins");

#define REG(addr) (*(volatile uint8_t *)(addr))
#define BUS_PIN AVR_EXTINT_BIT(BOARD_BUS_INT)
#define BUS_MASK AVR_EXTINT_MASK(BOARD_BUS_INT)

static procbus_config cfg;
static bool ready;
static uint8_t my_address, n_processors;
static uint8_t last_dst; /* of the frame in flight: whom a NACK is about */
static procbus_counters counters;
/* The frame read off the bus. With cfg.rx_fn, held_len > 0 while rx_fn has
 * not taken it: it stays on the bus, unreleased, until it does. */
static uint8_t held_src, held_len, held[PROCBUS_FRAME_MAX];
/* procbus_claim(): frames of these first bytes go to their functions. */
static uint8_t claim_kind[PROCBUS_CLAIMS];
static procbus_rx_fn claim_fn[PROCBUS_CLAIMS];

/* --- Reception ------------------------------------------------------------ */

/* Release the waiting frame: frees its place for the next sender, and the
 * pin rises again if another frame waits. */
static void rx_release(void) { REG(TERN_BUS_RX_NEXT_ADDR) = 1; }

/* Hand the frame read off the bus to rx_fn; released once taken. */
static void offer_held(void)
{
    if (!cfg.rx_fn(held_src, held, held_len))
        return;
    held_len = 0;
    counters.rx_frames++;
    rx_release();
}

/* The waiting frame into a heap block, posted to the configured port. The
 * frame's length and sender come from outside: checked before use. A frame
 * not delivered is released anyway, so the bus never stalls behind it. */
static void rx_one(void)
{
    uint8_t src = REG(TERN_BUS_RX_SRC_ADDR);
    uint8_t len = REG(TERN_BUS_RX_LEN_ADDR);
    if (len == 0 || len > PROCBUS_FRAME_MAX) {
        counters.rx_bad_len++;
        rx_release();
        return;
    }
    if (src >= n_processors || src == my_address) {
        counters.rx_bad_src++;
        rx_release();
        return;
    }
    held_src = src;
    for (uint8_t i = 0; i < len; i++)
        held[i] = REG(TERN_BUS_RX_DATA_ADDR);
    for (uint8_t c = 0; c < PROCBUS_CLAIMS; c++)
        if (claim_fn[c] && held[0] == claim_kind[c]) {
            rx_release();
            counters.rx_claimed++;
            (void)claim_fn[c](src, held, len);
            return;
        }
    if (cfg.rx_fn) {
        held_len = len;
        offer_held();
        return;
    }
    rx_release();
    procbus_frame *f = tern_alloc(sizeof *f + len);
    if (!f) {
        counters.rx_no_memory++;
        return;
    }
    f->src = src;
    f->len = len;
    memcpy(f->data, held, len);
    if (tern_send(cfg.rx_task, cfg.rx_port, f, (uint16_t)(sizeof *f + len), TERN_MSG_HEAP) !=
        TERN_OK) {
        counters.rx_post_failed++;
        tern_free(f);
        return;
    }
    counters.rx_frames++;
}

/* The last frame sent was not acknowledged: its destination has no power
 * (tern_simavr_abi.h, TERN_BUS_TX_NACK). The frame is lost: counted, and
 * told to the bus manager, whose message it was. */
static void tx_nacked(void)
{
    REG(TERN_BUS_TX_NACK_CLEAR_ADDR) = 1;
    counters.tx_nacked++;
    if (cfg.nack_fn)
        cfg.nack_fn(last_dst);
}

/* One frame per interrupt: the pin rises again after RX_NEXT while frames
 * wait, so each has its own edge, and the handler's time is bounded by one
 * 64-byte copy. A NACK raises the pin too, or comes with a frame's edge. */
static void rx_irq(void)
{
    uint8_t status = REG(TERN_BUS_STATUS_ADDR);
    if (status & TERN_BUS_TX_NACK)
        tx_nacked();
    if (held_len)
        offer_held();
    else if (status & TERN_BUS_RX_READY)
        rx_one();
    else if (!(status & TERN_BUS_TX_NACK))
        counters.rx_spurious++;
}

#define INT_VECT(n) INT_VECT_(n)
#define INT_VECT_(n) INT##n##_vect
ISR(INT_VECT(BOARD_BUS_INT))
{
    tern_isr_enter();
    rx_irq();
    tern_isr_exit();
}

/* --- Transmission --------------------------------------------------------- */

static procbus_status send(uint8_t dst, const uint8_t *head, uint8_t head_len,
                           const uint8_t *body, uint8_t body_len, uint8_t how)
{
    if (!ready)
        return PROCBUS_ESTATE;
    uint16_t len = (uint16_t)head_len + body_len;
    if (len == 0 || len > PROCBUS_FRAME_MAX ||
        (dst != PROCBUS_BROADCAST && (dst >= n_processors || dst == my_address))) {
        counters.tx_invalid++;
        return PROCBUS_EINVAL;
    }
    /* One frame at a time in the bus's TX registers: a handler or an
     * interrupt that sends meanwhile must not interleave its bytes. */
    tern_irq_state s = port_irq_save();
    /* A NACK not yet reported waits for the bus interrupt (or poll), which
     * tells the bus manager: not from inside its own send. */
    if ((REG(TERN_BUS_STATUS_ADDR) & (TERN_BUS_TX_FREE | TERN_BUS_TX_NACK)) != TERN_BUS_TX_FREE) {
        counters.tx_busy++;
        port_irq_restore(s);
        return PROCBUS_EBUSY;
    }
    uint8_t errors = REG(TERN_BUS_ERRORS_ADDR);
    REG(TERN_BUS_TX_DST_ADDR) = dst;
    last_dst = dst;
    for (uint8_t i = 0; i < head_len; i++)
        REG(TERN_BUS_TX_DATA_ADDR) = head[i];
    for (uint8_t i = 0; i < body_len; i++)
        REG(TERN_BUS_TX_DATA_ADDR) = body[i];
    REG(TERN_BUS_TX_SEND_ADDR) = how;
    bool refused = REG(TERN_BUS_ERRORS_ADDR) != errors;
    port_irq_restore(s);
    if (refused) {
        counters.tx_refused++;
        return PROCBUS_EREFUSED;
    }
    counters.tx_frames++;
    return PROCBUS_OK;
}

procbus_status procbus_send(uint8_t dst, const void *payload, uint8_t len)
{
    return send(dst, payload, len, NULL, 0, TERN_BUS_SEND);
}

procbus_status procbus_send_parts(uint8_t dst, const void *head, uint8_t head_len,
                                  const void *body, uint8_t body_len)
{
    return send(dst, head, head_len, body, body_len, TERN_BUS_SEND);
}

procbus_status procbus_send_stamped(uint8_t dst, const void *payload, uint8_t len)
{
    return send(dst, payload, len, NULL, 0, TERN_BUS_SEND | TERN_BUS_SEND_STAMP);
}

procbus_status procbus_claim(uint8_t kind, procbus_rx_fn fn)
{
    tern_irq_state s = port_irq_save();
    uint8_t slot = PROCBUS_CLAIMS;
    for (uint8_t c = 0; c < PROCBUS_CLAIMS; c++) {
        if (claim_fn[c] && claim_kind[c] == kind) {
            slot = c; /* replaces it */
            break;
        }
        if (!claim_fn[c] && slot == PROCBUS_CLAIMS)
            slot = c;
    }
    if (slot < PROCBUS_CLAIMS) {
        claim_kind[slot] = kind;
        claim_fn[slot] = fn;
    }
    port_irq_restore(s);
    return slot < PROCBUS_CLAIMS ? PROCBUS_OK : PROCBUS_EINVAL;
}

bool procbus_tx_free(void)
{
    return ready && (REG(TERN_BUS_STATUS_ADDR) & (TERN_BUS_TX_FREE | TERN_BUS_TX_NACK)) ==
                        TERN_BUS_TX_FREE;
}

void procbus_poll(void)
{
    if (!ready)
        return;
    tern_irq_state s = port_irq_save();
    if (held_len || (REG(TERN_BUS_STATUS_ADDR) & (TERN_BUS_RX_READY | TERN_BUS_TX_NACK)))
        rx_irq();
    port_irq_restore(s);
}

/* --- Set-up ---------------------------------------------------------------- */

procbus_status procbus_init(const procbus_config *c)
{
    ready = false;
    held_len = 0;
    n_processors = REG(TERN_BUS_COUNT_ADDR);
    my_address = REG(TERN_BUS_ADDRESS_ADDR);
    if (n_processors == 0 || my_address >= n_processors)
        return PROCBUS_ENOBUS;
    cfg = *c;

    tern_irq_state s = port_irq_save();
    /* The simulator drives the pin: an input without pull-up, whose rising
     * edge interrupts. A flag latched before now is stale: cleared. */
    AVR_EXTINT_DDR(BOARD_BUS_INT) &= (uint8_t)~BUS_PIN;
    AVR_EXTINT_PORT(BOARD_BUS_INT) &= (uint8_t)~BUS_PIN;
    avr_extint_sense(BOARD_BUS_INT, AVR_EXTINT_RISING);
    EIFR = BUS_MASK;
    EIMSK |= BUS_MASK;
    ready = true;
    /* A frame that arrived before the interrupt was enabled raised its
     * edge unseen, and the pin stays high until it is released: take it
     * now, or the bus would wait for it forever. */
    if (REG(TERN_BUS_STATUS_ADDR) & TERN_BUS_RX_READY)
        rx_one();
    port_irq_restore(s);
    return PROCBUS_OK;
}

uint8_t procbus_address(void) { return my_address; }
uint8_t procbus_count(void) { return n_processors; }

const procbus_counters *procbus_stats(void) { return &counters; }

const char *procbus_status_name(procbus_status st)
{
    static const char *const names[PROCBUS_STATUS_COUNT] = {
        [PROCBUS_OK] = "PROCBUS_OK",
        [PROCBUS_ENOBUS] = "PROCBUS_ENOBUS",
        [PROCBUS_ESTATE] = "PROCBUS_ESTATE",
        [PROCBUS_EINVAL] = "PROCBUS_EINVAL",
        [PROCBUS_EBUSY] = "PROCBUS_EBUSY",
        [PROCBUS_EREFUSED] = "PROCBUS_EREFUSED",
    };
    return (unsigned)st < PROCBUS_STATUS_COUNT ? names[st] : "PROCBUS_E?";
}
