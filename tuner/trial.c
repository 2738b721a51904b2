/* A configuration's way through the pipeline, whichever driver sent it: its
 * identity and launch, its compile (started ahead of the GPU on the pool) or its
 * trial found in the cache, the trial on the executor under the watchdog and
 * behind the write-ahead record, and the counting of what came out. */
#include "tuner/run.h"
#include "tuner/variant.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The watchdog: ten times the typical trial of the shape, at least five seconds,
 * at most the cap (--trial-timeout); the cap alone until a trial has finished. */
#define TIMEOUT_FACTOR        10.0
#define TIMEOUT_FLOOR_S       5.0
#define TIMEOUT_DEFAULT_CAP_S 60.0

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double gb_trial_timeout_s(const run *r)
{
    double cap = r->opts->trial_timeout_s > 0 ? r->opts->trial_timeout_s : TIMEOUT_DEFAULT_CAP_S;
    if (r->current.n_trial_s == 0) return cap;
    double sorted[256];
    int n =
        r->current.n_trial_s < 256 ? r->current.n_trial_s : 256; /* the latest ones are enough */
    memcpy(sorted, r->current.trial_s + (r->current.n_trial_s - n), (size_t)n * sizeof *sorted);
    qsort(sorted, (size_t)n, sizeof *sorted, compare_doubles);
    return fmin(cap, fmax(TIMEOUT_FLOOR_S, TIMEOUT_FACTOR * sorted[n / 2]));
}

static void note_trial_time(run *r, double seconds)
{
    if (r->current.n_trial_s == r->current.cap_trial_s) {
        int cap = r->current.cap_trial_s ? 2 * r->current.cap_trial_s : 64;
        double *grown = realloc(r->current.trial_s, (size_t)cap * sizeof *grown);
        if (!grown) return; /* the watchdog falls back to what it has */
        r->current.trial_s = grown;
        r->current.cap_trial_s = cap;
    }
    r->current.trial_s[r->current.n_trial_s++] = seconds;
}

static int note_ok(run *r, const gb_config *config, double median_ms)
{
    if (r->current.n_ok == r->current.cap_ok) {
        int cap = r->current.cap_ok ? 2 * r->current.cap_ok : 64;
        gb_config *ok = realloc(r->current.ok, (size_t)cap * sizeof *ok);
        if (ok) r->current.ok = ok;
        double *ms = ok ? realloc(r->current.ok_ms, (size_t)cap * sizeof *ms) : NULL;
        if (ms) r->current.ok_ms = ms;
        if (!ok || !ms) return gb_err_set(r->err, GB_ENOMEM, "out of memory");
        r->current.cap_ok = cap;
    }
    r->current.ok[r->current.n_ok] = *config;
    r->current.ok_ms[r->current.n_ok++] = median_ms;
    return GB_OK;
}

int gb_run_window(const run *r)
{
    int w = 2 * (r->opts->jobs > 0 ? r->opts->jobs : 1);
    return w > GB_WINDOW_MAX ? GB_WINDOW_MAX : w;
}

void gb_trial_shape_begin(run *r, const gb_shape_result *res)
{
    r->current.n_trial_s = 0;
    r->current.n_ok = 0;
    r->current.gpu_shared = false;
    r->current.progress_started = false;
    r->current.start_ms = gb_now_ms();
    r->current.progress = (gb_progress){
        .kernel = r->k->name,
        .shape = res->key_text,
        .shape_index = r->result->n_shapes - 1,
        .n_shapes = r->req->n_shapes,
        .compile_only = r->opts->compile_only,
        .n_planned = -1,
    };
}

void gb_run_progress(run *r, gb_progress_phase phase, const leader *best)
{
    r->current.progress_started = phase != GB_PROGRESS_END;
    if (!r->opts->progress) return;
    gb_strbuf text = GB_STRBUF_INIT;
    gb_progress *p = &r->current.progress;
    p->phase = phase;
    p->elapsed_s = (gb_now_ms() - r->current.start_ms) / 1e3;
    p->has_best = best && best->has;
    if (p->has_best) {
        p->best_ms = best->stats.median;
        gb_config_append_canonical(&text, &best->config);
    }
    p->best_config = p->has_best ? gb_sb_str(&text) : NULL;
    r->opts->progress(r->opts->progress_ctx, p);
    gb_sb_free(&text);
}

