/* Minimal mps2-an385 guest for the runner tests: prints to CMSDK UART0 and
 * exits through semihosting SYS_EXIT_EXTENDED with STATUS (or spins with SPIN). */
#include <stdint.h>
#define UART0_DATA (*(volatile uint32_t *)0x40004000)
#define UART0_STATE (*(volatile uint32_t *)0x40004004)
#define UART0_CTRL (*(volatile uint32_t *)0x40004008)
#ifndef STATUS
#define STATUS 3
#endif
static void put(char c) { while (UART0_STATE & 1) ; UART0_DATA = (uint32_t)c; }
static void puts_(const char *s) { while (*s) put(*s++); }
static void semihost_exit(uint32_t status)
{
    uint32_t block[2] = {0x20026u, status}; /* ADP_Stopped_ApplicationExit */
    register uint32_t r0 __asm__("r0") = 0x20u; /* SYS_EXIT_EXTENDED */
    register uint32_t *r1 __asm__("r1") = block;
    __asm__ volatile("bkpt 0xab" : : "r"(r0), "r"(r1) : "memory");
    for (;;) ;
}
void reset(void);
void reset(void)
{
    UART0_CTRL = 1;
#ifdef SPIN
    for (;;) ;
#endif
    puts_("hello\nT 7856341204020301\nbye");
    semihost_exit(STATUS);
}
__attribute__((section(".vectors"), used)) static const void *const vectors[2] = {(void *)0x20008000, (void *)reset};
