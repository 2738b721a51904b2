#include "tuner/tune.h"

#include "tuner/run.h"
#include "tuner/source.h"
#include "tuner/variant.h"

#include "exec/interrupt.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CONTENDED_PAUSE_S 1.0 /* long enough for a short burst of someone else's work */

void gb_run_log(const run *r, const char *fmt, ...)
{
    if (!r->opts->log) return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(r->opts->log, fmt, ap);
    va_end(ap);
    fflush(r->opts->log);
}

int gb_run_pause_for_contention(run *r)
{
    double pause_s =
        r->opts->contended_pause_s > 0 ? r->opts->contended_pause_s : CONTENDED_PAUSE_S;
    double end_ms = gb_now_ms() + pause_s * 1e3, left_ms;
    while (!gb_interrupted() && (left_ms = end_ms - gb_now_ms()) > 0) {
        long ms = left_ms < 50 ? (long)left_ms + 1 : 50; /* so Ctrl-C is seen at once */
        nanosleep(&(struct timespec){ms / 1000, ms % 1000 * 1000000L}, NULL);
    }
    return gb_interrupted() ? gb_err_set(r->err, GB_EINTR, "interrupted") : GB_OK;
}

/* ---- the GPU's claim ------------------------------------------------------ */

/* Claims the GPU through the front end (gb_gpu_claim) before measuring a shape;
 * *out_waited says another process had it first. */
static int claim_gpu(run *r, bool *out_waited)
{
    const gb_gpu_claim *c = &r->opts->claim;
    *out_waited = false;
    if (!c->take) return GB_OK;
    char activity[320];
    snprintf(activity, sizeof activity, "%s %s", r->bench ? "benchmarking" : "tuning", r->k->name);
    double waited_s = 0;
    int rc = c->take(c->ctx, activity, out_waited, &waited_s, r->err);
    r->result->timing.lease_wait_s += waited_s;
    return rc;
}

/* ---- identities and records -------------------------------------------- */

int gb_tune_accept(void *ctx, const gb_config *config, bool *ok, gb_err *err)
{
    const gb_kernel_def *k = ctx;
    if (!k->hooks.accept) {
        *ok = true;
        return GB_OK;
    }
    return k->hooks.accept(k->hooks_ctx, config, ok, err);
}

int gb_tune_key_fields(const gb_kernel_def *k, const gb_fields *shape, gb_fields *out, gb_err *err)
{
    *out = (gb_fields){0};
    int rc = GB_OK;
    for (int i = 0; rc == GB_OK && i < shape->n; i++) {
        bool keyed = k->n_key_fields == 0;
        for (int j = 0; !keyed && j < k->n_key_fields; j++)
            keyed = strcmp(k->key_fields[j], shape->names[i]) == 0;
        if (keyed) rc = gb_fields_set(out, shape->names[i], &shape->values[i]);
    }
    for (int j = 0; rc == GB_OK && j < k->n_key_fields; j++)
        if (!gb_fields_get(shape, k->key_fields[j]))
            rc = gb_err_set(err, GB_ESCRIPT, "kernel %s: key field %s is not in the shape", k->name,
                            k->key_fields[j]);
    if (rc == GB_ENOMEM) gb_err_set(err, rc, "out of memory");
    if (rc) gb_fields_free(out);
    return rc;
}

/* ---- the reference and the problem ------------------------------------- */

