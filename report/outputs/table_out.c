/*
 * The terminal table, as an output: a boxed row per shape, grouped by kernel,
 * printed when a gb.tune call ends (or when the kernel changes, for a saved run),
 * with the summary lines of each shape and the call's time below it.
 *
 * Rows are made when an entry arrives (the entry is gone after the call), the
 * summary text of each shape too; a group is printed and forgotten at call_end.
 */
#include "base/strbuf.h"
#include "report/output.h"
#include "report/table.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RED    "\033[31m"
#define GREEN  "\033[32m"
#define YELLOW "\033[33m"

enum { COL_SHAPE, COL_CONFIG, COL_VS_REF = 11, COL_FAILED = 13, COL_STATUS = 14 };

static const char *const headers[] = {
    "shape",  "best config", "median ms", "±",      "MHz",   "TFLOP/s", "GB/s", "% ceil",
    "% peak", "flop/B",      "roof",      "vs ref", "timed", "failed",  "",     NULL};
static const char *const headers_ascii[] = {
    "shape",  "best config", "median ms", "+/-",    "MHz",   "TFLOP/s", "GB/s", "% ceil",
    "% peak", "flop/B",      "roof",      "vs ref", "timed", "failed",  "",     NULL};

typedef struct table_out {
    gb_output base;
    FILE *out;
    gb_table_opts opts;
    const gb_run_context *ctx;
    gb_table rows; /* the group's */
    bool has_rows;
    char *kernel;       /* the group's kernel */
    gb_strbuf summary;  /* the group's summary lines */
    gb_strbuf notes;    /* compile-only: the shapes that did not compile, and why */
    const char *sep_ms; /* "±" or "+/-" */
    char vs_header[32]; /* "vs cuBLAS" when the group's reference is a library call */
} table_out;

/* ---- cells ----------------------------------------------------------------- */

/* v with digits decimals, or "-" when unknown (0). */
static void number_or_dash(gb_table *t, int digits, double v)
{
    if (v > 0)
        gb_table_cell(t, "%.*f", digits, v);
    else
        gb_table_cell(t, "-");
}

static const char *roof_name(const gb_report_entry *e, const gb_roofs *roofs)
{
    const gb_shape_result *s = e->result;
    bool memory_bound;
    if (s->flops > 0 && s->bytes > 0) {
        /* the measured roofs when both are known, else the peaks */
        gb_entry_roof_tflops(e, roofs, gb_entry_fraction(e, roofs, true) > 0, &memory_bound);
        return memory_bound ? "memory" : "compute";
    }
    return s->bytes > 0 ? "memory" : s->flops > 0 ? "compute" : "-";
}

static void figures(gb_table *t, const gb_report_entry *e, const gb_run_context *ctx)
{
    const gb_shape_result *s = e->result;
    const gb_roofs *roofs = &ctx->roofs;
    gb_table_cell(t, "%.4f", s->best.median);
    gb_table_cell(t, "%.2f%%%s", 100 * gb_stats_rel_ci(&s->best),
                  s->best_measurement.capped ? "!" : "");
    number_or_dash(t, 0, s->best_measurement.clock_mhz_median);
    number_or_dash(t, 2, gb_entry_tflops(e));
    number_or_dash(t, 1, gb_entry_gbps(e));
    bool device = ctx->has_device;
    number_or_dash(t, 1, device ? 100 * gb_entry_fraction(e, roofs, true) : 0);
    number_or_dash(t, 1, device ? 100 * gb_entry_fraction(e, roofs, false) : 0);
    number_or_dash(t, 1, gb_entry_intensity(e));
    gb_table_cell(t, "%s", roof_name(e, roofs));
}

static void row(table_out *o, const gb_report_entry *e)
{
    gb_table *t = &o->rows;
    const gb_shape_result *s = e->result;
    gb_table_cell(t, "%s", s->key_text ? s->key_text : "?");
    if (s->has_best) {
        gb_strbuf config = GB_STRBUF_INIT;
        gb_fields_append_canonical(&config, &s->best_config, NULL, 0);
        gb_table_cell(t, "%s", config.len ? gb_sb_str(&config) : "-");
        gb_sb_free(&config);
        figures(t, e, o->ctx);
    } else {
        gb_table_cell(t, "(%s)", gb_outcome_name(gb_entry_outcome(e)));
        for (int i = 0; i < 9; i++)
            gb_table_cell(t, "-");
    }
    if (s->has_baseline && s->has_best)
        gb_table_cell(t, "%.2fx", s->baseline.stats.median / s->best.median);
    else
        gb_table_cell(t, "-");
    gb_table_cell(t, "%d", s->n_timed);
    if (s->cached)
        gb_table_cell(t, "-");
    else
        gb_table_cell(t, "%d", gb_shape_n_failed(s));
    gb_table_cell(t, "%s", gb_outcome_name(gb_entry_outcome(e)));
}

