/* The communication scheduler's timer: the MicaZ's, Timer3 on both parts
 * (the one register that differs comes from arch/avr/avr_mcu.h). */
#include "../micaz/bcs_timer.c"
