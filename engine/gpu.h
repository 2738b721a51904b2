/*
 * A GPU session: one device, its primary context, one stream, the engine's own
 * kernels, and the argument buffers of the problem being tuned.
 *
 * The flow for one shape is: set_problem (allocate and fill the arguments from a
 * seed), run_reference (the reference kernel writes outputs of its own), then for
 * each variant: load, verify (restore inputs, poison outputs, launch once, compare
 * with the reference) and measure. Every buffer is filled on the GPU from
 * (seed, argument, index), so a fresh session rebuilds exactly the same data.
 *
 * After a kernel faults (GB_EFAULT) the CUDA context is unusable for good; the
 * session refuses further work with GB_EFAULT and must be closed. That is why the
 * tuner runs sessions in a worker process (exec/worker.h).
 */
#ifndef GB_ENGINE_GPU_H
#define GB_ENGINE_GPU_H

#include "base/error.h"
#include "engine/device.h"
#include "engine/gemm.h"
#include "engine/measure.h"
#include "engine/roofs.h"
#include "engine/spec.h"
#include "engine/stats.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct gb_gpu gb_gpu;
typedef struct gb_gpu_kernel gb_gpu_kernel;

/* Opens device ordinal: loads the driver, retains the primary context, creates the
 * stream and events, compiles and loads the engine's kernels. */
int gb_gpu_open(int ordinal, gb_gpu **out, gb_err *err);

/* Frees everything the session holds; NULL is a no-op. */
void gb_gpu_close(gb_gpu *gpu);

const gb_device_info *gb_gpu_device(const gb_gpu *gpu);

/* Allocates the arguments of one problem and fills them; frees the previous
 * problem's buffers. Checked tensors get a second buffer for the reference,
 * filled like the first, so an in-place kernel is checked too. */
int gb_gpu_set_problem(gb_gpu *gpu, const gb_arg *args, int n_args, uint64_t seed, gb_err *err);

/* Copies argument pos (0-based, a tensor) of the current problem to host memory;
 * reference selects the reference's copy of an output. At most bytes are copied. */
int gb_gpu_read_arg(gb_gpu *gpu, int pos, bool reference, void *host, size_t bytes, gb_err *err);

/* Loads a cubin and looks up the kernel by its lowered name; raises the kernel's
 * dynamic shared memory limit to smem_bytes when that is above the 48 KiB default. */
int gb_gpu_load(gb_gpu *gpu, const void *cubin, size_t cubin_bytes, const char *lowered_name,
                uint32_t smem_bytes, gb_gpu_kernel **out, gb_err *err);
void gb_gpu_unload(gb_gpu *gpu, gb_gpu_kernel *kernel);

/* Makes a kernel of a library GEMM (engine/gemm.h): cuBLASLt's matmul over the
 * current problem's tensors, which the description's positions name. It is
 * launched like any kernel (gb_gpu_run_reference, gb_gpu_verify, gb_gpu_measure in
 * both modes, gb_gpu_race; the launch geometry is ignored), always with the
 * algorithm cuBLASLt's heuristic ranked first when it was loaded. The first GEMM
 * of the session loads cuBLASLt (engine/cublas.h) and makes its handle and a
 * 32 MiB workspace. Errors: GB_EINVAL when the description is invalid or does not
 * match the problem's tensors; GB_ENODRIVER with one sentence when cuBLASLt is
 * not installed; GB_ELAUNCH when cuBLASLt has no algorithm for it on this GPU
 * (the message says which GEMM, and what fp8 needs). */
int gb_gpu_load_gemm(gb_gpu *gpu, const gb_gemm *gemm, gb_gpu_kernel **out, gb_err *err);

/* cuBLASLt's GEMM rate on this GPU for a kind of math, in TFLOP/s: an M x N x K
 * GEMM on operands of its own (filled like randn tensors; the problem's are left
 * alone), summed in fp32 (tf32 for GB_MATH_TF32), f32 operands for fp32 and tf32,
 * f16 or bf16 ones and result for fp16 and bf16, fp8_e4m3 A and B to a bf16 result
 * for fp8 (A [M, K], B [N, K]). After a warm-up of about 100 ms, 15 samples of as
 * many back-to-back launches as last 2 ms are timed with events (L2 not flushed);
 * *out_tflops is 2 M N K over the median launch. Everything it allocates is freed.
 * GB_EINVAL for fp64 and int8 or bad sizes; else as gb_gpu_load_gemm. */
int gb_gpu_cublas_rate(gb_gpu *gpu, gb_math math, int64_t m, int64_t n, int64_t k,
                       double *out_tflops, gb_err *err);

/* Registers used per thread, as the loaded module reports (-1 if unknown). */
int gb_gpu_kernel_registers(const gb_gpu_kernel *kernel);

/* Runs the reference once on the current problem, on its own copies of the checked
 * tensors. Until it has run, verify only looks for NaN in the checked outputs. */
int gb_gpu_run_reference(gb_gpu *gpu, gb_gpu_kernel *ref, const gb_launch *launch, gb_err *err);

/* Restores the inputs, poisons the outputs, launches the kernel once and compares
 * the checked outputs with the reference's. A launch that is refused returns
 * GB_ELAUNCH; a fault GB_EFAULT; a wrong answer is GB_OK with out->n_bad > 0. */
int gb_gpu_verify(gb_gpu *gpu, gb_gpu_kernel *kernel, const gb_launch *launch,
                  const gb_check_spec *check, gb_check_result *out, gb_err *err);

/* Times the kernel on the current problem with the method of engine/measure.h:
 * cold (L2 flushed before each sample by writing and then reading a buffer twice
 * the size of L2, outside the timed events; one launch between two events) or
 * hot (a CUDA graph of K back-to-back launches, K chosen so one replay lasts at
 * least opts->hot_min_ms; time divided by K). Every sample also gets the SM clock
 * (from NVML, or else from a probe kernel comparing clock64 with %globaltimer) and
 * whether NVML reported throttling; with NVML, the measurement is contended when
 * other processes had a context on the GPU before or after the samples. */
int gb_gpu_measure(gb_gpu *gpu, gb_gpu_kernel *kernel, const gb_launch *launch,
                   const gb_measure_opts *opts, gb_measurement *out, gb_err *err);

/* Measures n loaded kernels interleaved (gb_measure_race); out has n entries. */
int gb_gpu_race(gb_gpu *gpu, gb_gpu_kernel *const *kernels, const gb_launch *launches, int n,
                const gb_measure_opts *opts, gb_measurement *out, gb_err *err);

/* Where the per-sample clock comes from: "nvml" or "probe". */
const char *gb_gpu_clock_source(const gb_gpu *gpu);

/* What times the samples by default: "cupti" (CUPTI's kernel records) or
 * "events"; *out_note (may be NULL) is then why not CUPTI ("CUPTI is
 * unavailable: ..."), "" with CUPTI. */
const char *gb_gpu_timer(const gb_gpu *gpu, const char **out_note);

#endif