/* Green for a speedup, red for a slowdown or no result, yellow for failed trials
 * and for figures other processes or an interrupt may have spoiled. */
static const char *cell_color(void *ctx, int r, int c)
{
    const gb_table *t = ctx;
    const char *text = t->cells[r * t->n_cols + c];
    if (!text) return NULL;
    switch (c) {
    case COL_CONFIG:
        return text[0] == '(' && strcmp(text, "(compiled)") ? RED : NULL;
    case COL_VS_REF:
        return text[0] == '-' ? NULL : strtod(text, NULL) >= 1 ? GREEN : RED;
    case COL_FAILED:
        return atoi(text) > 0 ? YELLOW : NULL;
    case COL_STATUS:
        return !strcmp(text, "contended") || !strcmp(text, "interrupted")     ? YELLOW
               : !strcmp(text, "failed") || !strcmp(text, "no valid variant") ? RED
                                                                              : NULL;
    default:
        return NULL;
    }
}

/* ---- groups ---------------------------------------------------------------- */

static void heading(table_out *o, const gb_tune_result *call)
{
    const gb_run_context *ctx = o->ctx;
    fprintf(o->out, "\n%s", o->kernel);
    if (ctx && ctx->has_device)
        fprintf(o->out, "  %s (%s, %d SMs)", ctx->device.name, ctx->device.arch, ctx->device.sms);
    else if (call && call->device[0])
        fprintf(o->out, "  %s", call->device);
    if (call && call->clock_source[0]) fprintf(o->out, ", clocks from %s", call->clock_source);
    if (call && call->timer[0]) fprintf(o->out, ", timed by %s", call->timer);
    if (call && call->kernel_fp[0]) fprintf(o->out, "  (kernel %.12s)", call->kernel_fp);
    fputc('\n', o->out);
    if (call && call->timer_note[0]) fprintf(o->out, "  %s\n", call->timer_note);
}

static void forget_group(table_out *o)
{
    gb_table_free(&o->rows);
    o->has_rows = false;
    free(o->kernel);
    o->kernel = NULL;
    gb_sb_reset(&o->summary);
    gb_sb_reset(&o->notes);
}

static void print_group(table_out *o, const gb_tune_result *call)
{
    if (!o->kernel) return;
    heading(o, call);
    if (call && (o->opts.compile_only || call->compile_only)) {
        const char *arch = call->arch[0] ? call->arch : o->opts.arch;
        gb_report_opts compile = {true, o->opts.verbose, o->opts.jobs, arch};
        gb_report_compiles(o->out, call, &compile);
        fputs(gb_sb_str(&o->notes), o->out);
    } else if (o->has_rows) {
        gb_table_style style = {o->opts.ascii, o->opts.color, cell_color, &o->rows};
        gb_table_print_box(&o->rows, o->out, &style);
        fputs(gb_sb_str(&o->summary), o->out);
    }
    if (call && !o->opts.compile_only && !call->compile_only)
        gb_summary_timing(o->out, &call->timing, call->timer);
    fflush(o->out);
    forget_group(o);
}

/* The group's columns: "vs cuBLAS" instead of "vs ref" when the call's reference
 * is a cuBLAS call (a saved run does not say, and keeps "vs ref"). */
static void init_rows(table_out *o, const gb_tune_result *call)
{
    const char *cols[GB_TABLE_MAX_COLS];
    const char *const *base = o->opts.ascii ? headers_ascii : headers;
    int n = 0;
    for (; base[n] && n < GB_TABLE_MAX_COLS - 1; n++)
        cols[n] = base[n];
    cols[n] = NULL;
    if (call && call->reference_lib[0]) {
        snprintf(o->vs_header, sizeof o->vs_header, "vs %s", call->reference_lib);
        cols[COL_VS_REF] = o->vs_header;
    }
    gb_table_init(&o->rows, cols, "llrrrrrrrrlrrrl");
}

