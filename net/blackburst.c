/* Black bursts (blackburst.h): the tick figures of the CC2420's timing. */
#include "blackburst.h"
#include "bcs.h"

bb_ticks bb_t;

void bb_init(void)
{
    bb_t.turnaround = bcs_us_to_ticks(BB_TURNAROUND_US);
    bb_t.on = bcs_us_to_ticks(BB_ON_US);
    bb_t.symbol = bcs_us_to_ticks(BB_SYMBOL_US);
}
