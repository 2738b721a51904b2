/*
 * Where trials run. The tuner hands an executor a problem (the arguments of one
 * shape), a reference, and variants to try; it gets back one result per variant,
 * with a status, the check and the measurement.
 *
 * An executor drives a backend: the GPU session in this process (gb_exec_local)
 * or, through exec/worker.h, a worker process that owns the GPU. The executor
 * remembers the current problem and reference, so after a backend is lost (a
 * kernel faulted and took the CUDA context with it, or the worker died or hung)
 * it starts a fresh one and replays them: the buffers come from the same seed, so
 * the data are the same.
 */
#ifndef GB_EXEC_EXEC_H
#define GB_EXEC_EXEC_H

#include "base/error.h"
#include "engine/ceilings.h"
#include "engine/trial.h"
#include "engine/device.h"
#include "engine/gemm.h"
#include "engine/gpu.h"
#include "engine/measure.h"
#include "engine/spec.h"

#include <stdbool.h>
#include <stddef.h>

/* What a backend must do. Each call returns GB_OK, or a failure code with err set;
 * GB_EFAULT, GB_ETIMEOUT or GB_EPROTO mean the backend is lost and must be closed. */
typedef struct gb_backend_ops {
    int (*open)(void *self, gb_device_info *out_info, gb_err *err);
    int (*set_problem)(void *self, const gb_arg *args, int n_args, uint64_t seed, gb_err *err);
    int (*reference)(void *self, const gb_variant *ref, gb_err *err);
    /* timeout_s bounds the whole trial where the backend can enforce it (0: none). */
    int (*trial)(void *self, const gb_variant *v, const gb_check_spec *check,
                 const gb_measure_opts *opts, double timeout_s, gb_trial_result *out, gb_err *err);
    /* Measures n variants interleaved (they passed their trials already). */
    int (*race)(void *self, const gb_variant *variants, int n, const gb_measure_opts *opts,
                double timeout_s, gb_measurement *out, gb_err *err);
    /* Measures the device's ceilings (engine/ceilings.h); NULL: the backend cannot. */
    int (*ceilings)(void *self, gb_ceilings *out, gb_err *err);
    void (*close)(void *self);
    void (*destroy)(void *self);
    /* cuBLASLt's rate for a kind of math at M x N x K (gb_gpu_cublas_rate); NULL
     * where the backend cannot measure it. */
    int (*cublas_rate)(void *self, gb_math math, int64_t m, int64_t n, int64_t k,
                       double *out_tflops, gb_err *err);
} gb_backend_ops;

typedef struct gb_exec gb_exec;

/* Wraps a backend (ops and its state, which the executor destroys at the end). */
int gb_exec_create(const gb_backend_ops *ops, void *backend, gb_exec **out, gb_err *err);

/* An executor whose backend is a GPU session in this process: no protection from
 * faults (the process's CUDA is gone after one) or hangs. The worker process
 * (exec/worker.h) serves requests with this backend. */
int gb_exec_local(int ordinal, gb_exec **out, gb_err *err);

/* The in-process backend on its own, for the worker process. */
extern const gb_backend_ops gb_local_backend_ops;
void *gb_local_backend_new(int ordinal);

void gb_exec_destroy(gb_exec *exec);

/* Returns the device the backend runs on, opening the backend the first time; a
 * backend that was open before and has been closed since (stopped, or lost) is
 * not started again for this: the device is the same. */
int gb_exec_device(gb_exec *exec, gb_device_info *out, gb_err *err);

/* Measures the device's ceilings (a few seconds), opening the backend if needed.
 * GB_EINVAL when the backend cannot. */
int gb_exec_ceilings(gb_exec *exec, gb_ceilings *out, gb_err *err);

/* Sets the problem for the following trials (the args are copied). */
int gb_exec_set_problem(gb_exec *exec, const gb_arg *args, int n_args, uint64_t seed, gb_err *err);

/* Runs the reference on the current problem; the variant is copied. */
int gb_exec_reference(gb_exec *exec, const gb_variant *ref, gb_err *err);

/* Runs one trial within timeout_s seconds (0: no limit). Losing the backend is not
 * an error of the run: the result says crashed or timeout with the reason, and the
 * next call starts a fresh backend. out->phases.total_ms is the backend's call, from
 * the request to the answer read (a fresh backend's start is not in it). The return value is
 * non-zero only when the run itself cannot go on (the problem or the reference fail on a fresh
 * backend, no GPU, out of memory) or was interrupted (GB_EINTR). */
int gb_exec_trial(gb_exec *exec, const gb_variant *v, const gb_check_spec *check,
                  const gb_measure_opts *opts, double timeout_s, gb_trial_result *out, gb_err *err);

/* Re-measures n variants of the current problem interleaved, with the full
 * criterion (engine/measure.h), within timeout_s. A lost backend is GB_EFAULT or
 * GB_ETIMEOUT here (the race has no single culprit); the next call starts afresh. */
int gb_exec_race(gb_exec *exec, const gb_variant *variants, int n, const gb_measure_opts *opts,
                 double timeout_s, gb_measurement *out, gb_err *err);

/* Measures cuBLASLt's GEMM rate on the backend's GPU (gb_gpu_cublas_rate: M x N x K
 * for the kind of math, median TFLOP/s in *out_tflops), opening the backend when
 * it is not open; the current problem and reference are left as they were. A
 * lost backend is GB_EFAULT or GB_ETIMEOUT (the next call starts afresh); no
 * cuBLASLt is GB_ENODRIVER; GB_EINVAL for a backend without the operation. */
int gb_exec_cublas_rate(gb_exec *exec, gb_math math, int64_t m, int64_t n, int64_t k,
                        double *out_tflops, gb_err *err);

/* Ends the backend now (the worker process, and with it its CUDA context) but
 * keeps the problem and the reference: the next call that needs the GPU starts a
 * fresh backend and replays them. A process that waits for the GPU's lease
 * (exec/lease.h) calls it first, so that while it waits it has no context on
 * the GPU, where the holder's contention check would count it. */
void gb_exec_stop_backend(gb_exec *exec);

/* Backends started so far (1 for a run in which nothing was lost). */
int gb_exec_backends_started(const gb_exec *exec);

#endif
