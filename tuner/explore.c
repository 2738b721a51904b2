/* The pipeline of one shape: configurations come out of the space in canonical
 * order, their compiles run ahead on the pool, and each is tried on the executor
 * as its cubin arrives. Every trial is announced in the cache before it runs (the
 * write-ahead record) and recorded when it ends, so a tuner killed at any moment
 * loses nothing and the next run resumes. */
#include "tuner/run.h"
#include "tuner/variant.h"

#include "engine/interrupt.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define WINDOW_MAX 64

/* The watchdog: ten times the typical trial of the shape, at least five seconds,
 * at most the cap (--trial-timeout); the cap alone until a trial has finished. */
#define TIMEOUT_FACTOR        10.0
#define TIMEOUT_FLOOR_S       5.0
#define TIMEOUT_DEFAULT_CAP_S 60.0

typedef struct pending {
    gb_compile_job *job; /* NULL for a trial resumed from the cache */
    gb_config config;
    gb_launch launch;
    bool resumed;
    gb_trial_result earlier; /* the resumed trial */
} pending;

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double gb_explore_timeout_s(const run *r)
{
    double cap = r->opts->trial_timeout_s > 0 ? r->opts->trial_timeout_s : TIMEOUT_DEFAULT_CAP_S;
    if (r->n_trial_s == 0) return cap;
    double sorted[256];
    int n = r->n_trial_s < 256 ? r->n_trial_s : 256; /* the latest ones are enough */
    memcpy(sorted, r->trial_s + (r->n_trial_s - n), (size_t)n * sizeof *sorted);
    qsort(sorted, (size_t)n, sizeof *sorted, compare_doubles);
    return fmin(cap, fmax(TIMEOUT_FLOOR_S, TIMEOUT_FACTOR * sorted[n / 2]));
}

static void note_trial_time(run *r, double seconds)
{
    if (r->n_trial_s == r->cap_trial_s) {
        int cap = r->cap_trial_s ? 2 * r->cap_trial_s : 64;
        double *grown = realloc(r->trial_s, (size_t)cap * sizeof *grown);
        if (!grown) return; /* the watchdog falls back to what it has */
        r->trial_s = grown;
        r->cap_trial_s = cap;
    }
    r->trial_s[r->n_trial_s++] = seconds;
}

static int note_ok(run *r, const gb_config *config, double median_ms)
{
    if (r->n_ok == r->cap_ok) {
        int cap = r->cap_ok ? 2 * r->cap_ok : 64;
        gb_config *ok = realloc(r->ok, (size_t)cap * sizeof *ok);
        if (ok) r->ok = ok;
        double *ms = ok ? realloc(r->ok_ms, (size_t)cap * sizeof *ms) : NULL;
        if (ms) r->ok_ms = ms;
        if (!ok || !ms) return gb_err_set(r->err, GB_ENOMEM, "out of memory");
        r->cap_ok = cap;
    }
    r->ok[r->n_ok] = *config;
    r->ok_ms[r->n_ok++] = median_ms;
    return GB_OK;
}

/* ---- starting configurations ------------------------------------------- */

int gb_tune_accept(void *ctx, const gb_config *config, bool *ok, gb_err *err)
{
    const gb_kernel_def *k = ctx;
    if (!k->hooks.accept) {
        *ok = true;
        return GB_OK;
    }
    return k->hooks.accept(k->hooks_ctx, config, ok, err);
}

/* Benchmarking: only the configuration asked for. */
static bool is_benchmarked(const run *r, const gb_config *config)
{
    gb_fields fields;
    if (!r->fixed) return true; /* compiling only: every configuration */
    if (gb_config_to_fields(config, &fields) != GB_OK) return false;
    bool same = gb_fields_equal(&fields, r->fixed);
    gb_fields_free(&fields);
    return same;
}

/* Takes the next accepted configuration and either finds its trial in the cache or
 * starts its compile. GB_ENOTFOUND at the end of the space. */
static int start_next(run *r, const gb_fields *shape, const gb_record_id *id, gb_space_iter *it,
                      pending *p)
{
    const gb_kernel_def *k = r->k;
    memset(p, 0, sizeof *p);
    int rc = gb_space_next(it, gb_tune_accept, (void *)k, &p->config, r->err);
    while (rc == GB_OK && r->bench && !is_benchmarked(r, &p->config))
        rc = gb_space_next(it, gb_tune_accept, (void *)k, &p->config, r->err);
    if (rc) return rc;
    if ((rc = k->hooks.launch(k->hooks_ctx, &p->config, shape, &p->launch, r->err))) return rc;
    if (!r->opts->compile_only && !r->bench && gb_history_resume(r, id, &p->config, &p->earlier)) {
        p->resumed = true;
        return GB_OK;
    }
    rc = gb_variant_job(k, &r->source_fp, r->arch, &p->config, shape, &p->job, r->err);
    if (rc == GB_OK) gb_compiler_submit(r->compiler, p->job);
    return rc;
}

