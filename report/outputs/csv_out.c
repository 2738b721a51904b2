/*
 * The CSV output (report/output.h; docs/report-csv.md): a run as a spreadsheet.
 *
 * The trials format has one row per trial of every entry (failed ones too), one
 * for each shape's best as its race measured it (or, without a best, one saying
 * what became of the shape), one for each baseline, and one per compile of a
 * compile-only call, with a column per shape field and per parameter. Those columns are the union
 * over the whole run, so rows are kept (as their finished cells and the fields they fill) until
 * end, which writes the header and then the rows. The cutlass format has fixed columns
 * (report/outputs/csv_cutlass.c): its rows are written as entries come. Either way the file is
 * written whole at end, through a temporary file renamed into place (gb_export_save), so there is
 * no file until the run is over.
 */
#include "report/outputs/csv.h"
#include "report/export/export.h"
#include "report/output.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* ---- the trials format ------------------------------------------------------ */

/* One row kept until end: its cells before and after the field columns, and the
 * fields that fill those. */
typedef struct csv_row {
    char *head; /* kernel,shape */
    gb_fields shape;
    gb_fields params;
    char *tail; /* config ... reason */
} csv_row;

typedef struct csv_out {
    gb_output base;
    char *path;
    gb_csv_format format;
    const gb_run_context *ctx; /* valid from begin until end returns */
    csv_row *rows;             /* trials */
    int n_rows;
    int cap_rows;
    gb_strbuf body; /* cutlass */
    int n_problems;
} csv_out;

/* The columns after the field columns (docs/report-csv.md). */
static const char *const tail_columns[] = {
    "config",      "role",    "is_best",   "status",      "median_ms",   "ci_lo_ms",
    "ci_hi_ms",    "mean_ms", "stddev_ms", "min_ms",      "max_ms",      "q1_ms",
    "q3_ms",       "samples", "clock_mhz", "timer",       "tflops",      "gbps",
    "pct_of_peak", "resumed", "registers", "local_bytes", "spill_bytes", "smem_bytes",
    "compile_ms",  "reason",
};
#define N_TAIL_COLUMNS ((int)(sizeof tail_columns / sizeof *tail_columns))

/* What one row says after the field columns. */
typedef struct row_facts {
    const char *config_text; /* "" for a baseline */
    const char *role;        /* "trial", "best", "baseline", "shape", "compile" */
    bool is_best;
    const char *status;
    const gb_stats *stats;         /* NULL: nothing was measured */
    double clock_mhz;              /* 0: unknown */
    const char *timer;             /* "cupti", "events"; NULL: nothing was timed */
    int resumed;                   /* 1, 0, or -1 for an empty cell */
    const gb_compile_row *compile; /* a --compile-only row: its resources */
    const char *reason;
} row_facts;

/* Throughput of the shape's work in median_ms, and how near the roof that is
 * (gb_entry_fraction_at: the theoretical roofs; 0 where unknown). */
static void rates(const gb_report_entry *e, const gb_run_context *ctx, double median_ms,
                  double *out_tflops, double *out_gbps, double *out_pct)
{
    *out_tflops = gb_entry_tflops_at(e, median_ms);
    *out_gbps = gb_entry_gbps_at(e, median_ms);
    *out_pct =
        ctx && ctx->has_device ? 100 * gb_entry_fraction_at(e, &ctx->roofs, false, median_ms) : 0;
}

static void positive(csv_line *l, double v, int digits)
{
    if (v > 0)
        csv_num(l, v, digits);
    else
        csv_empty(l);
}

static void stats_cells(csv_line *l, const gb_stats *st)
{
    const double v[] = {st->median, st->ci_lo, st->ci_hi, st->mean, st->stddev,
                        st->min,    st->max,   st->q1,    st->q3};
    for (size_t i = 0; i < sizeof v / sizeof *v; i++)
        csv_num(l, v[i], 15);
    csv_int(l, st->n);
}

