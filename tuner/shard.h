/*
 * Sharding: one tuning run spread over many processes, each on its own host or
 * GPU, each tuning a fixed part of every kernel's space.
 *
 * Shard i of n owns the configurations whose ordinal in the space (the place of
 * the configuration in the cartesian product of the parameter lists, which is the
 * same for every process that runs the same script) hashes to i modulo n. The
 * hash spreads neighbouring configurations over the shards, so a space whose
 * constraints reject whole regions still gives each shard about its share. Every
 * configuration belongs to exactly one shard, whatever the strategy, and whether
 * the run compiles only or times.
 *
 * A shard's best is the fastest of its part; `gpubench cache merge` folds the
 * shards' caches together and keeps the fastest of their bests (cache/record.h,
 * gb_best_record_combine), so once every shard is in, the cache says what one
 * unsharded run would have.
 *
 * The index and count come from --shard i/n, or from the scheduler that started
 * the process (--shard auto): a Slurm job array, an MPI launcher, srun's tasks, or
 * a Kubernetes indexed Job.
 */
#ifndef GB_TUNER_SHARD_H
#define GB_TUNER_SHARD_H

#include "base/error.h"

#include <stdbool.h>
#include <stdint.h>

/* The most shards a run may be split into. */
#define GB_SHARD_MAX 4096

typedef struct gb_shard {
    int index; /* 0 .. count-1 */
    int count; /* 0 or 1: not sharded */
} gb_shard;

/* Whether the shard owns the configuration at ordinal (always, unsharded). */
bool gb_shard_owns(const gb_shard *shard, uint64_t ordinal);

/* Reads "i/n" (0 <= i < n <= GB_SHARD_MAX). GB_EINVAL with a sentence naming
 * the text otherwise. */
int gb_shard_parse(const char *text, gb_shard *out, gb_err *err);

/* Reads the shard from the scheduler's environment, through getenv_fn (getenv,
 * or a test's table), in this order:
 *   - a Slurm job array: SLURM_ARRAY_TASK_ID of SLURM_ARRAY_TASK_COUNT tasks
 *     (with SLURM_ARRAY_TASK_MIN and SLURM_ARRAY_TASK_STEP: --array=1-8 or
 *     0-14:2 number their tasks from 0 here too);
 *   - an MPI launcher: OMPI_COMM_WORLD_RANK/SIZE (Open MPI), PMI_RANK/PMI_SIZE
 *     (MPICH, Intel MPI), MV2_COMM_WORLD_RANK/SIZE (MVAPICH);
 *   - srun's tasks: SLURM_PROCID of SLURM_NTASKS;
 *   - a Kubernetes indexed Job: JOB_COMPLETION_INDEX, of GPUBENCH_SHARD_COUNT
 *     (Kubernetes does not tell a pod the Job's completions: set it to them).
 * *out_source names the variable the index came from. GB_EINVAL with a sentence
 * when none is set, or when what is set does not make a shard. */
int gb_shard_from_env(char *(*getenv_fn)(const char *name), gb_shard *out, const char **out_source,
                      gb_err *err);

#endif