/* ---- finishing them ----------------------------------------------------- */

static int add_failure(run *r, gb_shape_result *res, const pending *p, const gb_trial_result *t)
{
    gb_trial_note *notes = realloc(res->failures, (size_t)(res->n_failures + 1) * sizeof *notes);
    if (!notes) return gb_err_set(r->err, GB_ENOMEM, "out of memory");
    res->failures = notes;
    gb_strbuf config = GB_STRBUF_INIT;
    gb_config_append_canonical(&config, &p->config);
    gb_trial_note *n = &notes[res->n_failures];
    *n = (gb_trial_note){.config = gb_sb_take(&config),
                         .status = t->status,
                         .reason = strdup(t->reason),
                         .resumed = p->resumed};
    if (!n->config || !n->reason) {
        free(n->config);
        free(n->reason);
        return gb_err_set(r->err, GB_ENOMEM, "out of memory");
    }
    res->n_failures++;
    return GB_OK;
}

static void log_trial(const run *r, const pending *p, const gb_trial_result *t)
{
    if (!r->opts->verbose) return;
    gb_strbuf text = GB_STRBUF_INIT;
    gb_config_append_canonical(&text, &p->config);
    const char *from = p->resumed ? " (from the cache)" : "";
    const gb_measurement *m = &t->measurement;
    if (t->status == GB_TRIAL_OK && m->contended)
        gb_run_log(r, "  %-40s ok %10.4f ms (n=%d), contended: %d other process(es) on the GPU\n",
                   gb_sb_str(&text), m->stats.median, m->stats.n, m->n_other_procs);
    else if (t->status == GB_TRIAL_OK)
        gb_run_log(r, "  %-40s ok %10.4f ms (n=%d)%s\n", gb_sb_str(&text), m->stats.median,
                   m->stats.n, from);
    else
        gb_run_log(r, "  %-40s %s: %s%s\n", gb_sb_str(&text), gb_trial_status_name(t->status),
                   t->reason, from);
    gb_sb_free(&text);
}

static void consider(leader *best, const gb_config *config, const gb_trial_result *t)
{
    if (!best || t->status != GB_TRIAL_OK) return;
    /* Strictly faster wins; equal medians keep the earlier configuration in the
     * canonical order, so reruns pick the same one. */
    if (best->has && t->measurement.stats.median >= best->stats.median) return;
    best->has = true;
    best->config = *config;
    best->stats = t->measurement.stats;
    best->contended = t->measurement.contended;
}

/* Counts a finished trial (run now or resumed) and keeps its failure. */
static int tally(run *r, const pending *p, const gb_trial_result *t, gb_shape_result *res,
                 leader *best)
{
    res->n_status[t->status]++;
    res->n_resumed += p->resumed;
    res->n_timed += t->status == GB_TRIAL_OK;
    res->n_contended += t->status == GB_TRIAL_OK && t->measurement.contended;
    log_trial(r, p, t);
    consider(best, &p->config, t);
    if (t->status != GB_TRIAL_OK) return add_failure(r, res, p, t);
    if (r->bench && gb_measurement_copy(&t->measurement, &res->best_measurement) != GB_OK)
        return gb_err_set(r->err, GB_ENOMEM, "out of memory");
    return note_ok(r, &p->config, t->measurement.stats.median);
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
    *row = (gb_compile_row){.key = *key,
                            .resources = out->resources,
                            .compile_ms = out->compile_ms,
                            .cached = gb_compile_job_cached(p->job)};
    if (crc) row->error = strdup(e->msg);
    if (gb_config_to_fields(&p->config, &row->config) || (crc && !row->error))
        return gb_err_set(r->err, GB_ENOMEM, "out of memory");
    return GB_OK;
}

int gb_explore_trial(run *r, const gb_variant *v, const gb_measure_opts *opts, gb_trial_result *t)
{
    int rc = gb_exec_trial(r->opts->exec, v, &r->check, opts, gb_explore_timeout_s(r), t, r->err);
    if (rc || t->status != GB_TRIAL_OK || !t->measurement.contended || r->gpu_shared) return rc;
    gb_trial_result again = {0};
    if ((rc = gb_run_pause_for_contention(r))) return rc;
    rc = gb_exec_trial(r->opts->exec, v, &r->check, opts, gb_explore_timeout_s(r), &again, r->err);
    if (rc == GB_OK && again.status == GB_TRIAL_OK) {
        gb_trial_result_free(t);
        *t = again; /* moved */
        r->gpu_shared = t->measurement.contended;
    } else {
        gb_trial_result_free(&again);
    }
    return rc;
}

/* Runs a compiled variant on the GPU, under the watchdog and behind the
 * write-ahead record. */
