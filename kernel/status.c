#include "tern/types.h"

const char *tern_status_name(tern_status s)
{
    static const char *const names[TERN_STATUS_COUNT] = {
        "TERN_OK",     "TERN_EINVAL", "TERN_ENOTASK", "TERN_ENOPORT",
        "TERN_ENOROUTE", "TERN_EDUPLICATE", "TERN_ERANGE", "TERN_EFULL",
        "TERN_ENOMEM", "TERN_ESTATE", "TERN_EOWNER", "TERN_EPINNED", "TERN_ETIMEOUT",
        "TERN_ENOHW",
    };
    return (unsigned)s < TERN_STATUS_COUNT ? names[s] : "TERN_E?";
}
