/*
 * What results look like in a terminal: aligned text tables. gb_table collects
 * rows of cells and prints them with column widths fitted to the content, plain
 * (gb_table_print) or boxed (gb_table_print_box). The table output
 * (report/outputs/table_out.c, behind report/output.h) lays out a run with them: a boxed
 * row per shape and the summary lines below (report/summary.c), or a row per
 * compile with --compile-only (gb_report_compiles).
 */
#ifndef GB_REPORT_TABLE_H
#define GB_REPORT_TABLE_H

#include "base/strbuf.h"
#include "tuner/tune.h"

#include <stdbool.h>
#include <stdio.h>

#define GB_TABLE_MAX_COLS 16

typedef struct gb_table {
    int n_cols;
    const char *headers[GB_TABLE_MAX_COLS];
    bool right[GB_TABLE_MAX_COLS]; /* right-align (numbers) */
    char **cells;                  /* n_rows * n_cols, row-major */
    int n_rows;
    int cap_rows;
    int col; /* next cell of the current row */
    bool failed;
} gb_table;

/* align: one letter per column, 'l' or 'r'. */
void gb_table_init(gb_table *t, const char *const *headers, const char *align);
void gb_table_cell(gb_table *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void gb_table_print(const gb_table *t, FILE *out);

/* How a boxed table looks. */
typedef struct gb_table_style {
    bool ascii; /* '+', '-', '|' instead of box drawing */
    bool color; /* a bold header, and cell_color's colours */
    /* An ANSI colour for a cell, or NULL (only with color). */
    const char *(*cell_color)(void *ctx, int row, int col);
    void *ctx;
} gb_table_style;

void gb_table_print_box(const gb_table *t, FILE *out, const gb_table_style *style);
void gb_table_free(gb_table *t);

/* How a run is reported. */
typedef struct gb_report_opts {
    bool compile_only; /* a row per compile (gb_report_compiles), not per shape */
    bool verbose;      /* every failed trial; with compile_only, each error's whole output */
    int jobs;          /* compile threads, for the compile-only summary (0: the tuner's own) */
    const char *arch;  /* the compile target, for the compile-only summary; NULL: unnamed */
} gb_report_opts;

/* The table output's text for one gb.tune call on its own (no device context):
 * the boxed table, then, per shape, how its trials ended (every failed trial
 * with its reason when verbose or when no variant was valid), then where the
 * time went. */
void gb_report_tune(FILE *out, const char *kernel, const gb_tune_result *result,
                    const gb_report_opts *opts);

/* ---- the summary below a table (report/summary.c) ---------------------------- */

/* Per shape: its status counts, the search, the race, contention and failures. */
void gb_summary_shape(FILE *out, const gb_shape_result *s, bool bench, bool verbose);

/* Where a call's time went, and where an average trial's went. */
void gb_summary_timing(FILE *out, const gb_tune_timing *timing, const char *timer);

/* The --compile-only table (report/compile_table.c): a row per distinct compile,
 * with "error N" for a compile that failed and "over limits: why" for one that
 * exceeds the target's limits; each distinct error once below it (its first
 * diagnostic, or with verbose its whole output and the configurations it applies
 * to); then "N compiled (N from the cache), N failed, N rejected by constraints,
 * N over ARCH's limits; NVRTC X.X s over N threads", and "the reference is a cuBLAS
 * call: not compiled" when it is one. */
void gb_report_compiles(FILE *out, const gb_tune_result *result, const gb_report_opts *opts);

/* That summary line alone, appended to out: every output that shows the compile
 * table ends it so. arch is the target when the call does not name one (NULL:
 * unnamed); jobs the compile threads when the call does not say. */
void gb_compile_summary(gb_strbuf *out, const gb_tune_result *result, const char *arch, int jobs);

#endif