static int try_variant(run *r, const gb_record_id *id, pending *p, const gb_compile_out *out,
                       gb_trial_result *t)
{
    gb_variant v = {out->cubin, out->cubin_bytes, out->lowered[0], p->launch};
    if (!r->bench) gb_history_in_flight(r, id, &p->config, gb_compile_job_key(p->job));
    double start = gb_now_ms() / 1e3;
    /* A benchmark measures to the full criterion; a tuning run screens. */
    int rc = gb_explore_trial(r, &v, r->bench ? &r->full : &r->screen, t);
    double took = gb_now_ms() / 1e3 - start;
    r->result->timing.screening_s += took;
    r->result->timing.n_trials++;
    if (rc == GB_EINTR && !r->bench) gb_history_forget(r, id, &p->config);
    if (rc) return rc;
    if (t->status == GB_TRIAL_OK) note_trial_time(r, took);
    if (!r->bench)
        gb_history_trial(r, id, &p->config, t, out->resources.registers, NULL,
                         gb_compile_job_key(p->job));
    return GB_OK;
}

static int finish(run *r, const gb_record_id *id, pending *p, gb_shape_result *res, leader *best)
{
    if (p->resumed) return tally(r, p, &p->earlier, res, best);
    const gb_compile_out *out = NULL;
    gb_err cerr = {0};
    gb_trial_result t = {0};
    double waited = gb_now_ms() / 1e3;
    int crc = gb_compiler_wait(r->compiler, p->job, &out, &cerr), rc = GB_OK;
    r->result->timing.compile_wait_s += gb_now_ms() / 1e3 - waited;
    if (!gb_compile_job_cached(p->job)) r->result->timing.compile_cpu_s += out->compile_ms / 1e3;
    res->n_compiled += crc == GB_OK;
    if (r->opts->compile_only) {
        res->n_status[GB_TRIAL_COMPILE_ERROR] += crc != GB_OK;
        rc = add_compile_row(r, p, out, crc, &cerr);
    } else if (crc == GB_OK) {
        rc = try_variant(r, id, p, out, &t);
    } else {
        t.status = GB_TRIAL_COMPILE_ERROR;
        gb_strlcpy(t.reason, cerr.msg, sizeof t.reason);
        if (!r->bench) gb_history_trial(r, id, &p->config, &t, -1, out ? out->log : NULL, NULL);
    }
    if (rc == GB_OK && !r->opts->compile_only) rc = tally(r, p, &t, res, best);
    gb_trial_result_free(&t);
    gb_compile_job_free(p->job);
    p->job = NULL;
    return rc;
}

/* ---- the loop ------------------------------------------------------------ */

static bool budget_left(const run *r, int started, double t0)
{
    if (r->req->max_evals > 0 && started >= r->req->max_evals) return false;
    if (r->req->max_seconds > 0 && gb_now_ms() / 1e3 - t0 >= r->req->max_seconds) return false;
    return true;
}

static int window_size(const run *r)
{
    int w = 2 * (r->opts->jobs > 0 ? r->opts->jobs : 1);
    return w > WINDOW_MAX ? WINDOW_MAX : w;
}

/* Lets queued compiles end before their jobs are freed (after an error). */
static void drain(run *r, pending *ring, int head, int count)
{
    for (; count > 0; count--, head = (head + 1) % WINDOW_MAX) {
        const gb_compile_out *ignored;
        if (!ring[head].job) continue;
        gb_compiler_wait(r->compiler, ring[head].job, &ignored, NULL);
        gb_compile_job_free(ring[head].job);
    }
}

int gb_explore(run *r, const gb_fields *shape, const gb_record_id *id, gb_shape_result *res,
               leader *best)
{
    pending ring[WINDOW_MAX];
    int head = 0, count = 0, started = 0, rc = GB_OK, window = window_size(r);
    bool exhausted = false;
    gb_space_iter it;
    gb_space_iter_init(&it, &r->k->space);
    r->n_trial_s = 0;
    r->n_ok = 0;
    r->gpu_shared = false;
    double t0 = gb_now_ms() / 1e3;
    while (rc == GB_OK) {
        while (rc == GB_OK && !exhausted && count < window && budget_left(r, started, t0)) {
            rc = start_next(r, shape, id, &it, &ring[(head + count) % WINDOW_MAX]);
            if (rc == GB_ENOTFOUND)
                exhausted = true, rc = GB_OK;
            else if (rc == GB_OK)
                count++, started++;
        }
        if (rc || count == 0) break;
        if (gb_interrupted()) {
            rc = gb_err_set(r->err, GB_EINTR, "interrupted");
            break;
        }
        rc = finish(r, id, &ring[head], res, best);
        head = (head + 1) % WINDOW_MAX;
        count--;
    }
    drain(r, ring, head, count);
    res->n_rejected = it.n_rejected;
    res->complete = rc == GB_OK && exhausted;
    return rc;
}
