#include "tuner/tune.h"

#include "cache/record.h"
#include "tuner/compiler.h"
#include "tuner/variant.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef GB_VERSION
#define GB_VERSION "0.0.0"
#endif

#define WINDOW_MAX 64

typedef struct pending {
    gb_compile_job *job;
    gb_config config;
    gb_launch launch;
} pending;

/* One gb_tune call. */
typedef struct run {
    const gb_tuner_opts *opts;
    const gb_kernel_def *k;
    const gb_tune_request *req;
    gb_compiler *compiler;
    gb_key source_fp;
    char space_fp[33];
    gb_device_info dev;
    bool have_dev;
    const char *arch;
    gb_tune_result *result;
    gb_check_spec check; /* the kernel's, with defaults filled in for the current shape */
    bool warned_cache;
    gb_err *err;
} run;

/* The best trial so far for one shape. */
typedef struct leader {
    bool has;
    gb_config config;
    gb_stats stats;
} leader;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void logf_(const run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void logf_(const run *r, const char *fmt, ...)
{
    if (!r->opts->log) return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(r->opts->log, fmt, ap);
    va_end(ap);
    fflush(r->opts->log);
}

static void warn_cache(run *r, const gb_err *e)
{
    if (r->warned_cache || e->code == GB_OK) return;
    r->warned_cache = true;
    logf_(r, "gpubench: warning: results are not being saved: %s\n", e->msg);
}

/* ---- identities and records -------------------------------------------- */

int gb_tune_key_fields(const gb_kernel_def *k, const gb_fields *shape, gb_fields *out,
                       gb_err *err)
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
            rc = gb_err_set(err, GB_ESCRIPT, "kernel %s: key field %s is not in the shape",
                            k->name, k->key_fields[j]);
    if (rc == GB_ENOMEM) gb_err_set(err, rc, "out of memory");
    if (rc) gb_fields_free(out);
    return rc;
}

static int shape_id(const run *r, const gb_fields *shape, gb_record_id *out)
{
    *out = (gb_record_id){
        .kernel = strdup(r->k->name),
        .kernel_fp = strdup(r->result->kernel_fp),
        .device = strdup(r->result->device),
    };
    if (!out->kernel || !out->kernel_fp || !out->device) {
        gb_record_id_free(out);
        return gb_err_set(r->err, GB_ENOMEM, "out of memory");
    }
    int rc = gb_tune_key_fields(r->k, shape, &out->shape, r->err);
    if (rc) gb_record_id_free(out);
    return rc;
}

static void put_record(run *r, gb_cache_db db, const gb_key *key, gb_strbuf *json)
{
    gb_err e = {0};
    if (!r->opts->cache) return;
    if (gb_sb_status(json)) gb_err_set(&e, GB_ENOMEM, "out of memory writing a record");
    else gb_cache_put_json(r->opts->cache, db, key, gb_sb_str(json), &e);
    warn_cache(r, &e);
}

static void record_trial(run *r, const gb_record_id *id, const gb_config *config,
                         const gb_trial_result *t, int registers)
{
    gb_trial_record rec = {
        .id = *id,
        .status = t->status,
        .reason = (char *)t->reason,
        .check = t->check,
        .has_stats = t->status == GB_TRIAL_OK,
        .stats = t->measurement.stats,
        .registers = registers,
        .when = (int64_t)time(NULL),
    };
    gb_key key;
    gb_strbuf json = GB_STRBUF_INIT;
    if (gb_config_to_fields(config, &rec.config) == GB_OK &&
        gb_record_trial_key(id, &rec.config, &key) == GB_OK) {
        gb_jw w;
        gb_jw_init(&w, &json, false);
        gb_trial_record_write(&w, &rec);
        put_record(r, GB_DB_TRIALS, &key, &json);
    }
    gb_fields_free(&rec.config);
    gb_sb_free(&json);
}

