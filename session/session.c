/* A tuning session (session/session.h): the GPU opened once, its ceilings, and
 * the list of what was tuned (the outputs are session/outputs.c, replay
 * session/replay.c). */
#include "session/session.h"

#include "cache/ceilings.h"
#include "exec/lease.h"
#include "exec/worker.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DEFAULT_LEASE_WAIT_S 3600.0 /* an hour: longer than most tuning runs */

void gb_session_init(gb_session *s)
{
    memset(s, 0, sizeof *s);
    s->lease.wait_s = DEFAULT_LEASE_WAIT_S;
    s->tuner.claim = gb_session_claim(s);
    s->tuner.log = stderr;
    s->tuner.seed = 1;
    s->tuner.measure = gb_measure_defaults();
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    s->tuner.jobs = cpus > 0 ? (int)cpus : 1;
}

/* ---- the workers ---------------------------------------------------------- */

static int open_worker_on(void *ctx, int ordinal, gb_exec **out, gb_err *err)
{
    gb_session *s = ctx;
    gb_worker_opts opts = {.exe = s->worker_exe, .ordinal = ordinal};
    return gb_exec_worker(&opts, out, err);
}

static int open_worker(void *ctx, gb_exec **out, gb_err *err)
{
    return open_worker_on(ctx, ((gb_session *)ctx)->worker_ordinal, out, err);
}

int gb_session_use_workers(gb_session *s, const char *exe, int ordinal, gb_err *err)
{
    char *copy = strdup(exe);
    if (!copy) return gb_err_set(err, GB_ENOMEM, "out of memory");
    free(s->worker_exe);
    s->worker_exe = copy;
    s->worker_ordinal = ordinal;
    s->open_exec = open_worker;
    s->open_exec_on = open_worker_on;
    s->open_exec_ctx = s;
    return GB_OK;
}

/* ---- the GPU -------------------------------------------------------------- */

/* Measuring needs the GPU to itself: the session's lease, taken now if it is free
 * (and then kept, as tuning keeps it). GB_EBUSY when another process holds it. */
static int lease_for_ceilings(gb_session *s, const gb_device_info *info, gb_err *err)
{
    gb_session_lease *l = &s->lease;
    if (!s->tuner.claim.take || l->broken || l->held) return GB_OK;
    char name[320];
    gb_lease_name(info, name, sizeof name);
    int rc = gb_lease_acquire_as(name, 0, "measuring the ceilings", NULL, &l->held, err);
    return rc == GB_EBUSY ? rc : GB_OK; /* an unusable lease directory: measure anyway */
}

/* The device's measured ceilings: from the cache, or measured now (once per GPU,
 * a few seconds, holding the GPU's lease) and stored. Without a cache they are not
 * measured; a backend that cannot measure them (a test's fake) leaves them out
 * quietly; with the GPU busy they wait for a later run. */
static void find_ceilings(gb_session *s, const gb_device_info *info)
{
    gb_err err = {0};
    gb_cache *cache = s->tuner.cache;
    if (!cache || s->ceilings_sought) return;
    s->ceilings_sought = true;
    int rc = gb_cache_get_ceilings(cache, info, &s->ceilings, &err);
    if (rc == GB_ENOTFOUND) {
        if (s->tuner.log)
            fprintf(s->tuner.log,
                    "gpubench: measuring the ceilings of %s once (copy bandwidth, cuBLAS GEMM "
                    "rates); the cache keeps them\n",
                    info->name);
        rc = lease_for_ceilings(s, info, &err);
        if (rc == GB_OK) rc = gb_exec_ceilings(s->tuner.exec, &s->ceilings, &err);
        if (rc == GB_OK) rc = gb_cache_put_ceilings(cache, info, &s->ceilings, &err);
        if (rc == GB_EINVAL) return;
    }
    if (rc && s->tuner.log)
        fprintf(s->tuner.log, "gpubench: no measured ceilings (%% ceil): %s\n", err.msg);
    s->has_ceilings = rc == GB_OK;
}

/* The run's context learns the device, and its ceilings, the first time the GPU
 * is opened. */
static void note_device(gb_session *s, const gb_device_info *info)
{
    gb_run_context *ctx = s->context;
    if (ctx && ctx->has_device) return;
    find_ceilings(s, info);
    if (!ctx) return;
    ctx->has_device = true;
    ctx->device = *info;
    gb_roofs_peaks(info, &ctx->roofs);
    if (s->has_ceilings) gb_ceilings_to_roofs(&s->ceilings, &ctx->roofs);
}

/* --gpus: the other GPUs' executors, once the first is open (its device says how
 * many the driver sees, for "all"). */
