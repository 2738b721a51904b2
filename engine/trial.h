/*
 * A trial's data: the variant it runs (a cubin and its launch, or a library GEMM),
 * how it ended, where its time went, and its result. The executors (exec/exec.h)
 * take variants and give results; the cache keeps them (cache/record.h); both
 * sides of the worker protocol send them (exec/proto.h).
 */
#ifndef GB_ENGINE_TRIAL_H
#define GB_ENGINE_TRIAL_H

#include "base/error.h"
#include "engine/gemm.h"
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

#endif
