#include "report/result.h"

#include "engine/nvrtc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void gb_run_context_free(gb_run_context *ctx)
{
    if (!ctx) return;
    free(ctx->engine_version);
    free(ctx->date);
    free(ctx->host_name);
    free(ctx->executable);
    free(ctx->command_line);
    free(ctx->script);
    memset(ctx, 0, sizeof *ctx);
}

void gb_report_free(gb_report *report)
{
    if (!report) return;
    for (int i = 0; i < report->n_entries; i++) {
        gb_report_entry *e = &report->entries[i];
        free((char *)e->kernel);
        /* A read-back result is a one-shape gb_tune_result of its own. */
        gb_tune_result one = {.shapes = (gb_shape_result *)e->result,
                              .n_shapes = e->result ? 1 : 0};
        gb_tune_result_free(&one);
    }
    free(report->entries);
    for (int i = 0; i < report->n_calls; i++) {
        free(report->calls[i].kernel);
        gb_tune_result_free(&report->calls[i].result);
    }
    free(report->calls);
    gb_run_context_free(&report->context);
    memset(report, 0, sizeof *report);
}

/* ---- the outcome ------------------------------------------------------------ */

gb_outcome gb_entry_outcome(const gb_report_entry *e)
{
    const gb_shape_result *s = e->result;
    if (s->failure) return GB_OUTCOME_FAILED;
    if (s->compile_only) return s->n_compiled > 0 ? GB_OUTCOME_COMPILED : GB_OUTCOME_NO_VARIANT;
    if (s->interrupted) return GB_OUTCOME_INTERRUPTED;
    if (!s->has_best) return GB_OUTCOME_NO_VARIANT;
    if (s->cached) return GB_OUTCOME_CACHE;
    if (s->contended) return GB_OUTCOME_CONTENDED;
    if (e->bench) return GB_OUTCOME_BENCH;
    return s->n_resumed ? GB_OUTCOME_RESUMED : GB_OUTCOME_TUNED;
}

const char *gb_outcome_name(gb_outcome o)
{
    static const char *const names[GB_OUTCOME_COUNT] = {
        [GB_OUTCOME_TUNED] = "tuned",         [GB_OUTCOME_RESUMED] = "resumed",
        [GB_OUTCOME_CACHE] = "cache",         [GB_OUTCOME_BENCH] = "bench",
        [GB_OUTCOME_CONTENDED] = "contended", [GB_OUTCOME_INTERRUPTED] = "interrupted",
        [GB_OUTCOME_COMPILED] = "compiled",   [GB_OUTCOME_NO_VARIANT] = "no valid variant",
        [GB_OUTCOME_FAILED] = "failed",
    };
    return o >= 0 && o < GB_OUTCOME_COUNT ? names[o] : "?";
}

bool gb_outcome_is_bad(gb_outcome o)
{
    return o == GB_OUTCOME_NO_VARIANT || o == GB_OUTCOME_FAILED || o == GB_OUTCOME_CONTENDED ||
           o == GB_OUTCOME_INTERRUPTED;
}

const char *gb_compile_row_status(const gb_compile_row *row)
{
    return row->error    ? "compile_error"
           : row->limit  ? "over limits"
           : row->cached ? "cache"
                         : "compiled";
}

const char *gb_compile_row_reason(const gb_compile_row *row, char *out, size_t n)
{
    if (row->error)
        gb_nvrtc_first_error(row->error, out, n);
    else
        snprintf(out, n, "%s", row->limit ? row->limit : "");
    return out;
}

/* " (3 wrong, 1 crashed)": how the trials that failed ended. */
static void trial_counts(const gb_shape_result *s, gb_strbuf *out)
{
    int shown = 0;
    for (int i = 0; i < GB_TRIAL_STATUS_COUNT; i++)
        if (s->n_status[i] && i != GB_TRIAL_OK)
            gb_sb_printf(out, "%s%d %s", shown++ ? ", " : " (", s->n_status[i],
                         gb_trial_status_name((gb_trial_status)i));
    if (shown) gb_sb_putc(out, ')');
}

static void compiled_reason(const gb_shape_result *s, gb_strbuf *out)
{
    int failed = s->n_status[GB_TRIAL_COMPILE_ERROR];
    gb_sb_printf(out, "compile-only: %d variant%s compiled", s->n_compiled,
                 s->n_compiled == 1 ? "" : "s");
    if (failed) gb_sb_printf(out, ", %d failed to compile", failed);
    if (s->n_rejected)
        gb_sb_printf(out, ", %llu configuration%s rejected by the constraints",
                     (unsigned long long)s->n_rejected, s->n_rejected == 1 ? "" : "s");
    gb_sb_puts(out, "; nothing was timed");
}

