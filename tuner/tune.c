#include "tuner/tune.h"

#include "tuner/run.h"
#include "tuner/source.h"
#include "tuner/variant.h"

#include "exec/interrupt.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- checking the script first ----------------------------------------- */

/* Calls every hook the run will call for one shape, so a bug in the script stops
 * the run before the GPU is touched or anything is compiled. Up to `budget`
 * configurations are checked; the rest are checked as the run reaches them. */
static int check_shape(run *r, const gb_fields *shape, long *budget)
{
    gb_shape_result scratch = {0};
    gb_arg args[GB_MAX_ARGS];
    int n_args = 0, rc = gb_run_shape_args(r, shape, &scratch, args, &n_args);
    const gb_kernel_def *k = r->k;
    gb_space_iter it;
    gb_config c;
    gb_space_iter_init(&it, &k->space);
    while (rc == GB_OK && (*budget)-- > 0 &&
           (rc = gb_space_next(&it, gb_tune_accept, (void *)k, &c, r->err)) == GB_OK) {
        gb_launch launch;
        gb_fields defs = {0};
        rc = k->hooks.launch(k->hooks_ctx, &c, shape, &launch, r->err);
        if (rc == GB_OK && k->hooks.defines)
            rc = k->hooks.defines(k->hooks_ctx, &c, shape, &defs, r->err);
        gb_fields_free(&defs);
    }
    return rc == GB_ENOTFOUND ? GB_OK : rc;
}

#define CHECK_BUDGET 100000 /* configurations x shapes checked before the run */

int gb_tune_check(const gb_kernel_def *kernel, const gb_tune_request *req, gb_err *err)
{
    gb_tuner_opts opts = {0};
    gb_tune_result result = {0};
    run r = {.opts = &opts, .k = kernel, .req = req, .result = &result, .err = err};
    long budget = CHECK_BUDGET;
    int rc = GB_OK;
    for (int i = 0; rc == GB_OK && i < req->n_shapes; i++) {
        gb_fields key = {0};
        rc = gb_tune_key_fields(kernel, &req->shapes[i], &key, err);
        gb_fields_free(&key);
        if (rc == GB_OK) rc = check_shape(&r, &req->shapes[i], &budget);
    }
    if (rc) gb_err_context(err, "tuning %s", kernel->name);
    return rc;
}

/* ---- shapes ------------------------------------------------------------- */

static int measure_shape(run *r, const gb_fields *shape, const gb_record_id *id,
                         gb_shape_result *res)
{
    leader best = {0};
    bool cached;
    r->current.progress.n_planned = r->current.planned > INT32_MAX ? -1 : (int)r->current.planned;
    gb_run_progress(r, GB_PROGRESS_START, NULL);
    int rc = gb_run_prepare(r, shape, id, res, &cached);
    if (rc || cached || res->failure) return rc;
    rc = gb_search_shape(r, shape, id, res, &best);
    if (rc == GB_OK) rc = gb_run_none_valid(r, res, res->n_evals);
    if (rc == GB_OK && !res->failure) {
        gb_run_progress(r, GB_PROGRESS_RACE, &best);
        rc = gb_race_leaders(r, shape, res, &best);
    }
    /* the race timed the baseline with the leaders, unless it failed or had none */
    if (rc == GB_OK && gb_run_wants_baseline(r) && !res->has_baseline && !res->baseline_contended)
        rc = gb_run_time_reference(r, shape, res);
    return gb_run_settle(r, id, &best, res, rc);
}

static int tune_shape(run *r, const gb_fields *shape, gb_shape_result *res)
{
    gb_record_id id;
    gb_strbuf key = GB_STRBUF_INIT;
    int rc = gb_history_shape_id(&r->history, shape, &id);
    if (rc) return rc;
    res->n_configs = gb_space_size(&r->k->space);
    gb_fields_append_canonical(&key, &id.shape, NULL, 0);
    res->key_text = gb_sb_take(&key);
    if (!res->key_text || gb_fields_copy(shape, &res->shape)) {
        gb_record_id_free(&id);
        return gb_err_set(r->err, GB_ENOMEM, "out of memory");
    }
    gb_trial_shape_begin(r, res);
    if (r->opts->compile_only)
        rc = gb_compile_shape(r, shape, &id, res);
    else if (r->bench)
        rc = gb_bench_shape(r, shape, &id, res);
    else if ((rc = gb_search_plan(r, res)) == GB_OK &&
             !gb_history_cached_best(&r->history, &id, res))
        rc = measure_shape(r, shape, &id, res);
    if (r->current.progress_started) gb_run_progress(r, GB_PROGRESS_END, NULL);
    gb_search_free(&r->current.search);
    gb_record_id_free(&id);
    return rc;
}

/* ---- the run ------------------------------------------------------------ */

/* Several GPUs share one set of records, keyed by one device fingerprint: they
 * must all have it. */
static int same_gpus(run *r)
{
    for (int i = 1; i < gb_run_n_gpus(r); i++) {
        gb_device_info dev;
        char fp[320];
        int rc = gb_exec_device(gb_run_exec(r, i), &dev, r->err);
        if (rc) return rc;
        gb_device_fingerprint(&dev, fp, sizeof fp);
        if (strcmp(fp, r->result->device) != 0)
            return gb_err_set(r->err, GB_EINVAL,
                              "--gpus: GPU %d is %s and GPU %d is %s: the GPUs of one run must be "
                              "of one kind (name, compute capability and SM count), because their "
                              "results share the cache's records",
                              r->opts->gpus[0], r->result->device, r->opts->gpus[i], fp);
    }
    return GB_OK;
}

