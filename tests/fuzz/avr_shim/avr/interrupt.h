/* Host stand-in: an ISR is a function the harness calls as the interrupt. */
#ifndef TERN_FUZZ_AVR_INTERRUPT_H
#define TERN_FUZZ_AVR_INTERRUPT_H
#define ISR(vector) void vector(void)
void INT6_vect(void);
void TIMER1_CAPT_vect(void);
#endif