/* ---- starting ------------------------------------------------------------- */

int gb_pending_start(run *r, const gb_fields *shape, const gb_record_id *id,
                     const gb_config *config, bool resume, gb_pending *p)
{
    const gb_kernel_def *k = r->k;
    memset(p, 0, sizeof *p);
    int rc = gb_history_ident(&r->history, id, config, &p->ident);
    if (rc == GB_OK) rc = k->hooks.launch(k->hooks_ctx, config, shape, &p->launch, r->err);
    if (rc) return rc;
    if (resume && gb_history_resume(&r->history, &p->ident, &p->earlier)) {
        p->resumed = true;
        return GB_OK;
    }
    rc = gb_variant_job(k, &r->source_fp, r->arch, config, shape, &p->job, r->err);
    if (rc == GB_OK) gb_compiler_submit(r->compiler, p->job);
    return rc;
}

int gb_pending_compile(run *r, gb_pending *p, const gb_compile_out **out, gb_err *cerr)
{
    double waited = gb_now_ms() / 1e3;
    int crc = gb_compiler_wait(r->compiler, p->job, out, cerr);
    r->result->timing.compile_wait_s += gb_now_ms() / 1e3 - waited;
    if (!gb_compile_job_cached(p->job)) r->result->timing.compile_cpu_s += (*out)->compile_ms / 1e3;
    r->current.progress.n_compiled++;
    return crc;
}

void gb_pending_free(run *r, gb_pending *p)
{
    if (p->job) {
        const gb_compile_out *ignored;
        gb_compiler_wait(r->compiler, p->job, &ignored, NULL);
        gb_compile_job_free(p->job);
    }
    gb_trial_result_free(&p->earlier);
    gb_history_ident_free(&p->ident);
    memset(p, 0, sizeof *p);
}

/* ---- counting ------------------------------------------------------------- */

static int add_trial(run *r, gb_shape_result *res, const gb_trial_ident *id, bool resumed,
                     const gb_trial_result *t)
{
    gb_trial_note *notes = realloc(res->trials, (size_t)(res->n_trials + 1) * sizeof *notes);
    if (!notes) return gb_err_set(r->err, GB_ENOMEM, "out of memory");
    res->trials = notes;
    gb_trial_note *n = &notes[res->n_trials];
    *n = (gb_trial_note){.config_text = strdup(id->text),
                         .status = t->status,
                         .reason = strdup(t->reason),
                         .resumed = resumed};
    bool ok = n->config_text && n->reason && gb_fields_copy(&id->fields, &n->config) == GB_OK;
    if (ok && t->status == GB_TRIAL_OK)
        ok = gb_measurement_copy(&t->measurement, &n->measurement) == GB_OK;
    if (!ok) {
        gb_trial_note_free(n);
        return gb_err_set(r->err, GB_ENOMEM, "out of memory");
    }
    res->n_trials++;
    return GB_OK;
}

static void log_trial(const run *r, const gb_trial_ident *id, bool resumed,
                      const gb_trial_result *t)
{
    if (!r->opts->verbose) return;
    const char *from = resumed ? " (from the cache)" : "";
    const gb_measurement *m = &t->measurement;
    if (t->status == GB_TRIAL_OK && m->contended)
        gb_run_log(r, "  %-40s ok %10.4f ms (n=%d), contended: %d other process(es) on the GPU\n",
                   id->text, m->stats.median, m->stats.n, m->n_other_procs);
    else if (t->status == GB_TRIAL_OK)
        gb_run_log(r, "  %-40s ok %10.4f ms (n=%d)%s\n", id->text, m->stats.median, m->stats.n,
                   from);
    else
        gb_run_log(r, "  %-40s %s: %s%s\n", id->text, gb_trial_status_name(t->status), t->reason,
                   from);
}