static int open_more_gpus(gb_session *s, const gb_device_info *first, gb_err *err)
{
    if (s->n_gpus == -1) {
        s->n_gpus = first->device_count < GB_POOL_MAX ? first->device_count : GB_POOL_MAX;
        for (int i = 0; i < s->n_gpus; i++)
            s->gpus[i] = i;
    }
    if (s->n_gpus <= 1 || s->tuner.n_execs > 1) return GB_OK;
    s->execs[0] = s->tuner.exec;
    for (int i = 1; i < s->n_gpus; i++) {
        if (s->gpus[i] >= first->device_count)
            return gb_err_set(err, GB_EINVAL, "--gpus: no GPU with ordinal %d (the driver sees %d)",
                              s->gpus[i], first->device_count);
        int rc = s->open_exec_on(s->open_exec_ctx, s->gpus[i], &s->execs[i], err);
        if (rc) return rc;
        s->tuner.n_execs = i + 1;
    }
    s->tuner.execs = s->execs;
    s->tuner.gpus = s->gpus;
    return GB_OK;
}

/* Opens the executor the first time; without a GPU, switches the session to
 * compiling only (or fails, with require_gpu). */
int gb_session_gpu(gb_session *s, gb_device_info *info, gb_err *err)
{
    if (s->gpu_missing || s->tuner.compile_only) return GB_ENOGPU;
    int rc = GB_OK;
    if (!s->tuner.exec) rc = s->open_exec(s->open_exec_ctx, &s->tuner.exec, err);
    gb_device_info scratch;
    if (rc == GB_OK) rc = gb_exec_device(s->tuner.exec, info ? info : &scratch, err);
    if (rc == GB_OK) rc = open_more_gpus(s, info ? info : &scratch, err);
    if (rc == GB_OK) note_device(s, info ? info : &scratch);
    if ((rc == GB_ENODRIVER || rc == GB_ENOGPU) && !s->require_gpu) {
        s->gpu_missing = true;
        gb_err_copy(&s->gpu_missing_err, err);
        if (s->tuner.log)
            fprintf(s->tuner.log, "gpubench: %s; compiling only, timing needs a GPU\n", err->msg);
        return GB_ENOGPU;
    }
    return rc;
}

static void tally(gb_session *s, const gb_tuner_opts *opts, const gb_tune_result *result)
{
    s->n_tuned++;
    for (int i = 0; i < result->n_shapes; i++) {
        const gb_shape_result *r = &result->shapes[i];
        if (opts->compile_only
                ? r->failure || (r->n_status[GB_TRIAL_COMPILE_ERROR] > 0 && r->n_compiled == 0)
                : !r->has_best)
            s->n_shapes_failed++;
    }
}

/* Remembers a kernel that was tuned, once per device, for --export-header. */
static int note_tuned(gb_session *s, const char *kernel, const gb_tune_result *result, gb_err *err)
{
    if (result->bench) return GB_OK;
    for (int i = 0; i < s->n_tuned_kernels; i++)
        if (!strcmp(s->tuned[i].kernel, kernel) && !strcmp(s->tuned[i].device, result->device))
            return GB_OK;
    gb_session_tuned *grown = realloc(s->tuned, (size_t)(s->n_tuned_kernels + 1) * sizeof *grown);
    if (!grown) return gb_err_set(err, GB_ENOMEM, "out of memory");
    s->tuned = grown;
    gb_session_tuned *t = &grown[s->n_tuned_kernels];
    if (!(t->kernel = strdup(kernel))) return gb_err_set(err, GB_ENOMEM, "out of memory");
    gb_strlcpy(t->device, result->device, sizeof t->device);
    s->n_tuned_kernels++;
    return GB_OK;
}

int gb_session_tune(gb_session *s, const gb_kernel_def *kernel, const gb_tune_request *req,
                    gb_tune_result *out, gb_err *err)
{
    memset(out, 0, sizeof *out);
    int rc = gb_tune_check(kernel, req, err); /* before the GPU is touched */
    if (rc == GB_OK) {
        rc = gb_session_gpu(s, NULL, err);
        if (rc == GB_ENOGPU && (s->gpu_missing || s->tuner.compile_only)) rc = GB_OK;
    }
    gb_tuner_opts opts = s->tuner;
    opts.compile_only = opts.compile_only || s->gpu_missing;
    if (opts.compile_only) opts.exec = NULL;
    if (rc == GB_OK) rc = gb_tune(&opts, kernel, req, out, err);
    if (rc == GB_OK || rc == GB_EINTR) { /* an interrupted run shows what finished */
        tally(s, &opts, out);
        if (rc == GB_OK) rc = note_tuned(s, kernel->name, out, err);
        gb_session_report_call(s, kernel, out);
    }
    return rc;
}

void gb_session_close(gb_session *s)
{
    gb_exec_destroy(s->tuner.exec);
    s->tuner.exec = NULL;
    for (int i = 1; i < s->tuner.n_execs; i++)
        gb_exec_destroy(s->execs[i]);
    s->tuner.n_execs = 0;
    gb_session_lease_end(&s->lease);
    free(s->worker_exe);
    s->worker_exe = NULL;
    for (int i = 0; i < s->n_tuned_kernels; i++)
        free(s->tuned[i].kernel);
    free(s->tuned);
    s->tuned = NULL;
    s->n_tuned_kernels = 0;
}
