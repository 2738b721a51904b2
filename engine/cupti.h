/*
 * CUPTI, loaded at run time: the GPU's own start and end stamps of the kernels one
 * sample launched.
 *
 * CUDA events around a launch also time the launch's way in and out: from the
 * start event to the first block, and from the last block to the stop event. For a
 * 5 µs kernel that is about 1 µs, 20% of the figure. CUPTI's kernel activity
 * records (CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) carry the start and end the GPU
 * stamped on the kernel itself, so the measurement uses them where CUPTI works
 * (engine/timing.c) and events where it does not.
 *
 * How a sample's records are found: between gb_cupti_begin and gb_cupti_end, every
 * CUDA driver or runtime call this thread makes is noted by its correlation id
 * (CUPTI's API callbacks); after the GPU finished, gb_cupti_collect flushes CUPTI's
 * buffers and sums the durations of the kernel records whose correlation id is one
 * of those. Every kernel of a graph launch carries the id of cuGraphLaunch, so a
 * hot sample finds its K records the same way. Records of earlier samples that
 * arrive late never match a later sample: correlation ids are never reused.
 *
 * Like the driver and NVML, CUPTI is never linked: the first gb_cupti_open()
 * dlopens libcupti.so.13 (GPUBENCH_LIBCUPTI may name another file, and the CUDA
 * toolkit's own folders are tried after the loader's path) and resolves an X-macro
 * table. It is optional: a missing library, or a tool that already holds CUPTI
 * (Nsight Compute, Nsight Systems, a debugger), gives GB_ENODRIVER with one
 * sentence, and timing falls back to events. There is one tracer per process:
 * CUPTI allows a single subscriber.
 */
#ifndef GB_ENGINE_CUPTI_H
#define GB_ENGINE_CUPTI_H

#include "base/error.h"

typedef struct gb_cupti gb_cupti;

/* Loads CUPTI (once, thread-safe), subscribes to the API callbacks and turns on
 * kernel records. Opens are counted: the tracer stays on until the last close.
 * On failure *out is NULL and err says why in one sentence:
 *   GB_ENODRIVER  the library is missing or lacks an entry point, or CUPTI refused
 *                 (another tool holds it: the message names CUPTI's error)
 *   GB_ENOMEM */
int gb_cupti_open(gb_cupti **out, gb_err *err);

/* Closes a tracer from gb_cupti_open; the last close turns the records off and
 * unsubscribes. NULL is a no-op. */
void gb_cupti_close(gb_cupti *c);

/* Starts a sample: the CUDA calls this thread makes until gb_cupti_end are its
 * launches. Forgets an earlier sample's ids that were never collected. */
void gb_cupti_begin(gb_cupti *c);
void gb_cupti_end(gb_cupti *c);

/* After the sample's work finished on the GPU (its stream or event synchronised):
 * flushes CUPTI's buffers and returns in *out_ms the summed durations of the
 * sample's kernel records divided by launches (the launches the sample made: K
 * for a graph of K launches). *kernels_per_launch says how many records one
 * launch makes (a library GEMM may run two kernels); 0 learns it from this
 * sample. GB_ENOTFOUND when records are missing (CUPTI dropped them, or they had
 * no timestamps) or their count is not kernels_per_launch x launches: the sample
 * is lost and should be taken again; *out_ms is then 0. */
int gb_cupti_collect(gb_cupti *c, int launches, int *kernels_per_launch, double *out_ms,
                     gb_err *err);

#endif
