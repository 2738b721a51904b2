/*
 * GEMM rows in the CUTLASS profiler's CSV columns (`--csv-format cutlass`;
 * docs/report-csv.md), so that the scripts and plots made for the profiler's
 * reports take gpubench's too. The columns are those of the CUTLASS 3.x profiler's
 * GEMM report; its figures keep its units (Runtime in ms, "GB/s" in GiB/s as the
 * profiler computes it, GFLOPs in 10^9 flop/s).
 *
 * Like the profiler, which lists every kernel it runs on a problem, an entry
 * gives a row per configuration it tried: the best with the race's measurement,
 * the other trials with their screening's (failed ones too, with no time), and
 * the baseline. Only entries whose shape has integer fields M, N and K (any case)
 * are GEMMs; the others give no rows. A column is filled only where gpubench
 * knows its value: the problem's m, n, k (and batch_count from a BATCH field),
 * the tile from parameters named as docs/report-csv.md lists, the work and the
 * time; the rest (data types, layouts, epilogue scalars) stay empty.
 */
#include "report/outputs/csv.h"

#include <stdio.h>
#include <string.h>

/* The profiler's GEMM columns, in its order. */
static const char header[] =
    "Problem,Provider,OperationKind,Operation,Disposition,Status,gemm_kind,m,n,k,A,B,C,D,"
    "alpha,beta,split_k_mode,split_k_slices,batch_count,raster_order,op_class,accum,"
    "cta_m,cta_n,cta_k,cluster_m,cluster_n,cluster_k,stages,warps_m,warps_n,warps_k,"
    "inst_m,inst_n,inst_k,min_cc,max_cc,Bytes,Flops,Flops/Byte,Runtime,GB/s,GFLOPs\n";

/* Parameter names (any case) that mean a profiler column: the first present wins. */
typedef struct alias {
    const char *column;
    const char *names[6];
} alias;

static const alias param_aliases[] = {
    {"split_k_slices", {"SPLIT_K_SLICES", "SPLIT_K", "SPLITK"}},
    {"cta_m", {"BM", "BLOCK_M", "BLOCK_SIZE_M", "TILE_M", "CTA_M"}},
    {"cta_n", {"BN", "BLOCK_N", "BLOCK_SIZE_N", "TILE_N", "CTA_N"}},
    {"cta_k", {"BK", "BLOCK_K", "BLOCK_SIZE_K", "TILE_K", "CTA_K"}},
    {"cluster_m", {"CLUSTER_M"}},
    {"cluster_n", {"CLUSTER_N"}},
    {"cluster_k", {"CLUSTER_K"}},
    {"stages", {"STAGES", "NUM_STAGES"}},
    {"warps_m", {"WARPS_M", "WARP_COUNT_M"}},
    {"warps_n", {"WARPS_N", "WARP_COUNT_N"}},
    {"warps_k", {"WARPS_K", "WARP_COUNT_K"}},
    {"inst_m", {"INST_M"}},
    {"inst_n", {"INST_N"}},
    {"inst_k", {"INST_K"}},
};

void csv_cutlass_header(gb_strbuf *sb)
{
    gb_sb_puts(sb, header);
}

/* An integer field of f under name (any case), or 0. */
static int64_t int_field(const gb_fields *f, const char *name)
{
    const gb_value *v = f ? csv_field_nocase(f, name) : NULL;
    return v && v->kind == GB_VAL_INT ? v->i : 0;
}

/* The integer parameter that stands for column, or 0. */
static int64_t param_for(const gb_fields *config, const char *column)
{
    for (size_t i = 0; i < sizeof param_aliases / sizeof *param_aliases; i++) {
        if (strcmp(param_aliases[i].column, column)) continue;
        for (int j = 0; j < 6 && param_aliases[i].names[j]; j++) {
            int64_t v = int_field(config, param_aliases[i].names[j]);
            if (v) return v;
        }
    }
    return 0;
}

static void int_or_empty(csv_line *l, int64_t v)
{
    if (v > 0)
        csv_int(l, v);
    else
        csv_empty(l);
}

/* One configuration's row: config NULL for the baseline, stats NULL when it did
 * not run to a time. */
typedef struct cutlass_row {
    const char *operation;
    const char *disposition;
    const char *status;
    const gb_fields *config;
    const gb_stats *stats;
} cutlass_row;

static void problem_cells(csv_line *l, const gb_report_entry *e, int problem, const cutlass_row *r)
{
    const gb_fields *shape = &e->result->shape;
    csv_int(l, problem);
    csv_text(l, "gpubench");
    csv_text(l, "gemm");
    csv_text(l, r->operation);
    csv_text(l, r->disposition);
    csv_text(l, r->status);
    csv_empty(l); /* gemm_kind: CUTLASS's own variants */
    csv_int(l, int_field(shape, "M"));
    csv_int(l, int_field(shape, "N"));
    csv_int(l, int_field(shape, "K"));
    for (int i = 0; i < 7; i++) /* A, B, C, D, alpha, beta, split_k_mode */
        csv_empty(l);
    int_or_empty(l, param_for(r->config, "split_k_slices"));
    int64_t batch = int_field(shape, "BATCH");
    int_or_empty(l, batch ? batch : int_field(shape, "BATCH_COUNT"));
    for (int i = 0; i < 3; i++) /* raster_order, op_class, accum */
        csv_empty(l);
}