int gb_run_reference_variant(run *r, const gb_fields *shape, gb_compile_job **job, gb_variant *v,
                             gb_err *e)
{
    const gb_kernel_def *ref = r->k->reference;
    const gb_compile_out *out;
    gb_config none;
    gb_key fp;
    *job = NULL;
    if (gb_kernel_is_library(ref)) { /* nothing to compile: its GEMM on this shape */
        *v = (gb_variant){.lowered_name = "cublasLtMatmul",
                          .kernel_name = ref->name,
                          .gemm = &r->current.ref_gemm,
                          .launch = {.grid = {1, 1, 1}, .block = {1, 1, 1}}};
        return GB_OK;
    }
    gb_config_at(&ref->space, 0, &none);
    int rc = gb_variant_source_fp(ref, &fp, r->err);
    if (rc == GB_OK) rc = ref->hooks.launch(ref->hooks_ctx, &none, shape, &v->launch, r->err);
    if (rc == GB_OK) rc = gb_variant_job(ref, &fp, r->arch, &none, shape, job, r->err);
    if (rc == GB_OK && gb_compiler_wait(r->compiler, *job, &out, e) == GB_OK) {
        v->cubin = out->cubin;
        v->cubin_bytes = out->cubin_bytes;
        v->lowered_name = out->lowered[0];
        v->kernel_name = ref->name;
    }
    return rc;
}

/* Runs the reference; a failure of the reference fails the shape, not the run. */
static int run_reference(run *r, const gb_fields *shape, gb_shape_result *res)
{
    gb_compile_job *job = NULL;
    gb_variant v = {0};
    gb_err e = {0};
    int rc = gb_run_reference_variant(r, shape, &job, &v, &e);
    for (int i = 0; rc == GB_OK && !e.code && i < gb_run_n_gpus(r); i++)
        gb_exec_reference(gb_run_exec(r, i), &v, &e);
    gb_compile_job_free(job);
    if (rc) return rc;
    if (e.code == GB_ENODRIVER || e.code == GB_ENOGPU) return gb_err_copy(r->err, &e);
    if (e.code && asprintf(&res->failure, "reference %s: %s", r->k->reference->name, e.msg) < 0)
        return gb_err_set(r->err, GB_ENOMEM, "out of memory");
    return GB_OK;
}

/* A timing of the reference that stays contended is not kept. */
void gb_run_keep_baseline(gb_shape_result *res, gb_measurement *m)
{
    res->baseline_contended = m->contended;
    res->has_baseline = !m->contended;
    if (res->has_baseline) {
        res->baseline = *m; /* moved */
        memset(m, 0, sizeof *m);
    }
}

int gb_run_time_reference(run *r, const gb_fields *shape, gb_shape_result *res)
{
    gb_compile_job *job = NULL;
    gb_variant v = {0};
    gb_err e = {0};
    gb_trial_result t = {0};
    int rc = gb_run_reference_variant(r, shape, &job, &v, &e);
    if (rc == GB_OK && !e.code) {
        rc = gb_trial_measure(r, &v, &r->full, &t);
        if (rc == GB_OK && t.status == GB_TRIAL_OK) gb_run_keep_baseline(res, &t.measurement);
    }
    gb_trial_result_free(&t);
    gb_compile_job_free(job);
    return rc;
}

/* Tolerances by the dtype of the first checked output, when the script gives none:
 * close to what torch.testing uses, so a correct kernel in that precision passes. */
static void default_tolerance(gb_dtype dtype, double *rtol, double *atol)
{
    switch (dtype) {
    case GB_DT_F64:
        *rtol = 1e-7, *atol = 1e-7;
        break;
    case GB_DT_F32:
        *rtol = 1e-5, *atol = 1e-6;
        break;
    case GB_DT_F16:
        *rtol = 1e-3, *atol = 1e-5;
        break;
    case GB_DT_BF16:
        *rtol = 1e-2, *atol = 1e-5;
        break;
    case GB_DT_FP8_E4M3:
    case GB_DT_FP8_E5M2:
        *rtol = 1.25e-1, *atol = 1e-3;
        break;
    default:
        *rtol = 0, *atol = 0;
        break;
    }
}

/* The check for this shape: by default every "output" and every inout tensor is
 * compared. */
