/* avr_load.c - see avr_load.h. */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <avr_extint.h>
#include <avr_uart.h>
#include <avr_ioport.h>
#include <sim_elf.h>
#include <sim_io.h>

#include <gelf.h>
#include <libelf.h>

#include "avr_load.h"

int avr_load_flash_segments(avr_t *avr, const char *image, char *err, size_t errlen)
{
	int fd = open(image, O_RDONLY);
	if (fd < 0) {
		snprintf(err, errlen, "cannot open ELF image '%s': %s", image, strerror(errno));
		return -1;
	}
	elf_version(EV_CURRENT);
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	size_t count = 0;
	int rc = 0;
	if (!elf || elf_getphdrnum(elf, &count) != 0) {
		snprintf(err, errlen, "cannot read the program headers of '%s'", image);
		rc = -1;
	}
	for (size_t i = 0; rc == 0 && i < count; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || ph.p_filesz == 0 ||
		    ph.p_paddr >= 0x800000)
			continue;
		if (ph.p_paddr + ph.p_filesz > (uint64_t)avr->flashend + 1) {
			snprintf(err, errlen, "'%s': a segment at 0x%" PRIx64 " does not fit the %s flash", image,
				 (uint64_t)ph.p_paddr, avr->mmcu);
			rc = -1;
		} else if (pread(fd, avr->flash + ph.p_paddr, ph.p_filesz, (off_t)ph.p_offset) !=
			   (ssize_t)ph.p_filesz) {
			snprintf(err, errlen, "cannot read a segment of '%s'", image);
			rc = -1;
		}
	}
	if (elf)
		elf_end(elf);
	close(fd);
	return rc;
}

void avr_fix_part_quirks(avr_t *avr)
{
	static const char *const megax4[] = { "atmega164", "atmega324", "atmega644", "atmega1284" };
	bool is_megax4 = false;
	for (size_t i = 0; i < sizeof megax4 / sizeof megax4[0]; i++)
		is_megax4 |= strncmp(avr->mmcu, megax4[i], strlen(megax4[i])) == 0;
	if (!is_megax4)
		return;
	for (avr_io_t *io = avr->io_port; io; io = io->next) {
		if (strcmp(io->kind, "extint") != 0)
			continue;
		avr_extint_t *ext = (avr_extint_t *)io;
		if (ext->eint[2].port_ioctl != AVR_IOCTL_IOPORT_GETIRQ('B') || ext->eint[2].port_pin != 3)
			return;
		avr_irq_t *int2 = ext->io.irq + 2;
		avr_unconnect_irq(avr_io_getirq(avr, AVR_IOCTL_IOPORT_GETIRQ('B'), 3), int2);
		ext->eint[2].port_pin = 2;
		avr_connect_irq(avr_io_getirq(avr, AVR_IOCTL_IOPORT_GETIRQ('B'), 2), int2);
		return;
	}
}

void avr_log_plain(const char *fmt, va_list ap)
{
	char msg[512], *out = msg;
	vsnprintf(msg, sizeof msg, fmt, ap);
	for (const char *in = msg; *in; in++) {
		if (*in == '\033') {	/* ESC [ ... m */
			while (in[1] && !((*in | 32) >= 'a' && (*in | 32) <= 'z'))
				in++;
			continue;
		}
		*out++ = *in;
	}
	*out = '\0';
	fprintf(stderr, "simavr: %s%s", msg, out > msg && out[-1] == '\n' ? "" : "\n");
}

/* The stock sleep callback usleep()s for the slept cycles. The core has
 * already advanced avr->cycle to the next cycle timer, so doing nothing here
 * turns a sleep into a jump in simulated time. */
static void sleep_no_wait(avr_t *avr, avr_cycle_count_t how_long)
{
	(void)avr;
	(void)how_long;
}

static avr_t *refuse(enum avr_core_error *why, enum avr_core_error what, avr_t *avr)
{
	*why = what;
	if (avr)
		avr_terminate(avr);
	return NULL;
}

avr_t *avr_harness_core(const char *image, const char *mcu, uint32_t freq_hz, avr_irq_notify_t uart_out,
			void *param, enum avr_core_error *why, char *err, size_t errlen)
{
	elf_firmware_t fw;
	memset(&fw, 0, sizeof fw);
	if (access(image, R_OK) != 0 || elf_read_firmware(image, &fw) != 0) {
		snprintf(err, errlen, "cannot load ELF image '%s'", image);
		return refuse(why, AVR_CORE_EIMAGE, NULL);
	}
	avr_t *avr = avr_make_mcu_by_name(mcu);
	if (!avr) {
		snprintf(err, errlen, "unknown MCU '%s'", mcu);
		return refuse(why, AVR_CORE_EMCU, NULL);
	}
	avr_init(avr);
	avr_fix_part_quirks(avr);
	avr->log = LOG_ERROR;
	avr->gdb_port = 0;	/* a crash would otherwise wait for a debugger */
	avr->sleep = sleep_no_wait;
	if (fw.flashsize == 0) {
		snprintf(err, errlen, "'%s' holds no code", image);
		return refuse(why, AVR_CORE_EIMAGE, avr);
	}
	/* avr_loadcode() abort()s on an image that does not fit. */
	if ((uint64_t)fw.flashbase + fw.flashsize > (uint64_t)avr->flashend + 1) {
		snprintf(err, errlen, "'%s' (%" PRIu32 " bytes) does not fit the %s flash", image, fw.flashsize,
			 mcu);
		return refuse(why, AVR_CORE_EIMAGE, avr);
	}
	fw.frequency = freq_hz;	/* the image's .mmcu section may name another */
	avr_load_firmware(avr, &fw);
	avr->frequency = freq_hz;
	if (avr_load_flash_segments(avr, image, err, errlen) != 0)
		return refuse(why, AVR_CORE_EIMAGE, avr);

	/* Clear AVR_UART_FLAG_STDIO (simavr's own line echo, which would print
	 * every line a second time) and AVR_UART_FLAG_POLL_SLEEP (a usleep(1) on
	 * every UCSR0A read while neither RXC0 nor TXC0 is set, e.g. on each poll
	 * for TXC0: 2,200 bytes sent that way took 7 s instead of 10 ms). */
	uint32_t uart_flags = 0;
	avr_irq_t *out = avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_OUTPUT);
	if (!out || avr_ioctl(avr, AVR_IOCTL_UART_SET_FLAGS('0'), &uart_flags) != 0) {
		snprintf(err, errlen, "MCU '%s' has no USART0", mcu);
		return refuse(why, AVR_CORE_EMCU, avr);
	}
	avr_irq_register_notify(out, uart_out, param);
	*why = AVR_CORE_OK;
	return avr;
}
