/* The MicaZ's real wiring (boards/micaz/board.h) over the shim's <avr/io.h>. */
#include "../../../boards/micaz/board.h"
