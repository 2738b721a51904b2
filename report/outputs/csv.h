/*
 * The CSV output's pieces (report/outputs/csv_out.c, report/outputs/csv_cutlass.c; private to
 * them): cells written as RFC 4180 asks (csv_cells.c), and the figures both
 * formats derive from a shape's work and a measured time. docs/report-csv.md is the manual.
 */
#ifndef GB_REPORT_CSV_H
#define GB_REPORT_CSV_H

#include "base/strbuf.h"
#include "base/value.h"
#include "report/result.h"

#include <stdbool.h>
#include <stdint.h>

/* One line being written: cells are separated by commas as they come. */
typedef struct csv_line {
    gb_strbuf *sb;
    bool started; /* a cell was written: the next one needs a comma */
} csv_line;

/* A text cell, quoted when it holds a comma, a quote, CR or LF (quotes doubled). */
void csv_text(csv_line *l, const char *s);
/* A number with that many significant digits, in the C locale's form whatever
 * the process's locale; an empty cell when it is not finite. */
void csv_num(csv_line *l, double v, int digits);
void csv_int(csv_line *l, int64_t v);
void csv_empty(csv_line *l);
/* A shape field's or parameter's value: integers and numbers as numbers, strings
 * as text, booleans as true/false. */
void csv_value(csv_line *l, const gb_value *v);
/* Ends the line (LF). */
void csv_end_line(csv_line *l);

/* The field of f whose name is name, ignoring case, or NULL. */
const gb_value *csv_field_nocase(const gb_fields *f, const char *name);

/* Each GEMM entry of a run as rows of the CUTLASS profiler's CSV
 * (report/outputs/csv_cutlass.c). The header is csv_cutlass_header's. problem is the
 * entry's Problem number, counted up when the entry gives rows. */
void csv_cutlass_header(gb_strbuf *sb);
void csv_cutlass_entry(gb_strbuf *sb, const gb_report_entry *e, int *problem);

#endif
