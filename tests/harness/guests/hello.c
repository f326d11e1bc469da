/* Prints a fixed text (with repeated letters and a blank line, which a
 * value-filtered IRQ would drop) and exits 0. */
#include "console.h"

int main(void)
{
	console_init();
	console_puts("Hello from tern on simavr!\n\nbye\n");
	tern_simavr_exit(0);
}
