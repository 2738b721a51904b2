/* The leaders' race: screening ranks every variant quickly; the few within a
 * margin of the fastest are then measured again, interleaved (A B C A B C ...),
 * to the full criterion, so that the winner is chosen on numbers that are known to
 * the asked precision and were taken under the same conditions. Two leaders whose
 * intervals overlap are a tie, decided by the canonical order of the
 * configurations, so every rerun picks the same winner. A race that saw another
 * process on the GPU is run once more after a pause; if that one is contended
 * too, its winner is reported contended and not stored (tune.c). With a baseline
 * asked for, the reference runs in the race as one more entrant, never crowned. */
#include "tuner/run.h"
#include "tuner/variant.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_MARGIN  0.10
#define DEFAULT_LEADERS 8

typedef struct entrant {
    gb_config config;
    double screened_ms;
    gb_compile_job *job;
    gb_variant variant;
} entrant;

static int by_screened_time(const void *a, const void *b)
{
    const entrant *x = a, *y = b;
    if (x->screened_ms != y->screened_ms) return x->screened_ms < y->screened_ms ? -1 : 1;
    return (x->config.ordinal > y->config.ordinal) - (x->config.ordinal < y->config.ordinal);
}

/* The ok configurations within the margin of the fastest, fastest first. */
static int pick_leaders(const run *r, entrant *out)
{
    double margin = r->opts->race_margin > 0 ? r->opts->race_margin : DEFAULT_MARGIN;
    int limit = r->opts->race_leaders > 0 ? r->opts->race_leaders : DEFAULT_LEADERS;
    if (limit > GB_MAX_RACE - 1) limit = GB_MAX_RACE - 1; /* a place for the reference */
    entrant *all = calloc((size_t)r->current.n_ok, sizeof *all);
    if (!all) return -1;
    for (int i = 0; i < r->current.n_ok; i++)
        all[i] = (entrant){.config = r->current.ok[i], .screened_ms = r->current.ok_ms[i]};
    qsort(all, (size_t)r->current.n_ok, sizeof *all, by_screened_time);
    int n = 0;
    while (n < r->current.n_ok && n < limit &&
           all[n].screened_ms <= all[0].screened_ms * (1 + margin))
        out[n] = all[n], n++;
    free(all);
    return n;
}

/* The leaders' cubins: their compiles are in the cubin cache by now. */
static int prepare(run *r, const gb_fields *shape, entrant *e, int n)
{
    const gb_kernel_def *k = r->k;
    int rc = GB_OK;
    for (int i = 0; rc == GB_OK && i < n; i++) {
        const gb_compile_out *out;
        rc = k->hooks.launch(k->hooks_ctx, &e[i].config, shape, &e[i].variant.launch, r->err);
        if (rc == GB_OK)
            rc = gb_variant_job(k, &r->source_fp, r->arch, &e[i].config, shape, &e[i].job, r->err);
        if (rc == GB_OK) rc = gb_compiler_wait(r->compiler, e[i].job, &out, r->err);
        if (rc == GB_OK) {
            e[i].variant.cubin = out->cubin;
            e[i].variant.cubin_bytes = out->cubin_bytes;
            e[i].variant.lowered_name = out->lowered[0];
            e[i].variant.kernel_name = k->name; /* names the race's NVTX range */
        }
    }
    return rc;
}

/* The reference as the race's last entrant, when the run wants a baseline: its
 * samples then interleave with the leaders', so the "vs ref" ratio compares
 * figures taken under the same clocks and temperature, which a timing taken alone
 * before or after the race does not. *n_ref is 0 when it cannot enter (its compile
 * failed: gb_run_time_reference reports that). */
static int enter_reference(run *r, const gb_fields *shape, gb_compile_job **job, gb_variant *out,
                           int *n_ref)
{
    gb_err e = {0};
    *n_ref = 0;
    if (!gb_run_wants_baseline(r)) return GB_OK;
    int rc = gb_run_reference_variant(r, shape, job, out, &e);
    *n_ref = rc == GB_OK && !e.code;
    return rc;
}

static bool overlap(const gb_stats *a, const gb_stats *b)
{
    return a->ci_lo <= b->ci_hi && b->ci_lo <= a->ci_hi;
}

/* The fastest raced median, then every leader whose interval overlaps it; of
 * those, the earliest in the canonical order wins. Returns the winner's index. */
static int decide(const entrant *e, const gb_measurement *m, int n, bool *tied)
{
    int fastest = 0;
    for (int i = 1; i < n; i++)
        if (m[i].stats.median < m[fastest].stats.median) fastest = i;
    int winner = fastest;
    for (int i = 0; i < n; i++) {
        tied[i] = i == fastest || overlap(&m[i].stats, &m[fastest].stats);
        if (tied[i] && e[i].config.ordinal < e[winner].config.ordinal) winner = i;
    }
    return winner;
}