void gb_entry_reason(const gb_report_entry *e, gb_strbuf *out)
{
    const gb_shape_result *s = e->result;
    switch (gb_entry_outcome(e)) {
    case GB_OUTCOME_FAILED:
        gb_sb_puts(out, s->failure);
        break;
    case GB_OUTCOME_COMPILED:
        compiled_reason(s, out);
        break;
    case GB_OUTCOME_NO_VARIANT:
        gb_sb_puts(out, s->n_evals || s->compile_only ? "no configuration passed"
                                                      : "no configuration was tried");
        trial_counts(s, out);
        break;
    case GB_OUTCOME_INTERRUPTED:
        gb_sb_puts(out, s->has_best ? "interrupted: the best of what finished"
                                    : "interrupted before any configuration passed");
        break;
    case GB_OUTCOME_CONTENDED:
        gb_sb_puts(out, "other processes used the GPU during its measurement");
        break;
    case GB_OUTCOME_CACHE:
        gb_sb_puts(out, "answered from the cache: nothing was measured now");
        break;
    case GB_OUTCOME_RESUMED:
        gb_sb_printf(out, "went on from %d trial%s of an earlier run", s->n_resumed,
                     s->n_resumed == 1 ? "" : "s");
        break;
    default:
        break;
    }
    if (s->has_best && s->race_failure) {
        if (out->len) gb_sb_puts(out, "; ");
        gb_sb_puts(out, s->race_failure);
    }
}

static double best_ms(const gb_report_entry *e)
{
    return e->result->has_best ? e->result->best.median : 0;
}

double gb_entry_tflops_at(const gb_report_entry *e, double ms)
{
    return ms > 0 && e->result->flops > 0 ? e->result->flops / (ms * 1e-3) / 1e12 : 0;
}

double gb_entry_gbps_at(const gb_report_entry *e, double ms)
{
    return ms > 0 && e->result->bytes > 0 ? e->result->bytes / (ms * 1e-3) / 1e9 : 0;
}

double gb_entry_tflops(const gb_report_entry *e)
{
    return gb_entry_tflops_at(e, best_ms(e));
}

double gb_entry_gbps(const gb_report_entry *e)
{
    return gb_entry_gbps_at(e, best_ms(e));
}

double gb_entry_intensity(const gb_report_entry *e)
{
    const gb_shape_result *s = e->result;
    return s->flops > 0 && s->bytes > 0 ? s->flops / s->bytes : 0;
}

/* The memory and compute roofs of an entry: measured ceilings, or peaks (0 when
 * unknown). */
static void roofs_of(const gb_report_entry *e, const gb_roofs *roofs, bool measured,
                     double *out_gbps, double *out_tflops)
{
    *out_gbps = measured ? roofs->ceiling_gbps : roofs->peak_gbps;
    *out_tflops = measured ? roofs->ceiling_tflops[e->math] : roofs->peak_tflops[e->math];
}

double gb_entry_roof_tflops(const gb_report_entry *e, const gb_roofs *roofs, bool measured,
                            bool *out_memory_bound)
{
    double gbps, tflops;
    roofs_of(e, roofs, measured, &gbps, &tflops);
    double memory = gbps * gb_entry_intensity(e) / 1e3; /* GB/s x flop/B = Gflop/s */
    *out_memory_bound = memory > 0 && (tflops <= 0 || memory < tflops);
    if (memory > 0 && tflops > 0) return memory < tflops ? memory : tflops;
    return memory > 0 ? memory : tflops;
}

double gb_entry_fraction_at(const gb_report_entry *e, const gb_roofs *roofs, bool measured,
                            double ms)
{
    const gb_shape_result *s = e->result;
    double gbps, tflops;
    roofs_of(e, roofs, measured, &gbps, &tflops);
    /* Against the roofs that bound it, all of them known. */
    if ((s->flops > 0 && !(tflops > 0)) || (s->bytes > 0 && !(gbps > 0))) return 0;
    bool memory_bound;
    if (gb_entry_tflops_at(e, ms) > 0)
        return gb_entry_tflops_at(e, ms) / gb_entry_roof_tflops(e, roofs, measured, &memory_bound);
    return gb_entry_gbps_at(e, ms) > 0 ? gb_entry_gbps_at(e, ms) / gbps : 0;
}

double gb_entry_fraction(const gb_report_entry *e, const gb_roofs *roofs, bool measured)
{
    return gb_entry_fraction_at(e, roofs, measured, best_ms(e));
}
