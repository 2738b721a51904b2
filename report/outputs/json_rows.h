/*
 * The rows of the run's JSON report (docs/report-json.md) as wire views
 * (base/wire.h) of the result model: a (kernel, shape) is a best row, its
 * baseline's row and a row per trial. Each view lists, in the row's order, the
 * fields of gb_shape_result (or gb_trial_note) it carries and the virtual fields
 * the row adds (the kernel, the role, rates, the percent of peak); the writer
 * (json_out.c) and the reader (json_load.c) both go through these lists, so a
 * result field the report should carry is one line in its list here.
 *
 * Google Benchmark's fields that open every row (name, real_time, ...) are not
 * here: they present the row's median for Google Benchmark's tools and are
 * computed again on writing, never read.
 */
#ifndef GB_REPORT_OUTPUTS_JSON_ROWS_H
#define GB_REPORT_OUTPUTS_JSON_ROWS_H

#include "base/wire.h"
#include "engine/roofs.h"
#include "report/result.h"

/* What a row's virtual fields come from, or go to. */
typedef struct gb_json_row_ctx {
    /* The row's entry: its kernel, math, bench flag and result. Writing reads
     * it; reading a best row sets its kernel (strdup'ed), math and bench. */
    gb_report_entry *entry;
    const gb_roofs *roofs; /* writing: the run's, for the percent of peak */
    const char *status;    /* writing a best: its outcome's word and sentence */
    const char *reason;
} gb_json_row_ctx;

extern const gb_wire_type gb_wire_best_row;     /* gb_shape_result: the best and the search */
extern const gb_wire_type gb_wire_baseline_row; /* gb_shape_result: its baseline */
extern const gb_wire_type gb_wire_trial_row;    /* gb_trial_note */

#endif
