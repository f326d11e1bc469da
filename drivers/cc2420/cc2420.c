/* CC2420 driver on AVR radio boards (micaz: ATmega128L; micaz-1284p:
 * ATmega1284P). Register, strobe and RAM addresses and every behaviour
 * relied on are the CC2420 datasheet's (rev. 1.4); see cc2420.h for the
 * interface.
 *
 * Wiring: the board's board.h names the pins (CC2420_*), the part's
 * registers come from arch/avr/avr_mcu.h. On both boards:
 *   CSn     port B out, SPI chip select (also the AVR's SS: must be an output)
 *   SCK, MOSI out, MISO in (port B): SPI master, mode 0, f/2
 *   FIFO    port B in,  high while the RX FIFO holds unread bytes
 *   FIFOP   an external interrupt's pin: a complete frame (or an overflow) is waiting
 *   CCA     port D in,  high when the channel is clear
 *   SFD     port D in,  ICP1: Timer1 captures both its edges
 *   VREG_EN PA5  out, the chip's voltage regulator
 *   RESETn  PA6  out
 *
 * Interrupt handlers never wait for more than one SPI byte at a time:
 * reading a frame out of the FIFO is a loop of single bytes, each checked
 * against the FIFO pin. Task-level SPI transactions run with interrupts
 * masked, so the FIFOP handler never finds the bus half used. */
#include <avr/interrupt.h>
#include <avr/io.h>
#include <string.h>

#include "avr.h"
#include "avr_mcu.h"
#include "board.h"
#include "cc2420.h"
#include "tern/mem.h"
#include "tern/port.h"
#include "tern/task.h"
#include "tern/time.h"

/* --- Chip ----------------------------------------------------------------- */

enum { /* command strobes */
    SNOP = 0x00,
    SXOSCON = 0x01,
    STXCAL = 0x02,
    SRXON = 0x03,
    STXON = 0x04,
    STXONCCA = 0x05,
    SRFOFF = 0x06,
    SXOSCOFF = 0x07,
    SFLUSHRX = 0x08,
    SFLUSHTX = 0x09,
};

enum { /* 16-bit registers */
    MAIN = 0x10,
    MDMCTRL0 = 0x11,
    MDMCTRL1 = 0x12,
    RSSI = 0x13,
    TXCTRL = 0x15,
    FSCTRL = 0x18,
    SECCTRL0 = 0x19,
    IOCFG0 = 0x1C,
    IOCFG1 = 0x1D,
    MANFIDL = 0x1E,
    MANFIDH = 0x1F,
    FSMSTATE = 0x2C,
    DACTST = 0x2E,
    TXFIFO = 0x3E,
    RXFIFO = 0x3F,
};

#define REG_READ 0x40 /* bit 6 of the address byte */
#define RAM_ACCESS 0x80
#define RAM_READ 0x20 /* bit 5 of a RAM access's second byte */

enum { /* RAM */
    RAM_IEEEADR = 0x160,
    RAM_PANID = 0x168,
    RAM_SHORTADR = 0x16A,
};

/* Status byte, shifted out with every address byte. */
#define STATUS_XOSC16M_STABLE 0x40
#define STATUS_TX_ACTIVE 0x08
#define STATUS_RSSI_VALID 0x02

/* MANFIDL: PARTNUM[3:0] = 2 (CC2420) over Chipcon's JEDEC id 0x33D. */
#define CC2420_MANFIDL 0x233D

/* MDMCTRL0: ADR_DECODE, CCA_HYST 2, CCA_MODE 3, AUTOCRC, no AUTOACK, a
 * 3-byte preamble (PREAMBLE_LENGTH 2, what 802.15.4 asks) -- the reset
 * value, written so the configuration does not depend on it. */
#define MDMCTRL0_VALUE 0x0AE2
/* MDMCTRL1: CORR_THR 20 (bits 10:6), as the datasheet asks; TX_MODE 0
 * (buffered: frames from the TX FIFO). */
#define MDMCTRL1_VALUE (20u << 6)
/* IOCFG0: FIFOP_THR 127, the largest, so FIFOP rises only for a complete
 * frame (or an overflow); all pins active high (the reset polarities). */
