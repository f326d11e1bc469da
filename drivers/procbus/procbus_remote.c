/* The processor bus as the kernel's bus manager sees it (tern/remote.h):
 * tern-sim's procbus behind a tern_bus. Received frames go straight to
 * tern_remote_receive, in the bus interrupt. */
#include "procbus_remote.h"

#include "procbus.h"
#include "tern/time.h"

/* While the bus is busy the bus manager looks again this often: a frame
 * of 64 bytes takes 264 us at 2 Mbit/s, more in TDMA slots. */
#define RETRY_US 100

static tern_bus bus;
/* The driver's tx_frames after the bus manager's last frame: a NACK is for
 * one of its frames only if no other (time sync's, power's) left since. */
static uint16_t ours;

static tern_bus_result send(uint8_t dst, const uint8_t *head, uint8_t head_len,
                            const void *body, uint8_t body_len)
{
    procbus_status st = procbus_send_parts(dst == TERN_BUS_ALL ? PROCBUS_BROADCAST : dst, head,
                                           head_len, body, body_len);
    if (st == PROCBUS_OK)
        ours = procbus_stats()->tx_frames;
    return st == PROCBUS_OK ? TERN_BUS_SENT : st == PROCBUS_EBUSY ? TERN_BUS_BUSY : TERN_BUS_FAILED;
}

static void nacked(uint8_t dst) { tern_remote_nack(dst, procbus_stats()->tx_frames == ours); }

tern_status procbus_remote_attach(void)
{
    procbus_config cfg = {
        .rx_task = TERN_NO_TASK, .rx_fn = tern_remote_receive, .nack_fn = nacked};
    if (procbus_init(&cfg) != PROCBUS_OK)
        return TERN_ESTATE;
    bus = (tern_bus){
        .send = send,
        .poll = procbus_poll,
        .address = procbus_address(),
        .count = procbus_count(),
        .frame_max = PROCBUS_FRAME_MAX,
        .retry_ticks = (tern_time)tern_clock_hz() * RETRY_US / 1000000u,
    };
    return tern_remote_attach(&bus);
}