static int note_tie(run *r, gb_shape_result *res, const entrant *e, const bool *tied, int n,
                    int winner)
{
    int n_tied = 0;
    for (int i = 0; i < n; i++)
        n_tied += tied[i];
    if (n_tied < 2) return GB_OK;
    res->tie = calloc((size_t)n_tied, sizeof *res->tie);
    if (!res->tie) return gb_err_set(r->err, GB_ENOMEM, "out of memory");
    for (int pass = 0; pass < 2; pass++) /* the winner first, then the others in race order */
        for (int i = 0; i < n; i++) {
            if (!tied[i] || (pass == 0) != (i == winner)) continue;
            gb_strbuf text = GB_STRBUF_INIT;
            gb_config_append_canonical(&text, &e[i].config);
            if (!(res->tie[res->n_tie++] = gb_sb_take(&text)))
                return gb_err_set(r->err, GB_ENOMEM, "out of memory");
        }
    return GB_OK;
}

static int crown(run *r, gb_shape_result *res, leader *best, const entrant *e, gb_measurement *m,
                 int n)
{
    bool tied[GB_MAX_RACE];
    int w = decide(e, m, n, tied);
    best->has = true;
    best->config = e[w].config;
    best->stats = m[w].stats;
    best->contended = m[w].contended;
    res->best_measurement = m[w];
    memset(&m[w], 0, sizeof m[w]); /* moved */
    return note_tie(r, res, e, tied, n, w);
}

/* A race of n variants may take n times the sampling cap plus the warm-ups; the
 * watchdog allows twice that, but no more than n trial caps, and at least its
 * floor. */
static double race_timeout_s(const run *r, int n)
{
    double per = (r->full.max_ms + r->full.warmup_max_ms) / 1e3;
    double cap = r->opts->trial_timeout_s > 0 ? r->opts->trial_timeout_s : 60;
    return fmax(fmin(2 * n * per, n * cap), gb_trial_timeout_s(r));
}

static bool any_contended(const gb_measurement *m, int n)
{
    for (int i = 0; i < n; i++)
        if (m[i].contended) return true;
    return false;
}

/* The race, and once more after a pause when another process was on the GPU. */
static int run_race(run *r, const gb_variant *v, int n, gb_measurement *m, gb_err *race_err)
{
    double timeout_s = race_timeout_s(r, n);
    int rc = gb_exec_race(r->opts->exec, v, n, &r->full, timeout_s, m, race_err);
    if (rc || !any_contended(m, n)) return rc;
    if ((rc = gb_run_pause_for_contention(r))) return gb_err_copy(race_err, r->err);
    for (int i = 0; i < n; i++)
        gb_measurement_free(&m[i]);
    return gb_exec_race(r->opts->exec, v, n, &r->full, timeout_s, m, race_err);
}

int gb_race_leaders(run *r, const gb_fields *shape, gb_shape_result *res, leader *best)
{
    entrant e[GB_MAX_RACE];
    gb_variant v[GB_MAX_RACE];
    gb_measurement m[GB_MAX_RACE];
    memset(e, 0, sizeof e);
    memset(m, 0, sizeof m);
    int n = r->current.n_ok ? pick_leaders(r, e) : 0;
    if (n < 0) return gb_err_set(r->err, GB_ENOMEM, "out of memory");
    if (n == 0) return GB_OK;
    int rc = prepare(r, shape, e, n);
    for (int i = 0; i < n; i++)
        v[i] = e[i].variant;
    gb_compile_job *ref_job = NULL;
    int n_ref = 0;
    if (rc == GB_OK) rc = enter_reference(r, shape, &ref_job, &v[n], &n_ref);
    double start = gb_now_ms() / 1e3;
    gb_err race_err = {0};
    if (rc == GB_OK) rc = run_race(r, v, n + n_ref, m, &race_err);
    r->result->timing.racing_s += gb_now_ms() / 1e3 - start;
    res->n_leaders = n;
    if (rc == GB_OK && n_ref) gb_run_keep_baseline(res, &m[n]);
    if (rc == GB_OK)
        rc = crown(r, res, best, e, m, n);
    else if (rc == GB_EINTR)
        gb_err_copy(r->err, &race_err);
    else if (race_err.code && !(res->race_failure = strdup(race_err.msg)))
        rc = gb_err_set(r->err, GB_ENOMEM, "out of memory");
    else if (race_err.code)
        rc = GB_OK; /* the screening's best stands */
    for (int i = 0; i < n + n_ref; i++)
        gb_measurement_free(&m[i]);
    for (int i = 0; i < n; i++)
        gb_compile_job_free(e[i].job);
    gb_compile_job_free(ref_job);
    return rc;
}

/* ---- the reference alone ---------------------------------------------------- */

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