#define IOCFG0_VALUE 0x007F
/* SECCTRL0: SEC_MODE (bits 1:0) 0 = no in-line security, and
 * RXFIFO_PROTECTION (bit 9) off; the other fields are left as they are. */
#define SECCTRL0_SEC_MODE 0x0003
#define SECCTRL0_RXFIFO_PROTECTION 0x0200
/* FSCTRL: LOCK_THR 1 (its reset value) over FREQ, 2405 + 5 (k - 11) MHz. */
#define FSCTRL_LOCK_THR 0x4000
#define FSCTRL_FREQ(ch) (357u + 5u * ((ch) - 11u))

/* The RSSI byte the chip appends (AUTOCRC) plus this offset is dBm. */
#define RSSI_OFFSET_DBM (-45)
#define FCS_LEN 2
#define MAX_PSDU 127
#define MIN_PSDU 5 /* an acknowledgement: frame control, sequence, FCS */

/* --- Time ----------------------------------------------------------------- */

/* Microseconds as kernel ticks (one tick is one cycle on this board);
 * constant-folded for constant arguments. */
#define US(us) ((uint32_t)((uint64_t)(us) * F_CPU / 1000000u))

#define VREG_STARTUP_US 600  /* datasheet: regulator up within 0.6 ms */
#define RESET_PULSE_US 10    /* RESETn low; the datasheet asks for no minimum */
#define XOSC_TIMEOUT_US 5000 /* datasheet: 0.86 ms typical; five times more is "never" */
#define SYMBOL_US 16
#define BYTE_US 32
/* After STXON: 12 symbols of calibration, then preamble (4 bytes), SFD
 * (1) and the length (1) before the PSDU. */
#define TX_START_US (12 * SYMBOL_US)
#define SHR_PHR_BYTES 6
#define TX_MARGIN_US 1000

/* --- Pins ------------------------------------------------------------------ */

#define CSN_LOW() (PORTB &= (uint8_t)~_BV(CC2420_CSN_BIT))
#define CSN_HIGH() (PORTB |= _BV(CC2420_CSN_BIT))
#define FIFO_HIGH() ((PINB & _BV(CC2420_FIFO_BIT)) != 0)
#define FIFOP_HIGH() ((AVR_EXTINT_PINS(CC2420_FIFOP_INT) & AVR_EXTINT_BIT(CC2420_FIFOP_INT)) != 0)
#define CCA_HIGH() ((PIND & _BV(CC2420_CCA_BIT)) != 0)
#define SFD_HIGH() ((PIND & _BV(CC2420_SFD_BIT)) != 0)

/* --- State ----------------------------------------------------------------- */

typedef enum {
    TX_IDLE,
    TX_WAIT_SFD, /* strobed, TX_ACTIVE seen: calibrating, preamble going out */
    TX_ON_AIR,   /* SFD sent: the frame is on the air until SFD falls */
    TX_BURST,    /* an unmodulated carrier (cc2420_burst_on) until cc2420_burst_off */
} tx_state;

static cc2420_config cfg;
static bool ready;
/* cc2420_off() was called: crystal stopped (or starting again, not yet
 * listening). */
static bool radio_off;
static cc2420_counters counters;

static volatile uint8_t txs; /* tx_state */
static cc2420_tx_result tx_result;
static tern_alarm tx_watchdog;

/* SFD capture: the rise of the frame now being received, and the rise of
 * the last frame that ended (its fall seen), which is the frame FIFOP
 * announces. */
static tern_time rx_rise;
static bool rx_rise_valid;
static tern_time rx_done_rise;
static bool rx_done_valid;

/* --- SPI ------------------------------------------------------------------- */

/* One byte each way. The wait is bounded: without a chip (or without an
 * SPI model) SPIF might never come, and nothing may hang on it. */
static uint8_t spi(uint8_t out)
{
    SPDR = out;
    for (uint8_t n = 0; n < 100; n++) {
        if (SPSR & _BV(SPIF))
            return SPDR;
    }
    counters.spi_stalls++;
    return 0;
}

