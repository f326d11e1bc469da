/* Kernel limits for the MicaZ: the same ATmega128 with the same 4 KB of
 * RAM as boards/atmega128, so the same defaults (each only a default: an
 * app's own -D wins; apps/radio enlarges the heap for received frames). */
#ifndef TERN_MICAZ_CONFIG_H
#define TERN_MICAZ_CONFIG_H
#include "../atmega128/board_config.h"
#endif
