/* Sleeps with interrupts disabled: nothing can ever wake the CPU. */
#include <avr/interrupt.h>
#include <avr/sleep.h>
#include "tern_simavr_abi.h"

int main(void)
{
	cli();
	set_sleep_mode(SLEEP_MODE_IDLE);
	sleep_enable();
	sleep_cpu();
	tern_simavr_exit(0);
}
