/* avr_load.c - see avr_load.h. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

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