static void store_best(run *r, const gb_record_id *id, const gb_shape_result *res)
{
    gb_best_record rec = {
        .id = *id,
        .space_fp = r->space_fp,
        .config = res->best_config,
        .stats = res->best,
        .flops = res->flops,
        .bytes = res->bytes,
        .has_baseline = res->has_baseline,
        .baseline = res->baseline,
        .n_configs = (int)res->n_configs,
        .n_rejected = (int)res->n_rejected,
        .n_timed = res->n_timed,
        .n_failed = res->n_compiled + res->n_status[GB_TRIAL_COMPILE_ERROR] - res->n_timed,
        .when = (int64_t)time(NULL),
        .driver_version = r->dev.driver_version,
    };
    gb_strlcpy(rec.engine_version, GB_VERSION, sizeof rec.engine_version);
    gb_nvrtc_version(rec.nvrtc_version);
    gb_key key;
    gb_strbuf json = GB_STRBUF_INIT;
    if (gb_record_best_key(id, &key) == GB_OK) {
        gb_jw w;
        gb_jw_init(&w, &json, false);
        gb_best_record_write(&w, &rec);
        put_record(r, GB_DB_BEST, &key, &json);
    }
    gb_sb_free(&json);
}

/* A cached best for this shape, chosen from the same space, answers the shape. */
static bool try_cached(run *r, const gb_record_id *id, gb_shape_result *res)
{
    gb_key key;
    gb_json *json = NULL;
    gb_best_record rec;
    gb_err e;
    if (!r->opts->cache || r->opts->force || gb_record_best_key(id, &key) != GB_OK) return false;
    if (gb_cache_get_json(r->opts->cache, GB_DB_BEST, &key, &json, &e) != GB_OK) return false;
    bool hit = gb_best_record_read(json, &rec, &e) == GB_OK;
    gb_json_free(json);
    if (!hit) return false;
    hit = strcmp(rec.space_fp, r->space_fp) == 0 &&
          gb_fields_copy(&rec.config, &res->best_config) == GB_OK;
    if (hit) {
        res->cached = res->has_best = true;
        res->best = rec.stats;
        res->has_baseline = rec.has_baseline;
        res->baseline = rec.baseline;
        res->flops = rec.flops;
        res->bytes = rec.bytes;
        res->n_rejected = (uint64_t)rec.n_rejected;
        res->n_timed = rec.n_timed;
    }
    gb_best_record_free(&rec);
    return hit;
}

/* ---- the pipeline ------------------------------------------------------- */

static int accept_config(void *ctx, const gb_config *config, bool *ok, gb_err *err)
{
    const gb_kernel_def *k = ctx;
    if (!k->hooks.accept) {
        *ok = true;
        return GB_OK;
    }
    return k->hooks.accept(k->hooks_ctx, config, ok, err);
}

/* Takes the next accepted configuration and starts its compile. GB_ENOTFOUND at
 * the end of the space. */
static int start_next(run *r, const gb_fields *shape, gb_space_iter *it, pending *p)
{
    const gb_kernel_def *k = r->k;
    int rc = gb_space_next(it, accept_config, (void *)k, &p->config, r->err);
    if (rc) return rc;
    if ((rc = k->hooks.launch(k->hooks_ctx, &p->config, shape, &p->launch, r->err))) return rc;
    rc = gb_variant_job(k, &r->source_fp, r->arch, &p->config, shape, &p->job, r->err);
    if (rc == GB_OK) gb_compiler_submit(r->compiler, p->job);
    return rc;
}

static void log_trial(const run *r, const gb_config *config, const gb_trial_result *t)
{
    if (!r->opts->verbose) return;
    gb_strbuf text = GB_STRBUF_INIT;
    gb_config_append_canonical(&text, config);
    if (t->status == GB_TRIAL_OK)
        logf_(r, "  %-40s ok %10.4f ms (n=%d)\n", gb_sb_str(&text), t->measurement.stats.median,
              t->measurement.stats.n);
    else
        logf_(r, "  %-40s %s: %s\n", gb_sb_str(&text), gb_trial_status_name(t->status), t->reason);
    gb_sb_free(&text);
}

