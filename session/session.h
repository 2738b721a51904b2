/*
 * A tuning session: what one run of gpubench-tune (or any other front end) owns
 * across its tuning calls. It opens the GPU the first time one is needed (and,
 * with --gpus, the others), measures the device's ceilings once and keeps them,
 * takes the GPU's lease for that, hands every call's results to the outputs and
 * ends them, and keeps the list of what was tuned (for --export-header).
 * gb_session_tune is the one way to run a tune; the Lua binding (lua/binding.h)
 * only translates a script's calls into it, and the C API (api/) a program's.
 * The other front ends go through it too: `gpubench report` shows a saved run
 * through a session's outputs (gb_session_show), and `gpubench replay` runs the
 * session's search against a recorded table instead of the GPU
 * (gb_session_replay), from a file or the session's cache.
 *
 * Without a GPU (no driver, no device) a session switches to compiling only and
 * says so once, unless require_gpu: then that is the call's error.
 */
#ifndef GB_SESSION_SESSION_H
#define GB_SESSION_SESSION_H

#include "base/error.h"
#include "engine/ceilings.h"
#include "exec/exec.h"
#include "exec/lease.h"
#include "exec/pool.h"
#include "report/output.h"
#include "report/result.h"
#include "tuner/replay.h"
#include "tuner/tune.h"

#include <stdbool.h>

/* The GPU's lease for a session (a gpubench-tune process, a C API session).
 * The first run that must measure a shape takes it through the tuner's claim
 * (gb_session_claim), just before it sets the shape up on the GPU, and the
 * session holds it until it closes, after its workers are gone: so a process
 * waiting for the lease, which ends its own worker first, and a process holding
 * it never both have a context on the GPU. */
typedef struct gb_session_lease {
    double wait_s;      /* how long to wait for another process's lease: < 0 for ever, 0 not */
    gb_lease *held;     /* NULL until taken */
    gb_lease *more[64]; /* with several GPUs (gb_tuner_opts.execs), the others' leases */
    int n_more;
    bool broken;     /* the lease could not be taken (its directory is unusable): measuring
                        goes on without it, after one warning */
    double waited_s; /* spent waiting for it, every run of the session together */
} gb_session_lease;

/* A kernel that a session tuned (benchmarks do not count), and on which device. */
typedef struct gb_session_tuned {
    char *kernel;
    char device[320]; /* device fingerprint; "" when it ran without a GPU */
} gb_session_tuned;

typedef struct gb_session {
    /* Set by the front end before the first call (gb_session_init sets defaults). */
    gb_tuner_opts tuner;    /* cache, arch, jobs, force, compile_only, ... (exec set lazily) */
    gb_session_lease lease; /* the GPU's lease (tuner.claim takes it); wait_s is the front end's */
    /* Starts the executor the first time the GPU is needed (gb_session_use_workers
     * sets worker processes). */
    int (*open_exec)(void *ctx, gb_exec **out, gb_err *err);
    void *open_exec_ctx;
    /* --gpus: trials run on these GPUs at once, gpus[0] being the one open_exec
     * opens; open_exec_on (same ctx) opens the others when the first is opened.
     * n_gpus -1: every GPU the driver sees, from gpus[0] = 0; 0 or 1: open_exec's
     * alone. */
    int n_gpus;
    int gpus[GB_POOL_MAX];
    int (*open_exec_on)(void *ctx, int ordinal, gb_exec **out, gb_err *err);
    bool require_gpu; /* no GPU is an error, not a switch to compiling only */
    /* Where each call's results go (report/output.h; the front end chooses the
     * outputs, gb_session_begin_outputs gives them to the session); NULL for
     * nowhere. The session completes context (the device, the compile target) as
     * the run finds them. */
    gb_output *output;
    gb_run_context *context;
    /* Filled as the session runs. */
    gb_exec *execs[GB_POOL_MAX]; /* the opened executors, execs[0] being tuner.exec */
    int n_tuned;                 /* tuning calls that completed */
    int n_shapes_failed;         /* shapes left with no valid variant */
    bool gpu_missing;            /* timing was skipped for want of a GPU */
    gb_err gpu_missing_err;
    bool ceilings_sought; /* looked for once */
    bool has_ceilings;    /* the device's measured ceilings, cached or measured now */
    gb_ceilings ceilings;
    gb_session_tuned *tuned; /* each kernel once per device */
    int n_tuned_kernels;
    char *worker_exe; /* gb_session_use_workers */
    int worker_ordinal;
} gb_session;