/* What a compile used: registers, local memory, spills (stores and loads), static
 * shared memory, NVRTC's ms; empty cells for another row, or for a compile that
 * failed. */
static void resource_cells(csv_line *l, const gb_compile_row *row)
{
    const gb_resources *r = row && !row->error ? &row->resources : NULL;
    if (r) {
        csv_int(l, r->registers);
        csv_int(l, r->stack_bytes);
        if (r->spill_store_bytes >= 0)
            csv_int(l, r->spill_store_bytes + r->spill_load_bytes);
        else
            csv_empty(l); /* ptxas did not say */
        csv_int(l, r->smem_static_bytes);
    } else {
        for (int i = 0; i < 4; i++)
            csv_empty(l);
    }
    if (row)
        csv_num(l, row->compile_ms, 6);
    else
        csv_empty(l);
}

/* e: the entry whose work the rates are of (NULL for a row without a time). */
static char *tail_text(const csv_out *c, const gb_report_entry *e, const row_facts *f)
{
    gb_strbuf sb = GB_STRBUF_INIT;
    csv_line l = {.sb = &sb};
    csv_text(&l, f->config_text);
    csv_text(&l, f->role);
    csv_int(&l, f->is_best);
    csv_text(&l, f->status);
    bool measured = f->stats && f->stats->n > 0;
    if (measured) stats_cells(&l, f->stats);
    for (int i = measured ? 10 : 0; i < 10; i++)
        csv_empty(&l);
    positive(&l, f->clock_mhz, 6);
    if (measured && f->timer)
        csv_text(&l, f->timer);
    else
        csv_empty(&l);
    double tflops = 0, gbps = 0, pct = 0;
    if (measured) rates(e, c->ctx, f->stats->median, &tflops, &gbps, &pct);
    positive(&l, tflops, 6);
    positive(&l, gbps, 6);
    positive(&l, pct, 4);
    if (f->resumed >= 0)
        csv_int(&l, f->resumed);
    else
        csv_empty(&l);
    resource_cells(&l, f->compile);
    csv_text(&l, f->reason);
    return gb_sb_take(&sb);
}

/* A row of kernel at the shape of key_text (NULL: a compile, of no one shape). */
static int add_row_of(csv_out *c, const char *kernel, const gb_shape_result *shape,
                      const gb_report_entry *e, const gb_fields *params, const row_facts *f,
                      gb_err *err)
{
    if (c->n_rows == c->cap_rows) {
        int cap = c->cap_rows ? 2 * c->cap_rows : 64;
        csv_row *grown = realloc(c->rows, (size_t)cap * sizeof *grown);
        if (!grown) return gb_err_set(err, GB_ENOMEM, "csv output: out of memory");
        c->rows = grown;
        c->cap_rows = cap;
    }
    csv_row *r = &c->rows[c->n_rows];
    memset(r, 0, sizeof *r);
    gb_strbuf head = GB_STRBUF_INIT;
    csv_line l = {.sb = &head};
    csv_text(&l, kernel);
    csv_text(&l, shape ? shape->key_text : "");
    r->head = gb_sb_take(&head);
    r->tail = tail_text(c, e, f);
    int rc = r->head && r->tail ? GB_OK : GB_ENOMEM;
    if (!rc && shape) rc = gb_fields_copy(&shape->shape, &r->shape);
    if (!rc && params) rc = gb_fields_copy(params, &r->params);
    c->n_rows++; /* freed with the others, whole or not */
    return rc ? gb_err_set(err, rc, "csv output: out of memory") : GB_OK;
}

static int add_row(csv_out *c, const gb_report_entry *e, const gb_fields *params,
                   const row_facts *f, gb_err *err)
{
    return add_row_of(c, e->kernel, e->result, e, params, f, err);
}

