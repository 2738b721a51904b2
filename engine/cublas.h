/*
 * cuBLASLt, loaded at run time.
 *
 * Like the CUDA driver (engine/driver.h), cuBLASLt is never linked: gpubench
 * starts and compiles on machines without it, and a script that never asks for a
 * cuBLAS call never touches it. The first gb_cublas_load() dlopens
 * libcublasLt.so.13, else libcublasLt.so.12, else libcublasLt.so (the environment
 * variable GPUBENCH_CUBLASLT may name the file instead) and resolves the entry
 * points of the table below with dlsym; the table both declares the function
 * pointers, from the toolkit's <cublasLt.h>, and drives the loading. The status
 * name and text functions come first, so every later failure has a name.
 *
 * After a successful load, call through the table: gb_lt.cublasLtCreate(&handle).
 */
#ifndef GB_ENGINE_CUBLAS_H
#define GB_ENGINE_CUBLAS_H

#include "base/error.h"

#include <cublasLt.h>
#include <stdbool.h>

/* Entry points the GEMM path cannot run without. */
#define GB_LT_REQUIRED(X)                                                                          \
    X(cublasLtGetStatusName)                                                                       \
    X(cublasLtGetStatusString)                                                                     \
    X(cublasLtGetVersion)                                                                          \
    X(cublasLtCreate)                                                                              \
    X(cublasLtDestroy)                                                                             \
    X(cublasLtMatmulDescCreate)                                                                    \
    X(cublasLtMatmulDescDestroy)                                                                   \
    X(cublasLtMatmulDescSetAttribute)                                                              \
    X(cublasLtMatrixLayoutCreate)                                                                  \
    X(cublasLtMatrixLayoutDestroy)                                                                 \
    X(cublasLtMatrixLayoutSetAttribute)                                                            \
    X(cublasLtMatmulPreferenceCreate)                                                              \
    X(cublasLtMatmulPreferenceDestroy)                                                             \
    X(cublasLtMatmulPreferenceSetAttribute)                                                        \
    X(cublasLtMatmulAlgoGetHeuristic)                                                              \
    X(cublasLtMatmul)

#define GB_LT_DECLARE(name) __typeof__(name) *name;
typedef struct gb_lt_api {
    GB_LT_REQUIRED(GB_LT_DECLARE)
} gb_lt_api;
#undef GB_LT_DECLARE

/* The loaded table; valid after gb_cublas_load() returned GB_OK. */
extern gb_lt_api gb_lt;

/* Loads cuBLASLt once (thread-safe; later calls return the first result). On
 * failure GB_ENODRIVER with one sentence naming the library and how to get it:
 * "libcublasLt.so.13 not found: install the CUDA toolkit's cuBLAS (cuda-libraries)
 * or set LD_LIBRARY_PATH (...)", or naming the entry point an older library
 * lacks. */
int gb_cublas_load(gb_err *err);

/* The file that was loaded ("libcublasLt.so.13"), or NULL before a load. */
const char *gb_cublas_library(void);

/* Records "call: CUBLAS_STATUS_NAME: description" for a failed cuBLASLt call and
 * returns the code gpubench uses for it: GB_ELAUNCH for a GEMM cuBLASLt refuses
 * (not supported, invalid value, architecture mismatch), GB_ENOMEM for a failed
 * allocation, GB_ECUDA otherwise. */
int gb_lt_fail(gb_err *err, cublasStatus_t status, const char *call);

/* Shorthand: GB_LT_CHECK(rc, err, cublasLtCreate, (&handle)) calls cuBLASLt and,
 * on failure, records the call in err, sets rc and jumps to cleanup. */
#define GB_LT_CHECK(rc, err, fn, args)                                                             \
    do {                                                                                           \
        cublasStatus_t gb_lt_status_ = gb_lt.fn args;                                              \
        if (gb_lt_status_ != CUBLAS_STATUS_SUCCESS) {                                              \
            (rc) = gb_lt_fail((err), gb_lt_status_, #fn);                                          \
            goto cleanup;                                                                          \
        }                                                                                          \
    } while (0)

#endif