static void consider(leader *best, const gb_config *config, const gb_trial_result *t)
{
    if (t->status != GB_TRIAL_OK) return;
    /* Strictly faster wins; equal medians keep the earlier configuration in the
     * canonical order, so reruns pick the same one. */
    if (best->has && t->measurement.stats.median >= best->stats.median) return;
    best->has = true;
    best->config = *config;
    best->stats = t->measurement.stats;
}

/* --compile-only: one row per distinct compile of the run (shapes that compile
 * to the same cubin share a row). */
static int add_compile_row(run *r, const pending *p, const gb_compile_out *out, int crc,
                           const gb_err *e)
{
    gb_tune_result *tr = r->result;
    const gb_key *key = gb_compile_job_key(p->job);
    for (int i = 0; i < tr->n_compiles; i++)
        if (!memcmp(&tr->compiles[i].key, key, sizeof *key)) return GB_OK;
    gb_compile_row *rows = realloc(tr->compiles, (size_t)(tr->n_compiles + 1) * sizeof *rows);
    if (!rows) return gb_err_set(r->err, GB_ENOMEM, "out of memory");
    tr->compiles = rows;
    gb_compile_row *row = &rows[tr->n_compiles++];
    *row = (gb_compile_row){.key = *key, .resources = out->resources,
                            .compile_ms = out->compile_ms, .cached = gb_compile_job_cached(p->job)};
    if (crc) row->error = strdup(e->msg);
    if (gb_config_to_fields(&p->config, &row->config) || (crc && !row->error))
        return gb_err_set(r->err, GB_ENOMEM, "out of memory");
    return GB_OK;
}

/* Waits for p's compile and, if it compiled, runs the trial (or, compiling only,
 * notes the compile). */
static int finish(run *r, const gb_record_id *id, pending *p, gb_shape_result *res, leader *best)
{
    const gb_compile_out *out = NULL;
    gb_err cerr = {0};
    gb_trial_result t = {0};
    int crc = gb_compiler_wait(r->compiler, p->job, &out, &cerr), rc = GB_OK;
    if (r->opts->compile_only) {
        res->n_compiled += crc == GB_OK;
        res->n_status[GB_TRIAL_COMPILE_ERROR] += crc != GB_OK;
        rc = add_compile_row(r, p, out, crc, &cerr);
        gb_compile_job_free(p->job);
        p->job = NULL;
        return rc;
    }
    if (crc == GB_OK) {
        res->n_compiled++;
        gb_variant v = {out->cubin, out->cubin_bytes, out->lowered[0], p->launch};
        rc = gb_exec_trial(r->opts->exec, &v, &r->check, &r->opts->measure, &t, r->err);
        if (rc == GB_OK && t.status != GB_TRIAL_LAUNCH_ERROR) res->n_timed += t.status == GB_TRIAL_OK;
    } else {
        t.status = GB_TRIAL_COMPILE_ERROR;
        gb_strlcpy(t.reason, cerr.msg, sizeof t.reason);
    }
    if (rc == GB_OK) {
        res->n_status[t.status]++;
        log_trial(r, &p->config, &t);
        record_trial(r, id, &p->config, &t, out && crc == GB_OK ? out->resources.registers : -1);
        consider(best, &p->config, &t);
    }
    gb_trial_result_free(&t);
    gb_compile_job_free(p->job);
    p->job = NULL;
    return rc;
}

static bool budget_left(const run *r, int started, double t0)
{
    if (r->req->max_evals > 0 && started >= r->req->max_evals) return false;
    if (r->req->max_seconds > 0 && now_s() - t0 >= r->req->max_seconds) return false;
    return true;
}