static int start_group(table_out *o, const char *kernel, const gb_tune_result *call, gb_err *err)
{
    if (o->kernel && strcmp(o->kernel, kernel) == 0) return GB_OK;
    print_group(o, NULL); /* a saved run: the previous kernel's rows */
    if (!(o->kernel = strdup(kernel))) return gb_err_set(err, GB_ENOMEM, "out of memory");
    init_rows(o, call);
    o->has_rows = true;
    return GB_OK;
}

/* ---- the output ------------------------------------------------------------ */

static int table_begin(gb_output *base, const gb_run_context *ctx, gb_err *err)
{
    (void)err;
    ((table_out *)base)->ctx = ctx;
    return GB_OK;
}

static int table_shape(gb_output *base, const gb_report_entry *e, gb_err *err)
{
    table_out *o = (table_out *)base;
    int rc = start_group(o, e->kernel, e->call, err);
    if (rc) return rc;
    row(o, e);
    gb_outcome outcome = gb_entry_outcome(e);
    if (e->result->compile_only && outcome != GB_OUTCOME_COMPILED) {
        gb_sb_printf(&o->notes, "  %s: %s: ", e->result->key_text, gb_outcome_name(outcome));
        gb_entry_reason(e, &o->notes);
        gb_sb_putc(&o->notes, '\n');
    }
    char *text = NULL;
    size_t len = 0;
    FILE *lines = open_memstream(&text, &len);
    if (!lines) return gb_err_set(err, GB_ENOMEM, "out of memory");
    gb_summary_shape(lines, e->result, e->bench, o->opts.verbose);
    fclose(lines);
    gb_sb_append(&o->summary, text, len);
    free(text);
    return gb_sb_status(&o->summary) || gb_sb_status(&o->notes)
               ? gb_err_set(err, GB_ENOMEM, "out of memory")
               : GB_OK;
}

static int table_call_end(gb_output *base, const char *kernel, const gb_tune_result *call,
                          gb_err *err)
{
    table_out *o = (table_out *)base;
    int rc = start_group(o, kernel, call, err); /* a call with no shapes still says so */
    if (rc == GB_OK) print_group(o, call);
    return rc;
}

static int table_end(gb_output *base, gb_err *err)
{
    (void)err;
    print_group((table_out *)base, NULL);
    return GB_OK;
}

static void table_destroy(gb_output *base)
{
    table_out *o = (table_out *)base;
    forget_group(o);
    gb_sb_free(&o->summary);
    gb_sb_free(&o->notes);
    free(o);
}

static const gb_output_ops table_ops = {
    .name = "table",
    .begin = table_begin,
    .shape = table_shape,
    .call_end = table_call_end,
    .end = table_end,
    .destroy = table_destroy,
};

int gb_output_table(FILE *out, const gb_table_opts *opts, gb_output **out_output, gb_err *err)
{
    table_out *o = calloc(1, sizeof *o);
    if (!o) return gb_err_set(err, GB_ENOMEM, "out of memory");
    o->base.ops = &table_ops;
    o->out = out;
    o->opts = *opts;
    o->summary = (gb_strbuf)GB_STRBUF_INIT;
    o->notes = (gb_strbuf)GB_STRBUF_INIT;
    *out_output = &o->base;
    return GB_OK;
}

/* ---- one call on its own ----------------------------------------------------- */

void gb_report_tune(FILE *out, const char *kernel, const gb_tune_result *result,
                    const gb_report_opts *opts)
{
    gb_table_opts table = {.verbose = opts->verbose,
                           .compile_only = opts->compile_only,
                           .jobs = opts->jobs,
                           .arch = opts->arch};
    gb_run_context ctx = {0};
    gb_output *o = NULL;
    gb_err err = {0};
    if (gb_output_table(out, &table, &o, &err) != GB_OK) {
        fprintf(out, "(%s)\n", err.msg);
        return;
    }
    gb_output_begin(o, &ctx, &err);
    for (int i = 0; i < result->n_shapes; i++) {
        gb_report_entry e = {
            .kernel = kernel, .bench = result->bench, .result = &result->shapes[i], .call = result};
        gb_output_shape(o, &e, &err);
    }
    gb_output_call_end(o, kernel, result, &err);
    gb_output_end(o, &err);
    gb_output_destroy(o);
}