static void spi_init(void)
{
    DDRB |= _BV(CC2420_CSN_BIT) | _BV(CC2420_SCK_BIT) | _BV(CC2420_MOSI_BIT);
    DDRB &= (uint8_t)~(_BV(CC2420_MISO_BIT) | _BV(CC2420_FIFO_BIT));
    CSN_HIGH();
    SPCR = _BV(SPE) | _BV(MSTR); /* mode 0, MSB first */
    SPSR = _BV(SPI2X);           /* f/2 with SPR1:0 = 0 */
}

/* The transactions below expect interrupts masked (task callers use
 * locked(), handlers already run masked). */
static uint8_t strobe(uint8_t cmd)
{
    CSN_LOW();
    uint8_t status = spi(cmd);
    CSN_HIGH();
    return status;
}

static uint16_t reg_read(uint8_t reg)
{
    CSN_LOW();
    spi((uint8_t)(reg | REG_READ));
    uint16_t v = (uint16_t)spi(0) << 8;
    v |= spi(0);
    CSN_HIGH();
    return v;
}

static void reg_write(uint8_t reg, uint16_t v)
{
    CSN_LOW();
    spi(reg);
    spi((uint8_t)(v >> 8));
    spi((uint8_t)v);
    CSN_HIGH();
}

/* RAM: the address's bits 6:0 in the first byte, bits 8:7 in bits 7:6 of
 * the second. Little-endian values, as 802.15.4 sends them. */
static void ram_write16(uint16_t addr, uint16_t v)
{
    CSN_LOW();
    spi((uint8_t)(RAM_ACCESS | (addr & 0x7F)));
    spi((uint8_t)((addr >> 1) & 0xC0));
    spi((uint8_t)v);
    spi((uint8_t)(v >> 8));
    CSN_HIGH();
}

static tern_irq_state lock(void) { return port_irq_save(); }
static void unlock(tern_irq_state s) { port_irq_restore(s); }

/* Task-level strobe, interrupts masked around it. */
static uint8_t strobe_locked(uint8_t cmd)
{
    tern_irq_state s = lock();
    uint8_t st = strobe(cmd);
    unlock(s);
    return st;
}

/* Two SFLUSHRX: the datasheet asks for two after an overflow, so that
 * the SFD pin too returns to idle. */
static void rx_flush(void)
{
    strobe(SFLUSHRX);
    strobe(SFLUSHRX);
    rx_rise_valid = false;
    rx_done_valid = false;
}

/* --- Busy waits (task context only) -------------------------------------- */

static void wait_us(uint32_t us)
{
    tern_time end = tern_now() + US(us);
    while (tern_now() < end)
        ;
}

/* --- Transmission outcome --------------------------------------------------- */

/* Interrupt context (capture or watchdog alarm). */
static void tx_finish(cc2420_status st)
{
    tern_alarm_cancel(&tx_watchdog);
    txs = TX_IDLE;
    tx_result.status = (uint8_t)st;
    switch (st) {
    case CC2420_OK:
        counters.tx_frames++;
        break;
    case CC2420_ETX_NOSFD:
        counters.tx_no_sfd++;
        tx_result.sfd = 0;
        break;
    default:
        counters.tx_no_end++;
        break;
    }
    if (cfg.tx_isr) {
        cfg.tx_isr(&tx_result);
        return;
    }
    if (cfg.tx_task == TERN_NO_TASK)
        return;
    if (tern_send(cfg.tx_task, cfg.tx_port, &tx_result, sizeof tx_result, 0) != TERN_OK)
        counters.tx_post_failed++;
}

static void tx_watchdog_fired(tern_alarm *a, void *arg)
{
    (void)a;
    (void)arg;
    if (txs == TX_WAIT_SFD)
        tx_finish(CC2420_ETX_NOSFD);
    else if (txs == TX_ON_AIR)
        tx_finish(CC2420_ETX_NOEND);
}

/* --- SFD: Timer1 input capture ----------------------------------------------- */

static void sfd_rose(tern_time t)
{
    if (txs == TX_WAIT_SFD) {
        tx_result.sfd = t;
        txs = TX_ON_AIR;
        return;
    }
    rx_rise = t;
    rx_rise_valid = true;
    if (cfg.sfd_isr && t)
        cfg.sfd_isr(t);
}

static void rx_drain(void);