static int window_size(const run *r)
{
    int w = 2 * (r->opts->jobs > 0 ? r->opts->jobs : 1);
    return w > WINDOW_MAX ? WINDOW_MAX : w;
}

/* Compiles ahead through a ring of pending jobs and tries each as it comes out. */
static int explore(run *r, const gb_fields *shape, const gb_record_id *id, gb_shape_result *res,
                   leader *best)
{
    pending ring[WINDOW_MAX] = {0};
    int head = 0, count = 0, started = 0, rc = GB_OK, window = window_size(r);
    bool exhausted = false;
    gb_space_iter it;
    gb_space_iter_init(&it, &r->k->space);
    double t0 = now_s();
    while (rc == GB_OK) {
        while (rc == GB_OK && !exhausted && count < window && budget_left(r, started, t0)) {
            rc = start_next(r, shape, &it, &ring[(head + count) % WINDOW_MAX]);
            if (rc == GB_ENOTFOUND) exhausted = true, rc = GB_OK;
            else if (rc == GB_OK) count++, started++;
        }
        if (rc || count == 0) break;
        rc = finish(r, id, &ring[head], res, best);
        head = (head + 1) % WINDOW_MAX;
        count--;
    }
    /* After an error, let queued compiles end before their jobs are freed. */
    for (; count > 0; count--, head = (head + 1) % WINDOW_MAX) {
        const gb_compile_out *ignored;
        gb_compiler_wait(r->compiler, ring[head].job, &ignored, NULL);
        gb_compile_job_free(ring[head].job);
    }
    res->n_rejected = it.n_rejected;
    return rc;
}

/* ---- the reference and the problem ------------------------------------- */

static int compile_reference(run *r, const gb_fields *shape, gb_compile_job **job,
                             gb_launch *launch)
{
    const gb_kernel_def *ref = r->k->reference;
    gb_config none;
    gb_key fp;
    gb_config_at(&ref->space, 0, &none);
    int rc = gb_variant_source_fp(ref, &fp, r->err);
    if (rc == GB_OK) rc = ref->hooks.launch(ref->hooks_ctx, &none, shape, launch, r->err);
    if (rc == GB_OK) rc = gb_variant_job(ref, &fp, r->arch, &none, shape, job, r->err);
    return rc;
}

/* Runs the reference; a failure of the reference fails the shape, not the run. */
static int run_reference(run *r, const gb_fields *shape, gb_shape_result *res)
{
    gb_compile_job *job = NULL;
    gb_launch launch;
    const gb_compile_out *out;
    gb_err e = {0};
    int rc = compile_reference(r, shape, &job, &launch);
    if (rc) return rc;
    if (gb_compiler_wait(r->compiler, job, &out, &e) == GB_OK) {
        gb_variant v = {out->cubin, out->cubin_bytes, out->lowered[0], launch};
        gb_exec_reference(r->opts->exec, &v, &e);
    }
    gb_compile_job_free(job);
    if (e.code == GB_ENODRIVER || e.code == GB_ENOGPU) return gb_err_copy(r->err, &e);
    if (e.code && asprintf(&res->failure, "reference %s: %s", r->k->reference->name, e.msg) < 0)
        return gb_err_set(r->err, GB_ENOMEM, "out of memory");
    return GB_OK;
}

static int time_reference(run *r, const gb_fields *shape, gb_shape_result *res)
{
    gb_compile_job *job = NULL;
    gb_launch launch;
    const gb_compile_out *out;
    gb_err e = {0};
    gb_trial_result t = {0};
    int rc = compile_reference(r, shape, &job, &launch);
    if (rc == GB_OK && gb_compiler_wait(r->compiler, job, &out, &e) == GB_OK) {
        gb_variant v = {out->cubin, out->cubin_bytes, out->lowered[0], launch};
        rc = gb_exec_trial(r->opts->exec, &v, &r->check, &r->opts->measure, &t, r->err);
        res->has_baseline = rc == GB_OK && t.status == GB_TRIAL_OK;
        if (res->has_baseline) res->baseline = t.measurement.stats;
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
    case GB_DT_F64: *rtol = 1e-7, *atol = 1e-7; break;
    case GB_DT_F32: *rtol = 1e-4, *atol = 1e-5; break;
    case GB_DT_F16: *rtol = 1e-3, *atol = 1e-5; break;
    case GB_DT_BF16: *rtol = 1.6e-2, *atol = 1e-5; break;
    case GB_DT_FP8_E4M3:
    case GB_DT_FP8_E5M2: *rtol = 1.25e-1, *atol = 1e-3; break;
    default: *rtol = 0, *atol = 0; break;
    }
}