/* The run's trial history, once its identity in the records is known. */
static void open_history(run *r)
{
    const gb_tuner_opts *o = r->opts;
    r->history = (gb_history){
        .cache = o->cache,
        .force = o->force,
        .retry_crashed = o->retry_crashed,
        .shard = o->shard,
        .k = r->k,
        .kernel_fp = r->result->kernel_fp,
        .device = r->result->device,
        .space_fp = r->space_fp,
        .reference_lib = r->result->reference_lib,
        .sources = r->sources,
        .n_sources = r->n_sources,
        .driver_version = r->dev.driver_version,
        .mode = r->full.mode,
        .timer = gb_run_timer(r),
        .log = o->log,
        .err = r->err,
    };
}

static int start_run(run *r)
{
    const gb_tuner_opts *o = r->opts;
    int rc = gb_tune_kernel_fingerprint(r->k, r->result->kernel_fp, r->err);
    if (rc == GB_OK)
        rc = gb_variant_source_files(r->k, &r->source_fp, &r->sources, &r->n_sources, r->err);
    if (rc) return rc;
    gb_variant_space_fp(&r->k->space, r->space_fp);
    r->arch = o->arch ? o->arch : "sm_90a";
    r->bench = r->result->bench = r->req->fixed_config || r->req->fixed_best;
    r->result->compile_only = o->compile_only;
    r->full = r->k->has_measure ? r->k->measure : o->measure;
    r->screen = gb_measure_screening(&r->full);
    if ((rc = gb_measure_check(&r->full, r->err)))
        return gb_err_prefix(r->err, "kernel %s", r->k->name);
    if (!o->compile_only) {
        if (!o->exec) return gb_err_set(r->err, GB_EINVAL, "timing needs an executor");
        if ((rc = gb_exec_device(o->exec, &r->dev, r->err))) return rc;
        if (!o->arch) r->arch = r->dev.arch;
        gb_device_fingerprint(&r->dev, r->result->device, sizeof r->result->device);
        if ((rc = same_gpus(r))) return rc;
        gb_strlcpy(r->result->clock_source, r->dev.clock_source, sizeof r->result->clock_source);
        gb_strlcpy(r->result->timer, gb_run_timer(r), sizeof r->result->timer);
        if (r->full.timer != GB_TIMER_EVENTS)
            gb_strlcpy(r->result->timer_note, r->dev.timer_note, sizeof r->result->timer_note);
        gb_arch_limits_from_device(&r->dev, &r->limits);
    } else if ((rc = gb_arch_limits_for(r->arch, &r->limits, r->err))) {
        return rc;
    }
    gb_strlcpy(r->result->arch, r->arch, sizeof r->result->arch);
    if (gb_kernel_is_library(r->k->reference))
        gb_strlcpy(r->result->reference_lib, "cuBLAS", sizeof r->result->reference_lib);
    open_history(r);
    return gb_compiler_create(o->cache, o->jobs, &r->compiler, r->err);
}

int gb_tune(const gb_tuner_opts *opts, const gb_kernel_def *kernel, const gb_tune_request *req,
            gb_tune_result *out, gb_err *err)
{
    memset(out, 0, sizeof *out);
    double start = gb_now_ms() / 1e3;
    run r = {.opts = opts, .k = kernel, .req = req, .result = out, .err = err};
    out->shapes = calloc((size_t)(req->n_shapes ? req->n_shapes : 1), sizeof *out->shapes);
    if (!out->shapes) return gb_err_set(err, GB_ENOMEM, "out of memory");
    out->timing.compile_threads = opts->jobs;
    int rc = start_run(&r);
    for (int i = 0; rc == GB_OK && i < req->n_shapes; i++) {
        out->n_shapes++;
        rc = tune_shape(&r, &req->shapes[i], &out->shapes[i]);
        if (rc == GB_OK && out->shapes[i].failure)
            gb_run_log(&r, "gpubench: %s [%s]: %s\n", kernel->name, out->shapes[i].key_text,
                       out->shapes[i].failure);
    }
    /* A session that claims the GPU keeps no idle context on it without the claim:
     * another process's contention check would count it. */
    const gb_gpu_claim *claim = &opts->claim;
    for (int i = 0; claim->take && !claim->held(claim->ctx) && opts->exec && i < gb_run_n_gpus(&r);
         i++)
        gb_exec_stop_backend(gb_run_exec(&r, i));
    if (r.compiler) gb_history_warn(&r.history, gb_compiler_cache_error(r.compiler));
    gb_compiler_destroy(r.compiler);
    gb_source_files_free(r.sources, r.n_sources);
    gb_search_free(&r.current.search);
    free(r.current.trial_s);
    free(r.current.ok);
    free(r.current.ok_ms);
    out->timing.total_s = gb_now_ms() / 1e3 - start;
    if (rc && rc != GB_EINTR) gb_err_context(err, "tuning %s", kernel->name);
    return rc;
}
