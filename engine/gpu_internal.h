/*
 * Internal to engine/: the GPU session's state, shared by gpu.c (the context,
 * buffers, loading, the check), timing.c (samplers and measurement), gpu_gemm.c
 * (library GEMMs: cuBLASLt calls that stand where a kernel would), and the two
 * they all build on: gpu_base.c (faults, fills, waiting for the stream) and
 * gpu_launch.c (launches).
 */
#ifndef GB_ENGINE_GPU_INTERNAL_H
#define GB_ENGINE_GPU_INTERNAL_H

#include "engine/cupti.h"
#include "engine/driver.h"
#include "engine/gpu.h"
#include "engine/nvml.h"

typedef struct gpu_gemm gpu_gemm;     /* gpu_gemm.c */
typedef struct gpu_cublas gpu_cublas; /* gpu_gemm.c */

/* A cubin's kernel, or (gemm set) a cuBLASLt matmul. */
struct gb_gpu_kernel {
    CUmodule module;
    CUfunction function;
    int registers;
    int n_params; /* -1: unknown (a driver older than CUDA 12.4) */
    unsigned char param_bytes[GB_MAX_ARGS + 1];
    bool wide_clusters; /* allowed clusters of more than 8 blocks */
    gpu_gemm *gemm;
};

/* One argument of the current problem: its description, device buffer(s) and the
 * host storage that cuLaunchKernel reads its value from. */
typedef struct gpu_arg {
    gb_arg desc;
    CUdeviceptr buf;     /* tensors */
    CUdeviceptr ref_buf; /* checked tensors: the reference's own copy */
    union {
        CUdeviceptr ptr;
        int32_t i32;
        uint32_t u32;
        int64_t i64;
        float f32;
        double f64;
        CUtensorMap map; /* a tensormap of the tensor's buf */
    } value;
    CUtensorMap ref_map; /* a tensormap of a checked tensor: of its ref_buf */
} gpu_arg;

struct gb_gpu {
    gb_device_info info;
    CUcontext ctx;
    CUdevice dev;
    CUstream stream;
    CUevent start, stop;
    CUmodule builtins;
    CUfunction fill, plant, compare, flush, flush_read, clock_probe, copy;
    CUdeviceptr compare_out;
    CUdeviceptr flush_buf; /* twice the size of L2, for cold samples */
    size_t flush_words;
    uint32_t flush_value;
    CUdeviceptr probe_out; /* the clock probe's (cycles, nanoseconds) */
    gb_nvml_device *nvml;  /* NULL: clocks come from the probe kernel */
    double peak_clock_mhz; /* throttled samples are judged against it; 0 when unknown */
    gb_cupti *cupti;       /* NULL: samples are timed with events, timer_note says why */
    char timer_note[512];
    struct {
        bool kernel, library, graph; /* CUPTI was seen recording such a launch */
    } cupti_seen;
    gb_warmth warmth; /* what the last measurement left: no warm-up right after it */
    gpu_arg args[GB_MAX_ARGS];
    int n_args;
    uint64_t seed;
    bool have_reference;
    bool broken; /* a kernel faulted: the context is gone */
    gb_err broken_err;
    gpu_cublas *cublas; /* cuBLASLt's handle and workspace, made by the first GEMM */
};

/* Marks the session unusable after a sticky error, so later calls say why. */
int gb_gpu_note_fault(gb_gpu *gpu, int rc, gb_err *err);
/* GB_EFAULT when an earlier fault left the context unusable. */
int gb_gpu_check_usable(gb_gpu *gpu, gb_err *err);
/* Launches with the problem's arguments (the reference's copies of the checked
 * tensors when use_ref_outputs is set), on the session's stream. */
int gb_gpu_launch(gb_gpu *gpu, gb_gpu_kernel *k, const gb_launch *l, bool use_ref_outputs,
                  gb_err *err);
int gb_gpu_sync(gb_gpu *gpu, gb_err *err);
/* Blocks of 256 threads for a grid-stride loop over n elements (at most 65535). */
uint32_t gb_gpu_grid_for(uint64_t n);

/* gpu_base.c: fills a tensor's buffer (buf: its own or the reference's copy) as
 * its init says, from seed, with its planted NaN and infinities; an output is
 * poisoned. */
int gb_gpu_fill_tensor(gb_gpu *gpu, CUdeviceptr buf, const gb_arg *arg, uint64_t seed, gb_err *err);
/* gpu_base.c: fills n elements of dtype at buf like a tensor initialised with init
 * (GB_INIT_RANDN, ...), from seed (the library GEMMs' own operands). */
int gb_gpu_fill_buffer(gb_gpu *gpu, CUdeviceptr buf, gb_dtype dtype, int64_t n, gb_init init,
                       uint64_t seed, gb_err *err);

/* gpu_gemm.c: runs a GEMM kernel on the problem's buffers (the reference's copies
 * of the checked tensors when use_ref_outputs is set). */
int gb_gpu_gemm_launch(gb_gpu *gpu, gb_gpu_kernel *k, bool use_ref_outputs, gb_err *err);
/* Frees a GEMM kernel's descriptors; the session's cuBLASLt state at close. */
void gb_gpu_gemm_free(gpu_gemm *gemm);
void gb_gpu_cublas_close(gb_gpu *gpu);

/* timing.c: the cold-sample flush buffer and the clock source, set up at open. */
int gb_gpu_timing_open(gb_gpu *gpu, gb_err *err);
/* Writes, then reads, the flush buffer on the session's stream: whatever was in
 * L2 is evicted (written back now, not during what comes next) and L2 ends full
 * of clean lines, as a cold sample begins (engine/timing.c). */
int gb_gpu_flush_l2(gb_gpu *gpu, gb_err *err);
void gb_gpu_timing_close(gb_gpu *gpu);

#endif
