/* Executes 0x0001, which is no AVR instruction. simavr 1.6 only logs it; the
 * harness must report a crash. */
#include "tern_simavr_abi.h"

int main(void)
{
	__asm__ volatile (".word 0x0001");
	tern_simavr_exit(0);
}