static void consider(leader *best, const gb_config *config, const gb_trial_result *t)
{
    if (!best || t->status != GB_TRIAL_OK) return;
    /* Strictly faster wins; equal medians keep the earlier configuration in the
     * canonical order, so reruns pick the same one. */
    if (best->has && (t->measurement.stats.median > best->stats.median ||
                      (t->measurement.stats.median == best->stats.median &&
                       config->ordinal > best->config.ordinal)))
        return;
    best->has = true;
    best->config = *config;
    best->stats = t->measurement.stats;
    best->contended = t->measurement.contended;
}

int gb_trial_tally(run *r, const gb_trial_ident *id, bool resumed, const gb_trial_result *t,
                   gb_shape_result *res, leader *best)
{
    res->n_status[t->status]++;
    res->n_resumed += resumed;
    res->n_timed += t->status == GB_TRIAL_OK;
    res->n_contended += t->status == GB_TRIAL_OK && t->measurement.contended;
    res->n_skipped += t->status == GB_TRIAL_SKIPPED;
    r->current.progress.n_timed += t->status == GB_TRIAL_OK;
    r->current.progress.n_failed += t->status != GB_TRIAL_OK;
    log_trial(r, id, resumed, t);
    consider(best, &id->config, t);
    int rc = add_trial(r, res, id, resumed, t);
    if (rc == GB_OK && t->status == GB_TRIAL_OK)
        rc = note_ok(r, &id->config, t->measurement.stats.median);
    if (rc == GB_OK && r->bench && t->status == GB_TRIAL_OK &&
        gb_measurement_copy(&t->measurement, &res->best_measurement) != GB_OK)
        rc = gb_err_set(r->err, GB_ENOMEM, "out of memory");
    if (rc == GB_OK) gb_run_progress(r, GB_PROGRESS_TRIAL, best);
    return rc;
}

/* ---- running ----------------------------------------------------------------- */

int gb_trial_measure(run *r, const gb_variant *v, const gb_measure_opts *opts, gb_trial_result *t)
{
    gb_trial_phases *phases = &r->result->timing.trial_phases;
    int rc =
        gb_exec_trial(r->opts->exec, v, &r->current.check, opts, gb_trial_timeout_s(r), t, r->err);
    if (rc == GB_OK) gb_trial_phases_add(phases, &t->phases);
    if (rc || t->status != GB_TRIAL_OK || !t->measurement.contended || r->current.gpu_shared)
        return rc;
    gb_trial_result again = {0};
    if ((rc = gb_run_pause_for_contention(r))) return rc;
    rc = gb_exec_trial(r->opts->exec, v, &r->current.check, opts, gb_trial_timeout_s(r), &again,
                       r->err);
    if (rc == GB_OK) gb_trial_phases_add(phases, &again.phases);
    if (rc == GB_OK && again.status == GB_TRIAL_OK) {
        gb_trial_result_free(t);
        *t = again; /* moved */
        r->current.gpu_shared = t->measurement.contended;
    } else {
        gb_trial_result_free(&again);
    }
    return rc;
}

/* Why a compiled variant is not worth the GPU's time: it exceeds the target's
 * limits (its launch would fail), it spills under --no-spills or the kernel's
 * `reject`, or ptxas serialised its wgmmas and the kernel rejects that. Sets t
 * (status skipped) and returns true when so. */
static bool skip_variant(const run *r, const gb_pending *p, const gb_compile_out *out,
                         gb_trial_result *t)
{
    const gb_resources *res = &out->resources;
    char reason[sizeof t->reason - 256];
    if (!gb_arch_check(&r->limits, &p->launch, res, reason, sizeof reason)) {
        t->status = GB_TRIAL_SKIPPED;
        snprintf(t->reason, sizeof t->reason, "over the target's limits: %s", reason);
        return true;
    }
    bool spills = res->spill_store_bytes > 0 || res->spill_load_bytes > 0;
    if (spills && (r->opts->no_spills || r->k->reject & GB_REJECT_SPILLS)) {
        t->status = GB_TRIAL_SKIPPED;
        snprintf(t->reason, sizeof t->reason,
                 "spills registers to local memory (%d bytes stored, %d loaded per thread) and %s",
                 res->spill_store_bytes, res->spill_load_bytes,
                 r->opts->no_spills ? "--no-spills is on" : "the kernel's reject lists spills");
        return true;
    }
    if (r->k->reject & GB_REJECT_SERIALIZED_WGMMA &&
        gb_nvrtc_wgmma_serialized(out->log, out->lowered[0], reason, sizeof reason)) {
        t->status = GB_TRIAL_SKIPPED;
        snprintf(t->reason, sizeof t->reason,
                 "ptxas serialised its wgmmas (%s) and the kernel's reject lists "
                 "serialized_wgmma",
                 reason);
        return true;
    }
    return false;
}