/* The defaults every front end starts from: a log on stderr, seed 1, the default
 * measurement, a compile thread per core, and the GPU's lease (waited for up to
 * an hour) taken before measuring. */
void gb_session_init(gb_session *s);

/* The tuner's claim on the GPU (tuner/tune.h) as the session's lease;
 * gb_session_init sets it as tuner.claim. */
gb_gpu_claim gb_session_claim(gb_session *s);

/* Releases the lease (every GPU's); NULL is a no-op. gb_session_close calls it. */
void gb_session_lease_end(gb_session_lease *lease);

/* Trials run in worker processes (exec/worker.h) started from exe with
 * "--worker": the first on GPU ordinal, with --gpus one per GPU. exe is copied. */
int gb_session_use_workers(gb_session *s, const char *exe, int ordinal, gb_err *err);

/* The GPU, opened the first time (with the others of --gpus, the ceilings and
 * the context's device); *info (may be NULL) is its device. GB_ENOGPU when the
 * session compiles only: --compile-only, or no GPU and not require_gpu (then
 * gpu_missing and gpu_missing_err say why); another code when opening failed. */
int gb_session_gpu(gb_session *s, gb_device_info *info, gb_err *err);

/* Tunes (or, with a fixed configuration, benchmarks) kernel over the request's
 * shapes into out (the caller's: gb_tune_result_free): the request is checked
 * before the GPU is touched, the GPU opened if it can be (else the call compiles
 * only), and the results counted, noted and handed to the outputs (an output's
 * failure is a warning on the log). Returns gb_tune's code; on GB_EINTR, out holds
 * what finished and the outputs have it. */
int gb_session_tune(gb_session *s, const gb_kernel_def *kernel, const gb_tune_request *req,
                    gb_tune_result *out, gb_err *err);

/* ---- the outputs (session/outputs.c) ------------------------------------------ */

/* The session takes output (report/output.h; it ends and destroys it) and begins
 * it with ctx, which the session completes as the run finds the device and the
 * compile target and which must outlive the outputs. Returns begin's error (the
 * output is the session's even then). */
int gb_session_begin_outputs(gb_session *s, gb_output *output, gb_run_context *ctx, gb_err *err);

/* Hands one call's shapes to the outputs, as gb_session_tune does when a call
 * ends; an output's failure is a warning on the log. */
void gb_session_report_call(gb_session *s, const gb_kernel_def *def, const gb_tune_result *r);

/* A saved run (report/result.h: gb_report_load_json) given to the outputs as its
 * calls came when it ran: what `gpubench report` does, with the outputs begun on
 * the saved run's context. Returns the first output's error; the others still
 * get every entry. */
int gb_session_show(gb_session *s, const gb_report *saved, gb_err *err);

/* Ends the outputs (the files are written now) and destroys them; returns the
 * first error, which names the file. gb_session_close leaves them alone: the Lua
 * binding closes the session with each script's state, and a front end may run
 * several scripts into the same outputs. */
int gb_session_end_outputs(gb_session *s, gb_err *err);

/* ---- replay (session/replay.c) ------------------------------------------------- */

/* The table of one kernel at one shape on one device from the session's cache
 * (tuner/replay.h: gb_replay_load_cache; sel names the kernel). GB_EINVAL when the
 * session has no cache. */
int gb_session_replay_table(gb_session *s, const gb_replay_select *sel, gb_replay_table *out,
                            gb_err *err);

/* What the session's search would have done against a recorded table instead of
 * the GPU: the session's strategy (tuner.strategy; NULL: every kind, in the
 * registry's order), each run opts->n_seeds times from the session's seed
 * (tuner.seed; opts->first_seed is ignored). out has room for gb_strategy_n_kinds
 * results; *out_n says how many were filled (free each with
 * gb_replay_stats_free); *out_best is the best of them (gb_replay_compare).
 * GB_EINVAL for an unknown strategy; a strategy's error. */
int gb_session_replay(gb_session *s, const gb_replay_table *t, const gb_replay_opts *opts,
                      gb_replay_stats *out, int *out_n, int *out_best, gb_err *err);

/* Ends the executors the session opened, then releases the GPU's lease (so a
 * process waiting for it never meets this one's context on the GPU), and frees
 * its list of tuned kernels; the outputs (gb_session_end_outputs), the cache and
 * the context stay. The session may tune again: it opens the GPU anew. */
void gb_session_close(gb_session *s);

#endif
