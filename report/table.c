#include "report/table.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void gb_table_init(gb_table *t, const char *const *headers, const char *align)
{
    memset(t, 0, sizeof *t);
    for (int i = 0; headers[i] && i < GB_TABLE_MAX_COLS; i++) {
        t->headers[i] = headers[i];
        t->right[i] = align[i] == 'r';
        t->n_cols++;
    }
}

static bool grow(gb_table *t)
{
    if (t->n_rows < t->cap_rows) return true;
    int cap = t->cap_rows ? 2 * t->cap_rows : 16;
    char **cells = realloc(t->cells, (size_t)cap * (size_t)t->n_cols * sizeof *cells);
    if (!cells) return false;
    t->cells = cells;
    t->cap_rows = cap;
    return true;
}

void gb_table_cell(gb_table *t, const char *fmt, ...)
{
    if (t->failed) return;
    if (t->col == 0 && !grow(t)) {
        t->failed = true;
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    char *text = NULL;
    if (vasprintf(&text, fmt, ap) < 0) text = NULL;
    va_end(ap);
    t->cells[t->n_rows * t->n_cols + t->col] = text;
    if (++t->col == t->n_cols) {
        t->col = 0;
        t->n_rows++;
    }
}

static const char *cell(const gb_table *t, int row, int col)
{
    const char *s = t->cells[row * t->n_cols + col];
    return s ? s : "?";
}

void gb_table_print(const gb_table *t, FILE *out)
{
    int width[GB_TABLE_MAX_COLS];
    for (int c = 0; c < t->n_cols; c++) {
        width[c] = (int)strlen(t->headers[c]);
        for (int r = 0; r < t->n_rows; r++) {
            int w = (int)strlen(cell(t, r, c));
            if (w > width[c]) width[c] = w;
        }
    }
    gb_strbuf line = GB_STRBUF_INIT;
    for (int r = -1; r < t->n_rows; r++) {
        gb_sb_reset(&line);
        for (int c = 0; c < t->n_cols; c++) {
            const char *text = r < 0 ? t->headers[c] : cell(t, r, c);
            gb_sb_printf(&line, t->right[c] ? "%*s  " : "%-*s  ", width[c], text);
        }
        while (line.len > 0 && line.data[line.len - 1] == ' ') /* no trailing blanks */
            line.data[--line.len] = '\0';
        fprintf(out, "%s\n", gb_sb_str(&line));
    }
    gb_sb_free(&line);
    if (t->failed) fprintf(out, "(out of memory: the table is incomplete)\n");
}

void gb_table_free(gb_table *t)
{
    if (!t) return;
    for (int i = 0; t->cells && i < t->n_rows * t->n_cols + t->col; i++)
        free(t->cells[i]);
    free(t->cells);
    memset(t, 0, sizeof *t);
}

/* ---- tuning reports ----------------------------------------------------- */

static void config_cell(gb_table *t, const gb_fields *config)
{
    gb_strbuf sb = GB_STRBUF_INIT;
    gb_fields_append_canonical(&sb, config, NULL, 0);
    gb_table_cell(t, "%s", sb.len ? gb_sb_str(&sb) : "-");
    gb_sb_free(&sb);
}

static void rate_cells(gb_table *t, const gb_shape_result *s)
{
    double seconds = s->best.median * 1e-3;
    if (s->flops > 0)
        gb_table_cell(t, "%.2f", s->flops / seconds / 1e12);
    else
        gb_table_cell(t, "-");
    if (s->bytes > 0)
        gb_table_cell(t, "%.1f", s->bytes / seconds / 1e9);
    else
        gb_table_cell(t, "-");
}

static void shape_row(gb_table *t, const gb_shape_result *s, bool bench)
{
    gb_table_cell(t, "%s", s->key_text ? s->key_text : "?");
    if (s->has_best) {
        config_cell(t, &s->best_config);
        gb_table_cell(t, "%.4f", s->best.median);
        /* The interval is the median's 95% CI; '!' marks a measurement that hit its cap
         * before reaching the noise target. */
        gb_table_cell(t, "%.2f%%%s", 100 * gb_stats_rel_ci(&s->best),
                      s->best_measurement.capped ? "!" : "");
        if (s->best_measurement.clock_mhz_median > 0)
            gb_table_cell(t, "%.0f", s->best_measurement.clock_mhz_median);
        else
            gb_table_cell(t, "-");
        rate_cells(t, s);
    } else {
        gb_table_cell(t, "%s", s->failure ? "(failed)" : "(no valid variant)");
        for (int i = 0; i < 5; i++)
            gb_table_cell(t, "-");
    }
    if (s->has_baseline && s->has_best)
        gb_table_cell(t, "%.2fx", s->baseline.stats.median / s->best.median);
    else
        gb_table_cell(t, "-");
    if (s->cached) {
        gb_table_cell(t, "-");
        gb_table_cell(t, "%llu", (unsigned long long)s->n_rejected);
        gb_table_cell(t, "-");
        gb_table_cell(t, "%d", s->n_timed);
        gb_table_cell(t, "cache");
        return;
    }
    gb_table_cell(t, "%d", s->n_compiled);
    gb_table_cell(t, "%llu", (unsigned long long)s->n_rejected);
    gb_table_cell(t, "%d", gb_shape_n_failed(s));
    gb_table_cell(t, "%d", s->n_timed);
    gb_table_cell(t, "%s",
                  s->interrupted ? "interrupted"
                  : s->contended ? "contended"
                  : bench        ? "bench"
                  : s->n_resumed ? "resumed"
                                 : "tuned");
}

/* "40 ok, 3 wrong, 2 crashed (5 from an earlier run)" */
static void status_counts(FILE *out, const gb_shape_result *s)
{
    const char *sep = "";
    for (int i = 0; i < GB_TRIAL_STATUS_COUNT; i++) {
        if (!s->n_status[i]) continue;
        fprintf(out, "%s%d %s", sep, s->n_status[i], gb_trial_status_name((gb_trial_status)i));
        sep = ", ";
    }
    if (!*sep) fprintf(out, "no trials");
    if (s->n_resumed) fprintf(out, " (%d from an earlier run)", s->n_resumed);
    if (s->interrupted) fprintf(out, "; interrupted");
    fputc('\n', out);
}

#define QUIET_FAILURES 10 /* listed without --verbose when no variant was valid */

static void failures(FILE *out, const gb_shape_result *s, bool verbose)
{
    int n_failed = gb_shape_n_failed(s);
    int limit = verbose ? n_failed : s->has_best ? 0 : QUIET_FAILURES, listed = 0;
    for (int i = 0; i < s->n_trials && listed < limit; i++) {
        const gb_trial_note *t = &s->trials[i];
        if (t->status == GB_TRIAL_OK) continue;
        fprintf(out, "    %s: %s: %s\n", t->config_text, gb_trial_status_name(t->status),
                t->reason);
        listed++;
    }
    if (n_failed > limit && limit > 0)
        fprintf(out, "    ... and %d more (--verbose lists them all)\n", n_failed - limit);
}

/* How the best was chosen: the race, a tie, and what the measurement saw. */
static void race_line(FILE *out, const gb_shape_result *s)
{
    const gb_measurement *m = &s->best_measurement;
    if (s->race_failure)
        fprintf(out, "    the leaders' race failed (%s): the best is the screening's\n",
                s->race_failure);
    if (s->n_tie > 1) {
        fprintf(out, "    tie within noise:");
        for (int i = 0; i < s->n_tie; i++)
            fprintf(out, "%s %s", i ? "," : "", s->tie[i]);
        fprintf(out, " (the first in the canonical order wins)\n");
    }
    if (m->n_throttled)
        fprintf(out, "    %d of %d samples taken while the GPU throttled were left out%s\n",
                m->n_throttled, m->n_samples, m->all_throttled ? " (all were: kept)" : "");
    if (m->capped)
        fprintf(out, "    the measurement hit its cap at ±%.2f%% (target not reached)\n",
                100 * gb_stats_rel_ci(&s->best));
}

/* What other processes on the GPU did to this shape's figures. */
static void contention_lines(FILE *out, const gb_shape_result *s, bool bench)
{
    int n = s->best_measurement.n_other_procs;
    char who[48] = "another process";
    if (n > 0) snprintf(who, sizeof who, "%d other process(es)", n);
    if (s->contended)
        fprintf(out,
                "    the GPU was in use by %s while the %s measured, and again after a pause: "
                "%s\n",
                who, bench ? "configuration was" : "best was",
                bench ? "the figures may be slow"
                      : "the best is not stored (tune again when the GPU is free)");
    if (s->n_contended)
        fprintf(out,
                "    %d trial(s) were screened while another process used the GPU (recorded as "
                "contended; a rerun measures them again)\n",
                s->n_contended);
    if (s->baseline_contended)
        fprintf(out, "    the reference was timed while another process used the GPU: no vs ref\n");
}

/* How the search went: the strategy, what ended it, how much of the space it
 * saw, and what the constraints cost. */
static void search_line(FILE *out, const gb_shape_result *s)
{
    if (s->ended_by == GB_END_NONE) return;
    static const char *const why[] = {
        [GB_END_SPACE] = "every valid configuration tried",
        [GB_END_EVALS] = "the budget's evaluations",
        [GB_END_SECONDS] = "the budget's seconds",
        [GB_END_STRATEGY] = "the strategy proposed no more",
        [GB_END_INTERRUPT] = "interrupted",
    };
    fprintf(out, "    search: %s (seed %llu", s->strategy, (unsigned long long)s->seed);
    if (s->budget_evals > 0) fprintf(out, ", budget %lld evaluations", (long long)s->budget_evals);
    if (s->budget_seconds > 0) fprintf(out, ", budget %g s", s->budget_seconds);
    fprintf(out, "), ended by %s: %d configuration(s) tried", why[s->ended_by], s->n_evals);
    if (s->n_recorded) fprintf(out, " (%d by earlier runs)", s->n_recorded);
    double seen = s->n_configs ? 100.0 * s->n_evals / (double)s->n_configs : 0.0;
    fprintf(out, " of %llu in the space (%.*f%%)", (unsigned long long)s->n_configs,
            seen < 0.1  ? 3
            : seen < 10 ? 2
                        : 1,
            seen);
    if (s->n_checked)
        fprintf(out, "; constraints rejected %llu of %llu looked at (%.2g M/s)",
                (unsigned long long)s->n_rejected, (unsigned long long)s->n_checked,
                s->check_s > 0 ? s->n_checked / s->check_s / 1e6 : 0.0);
    fputc('\n', out);
}

static void summary(FILE *out, const gb_tune_result *r, bool verbose)
{
    for (int i = 0; i < r->n_shapes; i++) {
        const gb_shape_result *s = &r->shapes[i];
        if (s->failure) fprintf(out, "  %s: %s\n", s->key_text, s->failure);
        if (s->cached || s->failure) continue;
        fprintf(out, "  %s: ", s->key_text);
        status_counts(out, s);
        search_line(out, s);
        if (s->n_leaders) fprintf(out, "    %d leader(s) raced\n", s->n_leaders);
        race_line(out, s);
        contention_lines(out, s, r->bench);
        failures(out, s, verbose);
    }
}

/* Where the run's time went. */
static void timing_line(FILE *out, const gb_tune_timing *t)
{
    if (t->n_trials == 0) {
        if (t->lease_wait_s > 0)
            fprintf(out, "  time %.1f s: %.1f s waiting for the GPU's lease\n", t->total_s,
                    t->lease_wait_s);
        return;
    }
    double other = t->total_s - t->screening_s - t->racing_s - t->compile_wait_s - t->lease_wait_s;
    fprintf(out, "  time %.1f s: ", t->total_s);
    if (t->lease_wait_s > 0) fprintf(out, "%.1f s waiting for the GPU's lease, ", t->lease_wait_s);
    fprintf(out,
            "%.1f s in %d trials (%.0f ms each), %.1f s racing the leaders, %.1f s with "
            "the GPU idle waiting for compiles (NVRTC %.1f s over the threads), %.1f s other\n",
            t->screening_s, t->n_trials, 1e3 * t->screening_s / t->n_trials, t->racing_s,
            t->compile_wait_s, t->compile_cpu_s, other > 0 ? other : 0);
}

/* Where a trial's time went, on average: its phases in the GPU session, and the
 * overhead around them, in the session and on the way to and from the worker. */
static void phases_line(FILE *out, const gb_tune_timing *t)
{
    const gb_trial_phases *p = &t->trial_phases;
    if (t->n_trials == 0 || !(p->total_ms > 0)) return;
    double n = t->n_trials;
    double in_session = p->session_ms - p->load_ms - p->check_ms - p->warmup_ms - p->sample_ms;
    double round_trip = p->total_ms - p->session_ms;
    in_session = in_session > 0 ? in_session : 0;
    round_trip = round_trip > 0 ? round_trip : 0;
    fprintf(out,
            "  each trial: %.1f ms loading, %.1f ms checking, %.1f ms warming up, %.1f ms "
            "sampling (%.1f ms in the kernel), %.1f ms overhead (%.1f ms in the worker, %.1f ms "
            "round trip)\n",
            p->load_ms / n, p->check_ms / n, p->warmup_ms / n, p->sample_ms / n, p->kernel_ms / n,
            (in_session + round_trip) / n, in_session / n, round_trip / n);
}

void gb_report_tune(FILE *out, const char *kernel, const gb_tune_result *r,
                    const gb_report_opts *opts)
{
    fprintf(out, "\n%s  (kernel %.12s%s%s%s%s)\n", kernel, r->kernel_fp, r->device[0] ? ", " : "",
            r->device, r->clock_source[0] ? ", clocks from " : "", r->clock_source);
    if (opts->compile_only) {
        gb_report_compiles(out, r, opts);
        fflush(out);
        return;
    }
    static const char *const headers[] = {
        "shape",  "best config", "median ms", "+/-",    "MHz",   "TFLOP/s", "GB/s",
        "vs ref", "compiled",    "rejected",  "failed", "timed", "",        NULL};
    gb_table t;
    gb_table_init(&t, headers, "llrrrrrrrrrrl");
    for (int i = 0; i < r->n_shapes; i++)
        shape_row(&t, &r->shapes[i], r->bench);
    gb_table_print(&t, out);
    gb_table_free(&t);
    summary(out, r, opts->verbose);
    timing_line(out, &r->timing);
    phases_line(out, &r->timing);
    fflush(out);
}
