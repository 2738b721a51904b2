/* NCCL's loader (engine/nccl.h): one dlopen, one table, one sentence when the
 * library is missing. */
#include "engine/nccl.h"

#include "engine/dlib.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

gb_nccl_api gb_nccl;

/* The runtime package's name first (libnccl2 installs libnccl.so.2), then the
 * development link a source build or libnccl-dev leaves. */
static const char *const SONAMES[] = {"libnccl.so.2", "libnccl.so"};
#define N_SONAMES (sizeof SONAMES / sizeof *SONAMES)

static int resolve_all(void *lib, const char *path, gb_err *err)
{
#define GB_NCCL_LOAD(name)                                                                         \
    if (!(*(void **)&gb_nccl.name = dlsym(lib, #name)))                                            \
        return gb_err_set(err, GB_ENODRIVER,                                                       \
                          "%s has no %s: it is too old for gpubench (install NCCL 2.10 or newer)", \
                          path, #name);
#define GB_NCCL_LOAD_OPTIONAL(name) *(void **)&gb_nccl.name = dlsym(lib, #name);
    GB_NCCL_REQUIRED(GB_NCCL_LOAD)
    GB_NCCL_OPTIONAL(GB_NCCL_LOAD_OPTIONAL)
#undef GB_NCCL_LOAD
#undef GB_NCCL_LOAD_OPTIONAL
    return GB_OK;
}

static const gb_dlib_spec SPEC = {
    .env_var = "GPUBENCH_NCCL",
    .sonames = SONAMES,
    .n_sonames = N_SONAMES,
    .install = "NCCL (libnccl2, from NVIDIA's CUDA repository or pip's nvidia-nccl-cu12)",
    .package = "NCCL (libnccl2)",
};

static gb_dlib library = GB_DLIB_INIT(&SPEC, resolve_all);

int gb_nccl_load(gb_err *err)
{
    return gb_dlib_load(&library, err);
}

const char *gb_nccl_library(void)
{
    return gb_dlib_path(&library);
}

void gb_nccl_version_text(int code, char *out, size_t out_bytes)
{
    /* NCCL_VERSION(X, Y, Z) is X*10000 + Y*100 + Z from 2.9 on, X*1000 + Y*100 + Z
     * before. */
    int major = code >= 10000 ? code / 10000 : code / 1000;
    int minor = code >= 10000 ? code % 10000 / 100 : code % 1000 / 100;
    snprintf(out, out_bytes, "%d.%d.%d", major, minor, code % 100);
}

int gb_nccl_fail(gb_err *err, ncclResult_t result, const char *call, ncclComm_t comm)
{
    const char *text = gb_nccl.ncclGetErrorString ? gb_nccl.ncclGetErrorString(result) : NULL;
    const char *last = gb_nccl.ncclGetLastError ? gb_nccl.ncclGetLastError(comm) : NULL;
    int code = result == ncclInvalidArgument || result == ncclInvalidUsage ? GB_EINVAL : GB_ECUDA;
    if (!text) text = "unknown NCCL error";
    if (last && *last && !strstr(text, last))
        return gb_err_set(err, code, "%s: %s (%s)", call, text, last);
    return gb_err_set(err, code, "%s: %s", call, text);
}
