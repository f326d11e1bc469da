/* Burns 40,000,000 cycles (10 s at 4 MHz) in one exact-length delay loop,
 * then exits 0: the harness's speed benchmark. */
#include "tern_simavr_abi.h"

int main(void)
{
	__builtin_avr_delay_cycles(40000000UL);
	tern_simavr_exit(0);
}
