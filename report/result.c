#include "report/result.h"

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
    gb_run_context_free(&report->context);
    memset(report, 0, sizeof *report);
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