static int trial_rows(csv_out *c, const gb_report_entry *e, gb_err *err)
{
    const gb_shape_result *s = e->result;
    int rc = GB_OK;
    for (int i = 0; i < s->n_trials && !rc; i++) {
        const gb_trial_note *t = &s->trials[i];
        bool ok = t->status == GB_TRIAL_OK;
        row_facts f = {.config_text = t->config_text,
                       .role = "trial",
                       .is_best = s->has_best && gb_fields_equal(&t->config, &s->best_config),
                       .status = gb_trial_status_name(t->status),
                       .stats = ok ? &t->measurement.stats : NULL,
                       .clock_mhz = ok ? t->measurement.clock_mhz_median : 0,
                       .timer = ok ? gb_measurement_timer(&t->measurement) : NULL,
                       .resumed = t->resumed,
                       .reason = t->reason};
        rc = add_row(c, e, &t->config, &f, err);
    }
    return rc;
}

/* The best as the race (or the benchmark, or the cache) measured it, with the
 * entry's outcome as its status (report/result.h). */
static int best_row(csv_out *c, const gb_report_entry *e, gb_err *err)
{
    const gb_shape_result *s = e->result;
    gb_strbuf text = GB_STRBUF_INIT, why = GB_STRBUF_INIT;
    gb_fields_append_canonical(&text, &s->best_config, NULL, 0);
    gb_entry_reason(e, &why);
    int rc = gb_sb_status(&text) || gb_sb_status(&why)
                 ? gb_err_set(err, GB_ENOMEM, "csv output: out of memory")
                 : GB_OK;
    row_facts f = {.config_text = gb_sb_str(&text),
                   .role = "best",
                   .is_best = true,
                   .status = gb_outcome_name(gb_entry_outcome(e)),
                   .stats = &s->best,
                   .clock_mhz = s->best_measurement.clock_mhz_median,
                   .timer = gb_measurement_timer(&s->best_measurement),
                   .resumed = s->cached,
                   .reason = gb_sb_str(&why)};
    if (!rc) rc = add_row(c, e, &s->best_config, &f, err);
    gb_sb_free(&text);
    gb_sb_free(&why);
    return rc;
}

static int baseline_row(csv_out *c, const gb_report_entry *e, gb_err *err)
{
    const gb_shape_result *s = e->result;
    row_facts f = {.config_text = "",
                   .role = "baseline",
                   .status = "ok",
                   .stats = &s->baseline.stats,
                   .clock_mhz = s->baseline.clock_mhz_median,
                   .timer = gb_measurement_timer(&s->baseline),
                   .resumed = -1,
                   .reason = ""};
    return add_row(c, e, NULL, &f, err);
}

/* A shape without a best gets a row saying what became of it, and why. */
static int shape_row(csv_out *c, const gb_report_entry *e, gb_err *err)
{
    gb_strbuf why = GB_STRBUF_INIT;
    gb_entry_reason(e, &why);
    row_facts f = {.config_text = "",
                   .role = "shape",
                   .status = gb_outcome_name(gb_entry_outcome(e)),
                   .resumed = -1,
                   .reason = gb_sb_str(&why)};
    int rc = gb_sb_status(&why) ? gb_err_set(err, GB_ENOMEM, "csv output: out of memory")
                                : add_row(c, e, NULL, &f, err);
    gb_sb_free(&why);
    return rc;
}

static int entry_rows(csv_out *c, const gb_report_entry *e, gb_err *err)
{
    const gb_shape_result *s = e->result;
    int rc = trial_rows(c, e, err);
    if (!rc && s->has_best) rc = best_row(c, e, err);
    if (!rc && s->has_baseline && !s->baseline_contended) rc = baseline_row(c, e, err);
    if (!rc && !s->has_best) rc = shape_row(c, e, err);
    return rc;
}

/* A --compile-only call's compiles, a row each: of no one shape, its configuration
 * in the parameter columns (none for the reference). */