/* The check for this shape: by default every "output" tensor is compared. */
static int resolve_check(run *r, const gb_arg *args, int n_args)
{
    gb_check_spec c = r->k->check;
    for (int i = 0; r->k->check.n_outputs == 0 && i < n_args; i++)
        if (args[i].kind == GB_ARG_TENSOR && args[i].init == GB_INIT_OUTPUT)
            c.outputs[c.n_outputs++] = i;
    for (int i = 0; i < c.n_outputs; i++) {
        int pos = c.outputs[i];
        if (pos >= n_args || args[pos].kind != GB_ARG_TENSOR)
            return gb_err_set(r->err, GB_ESCRIPT,
                              "kernel %s: check.outputs names argument %d, which is not a tensor "
                              "(args gives %d arguments)",
                              r->k->name, pos + 1, n_args);
    }
    double rtol = 0, atol = 0;
    if (c.n_outputs > 0) default_tolerance(args[c.outputs[0]].dtype, &rtol, &atol);
    if (c.rtol < 0) c.rtol = rtol;
    if (c.atol < 0) c.atol = atol;
    r->check = c;
    return GB_OK;
}

static bool fatal(int rc)
{
    return rc == GB_ENODRIVER || rc == GB_ENOGPU || rc == GB_ESCRIPT || rc == GB_EINTR;
}

/* The script's view of a shape: its arguments, the check on them and the work;
 * errors here are the script's, found before anything is compiled or run. */
static int shape_args(run *r, const gb_fields *shape, gb_shape_result *res, gb_arg *args,
                      int *n_args)
{
    const gb_kernel_hooks *h = &r->k->hooks;
    int rc = h->args(r->k->hooks_ctx, shape, args, n_args, r->err);
    if (rc == GB_OK) rc = resolve_check(r, args, *n_args);
    if (rc == GB_OK && h->work)
        rc = h->work(r->k->hooks_ctx, shape, &res->flops, &res->bytes, r->err);
    return rc;
}

static int check_script(run *r, const gb_fields *shape, gb_shape_result *res)
{
    gb_arg args[GB_MAX_ARGS];
    int n_args = 0;
    return shape_args(r, shape, res, args, &n_args);
}

static int set_problem(run *r, const gb_fields *shape, gb_shape_result *res)
{
    gb_arg args[GB_MAX_ARGS];
    int n_args = 0;
    int rc = shape_args(r, shape, res, args, &n_args);
    if (rc) return rc;
    gb_err e = {0};
    rc = gb_exec_set_problem(r->opts->exec, args, n_args, r->opts->seed, &e);
    if (rc == GB_OK || fatal(rc)) return gb_err_copy(r->err, &e);
    if (asprintf(&res->failure, "setting up the arguments: %s", e.msg) < 0)
        return gb_err_set(r->err, GB_ENOMEM, "out of memory");
    return GB_OK;
}

/* ---- shapes ------------------------------------------------------------- */