static void sfd_fell(void)
{
    if (txs == TX_ON_AIR) {
        tx_finish(CC2420_OK);
        rx_drain(); /* a frame left unannounced while the SFD was ours */
        return;
    }
    /* The end of a received frame (or of one the address filter dropped:
     * FIFOP then stays low, and the next frame's end replaces this). */
    rx_done_rise = rx_rise;
    rx_done_valid = rx_rise_valid;
    rx_rise_valid = false;
}

/* One captured edge: note it and wait for the other one. An edge that
 * came and went while the capture unit was being switched over shows in
 * the pin, and is handled here too (its time is not known). */
static void sfd_capture(void)
{
    uint16_t icr = ICR1;
    bool rising = (TCCR1B & _BV(ICES1)) != 0;
    TCCR1B ^= _BV(ICES1);
    AVR_TIMER1_IFR = _BV(ICF1); /* switching the edge may set ICF1: datasheet */
    if (rising) {
        sfd_rose(avr_timer1_capture_time(icr));
        if (!SFD_HIGH()) {
            TCCR1B |= _BV(ICES1);
            AVR_TIMER1_IFR = _BV(ICF1);
            counters.sfd_missed_edges++;
            sfd_fell();
        }
    } else {
        sfd_fell();
        if (SFD_HIGH()) {
            TCCR1B &= (uint8_t)~_BV(ICES1);
            AVR_TIMER1_IFR = _BV(ICF1);
            counters.sfd_missed_edges++;
            sfd_rose(0); /* a frame began: when, the capture lost */
        }
    }
}

ISR(TIMER1_CAPT_vect)
{
    tern_isr_enter();
    sfd_capture();
    tern_isr_exit();
}

/* --- Reception: FIFOP ----------------------------------------------------- */

/* Reads n bytes of the open RXFIFO read into dst (NULL: discard), each
 * only while the FIFO pin says one is there. False if it ran dry. */
static bool fifo_read(uint8_t *dst, uint8_t n)
{
    for (; n; n--) {
        if (!FIFO_HIGH())
            return false;
        uint8_t b = spi(0);
        if (dst)
            *dst++ = b;
    }
    return true;
}

/* The frame's SFD time: exact when the frame just read was the last to
 * end (the FIFO is empty behind it); with frames queued behind it, the
 * recorded rise belongs to a later one. */
static tern_time rx_sfd_time(void)
{
    if (rx_done_valid && !FIFO_HIGH()) {
        rx_done_valid = false;
        if (rx_done_rise) /* 0: its rise was a missed edge (sfd_capture), time lost */
            return rx_done_rise;
    }
    counters.rx_sfd_unknown++;
    return 0;
}

static void rx_deliver(cc2420_rx_frame *f)
{
    if (cfg.rx_isr) {
        counters.rx_frames++;
        cfg.rx_isr(f);
        return;
    }
    uint16_t size = (uint16_t)(sizeof *f + f->len);
    if (tern_send(cfg.rx_task, cfg.rx_port, f, size, TERN_MSG_HEAP) == TERN_OK) {
        counters.rx_frames++;
        return;
    }
    counters.rx_post_failed++;
    tern_free(f);
}

/* One frame out of the RX FIFO (FIFOP said there is one). Never trusts the
 * length byte: over 127, or more than the FIFO holds, is an error that
 * flushes the FIFO. */
static void rx_one(void)
{
    CSN_LOW();
    spi(RXFIFO | REG_READ);
    uint8_t len = spi(0);
    if (len > MAX_PSDU) {
        CSN_HIGH();
        counters.rx_len_invalid++;
        rx_flush();
        return;
    }
    if (len < MIN_PSDU) {
        bool ok = fifo_read(NULL, len);
        CSN_HIGH();
        counters.rx_too_short++;
        if (!ok) {
            counters.rx_len_past_fifo++;
            rx_flush();
        }
        return;
    }
    uint8_t mpdu = (uint8_t)(len - FCS_LEN);
    cc2420_rx_frame *f = tern_alloc(sizeof *f + mpdu);
    uint8_t tail[FCS_LEN]; /* RSSI, CRC_OK | correlation (AUTOCRC) */
    bool ok = fifo_read(f ? f->data : NULL, mpdu) && fifo_read(tail, FCS_LEN);
    CSN_HIGH();
    if (!ok) {
        counters.rx_len_past_fifo++;
        rx_flush();
    } else if (!(tail[1] & 0x80)) {
        counters.rx_bad_crc++;
    } else if (!f) {
        counters.rx_no_memory++;
    } else {
        f->len = mpdu;
        f->rssi_dbm = (int8_t)((int8_t)tail[0] + RSSI_OFFSET_DBM);
        f->lqi = tail[1] & 0x7F;
        f->sfd = rx_sfd_time();
        rx_deliver(f);
        return;
    }
    if (f)
        tern_free(f);
}

