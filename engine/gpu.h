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
 * tuner runs sessions in a worker process (engine/worker.h).
 */
#ifndef GB_ENGINE_GPU_H
#define GB_ENGINE_GPU_H

#include "base/error.h"
#include "engine/device.h"
#include "engine/measure.h"
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

#endif
