/* What a BiPS MAC protocol (net/mac_actp.c, net/mac_mb.c) links against,
 * stubbed for host tests of its configuration: the BCS's clock and timer,
 * the multiplexer and the radio do nothing; only the MAC's init and its
 * derived timing run on the host (test_actp.c, test_mb.c). */
#include "bcs.h"
#include "cc2420.h"
#include "mux.h"

uint32_t bcs_us_to_ticks(uint32_t us) { return us * 7u; }
uint32_t bcs_d_stop_us(const bcs_config *c) { return c->max_offset_us > 192 ? c->max_offset_us : 192; }
void bcs_timer_set(uint8_t ch, tern_time at) { (void)ch, (void)at; }
mux_entry *mux_pick(uint8_t region_id) { (void)region_id; return NULL; }
void mux_done(mux_entry *e, bool ok, tern_time sfd) { (void)e, (void)ok, (void)sfd; }
void mux_release(mux_entry *e) { (void)e; }
uint8_t mux_priority(const mux_entry *e) { (void)e; return 0; }
void mux_rx(cc2420_rx_frame *f, uint8_t region_id) { (void)f, (void)region_id; }
uint16_t mux_frame_src(const cc2420_rx_frame *f) { (void)f; return 0; }
cc2420_status cc2420_send(const uint8_t *mpdu, uint8_t len, bool cca) { (void)mpdu, (void)len, (void)cca; return CC2420_OK; }
cc2420_status cc2420_burst_on(void) { return CC2420_OK; }
cc2420_status cc2420_burst_off(void) { return CC2420_OK; }
bool cc2420_channel_clear(void) { return true; }
