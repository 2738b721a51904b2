/*
 * NCCL, loaded at run time.
 *
 * Like the CUDA driver (engine/driver.h) and cuBLASLt (engine/cublas.h), NCCL is
 * never linked: gpubench builds and starts where it is not installed, and only a
 * script that asks for a collective (gb.collective, engine/collective.h) loads it.
 * The first gb_nccl_load() dlopens libnccl.so.2, else libnccl.so (the environment
 * variable GPUBENCH_NCCL may name the file instead) and resolves the entry points
 * of the table below with dlsym. The error-string function comes first, so every
 * later failure has a text.
 *
 * nccl.h is not part of the CUDA toolkit on every machine that builds gpubench, so
 * the few types and prototypes the table needs are declared here, as NCCL 2.x
 * defines them (src/nccl.h.in). Its cudaStream_t is the driver's CUstream (both
 * are struct CUstream_st *). Nothing calls these prototypes directly: they give
 * the table its types. After a successful load, call through the table:
 * gb_nccl.ncclAllReduce(...).
 */
#ifndef GB_ENGINE_NCCL_H
#define GB_ENGINE_NCCL_H

#include "base/error.h"

#include <cuda.h>
#include <stdbool.h>
#include <stddef.h>

/* ---- NCCL's own declarations (nccl.h, NCCL 2.x) -------------------------- */

typedef struct ncclComm *ncclComm_t;

#define NCCL_UNIQUE_ID_BYTES 128
typedef struct {
    char internal[NCCL_UNIQUE_ID_BYTES];
} ncclUniqueId;

typedef enum {
    ncclSuccess = 0,
    ncclUnhandledCudaError = 1,
    ncclSystemError = 2,
    ncclInternalError = 3,
    ncclInvalidArgument = 4,
    ncclInvalidUsage = 5,
    ncclRemoteError = 6,
    ncclInProgress = 7,
    ncclTimeout = 8,
} ncclResult_t;

typedef enum {
    ncclInt8 = 0,
    ncclUint8 = 1,
    ncclInt32 = 2,
    ncclUint32 = 3,
    ncclInt64 = 4,
    ncclUint64 = 5,
    ncclFloat16 = 6,
    ncclFloat32 = 7,
    ncclFloat64 = 8,
    ncclBfloat16 = 9,
} ncclDataType_t;

typedef enum {
    ncclSum = 0,
} ncclRedOp_t;

const char *ncclGetErrorString(ncclResult_t result);
const char *ncclGetLastError(ncclComm_t comm);
ncclResult_t ncclGetVersion(int *version);
ncclResult_t ncclCommInitAll(ncclComm_t *comms, int ndev, const int *devlist);
ncclResult_t ncclCommDestroy(ncclComm_t comm);
ncclResult_t ncclCommAbort(ncclComm_t comm);
ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *async_error);
ncclResult_t ncclAllReduce(const void *sendbuff, void *recvbuff, size_t count,
                           ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                           CUstream stream);
ncclResult_t ncclAllGather(const void *sendbuff, void *recvbuff, size_t sendcount,
                           ncclDataType_t datatype, ncclComm_t comm, CUstream stream);
ncclResult_t ncclReduceScatter(const void *sendbuff, void *recvbuff, size_t recvcount,
                               ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                               CUstream stream);
ncclResult_t ncclBroadcast(const void *sendbuff, void *recvbuff, size_t count,
                           ncclDataType_t datatype, int root, ncclComm_t comm, CUstream stream);
ncclResult_t ncclGroupStart(void);
ncclResult_t ncclGroupEnd(void);

/* ---- the table ----------------------------------------------------------- */

/* Entry points the collectives cannot run without. */
#define GB_NCCL_REQUIRED(X)                                                                        \
    X(ncclGetErrorString)                                                                          \
    X(ncclGetVersion)                                                                              \
    X(ncclCommInitAll)                                                                             \
    X(ncclCommDestroy)                                                                             \
    X(ncclCommAbort)                                                                               \
    X(ncclCommGetAsyncError)                                                                       \
    X(ncclAllReduce)                                                                               \
    X(ncclAllGather)                                                                               \
    X(ncclReduceScatter)                                                                           \
    X(ncclBroadcast)                                                                               \
    X(ncclGroupStart)                                                                              \
    X(ncclGroupEnd)

/* Entry points used when present (ncclGetLastError came in NCCL 2.13); callers
 * test the pointer for NULL. */
#define GB_NCCL_OPTIONAL(X) X(ncclGetLastError)

#define GB_NCCL_DECLARE(name) __typeof__(name) *name;
typedef struct gb_nccl_api {
    GB_NCCL_REQUIRED(GB_NCCL_DECLARE)
    GB_NCCL_OPTIONAL(GB_NCCL_DECLARE)
} gb_nccl_api;
#undef GB_NCCL_DECLARE

/* The loaded table; valid after gb_nccl_load() returned GB_OK. */
extern gb_nccl_api gb_nccl;

/* Loads NCCL once (thread-safe; later calls return the first result). On failure
 * GB_ENODRIVER with one sentence naming the library and how to get it:
 * "libnccl.so.2 not found: install NCCL (libnccl2) or set LD_LIBRARY_PATH (...)",
 * or naming the entry point an older library lacks. */
int gb_nccl_load(gb_err *err);

/* The file that was loaded ("libnccl.so.2"), or NULL before a load. */
const char *gb_nccl_library(void);

/* A version code of ncclGetVersion as text: 22105 -> "2.21.5" (codes before 2.9
 * had a digit less: 2804 -> "2.8.4"). */
void gb_nccl_version_text(int code, char *out, size_t out_bytes);

/* Records "call: NCCL's text for result (its last error, when it says more)" for a
 * failed NCCL call and returns the code gpubench uses for it: GB_EINVAL for an
 * invalid argument or usage, GB_ECUDA otherwise. comm may be NULL. */
int gb_nccl_fail(gb_err *err, ncclResult_t result, const char *call, ncclComm_t comm);

/* Shorthand: GB_NCCL_CHECK(rc, err, ncclGroupEnd, ()) calls NCCL and, on failure,
 * records the call in err, sets rc and jumps to cleanup. */
#define GB_NCCL_CHECK(rc, err, fn, args)                                                           \
    do {                                                                                           \
        ncclResult_t gb_nccl_result_ = gb_nccl.fn args;                                            \
        if (gb_nccl_result_ != ncclSuccess) {                                                      \
            (rc) = gb_nccl_fail((err), gb_nccl_result_, #fn, NULL);                                \
            goto cleanup;                                                                          \
        }                                                                                          \
    } while (0)

#endif
