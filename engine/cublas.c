/* cuBLASLt's loader (engine/cublas.h): one dlopen, one table, one sentence when
 * the library is missing. */
#include "engine/cublas.h"

#include "engine/dlib.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

gb_lt_api gb_lt;

/* Newest first: a CUDA 13 toolkit's, then a CUDA 12 one's, then whatever the
 * unversioned development link points at. */
static const char *const SONAMES[] = {"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"};
#define N_SONAMES (sizeof SONAMES / sizeof *SONAMES)

static int resolve_all(void *lib, const char *path, gb_err *err)
{
#define GB_LT_LOAD(name)                                                                           \
    if (!(*(void **)&gb_lt.name = dlsym(lib, #name)))                                              \
        return gb_err_set(err, GB_ENODRIVER,                                                       \
                          "%s has no %s: it is too old for gpubench (install cuBLAS from CUDA "    \
                          "12.0 or newer)",                                                        \
                          path, #name);
    GB_LT_REQUIRED(GB_LT_LOAD)
#undef GB_LT_LOAD
    return GB_OK;
}

static const gb_dlib_spec SPEC = {
    .env_var = "GPUBENCH_CUBLASLT",
    .sonames = SONAMES,
    .n_sonames = N_SONAMES,
    .install = "the CUDA toolkit's cuBLAS (cuda-libraries)",
    .package = "the CUDA toolkit's cuBLAS (cuda-libraries)",
};

static gb_dlib library = GB_DLIB_INIT(&SPEC, resolve_all);

int gb_cublas_load(gb_err *err)
{
    return gb_dlib_load(&library, err);
}

const char *gb_cublas_library(void)
{
    return gb_dlib_path(&library);
}

static bool is_refusal(cublasStatus_t status)
{
    return status == CUBLAS_STATUS_NOT_SUPPORTED || status == CUBLAS_STATUS_INVALID_VALUE ||
           status == CUBLAS_STATUS_ARCH_MISMATCH;
}

int gb_lt_fail(gb_err *err, cublasStatus_t status, const char *call)
{
    const char *name = gb_lt.cublasLtGetStatusName ? gb_lt.cublasLtGetStatusName(status) : NULL;
    const char *text = gb_lt.cublasLtGetStatusString ? gb_lt.cublasLtGetStatusString(status) : NULL;
    int code = is_refusal(status)                     ? GB_ELAUNCH
               : status == CUBLAS_STATUS_ALLOC_FAILED ? GB_ENOMEM
                                                      : GB_ECUDA;
    return gb_err_set(err, code, "%s: %s: %s", call, name ? name : "unknown cuBLAS status",
                      text ? text : "no description");
}
