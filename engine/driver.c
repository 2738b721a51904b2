#include "engine/driver.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

gb_cu_api gb_cu;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static gb_err load_err;
static bool loaded;

typedef CUresult (*get_proc_fn)(const char *, void **, int, cuuint64_t,
                                CUdriverProcAddressQueryResult *);

static int resolve(get_proc_fn get_proc, const char *name, void **slot, bool required)
{
    CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SUCCESS;
    CUresult rc = get_proc(name, slot, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &status);
    if (rc == CUDA_SUCCESS && status == CU_GET_PROC_ADDRESS_SUCCESS && *slot) return GB_OK;
    *slot = NULL;
    if (!required) return GB_OK;
    int version = 0;
    if (gb_cu.cuDriverGetVersion) gb_cu.cuDriverGetVersion(&version);
    return gb_err_set(&load_err, GB_ENODRIVER,
                      "the CUDA driver (libcuda.so.1, CUDA %d.%d) has no %s at the API version "
                      "gpubench was built for (CUDA %d.%d): install a newer NVIDIA driver",
                      version / 1000, version % 1000 / 10, name, CUDA_VERSION / 1000,
                      CUDA_VERSION % 1000 / 10);
}

static int resolve_all(get_proc_fn get_proc)
{
    int rc = GB_OK;
#define GB_CU_LOAD_REQUIRED(name)                                                                  \
    if (rc == GB_OK) rc = resolve(get_proc, #name, (void **)&gb_cu.name, true);
#define GB_CU_LOAD_OPTIONAL(name)                                                                  \
    if (rc == GB_OK) rc = resolve(get_proc, #name, (void **)&gb_cu.name, false);
    GB_CU_REQUIRED(GB_CU_LOAD_REQUIRED)
    GB_CU_OPTIONAL(GB_CU_LOAD_OPTIONAL)
#undef GB_CU_LOAD_REQUIRED
#undef GB_CU_LOAD_OPTIONAL
    return rc;
}

static void load(void)
{
    /* GPUBENCH_LIBCUDA names the driver library when it is not on the loader's path. */
    const char *path = getenv("GPUBENCH_LIBCUDA");
    if (!path || !*path) path = "libcuda.so.1";
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        gb_err_set(&load_err, GB_ENODRIVER, "no CUDA driver: %s could not be loaded (%s)", path,
                   dlerror());
        return;
    }
    get_proc_fn get_proc = (get_proc_fn)dlsym(lib, "cuGetProcAddress_v2");
    if (!get_proc) {
        gb_err_set(&load_err, GB_ENODRIVER,
                   "the CUDA driver (libcuda.so.1) is too old: it has no cuGetProcAddress_v2 "
                   "(CUDA 12.0 or newer is needed)");
        return;
    }
    if (resolve_all(get_proc) != GB_OK) return;
    CUresult rc = gb_cu.cuInit(0);
    if (rc != CUDA_SUCCESS) {
        gb_cu_fail(&load_err, rc, "cuInit(0)");
        if (rc == CUDA_ERROR_NO_DEVICE) load_err.code = GB_ENOGPU;
        return;
    }
    loaded = true;
}

int gb_driver_load(gb_err *err)
{
    pthread_once(&load_once, load);
    if (loaded) return GB_OK;
    return gb_err_copy(err, &load_err);
}

bool gb_driver_loaded(void)
{
    return loaded;
}

const char *gb_cu_error_name(CUresult result)
{
    const char *name = NULL;
    if (gb_cu.cuGetErrorName && gb_cu.cuGetErrorName(result, &name) == CUDA_SUCCESS && name)
        return name;
    return "unknown CUDA error";
}

bool gb_cu_is_sticky(CUresult result)
{
    switch (result) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_ECC_UNCORRECTABLE:
    case CUDA_ERROR_CONTEXT_IS_DESTROYED:
    case CUDA_ERROR_TENSOR_MEMORY_LEAK:
        return true;
    default:
        return false;
    }
}

static bool is_refused_launch(CUresult result)
{
    switch (result) {
    case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES:
    case CUDA_ERROR_INVALID_VALUE:
    case CUDA_ERROR_INVALID_IMAGE:
    case CUDA_ERROR_NO_BINARY_FOR_GPU:
    case CUDA_ERROR_INVALID_PTX:
    case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
    case CUDA_ERROR_NOT_FOUND:
    case CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE:
    case CUDA_ERROR_INVALID_CLUSTER_SIZE:
        return true;
    default:
        return false;
    }
}

int gb_cu_fail(gb_err *err, CUresult result, const char *call)
{
    const char *text = NULL;
    if (!gb_cu.cuGetErrorString || gb_cu.cuGetErrorString(result, &text) != CUDA_SUCCESS)
        text = NULL;
    int code = gb_cu_is_sticky(result)     ? GB_EFAULT
               : is_refused_launch(result) ? GB_ELAUNCH
                                           : GB_ECUDA;
    if (result == CUDA_ERROR_OUT_OF_MEMORY) code = GB_ENOMEM;
    return gb_err_set(err, code, "%s: %s: %s", call, gb_cu_error_name(result),
                      text ? text : "no description");
}
