/* Kernel limits for module-m128: the ATmega128's 4 KB of RAM, so the
 * atmega128 board's defaults (each only a default: an app's own -D wins). */
#ifndef TERN_MODULE_M128_CONFIG_H
#define TERN_MODULE_M128_CONFIG_H
#include "../atmega128/board_config.h"
#endif
