/*
 * Where trials run. The tuner hands an executor a problem (the arguments of one
 * shape), a reference, and variants to try; it gets back one result per variant,
 * with a status, the check and the measurement.
 *
 * An executor drives a backend: the GPU session in this process (gb_exec_local)
 * or, through engine/worker.h, a worker process that owns the GPU. The executor
 * remembers the current problem and reference, so after a backend is lost (a
 * kernel faulted and took the CUDA context with it, or the worker died or hung)
 * it starts a fresh one and replays them: the buffers come from the same seed, so
 * the data are the same.
 */
#ifndef GB_ENGINE_EXEC_H
#define GB_ENGINE_EXEC_H

#include "base/error.h"
#include "engine/ceilings.h"
#include "engine/device.h"
#include "engine/gemm.h"
#include "engine/gpu.h"
#include "engine/measure.h"
#include "engine/spec.h"

#include <stdbool.h>
#include <stddef.h>

/* The most variants one race measures (the tuner races at most 8 leaders). */
#define GB_MAX_RACE 16

/* A compiled kernel and how to launch it, or (gemm set) a library GEMM that runs
 * where a kernel would: then there is no cubin (NULL, 0), the launch is ignored
 * and lowered_name only names it ("cublasLtMatmul"). The script's names for it
 * only name its NVTX ranges ("check sgemm BK=8,BM=64", engine/nvtx.h); either may
 * be NULL. */
typedef struct gb_variant {
    const void *cubin;
    size_t cubin_bytes;
    const char *lowered_name;
    gb_launch launch;
    const char *kernel_name; /* "sgemm"; NULL: the lowered name stands in */
    const char *config_text; /* "BK=8,BM=64"; NULL: none */
    const gb_gemm *gemm;     /* a cuBLASLt GEMM (engine/gemm.h) instead of the cubin */
} gb_variant;

typedef enum gb_trial_status {
    GB_TRIAL_OK,
    GB_TRIAL_WRONG,
    GB_TRIAL_COMPILE_ERROR,
    GB_TRIAL_LAUNCH_ERROR,
    GB_TRIAL_CRASHED,
    GB_TRIAL_TIMEOUT,
    GB_TRIAL_SKIPPED, /* compiled, not run: spills under --no-spills, or over the target's limits */
    GB_TRIAL_STATUS_COUNT,
} gb_trial_status;

/* "ok", "wrong", "compile_error", "launch_error", "crashed", "timeout", "skipped". */
const char *gb_trial_status_name(gb_trial_status status);
int gb_trial_status_parse(const char *name, gb_trial_status *out);

/* Where one trial's wall time went, in milliseconds. The GPU session times its
 * phases (a phase a trial did not reach is 0); the executor times the whole call,
 * so what the phases leave over is the trial's overhead: in the session, the looks
 * at other processes, the sampler's set-up and the unload (session_ms less the
 * phases); outside it, the round trip to the worker process, with the encoding
 * and decoding of both messages (total_ms less session_ms). */
typedef struct gb_trial_phases {
    double load_ms;    /* loading the cubin as a module and finding the kernel */
    double check_ms;   /* inputs restored, outputs poisoned, one launch, the comparison */
    double warmup_ms;  /* the measurement's warm-up (gb_measurement.warmup_ms) */
    double sample_ms;  /* its samples (gb_measurement.wall_ms): the kernel and, per
                          sample, the L2 flush, the wait for the events, the clock */
    double kernel_ms;  /* of sample_ms, the kernel itself: the samples' sum */
    double timer_ms;   /* of the warm-up and sample_ms, reading the timer (CUPTI's records) */
    double n_samples;  /* samples taken: warm-up, kept and set apart (what timer_ms is over) */
    double session_ms; /* the whole trial in the GPU session, from load to unload */
    double total_ms;   /* the whole trial as the executor saw it (not on the wire) */
} gb_trial_phases;

/* The wire description (base/wire.h; gb_wire_trial_phases); total_ms stays with
 * the executor that measured it. */
#define GB_TRIAL_PHASES_WIRE(X)                                                                    \
    X(load_ms, DOUBLE, "load_ms", GB_WIRE_RANGE(0, INFINITY))                                      \
    X(check_ms, DOUBLE, "check_ms", GB_WIRE_RANGE(0, INFINITY))                                    \
    X(warmup_ms, DOUBLE, "warmup_ms", GB_WIRE_RANGE(0, INFINITY))                                  \
    X(sample_ms, DOUBLE, "sample_ms", GB_WIRE_RANGE(0, INFINITY))                                  \
    X(kernel_ms, DOUBLE, "kernel_ms", GB_WIRE_RANGE(0, INFINITY))                                  \
    X(timer_ms, DOUBLE, "timer_ms", GB_WIRE_RANGE(0, INFINITY), .flags = GB_WIRE_OPTIONAL)         \
    X(n_samples, DOUBLE, "n_samples", GB_WIRE_RANGE(0, INFINITY), .flags = GB_WIRE_OPTIONAL)       \
    X(session_ms, DOUBLE, "session_ms", GB_WIRE_RANGE(0, INFINITY))

/* Adds each phase of t to sum (the tuner's totals over a run). */
void gb_trial_phases_add(gb_trial_phases *sum, const gb_trial_phases *t);

typedef struct gb_trial_result {
    gb_trial_status status;
    char reason[1024]; /* why it is not ok: the CUDA error, the check's figures... */
    gb_check_result check;
    gb_measurement measurement; /* only for ok trials */
    gb_trial_phases phases;     /* for every trial, whatever its status */
    int gpu; /* the ordinal of the GPU it ran on (set by the executor; not on the wire) */
} gb_trial_result;

/* The wire description (base/wire.h; gb_wire_trial_result): the measurement is
 * sent for ok trials only, and an ok trial must have one. */
#define GB_TRIAL_RESULT_WIRE(X)                                                                    \
    X(status, ENUM, "status", .enumeration = &gb_wire_enum_trial_status)                           \
    X(reason, CHARS, "reason")                                                                     \
    X(check, STRUCT, "check", .type = &gb_wire_check_result)                                       \
    X(measurement, STRUCT, "measurement", .type = &gb_wire_measurement, .when = gb_wire_trial_ok)  \
    X(phases, STRUCT, "phases", .type = &gb_wire_trial_phases, .flags = GB_WIRE_OPTIONAL)

void gb_trial_result_free(gb_trial_result *result);

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
 * (engine/worker.h) serves requests with this backend. */
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
 * (engine/lease.h) calls it first, so that while it waits it has no context on
 * the GPU, where the holder's contention check would count it. */
void gb_exec_stop_backend(gb_exec *exec);

/* Backends started so far (1 for a run in which nothing was lost). */
int gb_exec_backends_started(const gb_exec *exec);

#endif