static int compile_rows(csv_out *c, const char *kernel, const gb_tune_result *call, gb_err *err)
{
    int rc = GB_OK;
    gb_strbuf text = GB_STRBUF_INIT;
    for (int i = 0; i < call->n_compiles && !rc; i++) {
        const gb_compile_row *row = &call->compiles[i];
        char reason[1024];
        gb_sb_reset(&text);
        gb_fields_append_canonical(&text, &row->config, NULL, 0);
        if (gb_sb_status(&text)) return gb_err_set(err, GB_ENOMEM, "csv output: out of memory");
        row_facts f = {.config_text = gb_sb_str(&text),
                       .role = "compile",
                       .status = gb_compile_row_status(row),
                       .resumed = -1,
                       .compile = row,
                       .reason = gb_compile_row_reason(row, reason, sizeof reason)};
        rc = add_row_of(c, kernel, NULL, NULL, &row->config, &f, err);
    }
    gb_sb_free(&text);
    return rc;
}

/* ---- the field columns ------------------------------------------------------ */

/* The names of one kind of field over every row, sorted (a gb_fields used as a
 * set). */
static int field_names(const csv_out *c, bool params, gb_fields *out)
{
    gb_value present = gb_value_bool(true);
    for (int i = 0; i < c->n_rows; i++) {
        const gb_fields *f = params ? &c->rows[i].params : &c->rows[i].shape;
        for (int j = 0; j < f->n; j++) {
            int rc = gb_fields_set(out, f->names[j], &present);
            if (rc) return rc;
        }
    }
    return GB_OK;
}

static bool is_fixed_column(const char *name)
{
    if (!strcmp(name, "kernel") || !strcmp(name, "shape")) return true;
    for (int i = 0; i < N_TAIL_COLUMNS; i++)
        if (!strcmp(name, tail_columns[i])) return true;
    return false;
}

/* A field's column is its name, unless that is taken by a fixed column or by a
 * field of the other kind: then "shape.NAME" or "param.NAME". */
static void field_headers(csv_line *l, const gb_fields *mine, const gb_fields *theirs,
                          const char *prefix)
{
    gb_strbuf name = GB_STRBUF_INIT;
    for (int i = 0; i < mine->n; i++) {
        const char *n = mine->names[i];
        gb_sb_reset(&name);
        if (is_fixed_column(n) || gb_fields_get(theirs, n)) gb_sb_puts(&name, prefix);
        gb_sb_puts(&name, n);
        csv_text(l, gb_sb_str(&name));
    }
    gb_sb_free(&name);
}

static void field_cells(csv_line *l, const gb_fields *columns, const gb_fields *row)
{
    for (int i = 0; i < columns->n; i++) {
        const gb_value *v = gb_fields_get(row, columns->names[i]);
        if (v)
            csv_value(l, v);
        else
            csv_empty(l);
    }
}

static void write_trials(const csv_out *c, const gb_fields *shape, const gb_fields *params,
                         gb_strbuf *sb)
{
    csv_line l = {.sb = sb};
    csv_text(&l, "kernel");
    csv_text(&l, "shape");
    field_headers(&l, shape, params, "shape.");
    field_headers(&l, params, shape, "param.");
    for (int i = 0; i < N_TAIL_COLUMNS; i++)
        csv_text(&l, tail_columns[i]);
    csv_end_line(&l);
    for (int i = 0; i < c->n_rows; i++) {
        const csv_row *r = &c->rows[i];
        gb_sb_puts(sb, r->head);
        l.started = true;
        field_cells(&l, shape, &r->shape);
        field_cells(&l, params, &r->params);
        gb_sb_putc(sb, ',');
        gb_sb_puts(sb, r->tail);
        csv_end_line(&l);
    }
}

static int trials_text(const csv_out *c, gb_strbuf *sb)
{
    gb_fields shape = {0}, params = {0};
    int rc = field_names(c, false, &shape);
    if (!rc) rc = field_names(c, true, &params);
    if (!rc) write_trials(c, &shape, &params, sb);
    gb_fields_free(&shape);
    gb_fields_free(&params);
    return rc ? rc : gb_sb_status(sb);
}

