/* Exits with status 3 and prints nothing. */
#include "tern_simavr_abi.h"

int main(void)
{
	tern_simavr_exit(3);
}
