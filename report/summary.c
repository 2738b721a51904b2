/*
 * The lines below a result table: how each shape's trials ended, how its search
 * went and how its best was chosen, what other processes on the GPU did to its
 * figures, and where the call's time went.
 */
#include "report/table.h"
#include "report/result.h"

#include "engine/nvml.h"

#include <stdio.h>
#include <string.h>

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
    if (m->n_throttled) {
        char reasons[GB_NVML_REASONS_TEXT_BYTES] = "";
        if (m->throttle_reasons)
            gb_nvml_reasons_text((unsigned long long)m->throttle_reasons, reasons, sizeof reasons);
        fprintf(out,
                "    %d of %d samples taken while the GPU throttled (SM clock under the "
                "threshold%s%s) were left out%s\n",
                m->n_throttled, m->n_samples, *reasons ? "; NVML: " : "", reasons,
                m->all_throttled ? " (all were: kept)" : "");
    }
    if (m->capped)
        fprintf(out, "    the measurement hit its cap at ±%.2f%% (target not reached)\n",
                100 * gb_stats_rel_ci(&s->best));
    /* A file saved before JSON carried switch_launches has the figure but not
     * the count: no count, rather than "0 such launches". */
    if (m->switch_ms > 0 && s->best.median > 0) {
        fprintf(out, "    its first launch after another kernel: %.4g ms (%+.1f%%), ", m->switch_ms,
                100 * (m->switch_ms / s->best.median - 1));
        if (m->n_switch > 0) fprintf(out, "%d such launches in the race, ", m->n_switch);
        fprintf(out, "kept apart\n");
    }
    if (m->n_lost)
        fprintf(out, "    %d sample(s) taken again: CUPTI lost their kernel records\n", m->n_lost);
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

void gb_summary_shape(FILE *out, const gb_shape_result *s, bool bench, bool verbose)
{
    if (s->failure) fprintf(out, "  %s: %s\n", s->key_text, s->failure);
    if (s->cached || s->failure) return;
    if (s->compile_only) {
        gb_report_entry e = {.result = s, .bench = bench};
        gb_strbuf why = GB_STRBUF_INIT;
        gb_entry_reason(&e, &why);
        fprintf(out, "  %s: %s\n", s->key_text, gb_sb_status(&why) ? "?" : gb_sb_str(&why));
        gb_sb_free(&why);
        return;
    }
    fprintf(out, "  %s: ", s->key_text);
    status_counts(out, s);
    search_line(out, s);
    if (s->n_leaders) fprintf(out, "    %d leader(s) raced\n", s->n_leaders);
    race_line(out, s);
    contention_lines(out, s, bench);
    failures(out, s, verbose);
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
static void phases_line(FILE *out, const gb_tune_timing *t, const char *timer)
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
    if (p->n_samples > 0 && timer && *timer)
        fprintf(out, "  timer: %s, %.3f ms a sample to read\n",
                !strcmp(timer, "cupti") ? "CUPTI's kernel records" : "CUDA events",
                p->timer_ms / p->n_samples);
}

void gb_summary_timing(FILE *out, const gb_tune_timing *timing, const char *timer)
{
    timing_line(out, timing);
    phases_line(out, timing, timer);
}