/* ---- the output ------------------------------------------------------------- */

static int csv_begin(gb_output *o, const gb_run_context *ctx, gb_err *err)
{
    (void)err;
    ((csv_out *)o)->ctx = ctx;
    return GB_OK;
}

static int csv_shape(gb_output *o, const gb_report_entry *e, gb_err *err)
{
    csv_out *c = (csv_out *)o;
    if (c->format == GB_CSV_TRIALS) return entry_rows(c, e, err);
    csv_cutlass_entry(&c->body, e, &c->n_problems);
    return gb_sb_status(&c->body) ? gb_err_set(err, GB_ENOMEM, "csv output: out of memory") : GB_OK;
}

static int csv_call_end(gb_output *o, const char *kernel, const gb_tune_result *call, gb_err *err)
{
    csv_out *c = (csv_out *)o;
    if (c->format != GB_CSV_TRIALS || !call->compile_only) return GB_OK;
    return compile_rows(c, kernel, call, err);
}

static int csv_end(gb_output *o, gb_err *err)
{
    csv_out *c = (csv_out *)o;
    gb_strbuf text = GB_STRBUF_INIT;
    int rc;
    if (c->format == GB_CSV_TRIALS) {
        rc = trials_text(c, &text);
    } else {
        csv_cutlass_header(&text);
        gb_sb_append(&text, gb_sb_str(&c->body), c->body.len);
        rc = gb_sb_status(&text);
    }
    bool unchanged;
    if (rc)
        rc = gb_err_set(err, rc, "csv output for %s: %s", c->path, gb_strerror(rc));
    else if ((rc = gb_export_save(c->path, gb_sb_str(&text), text.len, &unchanged, err)))
        gb_err_prefix(err, "csv output");
    gb_sb_free(&text);
    c->ctx = NULL;
    return rc;
}

static void csv_destroy(gb_output *o)
{
    csv_out *c = (csv_out *)o;
    for (int i = 0; i < c->n_rows; i++) {
        free(c->rows[i].head);
        free(c->rows[i].tail);
        gb_fields_free(&c->rows[i].shape);
        gb_fields_free(&c->rows[i].params);
    }
    free(c->rows);
    gb_sb_free(&c->body);
    free(c->path);
    free(c);
}

static const gb_output_ops csv_ops = {
    .name = "csv",
    .begin = csv_begin,
    .shape = csv_shape,
    .call_end = csv_call_end,
    .end = csv_end,
    .destroy = csv_destroy,
};

/* A run can last hours: a folder that cannot take the file is better said now
 * than at its end (end still reports whatever else goes wrong then). */
static int check_folder(const char *path, gb_err *err)
{
    if (!strcmp(path, "-")) return GB_OK;
    const char *slash = strrchr(path, '/');
    char *dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
    if (!dir) return gb_err_set(err, GB_ENOMEM, "out of memory");
    int rc = access(dir, W_OK | X_OK) == 0 ? GB_OK : errno;
    if (rc)
        gb_err_set(err, rc, "csv output: cannot write %s: its folder %s: %s", path, dir,
                   strerror(rc));
    free(dir);
    return rc;
}

int gb_output_csv(const char *path, gb_csv_format format, gb_output **out, gb_err *err)
{
    *out = NULL;
    if (format != GB_CSV_TRIALS && format != GB_CSV_CUTLASS)
        return gb_err_set(err, GB_EINVAL, "csv output: unknown format %d", (int)format);
    int rc = check_folder(path, err);
    if (rc) return rc;
    csv_out *c = calloc(1, sizeof *c);
    if (c) c->path = strdup(path);
    if (!c || !c->path) {
        free(c);
        return gb_err_set(err, GB_ENOMEM, "out of memory");
    }
    c->base.ops = &csv_ops;
    c->format = format;
    *out = &c->base;
    return GB_OK;
}
