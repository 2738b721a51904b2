/*
 * Trials on several GPUs at once: an asynchronous front over one executor per GPU.
 *
 * The tuner submits a trial to the pool when one of its GPUs is idle and polls for
 * whichever trial ends first; each executor (exec/exec.h) is driven by a thread
 * of its own, so while one GPU checks and times a variant the others do too, and
 * each executor still starts a fresh worker after a fault or a hang and replays
 * its problem. The problem and the reference are set on every executor by the
 * caller, before trials are submitted.
 *
 * The executors stay the caller's; the pool only borrows them, and a trial's
 * variant (its cubin) must stay alive until that trial is polled.
 */
#ifndef GB_EXEC_POOL_H
#define GB_EXEC_POOL_H

#include "base/error.h"
#include "exec/exec.h"

#include <stdint.h>

/* The most GPUs one pool drives. */
#define GB_POOL_MAX 64

typedef struct gb_exec_pool gb_exec_pool;

/* A pool over n executors (1 to GB_POOL_MAX); gpus[i] is the ordinal execs[i]
 * runs on, reported with each of its results. GB_ENOMEM, GB_EINVAL. */
int gb_exec_pool_create(gb_exec *const *execs, const int *gpus, int n, gb_exec_pool **out,
                        gb_err *err);

/* Waits for the trials still running (their results are dropped) and ends the
 * threads. NULL is a no-op. */
void gb_exec_pool_destroy(gb_exec_pool *pool);

/* Executors with no trial, and trials submitted and not yet polled. */
int gb_exec_pool_idle(gb_exec_pool *pool);
int gb_exec_pool_pending(gb_exec_pool *pool);

/* Starts a trial (gb_exec_trial) on an idle executor; tag comes back with its
 * result. v, check and opts are copied (not the cubin). GB_EBUSY when no
 * executor is idle. */
int gb_exec_pool_submit(gb_exec_pool *pool, uint64_t tag, const gb_variant *v,
                        const gb_check_spec *check, const gb_measure_opts *opts, double timeout_s,
                        gb_err *err);

/* Waits for a submitted trial to end and hands it over: its tag, the ordinal of
 * the GPU it ran on, and what gb_exec_trial returned (the status code, with err
 * set when not GB_OK, and the result in out). GB_ENOTFOUND when nothing was
 * submitted. */
int gb_exec_pool_poll(gb_exec_pool *pool, uint64_t *out_tag, int *out_gpu, gb_trial_result *out,
                      int *out_rc, gb_err *err);

#endif
