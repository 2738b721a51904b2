/*
 * What results look like in a terminal: aligned text tables. gb_table collects
 * rows of cells and prints them with column widths fitted to the content;
 * gb_report_tune lays out one tuning run (a row per shape, or a row per compile
 * with --compile-only).
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

/* The result table of one gb.tune call, then, per shape, how its trials ended;
 * every failed trial with its reason when verbose or when no variant was valid. */
void gb_report_tune(FILE *out, const char *kernel, const gb_tune_result *result, bool compile_only,
                    bool verbose);

#endif