/* At most this many frames per call: 128 bytes of FIFO hold at most 21 of
 * the shortest (6 bytes with the length). */
#define RX_FRAMES_PER_IRQ 22

/* Every complete frame out of the RX FIFO. FIFOP announces one, but falls
 * as soon as reading begins (datasheet), so a second frame that completed
 * before the first was read is not announced again: bytes in the FIFO
 * while no frame is arriving (SFD low) are such frames too. Bytes while SFD
 * is high belong to the frame being received; its end raises FIFOP.
 * Interrupts masked. */
static void rx_drain(void)
{
    for (uint8_t i = 0; i < RX_FRAMES_PER_IRQ; i++) {
        if (FIFOP_HIGH() && !FIFO_HIGH()) {
            /* FIFOP without FIFO: the RX FIFO overflowed, and the chip
             * receives nothing more until it is flushed. */
            counters.rx_overflows++;
            rx_flush();
            return;
        }
        if (!FIFOP_HIGH() && !(FIFO_HIGH() && !SFD_HIGH()))
            return;
        rx_one();
    }
}

ISR(CC2420_FIFOP_VECT)
{
    tern_isr_enter();
    /* The SFD's fall and FIFOP come together at a frame's end, and FIFOP's interrupt
     * is served before the capture: take the capture first. */
    if (AVR_TIMER1_IFR & _BV(ICF1))
        sfd_capture();
    rx_drain();
    tern_isr_exit();
}

/* --- Set-up ------------------------------------------------------------------ */

static void power_down(void)
{
    EIMSK &= (uint8_t)~AVR_EXTINT_MASK(CC2420_FIFOP_INT);
    AVR_TIMER1_IMSK &= (uint8_t)~_BV(AVR_TIMER1_CAPT_IE);
    PORTA &= (uint8_t)~(_BV(PA5) | _BV(PA6)); /* VREG_EN, RESETn low */
    ready = false;
}

/* The crystal, bounded: a chip that never answers is named, not waited
 * for. */
static bool xosc_start(void)
{
    strobe_locked(SXOSCON);
    tern_time end = tern_now() + US(XOSC_TIMEOUT_US);
    do {
        if (strobe_locked(SNOP) & STATUS_XOSC16M_STABLE)
            return true;
    } while (tern_now() < end);
    return false;
}

static void tune(uint8_t channel)
{
    reg_write(FSCTRL, (uint16_t)(FSCTRL_LOCK_THR | FSCTRL_FREQ(channel)));
}

static void set_address(uint16_t pan_id, uint16_t short_addr)
{
    ram_write16(RAM_PANID, pan_id);
    ram_write16(RAM_SHORTADR, short_addr);
}

