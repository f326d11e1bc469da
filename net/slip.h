/* SLIP (RFC 1055): IPv6 datagrams over a serial line, for a border router
 * whose USART0 leads to the host (tern-sim bridges it to a TUN interface).
 *
 * A frame is END, the datagram with END and ESC escaped (ESC ESC_END,
 * ESC ESC_ESC), END: the leading END flushes whatever line noise came
 * before. The decoder is a pure state machine on a caller's bounded buffer,
 * fed one byte at a time (from the UART's receive interrupt on the AVR), so
 * the host tests it under the sanitizers. A frame that cannot be a datagram
 * is dropped whole and counted by reason; the decoder then skips to the
 * next END.
 *
 * The console shares USART0 with the frames (docs/net.md, "Border router"):
 * what the node prints lies outside the END ... END brackets, which is how
 * tern-sim tells text from datagrams. */
#ifndef TERN_NET_SLIP_H
#define TERN_NET_SLIP_H

#include <stddef.h>
#include <stdint.h>

#define SLIP_END 0xC0
#define SLIP_ESC 0xDB
#define SLIP_ESC_END 0xDC
#define SLIP_ESC_ESC 0xDD

typedef enum {
    SLIP_EOVERSIZE,  /* longer than the receive buffer */
    SLIP_EBADESCAPE, /* ESC followed by neither ESC_END nor ESC_ESC (nor by END: an aborted frame) */
    SLIP_EUART,      /* the UART reported a framing error or an overrun inside the frame */
    SLIP_ENOMEMORY,  /* a whole frame, but no heap block to hand it on (the AVR driver) */
    SLIP_ENOTASK,    /* ... or the task refused the message (tern_send's error) */
    SLIP_DROP_COUNT
} slip_drop;

/* "SLIP_EOVERSIZE" and so on. */
const char *slip_drop_name(slip_drop d);

typedef struct {
    uint8_t *buf;
    uint16_t cap, len;
    uint8_t state; /* private: in a frame, after ESC, skipping to END */
    uint32_t frames; /* whole frames decoded */
    uint16_t dropped[SLIP_DROP_COUNT];
} slip_rx;

void slip_rx_init(slip_rx *r, uint8_t *buf, uint16_t cap);
/* One byte from the line. A whole frame: its length (the datagram is in
 * r->buf until the next call). Otherwise 0; empty frames (END END) are line
 * idle, not counted. */
uint16_t slip_rx_byte(slip_rx *r, uint8_t b);
/* The frame being received is bad (a UART error): drop it, counted as why,
 * and skip to the next END. */
void slip_rx_drop(slip_rx *r, slip_drop why);

/* One frame out through put(ctx, byte): END, the bytes escaped, END. Byte
 * `patch_at` (when < len) is sent as `patch` instead: the hop limit of a
 * datagram forwarded without a copy. The number of bytes put. */
size_t slip_write(const uint8_t *p, size_t len, size_t patch_at, uint8_t patch, void (*put)(void *ctx, uint8_t b),
                  void *ctx);

#ifdef __AVR__
#include "tern/types.h"

/* USART0 as a SLIP line: its receive interrupt decodes into a heap block
 * of SLIP_RX_SIZE bytes and hands each whole frame to (task, port) as a
 * heap message (payload: the datagram, length: its size). Transmission is
 * polled, like the console's, so that console text and frames never
 * interleave within a frame; it takes the line's time (88 cycles a byte at the
 * console's setting, 11.9 us on a micaz). */
#ifndef SLIP_RX_SIZE
#define SLIP_RX_SIZE 280
#endif
void slip_uart_init(tern_task_id task, tern_port port);
void slip_uart_send(const uint8_t *p, size_t len, size_t patch_at, uint8_t patch);
/* The receiver's counters (frames, drops by reason). */
const slip_rx *slip_uart_counters(void);
#endif

#endif
