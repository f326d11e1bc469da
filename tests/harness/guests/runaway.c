/* Never exits: the harness must stop it at --max-cycles. */
int main(void)
{
	for (;;)
		__asm__ volatile ("");
}
