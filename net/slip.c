/* SLIP framing (RFC 1055). See slip.h. */
#include "slip.h"

enum { IN_FRAME, AFTER_ESC, SKIPPING };

const char *slip_drop_name(slip_drop d)
{
    static const char *const names[SLIP_DROP_COUNT] = {
        [SLIP_EOVERSIZE] = "SLIP_EOVERSIZE",
        [SLIP_EBADESCAPE] = "SLIP_EBADESCAPE",
        [SLIP_EUART] = "SLIP_EUART",
        [SLIP_ENOMEMORY] = "SLIP_ENOMEMORY",
        [SLIP_ENOTASK] = "SLIP_ENOTASK",
    };
    return (unsigned)d < SLIP_DROP_COUNT ? names[d] : "SLIP_?";
}

void slip_rx_init(slip_rx *r, uint8_t *buf, uint16_t cap)
{
    *r = (slip_rx){.buf = buf, .cap = cap, .state = IN_FRAME};
}

void slip_rx_drop(slip_rx *r, slip_drop why)
{
    if (r->state != SKIPPING)
        r->dropped[why]++;
    r->state = SKIPPING;
    r->len = 0;
}

uint16_t slip_rx_byte(slip_rx *r, uint8_t b)
{
    if (b == SLIP_END) {
        uint16_t len = r->len;
        uint8_t state = r->state;
        r->len = 0;
        r->state = IN_FRAME;
        if (state == AFTER_ESC) { /* ESC END: the sender gave the frame up */
            r->dropped[SLIP_EBADESCAPE]++;
            return 0;
        }
        if (state == SKIPPING || len == 0)
            return 0;
        r->frames++;
        return len;
    }
    if (r->state == SKIPPING)
        return 0;
    if (r->state == AFTER_ESC) {
        r->state = IN_FRAME;
        if (b == SLIP_ESC_END)
            b = SLIP_END;
        else if (b == SLIP_ESC_ESC)
            b = SLIP_ESC;
        else {
            slip_rx_drop(r, SLIP_EBADESCAPE);
            return 0;
        }
    } else if (b == SLIP_ESC) {
        r->state = AFTER_ESC;
        return 0;
    }
    if (r->len == r->cap) {
        slip_rx_drop(r, SLIP_EOVERSIZE);
        return 0;
    }
    r->buf[r->len++] = b;
    return 0;
}

size_t slip_write(const uint8_t *p, size_t len, size_t patch_at, uint8_t patch, void (*put)(void *ctx, uint8_t b),
                  void *ctx)
{
    size_t n = 2;
    put(ctx, SLIP_END);
    for (size_t i = 0; i < len; i++) {
        uint8_t b = i == patch_at ? patch : p[i];
        if (b == SLIP_END || b == SLIP_ESC) {
            put(ctx, SLIP_ESC);
            b = b == SLIP_END ? SLIP_ESC_END : SLIP_ESC_ESC;
            n++;
        }
        put(ctx, b);
        n++;
    }
    put(ctx, SLIP_END);
    return n;
}

#ifdef __AVR__
#include <avr/interrupt.h>
#include <avr/io.h>
#include "tern/mem.h"
#include "tern/port.h"
#include "tern/task.h"

static slip_rx uart_rx;
static tern_task_id rx_task;
static tern_port rx_port;

void slip_uart_init(tern_task_id task, tern_port port)
{
    rx_task = task;
    rx_port = port;
    slip_rx_init(&uart_rx, NULL, SLIP_RX_SIZE);
    /* board_init set the line up (8N1, U2X0, UBRR0 = 0) for the console;
     * UCSR0A is left alone (simavr 1.6 stores a write to it plainly) */
    UCSR0B |= _BV(RXEN0) | _BV(RXCIE0);
}

const slip_rx *slip_uart_counters(void) { return &uart_rx; }

/* Frames are decoded straight into a heap block, which the message then
 * carries to the task: no static receive buffer beside the heap, which
 * matters in the micaz's 4 KB. */
ISR(USART0_RX_vect)
{
    tern_isr_enter();
    uint8_t status = UCSR0A; /* before UDR0: reading UDR0 moves the status on */
    uint8_t b = UDR0;
    if (status & (_BV(FE0) | _BV(DOR0)))
        slip_rx_drop(&uart_rx, SLIP_EUART); /* a byte garbled or lost: the frame is */
    if (!uart_rx.buf && b != SLIP_END && uart_rx.state != SKIPPING && !(uart_rx.buf = tern_alloc(SLIP_RX_SIZE)))
        slip_rx_drop(&uart_rx, SLIP_ENOMEMORY);
    uint16_t len = slip_rx_byte(&uart_rx, b);
    if (len) {
        if (tern_send(rx_task, rx_port, uart_rx.buf, len, TERN_MSG_HEAP) != TERN_OK) {
            tern_free(uart_rx.buf); /* the kernel counted why it refused */
            uart_rx.dropped[SLIP_ENOTASK]++;
        }
        uart_rx.buf = NULL;
    }
    tern_isr_exit();
}

static void uart_put(void *ctx, uint8_t b)
{
    (void)ctx;
    port_putc((char)b);
}

void slip_uart_send(const uint8_t *p, size_t len, size_t patch_at, uint8_t patch)
{
    slip_write(p, len, patch_at, patch, uart_put, NULL);
}
#endif
