/* Stores beyond the ATmega128's 4 KiB of SRAM (RAMEND = 0x10FF, no external
 * memory enabled): simavr 1.6 marks the CPU crashed. */
#include <stdint.h>
#include "tern_simavr_abi.h"

int main(void)
{
	*(volatile uint8_t *)0x2000 = 0x55;
	tern_simavr_exit(0);
}