static int measure_shape(run *r, const gb_fields *shape, const gb_record_id *id,
                         gb_shape_result *res)
{
    leader best = {0};
    int rc = set_problem(r, shape, res);
    if (rc == GB_OK && !res->failure && r->k->reference) rc = run_reference(r, shape, res);
    if (rc || res->failure) return rc;
    if ((rc = explore(r, shape, id, res, &best))) return rc;
    if (r->req->baseline && r->k->reference && (rc = time_reference(r, shape, res))) return rc;
    if (!best.has) return GB_OK;
    res->has_best = true;
    res->best = best.stats;
    if (gb_config_to_fields(&best.config, &res->best_config))
        return gb_err_set(r->err, GB_ENOMEM, "out of memory");
    store_best(r, id, res);
    return GB_OK;
}

static int tune_shape(run *r, const gb_fields *shape, gb_shape_result *res)
{
    gb_record_id id;
    gb_strbuf key = GB_STRBUF_INIT;
    int rc = shape_id(r, shape, &id);
    if (rc) return rc;
    res->n_configs = gb_space_size(&r->k->space);
    gb_fields_append_canonical(&key, &id.shape, NULL, 0);
    res->key_text = gb_sb_take(&key);
    if (!res->key_text || gb_fields_copy(shape, &res->shape)) {
        gb_record_id_free(&id);
        return gb_err_set(r->err, GB_ENOMEM, "out of memory");
    }
    if (r->opts->compile_only) rc = check_script(r, shape, res);
    if (r->opts->compile_only && rc == GB_OK) rc = explore(r, shape, &id, res, NULL);
    else if (!try_cached(r, &id, res)) rc = measure_shape(r, shape, &id, res);
    gb_record_id_free(&id);
    return rc;
}

/* ---- the run ------------------------------------------------------------ */

static int start_run(run *r)
{
    const gb_tuner_opts *o = r->opts;
    int rc = gb_tune_kernel_fingerprint(r->k, r->result->kernel_fp, r->err);
    if (rc == GB_OK) rc = gb_variant_source_fp(r->k, &r->source_fp, r->err);
    if (rc) return rc;
    gb_variant_space_fp(&r->k->space, r->space_fp);
    r->arch = o->arch ? o->arch : "sm_90a";
    if (!o->compile_only) {
        if (!o->exec) return gb_err_set(r->err, GB_EINVAL, "timing needs an executor");
        if ((rc = gb_exec_device(o->exec, &r->dev, r->err))) return rc;
        r->have_dev = true;
        if (!o->arch) r->arch = r->dev.arch;
        gb_device_fingerprint(&r->dev, r->result->device, sizeof r->result->device);
    }
    return gb_compiler_create(o->cache, o->jobs, &r->compiler, r->err);
}

int gb_tune(const gb_tuner_opts *opts, const gb_kernel_def *kernel, const gb_tune_request *req,
            gb_tune_result *out, gb_err *err)
{
    memset(out, 0, sizeof *out);
    run r = {.opts = opts, .k = kernel, .req = req, .result = out, .err = err};
    out->shapes = calloc((size_t)(req->n_shapes ? req->n_shapes : 1), sizeof *out->shapes);
    if (!out->shapes) return gb_err_set(err, GB_ENOMEM, "out of memory");
    int rc = start_run(&r);
    for (int i = 0; rc == GB_OK && i < req->n_shapes; i++) {
        out->n_shapes++;
        rc = tune_shape(&r, &req->shapes[i], &out->shapes[i]);
        if (rc == GB_OK && out->shapes[i].failure)
            logf_(&r, "gpubench: %s [%s]: %s\n", kernel->name, out->shapes[i].key_text,
                  out->shapes[i].failure);
    }
    if (r.compiler) warn_cache(&r, gb_compiler_cache_error(r.compiler));
    gb_compiler_destroy(r.compiler);
    if (rc) gb_err_prefix(err, "tuning %s", kernel->name);
    return rc;
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
    }
    for (int i = 0; i < result->n_compiles; i++) {
        gb_fields_free(&result->compiles[i].config);
        free(result->compiles[i].error);
    }
    free(result->shapes);
    free(result->compiles);
    memset(result, 0, sizeof *result);
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