static int resolve_check(run *r, gb_arg *args, int n_args)
{
    gb_check_spec c = r->k->check;
    for (int i = 0; r->k->check.n_outputs == 0 && i < n_args; i++)
        if (args[i].kind == GB_ARG_TENSOR && (args[i].init == GB_INIT_OUTPUT || args[i].inout))
            c.outputs[c.n_outputs++] = i;
    for (int i = 0; i < c.n_outputs; i++) {
        int pos = c.outputs[i];
        if (pos >= n_args || args[pos].kind != GB_ARG_TENSOR)
            return gb_err_set(r->err, GB_ESCRIPT,
                              "kernel %s: check.outputs names argument %d, which is not a tensor "
                              "(args gives %d arguments)",
                              r->k->name, pos + 1, n_args);
    }
    for (int i = 0; i < c.n_outputs; i++)
        args[c.outputs[i]].checked = true;
    double rtol = 0, atol = 0;
    if (c.n_outputs > 0) default_tolerance(args[c.outputs[0]].dtype, &rtol, &atol);
    if (c.rtol < 0) c.rtol = rtol;
    if (c.atol < 0) c.atol = atol;
    r->current.check = c;
    return GB_OK;
}

static bool fatal(int rc)
{
    return rc == GB_ENODRIVER || rc == GB_ENOGPU || rc == GB_ESCRIPT || rc == GB_EINTR;
}

/* A library reference's GEMM on this shape, checked against the arguments: what
 * it names must be tensors of its types and sizes, its result checked. */
static int resolve_ref_gemm(run *r, const gb_fields *shape, const gb_arg *args, int n_args)
{
    const gb_kernel_def *ref = r->k->reference;
    gb_err e = {0};
    int rc = ref->hooks.gemm(ref->hooks_ctx, shape, &r->current.ref_gemm, r->err);
    if (rc) return rc;
    if (gb_gemm_check(&r->current.ref_gemm, &e) ||
        gb_gemm_check_args(&r->current.ref_gemm, args, n_args, &e))
        return gb_err_set(r->err, GB_ESCRIPT, "kernel %s: reference %s: %s", r->k->name, ref->name,
                          e.msg);
    return GB_OK;
}

/* Errors here are the script's, found before anything is compiled or run. */
int gb_run_shape_args(run *r, const gb_fields *shape, gb_shape_result *res, gb_arg *args,
                      int *n_args)
{
    const gb_kernel_hooks *h = &r->k->hooks;
    int rc = h->args(r->k->hooks_ctx, shape, args, n_args, r->err);
    if (rc == GB_OK) rc = resolve_check(r, args, *n_args);
    if (rc == GB_OK && gb_kernel_is_library(r->k->reference))
        rc = resolve_ref_gemm(r, shape, args, *n_args);
    if (rc == GB_OK && h->work)
        rc = h->work(r->k->hooks_ctx, shape, &res->flops, &res->bytes, r->err);
    return rc;
}

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

static int set_problem(run *r, const gb_fields *shape, gb_shape_result *res)
{
    gb_arg args[GB_MAX_ARGS];
    int n_args = 0;
    int rc = gb_run_shape_args(r, shape, res, args, &n_args);
    if (rc) return rc;
    gb_err e = {0};
    for (int i = 0; rc == GB_OK && i < gb_run_n_gpus(r); i++)
        rc = gb_exec_set_problem(gb_run_exec(r, i), args, n_args, r->opts->seed, &e);
    if (rc == GB_OK || fatal(rc)) return gb_err_copy(r->err, &e);
    const char *where = r->k->args_where;
    if (asprintf(&res->failure, "%s%ssetting up the arguments: %s", where ? where : "",
                 where ? ": " : "", e.msg) < 0)
        return gb_err_set(r->err, GB_ENOMEM, "out of memory");
    return GB_OK;
}

/* ---- shapes ------------------------------------------------------------- */

int gb_run_settle(run *r, const gb_record_id *id, const leader *best, gb_shape_result *res, int rc)
{
    res->interrupted = rc == GB_EINTR;
    if ((rc && rc != GB_EINTR) || !best->has) return rc;
    res->has_best = true;
    res->best = best->stats;
    res->contended = best->contended; /* shown, never stored */
    if (gb_config_to_fields(&best->config, &res->best_config))
        return gb_err_set(r->err, GB_ENOMEM, "out of memory");
    /* A search cut short by a budget is stored too, marked incomplete. */
    if (rc == GB_OK && !r->bench && !res->contended) gb_history_store_best(&r->history, id, res);
    return rc;
}