cc2420_status cc2420_init(const cc2420_config *c)
{
    if (c->channel < 11 || c->channel > 26)
        return CC2420_EINVAL;
    cfg = *c;
    ready = false;
    radio_off = false;
    txs = TX_IDLE;
    memset(&counters, 0, sizeof counters);
    tern_alarm_init(&tx_watchdog, tx_watchdog_fired, NULL);

    /* Pins: the board left VREG_EN and RESETn low and CSn high. */
    DDRA |= _BV(PA5) | _BV(PA6);
    DDRD &= (uint8_t)~(_BV(CC2420_SFD_BIT) | _BV(CC2420_CCA_BIT));
    AVR_EXTINT_DDR(CC2420_FIFOP_INT) &= (uint8_t)~AVR_EXTINT_BIT(CC2420_FIFOP_INT);
    spi_init();

    PORTA |= _BV(PA5); /* VREG_EN */
    wait_us(VREG_STARTUP_US);
    PORTA &= (uint8_t)~_BV(PA6); /* reset every register */
    wait_us(RESET_PULSE_US);
    PORTA |= _BV(PA6);
    if (!xosc_start()) {
        power_down();
        return CC2420_ENOCHIP;
    }

    tern_irq_state s = lock();
    if (reg_read(MANFIDL) != CC2420_MANFIDL) {
        unlock(s);
        power_down();
        return CC2420_EBADCHIP;
    }
    reg_write(MDMCTRL0, MDMCTRL0_VALUE);
    reg_write(MDMCTRL1, MDMCTRL1_VALUE);
    reg_write(IOCFG0, IOCFG0_VALUE);
    uint16_t sec = reg_read(SECCTRL0);
    reg_write(SECCTRL0, (uint16_t)(sec & ~(SECCTRL0_SEC_MODE | SECCTRL0_RXFIFO_PROTECTION)));
    tune(cfg.channel);
    set_address(cfg.pan_id, cfg.short_addr);

    /* SFD: Timer1 captures its rise first; FIFOP: its interrupt on the
     * rising edge. */
    TCCR1B |= _BV(ICES1);
    AVR_TIMER1_IFR = _BV(ICF1);
    AVR_TIMER1_IMSK |= _BV(AVR_TIMER1_CAPT_IE);
    avr_extint_sense(CC2420_FIFOP_INT, AVR_EXTINT_RISING);
    EIFR = AVR_EXTINT_MASK(CC2420_FIFOP_INT);
    EIMSK |= AVR_EXTINT_MASK(CC2420_FIFOP_INT);

    rx_flush();
    strobe(SRXON);
    ready = true;
    unlock(s);
    return CC2420_OK;
}

cc2420_status cc2420_set_channel(uint8_t channel)
{
    if (!ready)
        return CC2420_ESTATE;
    if (channel < 11 || channel > 26)
        return CC2420_EINVAL;
    if (txs != TX_IDLE)
        return CC2420_EBUSY;
    tern_irq_state s = lock();
    cfg.channel = channel;
    tune(channel);
    strobe(SRXON); /* recalibrates the synthesizer on the new frequency */
    unlock(s);
    return CC2420_OK;
}

cc2420_status cc2420_set_address(uint16_t pan_id, uint16_t short_addr)
{
    if (!ready)
        return CC2420_ESTATE;
    tern_irq_state s = lock();
    cfg.pan_id = pan_id;
    cfg.short_addr = short_addr;
    set_address(pan_id, short_addr);
    unlock(s);
    return CC2420_OK;
}

/* --- Transmission ---------------------------------------------------------- */

cc2420_status cc2420_send(const uint8_t *mpdu, uint8_t len, bool cca)
{
    if (!ready)
        return CC2420_ESTATE;
    if (radio_off)
        return CC2420_EOFF;
    if (len + FCS_LEN > MAX_PSDU || len + FCS_LEN < MIN_PSDU)
        return CC2420_EINVAL;
    tern_irq_state s = lock();
    if (txs != TX_IDLE) {
        counters.tx_busy++;
        unlock(s);
        return CC2420_EBUSY;
    }
    strobe(SFLUSHTX);
    CSN_LOW();
    spi(TXFIFO);
    spi((uint8_t)(len + FCS_LEN)); /* the length counts the FCS the chip adds */
    for (uint8_t i = 0; i < len; i++)
        spi(mpdu[i]);
    CSN_HIGH();

    tx_result.len = len;
    tx_result.sfd = 0;
    strobe(cca ? STXONCCA : STXON);
    /* TX_ACTIVE is set as soon as the chip starts calibrating for TX; a
     * refused STXONCCA leaves it clear. The status of the strobe's own
     * byte is from before it, so ask again. */
    if (!(strobe(SNOP) & STATUS_TX_ACTIVE)) {
        unlock(s);
        if (cca) {
            counters.tx_cca_busy++;
            return CC2420_ECHANNEL_BUSY;
        }
        counters.tx_no_start++;
        return CC2420_ETX_NOSTART;
    }
    txs = TX_WAIT_SFD;
    uint32_t air_us = TX_START_US + (uint32_t)(SHR_PHR_BYTES + len + FCS_LEN) * BYTE_US;
    tern_alarm_set(&tx_watchdog, tern_now() + US(air_us + TX_MARGIN_US), 0);
    unlock(s);
    return CC2420_OK;
}

