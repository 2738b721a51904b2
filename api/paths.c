/* Where the C API finds what it did not link in (api/internal.h): the worker
 * program and the templates, beside the library once installed, else the
 * build's, else the configured prefix's. */
#include "api/internal.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* GB_WORKER_FROM_LIB and GB_TEMPLATES_FROM_LIB (relative to the library's own
 * folder), GB_BUILD_WORKER, GB_INSTALL_WORKER, GB_SOURCE_TEMPLATES and
 * GB_INSTALL_TEMPLATES come from api/CMakeLists.txt. */

/* relative, taken from the folder this library was loaded from, into out; false
 * when that cannot be told or nothing is there. */
static bool beside_library(const char *relative, int mode, char *out, size_t size)
{
    Dl_info info;
    if (!dladdr((void *)gpubench_version, &info) || !info.dli_fname) return false;
    const char *slash = strrchr(info.dli_fname, '/');
    if (!slash) return false;
    int n = snprintf(out, size, "%.*s/%s", (int)(slash - info.dli_fname), info.dli_fname, relative);
    return n > 0 && (size_t)n < size && access(out, mode) == 0;
}

int gb_api_template_dirs(const char **dirs, int max, char *env_copy)
{
    static char installed[4096];
    int n = 0;
    for (char *save = NULL, *d = env_copy ? strtok_r(env_copy, ":", &save) : NULL; d && n < max - 3;
         d = strtok_r(NULL, ":", &save))
        dirs[n++] = d;
    if (beside_library(GB_TEMPLATES_FROM_LIB, R_OK, installed, sizeof installed))
        dirs[n++] = installed;
    if (*GB_SOURCE_TEMPLATES && access(GB_SOURCE_TEMPLATES, R_OK) == 0)
        dirs[n++] = GB_SOURCE_TEMPLATES;
    if (*GB_INSTALL_TEMPLATES && access(GB_INSTALL_TEMPLATES, R_OK) == 0)
        dirs[n++] = GB_INSTALL_TEMPLATES;
    return n;
}

/* The worker program: the option, $GPUBENCH_WORKER, the gpubench-tune installed
 * beside the library, the build's, the configured prefix's. */
int gb_api_find_worker(const char *option, char *out, size_t size, gb_err *err)
{
    const char *given = option ? option : getenv("GPUBENCH_WORKER");
    if (given) {
        snprintf(out, size, "%s", given);
        if (access(out, X_OK) == 0) return GB_OK;
        return gb_err_set(err, GB_EINVAL, "the GPU worker %s is not an executable program (%s)",
                          given, option ? "gpubench_session_options.worker" : "GPUBENCH_WORKER");
    }
    if (beside_library(GB_WORKER_FROM_LIB, X_OK, out, size)) return GB_OK;
    const char *builtin[] = {GB_BUILD_WORKER, GB_INSTALL_WORKER};
    for (size_t i = 0; i < sizeof builtin / sizeof *builtin; i++)
        if (*builtin[i] && access(builtin[i], X_OK) == 0) {
            snprintf(out, size, "%s", builtin[i]);
            return GB_OK;
        }
    return gb_err_set(err, GB_ENOTFOUND,
                      "no GPU worker: gpubench-tune is not installed beside libgpubench "
                      "(%s from its folder) nor at %s; set GPUBENCH_WORKER",
                      GB_WORKER_FROM_LIB, *GB_INSTALL_WORKER ? GB_INSTALL_WORKER : "(none)");
}