int gb_run_prepare(run *r, const gb_fields *shape, const gb_record_id *id, gb_shape_result *res,
                   bool *out_cached)
{
    bool waited = false;
    *out_cached = false;
    int rc = claim_gpu(r, &waited);
    /* Whoever had the GPU may have tuned this very shape meanwhile. */
    if (rc == GB_OK && waited && !r->bench && gb_history_cached_best(&r->history, id, res)) {
        *out_cached = true;
        return GB_OK;
    }
    if (rc == GB_OK) rc = set_problem(r, shape, res);
    if (rc == GB_OK && !res->failure && r->k->reference) rc = run_reference(r, shape, res);
    return rc;
}

int gb_run_none_valid(run *r, gb_shape_result *res, int64_t tried)
{
    if (tried > 0 || !r->current.search.exhausted || r->opts->shard.count > 1 || res->failure)
        return GB_OK;
    if (asprintf(&res->failure,
                 "no valid configuration: the constraints rejected all %llu of the space",
                 (unsigned long long)r->current.search.n_rejected) < 0)
        return gb_err_set(r->err, GB_ENOMEM, "out of memory");
    return GB_OK;
}

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

gb_exec *gb_run_exec(const run *r, int i)
{
    return r->opts->n_execs > 1 ? r->opts->execs[i] : r->opts->exec;
}

int gb_run_n_gpus(const run *r)
{
    return r->opts->n_execs > 1 ? r->opts->n_execs : 1;
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

void gb_trial_note_free(gb_trial_note *t)
{
    if (!t) return;
    free(t->config_text);
    gb_fields_free(&t->config);
    free(t->reason);
    gb_measurement_free(&t->measurement);
    memset(t, 0, sizeof *t);
}

int gb_shape_n_failed(const gb_shape_result *s)
{
    int n = 0;
    for (int i = 0; i < s->n_trials; i++)
        n += s->trials[i].status != GB_TRIAL_OK;
    return n;
}

void gb_tune_result_free(gb_tune_result *result)
{
    if (!result) return;
    for (int i = 0; i < result->n_shapes; i++) {
        gb_shape_result *s = &result->shapes[i];
        gb_fields_free(&s->shape);
        gb_fields_free(&s->best_config);
        free(s->key_text);
        free(s->failure);
        free(s->race_failure);
        gb_measurement_free(&s->best_measurement);
        for (int j = 0; j < s->n_tie; j++)
            free(s->tie[j]);
        free(s->tie);
        gb_measurement_free(&s->baseline);
        for (int j = 0; j < s->n_trials; j++)
            gb_trial_note_free(&s->trials[j]);
        free(s->trials);
    }
    for (int i = 0; i < result->n_compiles; i++) {
        gb_fields_free(&result->compiles[i].config);
        free(result->compiles[i].error);
        free(result->compiles[i].limit);
    }
    free(result->shapes);
    free(result->compiles);
    memset(result, 0, sizeof *result);
}

bool gb_kernel_is_library(const gb_kernel_def *def)
{
    return def && def->hooks.gemm;
}

static void free_strings(char **list, int n)
{
    for (int i = 0; list && i < n; i++)
        free(list[i]);
    free(list);
}

void gb_kernel_def_free(gb_kernel_def *def)
{
    if (!def) return;
    free(def->name);
    free(def->source);
    free(def->source_name);
    free(def->entry);
    free(def->args_where);
    free(def->defined_at);
    free_strings(def->include_dirs, def->n_include_dirs);
    free_strings(def->options, def->n_options);
    free_strings(def->key_fields, def->n_key_fields);
    gb_space_free(&def->space);
    if (def->reference) {
        gb_kernel_def_free(def->reference);
        free(def->reference);
    }
    memset(def, 0, sizeof *def);
}
