/*
 * A device's measured ceilings: what it really does, as opposed to the
 * theoretical peaks of engine/roofs.h. Device-to-device copy bandwidth (bytes
 * read plus written per second, over arrays at least 8x the L2, so the copy runs
 * from DRAM: the best of the driver's copy and gpubench's own copy kernel at
 * several launch shapes) and cuBLAS's GEMM rate for each kind of tensor-core and CUDA-core
 * math it can do. Measured once per device (cache/ceilings.h keeps them) and set
 * beside every result: the reports' "% ceil" column.
 */
#ifndef GB_ENGINE_CEILINGS_H
#define GB_ENGINE_CEILINGS_H

#include "base/error.h"
#include "base/wire.h"
#include "engine/roofs.h"

#include <stdint.h>

typedef struct gb_gpu gb_gpu;

typedef struct gb_ceilings {
    double copy_gbps;   /* (read + written) bytes / s of a device-to-device copy */
    int64_t copy_bytes; /* the size of each array copied */
    char copy_how[96];  /* which copy reached it: "cuMemcpyDtoD", "copy kernel, 528 blocks of
                           512 threads" */
    /* cuBLAS GEMM TFLOP/s at gemm_size cubed, 0 where not measured */
    double gemm_fp32, gemm_tf32, gemm_fp16, gemm_bf16, gemm_fp8;
    int gemm_size;
    char gemm_note[256];  /* why GEMM rates are missing ("" when they are all there) */
    char measured_at[32]; /* UTC, "2026-11-24T10:00:00Z" */
} gb_ceilings;

#define GB_CEILINGS_WIRE(X)                                                                        \
    X(copy_gbps, DOUBLE, "copy_gbps", GB_WIRE_RANGE(0, 1e9))                                       \
    X(copy_bytes, INT64, "copy_bytes", GB_WIRE_RANGE(0, 9.0e15))                                   \
    X(copy_how, CHARS, "copy_how", .flags = GB_WIRE_OPTIONAL, .dflt_str = "")                      \
    X(gemm_fp32, DOUBLE, "gemm_fp32_tflops", GB_WIRE_RANGE(0, 1e9))                                \
    X(gemm_tf32, DOUBLE, "gemm_tf32_tflops", GB_WIRE_RANGE(0, 1e9))                                \
    X(gemm_fp16, DOUBLE, "gemm_fp16_tflops", GB_WIRE_RANGE(0, 1e9))                                \
    X(gemm_bf16, DOUBLE, "gemm_bf16_tflops", GB_WIRE_RANGE(0, 1e9))                                \
    X(gemm_fp8, DOUBLE, "gemm_fp8_tflops", GB_WIRE_RANGE(0, 1e9))                                  \
    X(gemm_size, INT, "gemm_size", GB_WIRE_RANGE(0, 1 << 20))                                      \
    X(gemm_note, CHARS, "gemm_note", .flags = GB_WIRE_OPTIONAL, .dflt_str = "")                    \
    X(measured_at, CHARS, "measured_at")

extern const gb_wire_type gb_wire_ceilings;

/* The measured GEMM rate for a kind of math (0: none measured for it). */
double gb_ceilings_tflops(const gb_ceilings *c, gb_math math);

/* Sets the roofs' measured ceilings from c. */
void gb_ceilings_to_roofs(const gb_ceilings *c, gb_roofs *roofs);

/* Measures the session's device: the copy bandwidth (the best way), then the GEMM rates (cuBLAS
 * loaded at run time; without it the rates stay 0 and gemm_note says why). Takes
 * a few seconds; the buffers of the current problem stay as they are. */
int gb_gpu_measure_ceilings(gb_gpu *gpu, gb_ceilings *out, gb_err *err);

#endif
