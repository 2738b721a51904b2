/*
 * The CUDA driver API, loaded at run time.
 *
 * gpubench never links libcuda: the binaries must start (for --help, the cache,
 * --compile-only) on machines with no NVIDIA driver. gb_driver_load() dlopens
 * libcuda.so.1 once, resolves cuGetProcAddress with dlsym and every other entry
 * point through it, at the API version of the headers we were built with. The
 * symbol table below both declares the function pointers and drives the loading.
 * The error-string functions are loaded first so every later failure has a name.
 *
 * After a successful load, call through the table: gb_cu.cuMemAlloc(&ptr, bytes).
 */
#ifndef GB_ENGINE_DRIVER_H
#define GB_ENGINE_DRIVER_H

#include "base/error.h"

#include <cuda.h>
#include <stdbool.h>

/* Entry points gpubench cannot run without. */
#define GB_CU_REQUIRED(X)                                                                          \
    X(cuGetErrorName)                                                                              \
    X(cuGetErrorString)                                                                            \
    X(cuInit)                                                                                      \
    X(cuDriverGetVersion)                                                                          \
    X(cuDeviceGetCount)                                                                            \
    X(cuDeviceGet)                                                                                 \
    X(cuDeviceGetName)                                                                             \
    X(cuDeviceGetAttribute)                                                                        \
    X(cuDeviceTotalMem)                                                                            \
    X(cuDevicePrimaryCtxRetain)                                                                    \
    X(cuDevicePrimaryCtxRelease)                                                                   \
    X(cuCtxSetCurrent)                                                                             \
    X(cuCtxSynchronize)                                                                            \
    X(cuStreamCreate)                                                                              \
    X(cuStreamDestroy)                                                                             \
    X(cuStreamSynchronize)                                                                         \
    X(cuStreamQuery)                                                                               \
    X(cuEventCreate)                                                                               \
    X(cuEventDestroy)                                                                              \
    X(cuEventRecord)                                                                               \
    X(cuEventSynchronize)                                                                          \
    X(cuEventElapsedTime)                                                                          \
    X(cuMemAlloc)                                                                                  \
    X(cuMemFree)                                                                                   \
    X(cuMemGetInfo)                                                                                \
    X(cuMemcpyHtoD)                                                                                \
    X(cuMemcpyDtoH)                                                                                \
    X(cuMemcpyDtoDAsync)                                                                           \
    X(cuMemsetD8Async)                                                                             \
    X(cuModuleLoadData)                                                                            \
    X(cuModuleUnload)                                                                              \
    X(cuModuleGetFunction)                                                                         \
    X(cuFuncGetAttribute)                                                                          \
    X(cuFuncSetAttribute)                                                                          \
    X(cuLaunchKernel)                                                                              \
    X(cuStreamBeginCapture)                                                                        \
    X(cuStreamEndCapture)                                                                          \
    X(cuGraphInstantiateWithFlags)                                                                 \
    X(cuGraphLaunch)                                                                               \
    X(cuGraphDestroy)                                                                              \
    X(cuGraphExecDestroy)

/* Entry points used when present; callers test the pointer for NULL. */
#define GB_CU_OPTIONAL(X)                                                                          \
    X(cuDeviceGetUuid)                                                                             \
    X(cuDeviceGetPCIBusId)                                                                         \
    X(cuFuncGetParamInfo)                                                                          \
    X(cuLaunchKernelEx)                                                                            \
    X(cuTensorMapEncodeTiled)

#define GB_CU_DECLARE(name) __typeof__(name) *name;
typedef struct gb_cu_api {
    GB_CU_REQUIRED(GB_CU_DECLARE)
    GB_CU_OPTIONAL(GB_CU_DECLARE)
} gb_cu_api;
#undef GB_CU_DECLARE

/* The loaded table; valid after gb_driver_load() returned GB_OK. */
extern gb_cu_api gb_cu;

/* Loads the driver once (thread-safe; later calls return the first result).
 * GB_ENODRIVER with one sentence naming libcuda.so.1 when there is none;
 * GB_ECUDA when it is too old or cuInit fails (e.g. no device: CUDA_ERROR_NO_DEVICE
 * becomes GB_ENOGPU). */
int gb_driver_load(gb_err *err);

/* True when the last gb_driver_load() succeeded. */
bool gb_driver_loaded(void);

/* Records "call: NAME: description" for a failed driver call and returns the code
 * gpubench uses for it: GB_EFAULT for errors that leave the context unusable
 * (illegal address, trap, launch failure...), GB_ELAUNCH for refused launches,
 * GB_ECUDA otherwise. */
int gb_cu_fail(gb_err *err, CUresult result, const char *call);

/* True for the errors after which the CUDA context can no longer be used. */
bool gb_cu_is_sticky(CUresult result);

/* The CUresult's name ("CUDA_ERROR_ILLEGAL_ADDRESS"), or "CUDA error N". */
const char *gb_cu_error_name(CUresult result);

/* Shorthand: GB_CU_CHECK(rc, err, cuMemAlloc, (&ptr, bytes)) calls the driver and,
 * on failure, records "cuMemAlloc: NAME: description" in err, sets rc and jumps to
 * cleanup. */
#define GB_CU_CHECK(rc, err, fn, args)                                                             \
    do {                                                                                           \
        CUresult gb_cu_result_ = gb_cu.fn args;                                                    \
        if (gb_cu_result_ != CUDA_SUCCESS) {                                                       \
            (rc) = gb_cu_fail((err), gb_cu_result_, #fn);                                          \
            goto cleanup;                                                                          \
        }                                                                                          \
    } while (0)

#endif
