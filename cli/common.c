/* What every front end shares (cli/common.h): exit statuses. */
#include "cli/common.h"

int gb_cli_exit_status(int code)
{
    switch (code) {
    case GB_OK:
        return 0;
    case GB_ESCRIPT:
    case GB_EINVAL:
    case GB_ECACHE:
    case GB_EIO:
        return 2;
    case GB_ENODRIVER:
    case GB_ENOGPU:
    case GB_EBUSY: /* the GPU stayed in use by another process */
        return 3;
    case GB_EINTR:
        return 130;
    default:
        return code > 0 ? 2 : 1; /* errno: the environment, e.g. a cache path */
    }
}