static void tile_cells(csv_line *l, const gb_fields *config)
{
    static const char *const tile[] = {"cta_m",     "cta_n",  "cta_k",   "cluster_m", "cluster_n",
                                       "cluster_k", "stages", "warps_m", "warps_n",   "warps_k",
                                       "inst_m",    "inst_n", "inst_k"};
    for (size_t i = 0; i < sizeof tile / sizeof *tile; i++)
        int_or_empty(l, param_for(config, tile[i]));
    csv_empty(l); /* min_cc */
    csv_empty(l); /* max_cc */
}

static void work_cells(csv_line *l, const gb_shape_result *s, const gb_stats *stats)
{
    if (s->bytes > 0)
        csv_num(l, s->bytes, 17);
    else
        csv_empty(l);
    if (s->flops > 0)
        csv_num(l, s->flops, 17);
    else
        csv_empty(l);
    /* The profiler writes the ratio as an integer division of its counts. */
    if (s->flops > 0 && s->bytes > 0)
        csv_num(l, (double)(int64_t)(s->flops / s->bytes), 17);
    else
        csv_empty(l);
    double ms = stats && stats->n > 0 ? stats->median : 0;
    if (ms > 0)
        csv_num(l, ms, 6);
    else
        csv_empty(l);
    if (ms > 0 && s->bytes > 0)
        csv_num(l, s->bytes / (1024.0 * 1024 * 1024) / (ms * 1e-3), 6);
    else
        csv_empty(l);
    if (ms > 0 && s->flops > 0)
        csv_num(l, s->flops / (ms * 1e-3) / 1e9, 6);
    else
        csv_empty(l);
}

static void row(gb_strbuf *sb, const gb_report_entry *e, int problem, const cutlass_row *r,
                const gb_strbuf *name)
{
    if (gb_sb_status(name)) sb->failed = 1; /* the caller checks sb once */
    csv_line l = {.sb = sb};
    problem_cells(&l, e, problem, r);
    tile_cells(&l, r->config);
    work_cells(&l, e->result, r->stats);
    csv_end_line(&l);
}

/* The operation's name: the kernel and its configuration, "gemm_f32:BK=8:BM=128". */
static void operation_name(gb_strbuf *sb, const char *kernel, const gb_fields *config)
{
    gb_sb_reset(sb);
    gb_sb_puts(sb, kernel);
    for (int i = 0; config && i < config->n; i++) {
        gb_sb_printf(sb, ":%s=", config->names[i]);
        gb_value_append_source(sb, &config->values[i]);
    }
}

/* The profiler's disposition and status for how a trial ended: a kernel that ran
 * has status success (and passed or was incorrect); one that could not is failed,
 * with gpubench's status; a skipped one was not run. */
static void disposition(gb_trial_status status, cutlass_row *r)
{
    r->status = status == GB_TRIAL_OK || status == GB_TRIAL_WRONG ? "success"
                                                                  : gb_trial_status_name(status);
    r->disposition = status == GB_TRIAL_OK        ? "passed"
                     : status == GB_TRIAL_WRONG   ? "incorrect"
                     : status == GB_TRIAL_SKIPPED ? "not_run"
                                                  : "failed";
}

static void trial_rows(gb_strbuf *sb, const gb_report_entry *e, int problem, gb_strbuf *name)
{
    const gb_shape_result *s = e->result;
    for (int i = 0; i < s->n_trials; i++) {
        const gb_trial_note *t = &s->trials[i];
        if (s->has_best && gb_fields_equal(&t->config, &s->best_config)) continue;
        cutlass_row r = {.config = &t->config};
        disposition(t->status, &r);
        r.stats = t->status == GB_TRIAL_OK ? &t->measurement.stats : NULL;
        operation_name(name, e->kernel, &t->config);
        r.operation = gb_sb_str(name);
        row(sb, e, problem, &r, name);
    }
}

void csv_cutlass_entry(gb_strbuf *sb, const gb_report_entry *e, int *problem)
{
    const gb_shape_result *s = e->result;
    if (!int_field(&s->shape, "M") || !int_field(&s->shape, "N") || !int_field(&s->shape, "K"))
        return;
    int id = ++*problem;
    gb_strbuf name = GB_STRBUF_INIT;
    if (s->has_best) {
        operation_name(&name, e->kernel, &s->best_config);
        cutlass_row r = {.operation = gb_sb_str(&name),
                         .disposition = "passed",
                         .status = "success",
                         .config = &s->best_config,
                         .stats = &s->best};
        row(sb, e, id, &r, &name);
    }
    trial_rows(sb, e, id, &name);
    if (s->has_baseline && !s->baseline_contended) {
        gb_sb_reset(&name);
        gb_sb_printf(&name, "%s:reference", e->kernel);
        cutlass_row r = {.operation = gb_sb_str(&name),
                         .disposition = "passed",
                         .status = "success",
                         .stats = &s->baseline.stats};
        row(sb, e, id, &r, &name);
    }
    gb_sb_free(&name);
}
