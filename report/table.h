/*
 * What results look like in a terminal: aligned text tables. gb_table collects
 * rows of cells and prints them with column widths fitted to the content;
 * gb_report_tune lays out one tuning run (a row per shape, or a row per compile
 * with --compile-only: gb_report_compiles).
 */
#ifndef GB_REPORT_TABLE_H
#define GB_REPORT_TABLE_H

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
void gb_table_free(gb_table *t);

/* How a run is reported. */
typedef struct gb_report_opts {
    bool compile_only; /* a row per compile (gb_report_compiles), not per shape */
    bool verbose;      /* every failed trial; with compile_only, each error's whole output */
    int jobs;          /* compile threads, for the compile-only summary (0: the tuner's own) */
    const char *arch;  /* the compile target, for the compile-only summary; NULL: unnamed */
} gb_report_opts;

/* The result table of one gb.tune call, then, per shape, how its trials ended;
 * every failed trial with its reason when verbose or when no variant was valid. */
void gb_report_tune(FILE *out, const char *kernel, const gb_tune_result *result,
                    const gb_report_opts *opts);

/* The --compile-only table (report/compile_table.c): a row per distinct compile,
 * with "error N" for a compile that failed and "over limits: why" for one that
 * exceeds the target's limits; each distinct error once below it (its first
 * diagnostic, or with verbose its whole output and the configurations it applies
 * to); then "N compiled (N from the cache), N failed, N rejected by constraints,
 * N over ARCH's limits; NVRTC X.X s over N threads". */
void gb_report_compiles(FILE *out, const gb_tune_result *result, const gb_report_opts *opts);

#endif
