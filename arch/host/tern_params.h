/* Run parameters on the build machine (tools/appcheck compiles an app's
 * description with this arch): an ordinary array with the defaults; no
 * host tool patches it. */
#ifndef TERN_PARAMS_H
#define TERN_PARAMS_H

#include <stdint.h>

#define TERN_PARAMS_WORDS 8

extern const volatile uint32_t tern_params[TERN_PARAMS_WORDS];

#define TERN_PARAMS_DEFAULTS(...) const volatile uint32_t tern_params[TERN_PARAMS_WORDS] = {__VA_ARGS__}

#endif