/* The compiled variant as the executor runs it. */
static gb_variant variant_of(const run *r, const gb_pending *p, const gb_compile_out *out)
{
    return (gb_variant){.cubin = out->cubin,
                        .cubin_bytes = out->cubin_bytes,
                        .lowered_name = out->lowered[0],
                        .launch = p->launch,
                        .kernel_name = r->k->name,
                        .config_text = p->ident.text};
}

void gb_trial_account(run *r, const gb_pending *p, int rc, double took_s, const gb_trial_result *t)
{
    r->result->timing.screening_s += took_s;
    r->result->timing.n_trials++;
    if (rc == GB_EINTR && !r->bench) gb_history_forget(&r->history, &p->ident);
    if (rc == GB_OK && t->status == GB_TRIAL_OK) note_trial_time(r, took_s);
}

int gb_pending_ready(run *r, const gb_record_id *id, gb_pending *p, gb_shape_result *res,
                     leader *best, gb_variant *out_v, gb_trial_result *t, bool *out_run)
{
    *out_run = false;
    if (p->resumed) {
        *t = p->earlier;
        memset(&p->earlier, 0, sizeof p->earlier); /* moved */
        return GB_OK;
    }
    const gb_compile_out *out = NULL;
    gb_err cerr = {0};
    int crc = gb_pending_compile(r, p, &out, &cerr);
    res->n_compiled += crc == GB_OK;
    gb_run_progress(r, GB_PROGRESS_COMPILE, best);
    if (crc) {
        t->status = GB_TRIAL_COMPILE_ERROR;
        gb_strlcpy(t->reason, cerr.msg, sizeof t->reason);
    } else if (!skip_variant(r, p, out, t)) {
        *out_v = variant_of(r, p, out);
        if (!r->bench) gb_history_in_flight(&r->history, id, &p->ident, gb_compile_job_key(p->job));
        *out_run = true;
    }
    return GB_OK;
}

int gb_pending_done(run *r, const gb_record_id *id, gb_pending *p, gb_trial_result *t,
                    gb_shape_result *res, leader *best)
{
    if (!p->resumed) {
        const gb_compile_out *out = NULL;
        int crc = gb_compiler_wait(r->compiler, p->job, &out, NULL); /* ended: it returns now */
        if (!r->bench)
            gb_history_trial(&r->history, id, &p->ident, t, crc ? -1 : out->resources.registers,
                             crc && out ? out->log : NULL, crc ? NULL : gb_compile_job_key(p->job));
        gb_compile_job_free(p->job);
        p->job = NULL;
    }
    return gb_trial_tally(r, &p->ident, p->resumed, t, res, best);
}

int gb_pending_finish(run *r, const gb_record_id *id, gb_pending *p, const gb_measure_opts *opts,
                      gb_shape_result *res, leader *best, gb_trial_result *out_t)
{
    gb_trial_result t = {0};
    gb_variant v;
    bool run_it;
    int rc = gb_pending_ready(r, id, p, res, best, &v, &t, &run_it);
    if (rc == GB_OK && run_it) {
        double start = gb_now_ms() / 1e3;
        rc = gb_trial_measure(r, &v, opts, &t);
        gb_trial_account(r, p, rc, gb_now_ms() / 1e3 - start, &t);
    }
    if (rc == GB_OK) rc = gb_pending_done(r, id, p, &t, res, best);
    if (rc == GB_OK && out_t)
        *out_t = t; /* moved */
    else
        gb_trial_result_free(&t);
    return rc;
}
