/* What every front end shares (cli/common.h): exit statuses, the cache. */
#include "cli/common.h"

#include "cache/cache.h"

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

int gb_cli_open_cache(const char *dir, unsigned flags, gb_cache **out, gb_err *err)
{
    char path[4096];
    if (!dir) {
        int rc = gb_cache_default_dir(path, sizeof path, err);
        if (rc) return rc;
        dir = path;
    }
    return gb_cache_open(dir, flags, out, err);
}
