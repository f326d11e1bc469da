/* Kernel limits for micaz-1284p: the ATmega1284P's 16 KB, as on
 * module-m1284 (the same part, the same defaults). */
#ifndef TERN_MICAZ_1284P_CONFIG_H
#define TERN_MICAZ_1284P_CONFIG_H
#include "../module-m1284/board_config.h"
#endif
