/* Writes a PCAP (LINKTYPE_IEEE802_15_4_WITHFCS) of 802.15.4 data frames that
 * carry what net/lowpan.c makes of three datagrams: a 50-byte UDP datagram
 * (one frame), a 1,000-byte one (fragments) and an ICMPv6 echo request, so
 * that Wireshark's dissectors can judge the encoding independently
 * (tests/sim/test_lowpan_wireshark.py). Usage: lowpan_pcap OUT.pcap */
#include <stdio.h>
#include <string.h>

#include "ipv6.h"
#include "lowpan.h"

static FILE *out;
static uint8_t seq;

static void put_frame(const uint8_t *payload, size_t n)
{
    /* data frame, PAN id compression, short addresses: dst 2, src 1 */
    uint8_t f[127] = {0x41, 0x88, seq, 0x22, 0x00, 0x02, 0x00, 0x01, 0x00};
    size_t k = 9;
    memcpy(f + k, payload, n);
    k += n;
    uint16_t crc = 0;
    for (size_t i = 0; i < k; i++) {
        crc ^= f[i];
        for (int b = 0; b < 8; b++)
            crc = (crc & 1) ? (uint16_t)((crc >> 1) ^ 0x8408) : (uint16_t)(crc >> 1);
    }
    f[k++] = (uint8_t)crc;
    f[k++] = (uint8_t)(crc >> 8);
    const uint32_t rec[4] = {seq++, 0, (uint32_t)k, (uint32_t)k};
    fwrite(rec, sizeof rec, 1, out);
    fwrite(f, 1, k, out);
}

static void send_datagram(const uint8_t *ip, size_t len, uint16_t tag)
{
    const ll_addr a = ll_short(1), b = ll_short(2);
    lowpan_fragmenter fr;
    uint8_t payload[127 - 11];
    lowpan_fragment_start(&fr, ip, len, &a, &b, tag, sizeof payload);
    while (!fr.done) {
        net_status s;
        size_t n = lowpan_fragment_next(&fr, payload, sizeof payload, &s);
        if (s != NET_OK) {
            fprintf(stderr, "lowpan_pcap: %s\n", net_status_name(s));
            return;
        }
        put_frame(payload, n);
    }
}

int main(int argc, char **argv)
{
    if (argc != 2 || !(out = fopen(argv[1], "wb"))) {
        fprintf(stderr, "usage: lowpan_pcap OUT.pcap\n");
        return 2;
    }
    const uint32_t header[6] = {0xa1b2c3d4, 0x00040002, 0, 0, 65535, 195};
    fwrite(header, sizeof header, 1, out);
    const ll_addr a = ll_short(1), b = ll_short(2);
    const ip6_addr la = ip6_link_local(&a), lb = ip6_link_local(&b);
    const ip6_addr global = {{0x20, 0x01, 0x0d, 0xb8, [15] = 2}};
    static uint8_t data[1000], ip[1100];
    for (size_t i = 0; i < sizeof data; i++)
        data[i] = (uint8_t)i;
    size_t n = udp_build(&la, &lb, 0xf0b1, 0xf0b2, 64, data, 50, ip, sizeof ip);
    send_datagram(ip, n, 1);
    n = udp_build(&la, &global, 40000, 40001, 17, data, 1000 - 48, ip, sizeof ip);
    send_datagram(ip, n, 2);
    n = icmp6_echo_request(&la, &lb, 1, 2, data, 20, ip, sizeof ip);
    send_datagram(ip, n, 3);
    return fclose(out) == 0 ? 0 : 1;
}
