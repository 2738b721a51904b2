/*
 * Compiling ahead of the GPU: a pool of threads runs NVRTC while the GPU times
 * earlier variants, and every compile goes through the cache's cubin store, keyed
 * by (source closure, name expression, options, target, NVRTC version), so a
 * variant is compiled once per machine, not once per run or per shape.
 *
 * The tuner creates a job per variant, submits it, and later waits for it; jobs
 * finish in any order. A job that was not submitted (or a compiler with zero
 * threads) is compiled on the thread that waits for it.
 */
#ifndef GB_TUNER_COMPILER_H
#define GB_TUNER_COMPILER_H

#include "base/error.h"
#include "cache/cache.h"
#include "cache/key.h"
#include "engine/nvrtc.h"

#include <stdbool.h>

typedef struct gb_compiler gb_compiler;
typedef struct gb_compile_job gb_compile_job;

/* cache may be NULL (no persistence); n_threads 0 compiles on the waiting thread. */
int gb_compiler_create(gb_cache *cache, int n_threads, gb_compiler **out, gb_err *err);
/* Waits for running compiles, drops queued ones, joins the threads. NULL is a no-op. */
void gb_compiler_destroy(gb_compiler *compiler);

/* A job copies everything req points to; source_fp is the source closure's hash. */
int gb_compile_job_create(const gb_compile_req *req, const gb_key *source_fp, gb_compile_job **out,
                          gb_err *err);
/* Frees a job that is not queued (never submitted, or waited for). */
void gb_compile_job_free(gb_compile_job *job);

void gb_compiler_submit(gb_compiler *compiler, gb_compile_job *job);

/* Waits for the job. Returns its status: GB_OK with *out the result (owned by the
 * job), or GB_ECOMPILE / GB_ENVRTC with err set and (*out)->log holding the log. */
int gb_compiler_wait(gb_compiler *compiler, gb_compile_job *job, const gb_compile_out **out,
                     gb_err *err);

/* The job's cubin key: (source closure, names, options, target, NVRTC version). */
const gb_key *gb_compile_job_key(const gb_compile_job *job);

/* Whether the job's cubin came from the cache rather than NVRTC. */
bool gb_compile_job_cached(const gb_compile_job *job);

/* The first cache write that failed during this compiler's life (code 0 if none),
 * so the tuner can warn once instead of once per variant. */
const gb_err *gb_compiler_cache_error(const gb_compiler *compiler);

#endif