/* --- Black bursts ------------------------------------------------------------ */

/* MDMCTRL1 TX_MODE (bits 3:2) = 2 with DACTST = 0x1800: STXON sends an
 * unmodulated carrier (datasheet, "Unmodulated carrier") instead of the TX
 * FIFO; SRFOFF ends it. Back to buffered mode and RX afterwards. */
#define MDMCTRL1_TX_CARRIER (2u << 2)
#define DACTST_CARRIER 0x1800

cc2420_status cc2420_burst_on(void)
{
    if (!ready)
        return CC2420_ESTATE;
    if (radio_off)
        return CC2420_EOFF;
    tern_irq_state s = lock();
    if (txs != TX_IDLE) {
        counters.tx_busy++;
        unlock(s);
        return CC2420_EBUSY;
    }
    reg_write(MDMCTRL1, MDMCTRL1_VALUE | MDMCTRL1_TX_CARRIER);
    reg_write(DACTST, DACTST_CARRIER);
    strobe(STXON);
    txs = TX_BURST;
    counters.tx_bursts++;
    unlock(s);
    return CC2420_OK;
}

cc2420_status cc2420_burst_off(void)
{
    tern_irq_state s = lock();
    if (txs != TX_BURST) {
        unlock(s);
        return CC2420_ESTATE;
    }
    strobe(SRFOFF); /* the carrier stops one symbol later */
    reg_write(MDMCTRL1, MDMCTRL1_VALUE);
    reg_write(DACTST, 0);
    strobe(SRXON);
    txs = TX_IDLE;
    unlock(s);
    return CC2420_OK;
}

/* --- Duty cycling ------------------------------------------------------------ */

cc2420_status cc2420_off(void)
{
    if (!ready)
        return CC2420_ESTATE;
    tern_irq_state s = lock();
    if (txs != TX_IDLE) {
        unlock(s);
        return CC2420_EBUSY;
    }
    strobe(SRFOFF);
    strobe(SXOSCOFF);
    /* a frame half in the FIFO will never be completed */
    rx_flush();
    radio_off = true;
    unlock(s);
    return CC2420_OK;
}

cc2420_status cc2420_on(void)
{
    if (!ready)
        return CC2420_ESTATE;
    tern_irq_state s = lock();
    cc2420_status st = CC2420_OK;
    if (radio_off) {
        /* SXOSCON is ignored by a chip whose crystal runs or starts */
        if (!(strobe(SXOSCON) & STATUS_XOSC16M_STABLE)) {
            st = CC2420_EWARMING;
        } else {
            strobe(SRXON);
            radio_off = false;
        }
    }
    unlock(s);
    return st;
}

bool cc2420_is_on(void) { return ready && !radio_off; }

bool cc2420_channel_clear(void) { return CCA_HIGH(); }

const cc2420_counters *cc2420_stats(void) { return &counters; }

const char *cc2420_status_name(cc2420_status st)
{
    static const char *const names[CC2420_STATUS_COUNT] = {
        [CC2420_OK] = "CC2420_OK",
        [CC2420_ENOCHIP] = "CC2420_ENOCHIP",
        [CC2420_EBADCHIP] = "CC2420_EBADCHIP",
        [CC2420_ESTATE] = "CC2420_ESTATE",
        [CC2420_EINVAL] = "CC2420_EINVAL",
        [CC2420_EBUSY] = "CC2420_EBUSY",
        [CC2420_ECHANNEL_BUSY] = "CC2420_ECHANNEL_BUSY",
        [CC2420_ETX_NOSTART] = "CC2420_ETX_NOSTART",
        [CC2420_ETX_NOSFD] = "CC2420_ETX_NOSFD",
        [CC2420_ETX_NOEND] = "CC2420_ETX_NOEND",
        [CC2420_EOFF] = "CC2420_EOFF",
        [CC2420_EWARMING] = "CC2420_EWARMING",
    };
    return (unsigned)st < CC2420_STATUS_COUNT ? names[st] : "CC2420_E?";
}
