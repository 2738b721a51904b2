/*
 * Outputs: what a run becomes. Each format (the terminal table, JSON, CSV, HTML)
 * is one output behind this interface: begin once with the run's context, one
 * shape call per (kernel, shape) entry in the order the run produced them, an
 * optional call_end after the entries of one gb.tune or gb.bench call, and end
 * once. The multiplexer (gb_output_mux) feeds several outputs as one; the
 * command line decides which (cli/outputs.c), never the Lua binding.
 *
 * An output that writes a file writes it whole at end, through a temporary file
 * renamed into place, so an interrupted run never leaves half a report. Errors
 * name the file and the call; after one, the output refuses further work and the
 * others go on.
 */
#ifndef GB_REPORT_OUTPUT_H
#define GB_REPORT_OUTPUT_H

#include "base/error.h"
#include "report/result.h"

#include <stdbool.h>
#include <stdio.h>

typedef struct gb_output gb_output;

typedef struct gb_output_ops {
    const char *name; /* "table", "json", "csv", "html" */
    /* ctx stays valid until end returns. */
    int (*begin)(gb_output *o, const gb_run_context *ctx, gb_err *err);
    /* entry and what it points to are valid during the call only. */
    int (*shape)(gb_output *o, const gb_report_entry *entry, gb_err *err);
    /* Optional: the entries of one call are all given (a streaming output prints them
     * now); call is valid during the call only. NULL for a run read back. */
    int (*call_end)(gb_output *o, const char *kernel, const gb_tune_result *call, gb_err *err);
    int (*end)(gb_output *o, gb_err *err);
    void (*destroy)(gb_output *o);
} gb_output_ops;

struct gb_output {
    const gb_output_ops *ops;
    bool failed;    /* an earlier call failed: the rest are skipped */
    bool forgiving; /* an error does not set failed (the multiplexer: each of its outputs
                       stops alone) */
};

/* Calls that skip an output that failed before; destroy takes NULL. */
int gb_output_begin(gb_output *o, const gb_run_context *ctx, gb_err *err);
int gb_output_shape(gb_output *o, const gb_report_entry *entry, gb_err *err);
int gb_output_call_end(gb_output *o, const char *kernel, const gb_tune_result *call, gb_err *err);
int gb_output_end(gb_output *o, gb_err *err);
void gb_output_destroy(gb_output *o);

/* Feeds a whole saved run to o: begin, every entry, and each compile-only call's
 * call_end after its last entry (all of them even after an error; the first is
 * returned). gb_output_render ends o too. */
int gb_output_feed(gb_output *o, const gb_report *report, gb_err *err);
/* The same without begin: the entries and call ends of a saved run, to an output
 * already begun (a session's, session/session.h). */
int gb_output_feed_entries(gb_output *o, const gb_report *report, gb_err *err);
int gb_output_render(gb_output *o, const gb_report *report, gb_err *err);

/* ---- the outputs --------------------------------------------------------- */

/* The terminal table (report/outputs/table_out.c). */
typedef struct gb_table_opts {
    bool ascii;        /* plain characters instead of box drawing */
    bool color;        /* ANSI colours (the caller decides: a terminal, no NO_COLOR) */
    bool verbose;      /* every failed trial; compile errors in full */
    bool compile_only; /* a row per compile, not per shape */
    int jobs;          /* compile threads, for the compile-only summary */
    const char *arch;  /* the compile target, when a call does not say (NULL: unnamed) */
} gb_table_opts;

/* out is not closed by the output. */
int gb_output_table(FILE *out, const gb_table_opts *opts, gb_output **out_output, gb_err *err);

/* JSON (report/outputs/json_out.c; the schema is docs/report-json.md). */
int gb_output_json(const char *path, gb_output **out, gb_err *err);

/* CSV, one row per trial (report/outputs/csv_out.c); cutlass: GEMM rows in the CUTLASS
 * profiler's columns. */
typedef enum gb_csv_format { GB_CSV_TRIALS, GB_CSV_CUTLASS } gb_csv_format;
int gb_output_csv(const char *path, gb_csv_format format, gb_output **out, gb_err *err);

/* One self-contained HTML page with charts (report/outputs/html_out.c); chart_js is the
 * path of Chart.js to inline (NULL: the build's GB_CHART_JS). */
int gb_output_html(const char *path, const char *chart_js, gb_output **out, gb_err *err);

/* ---- the multiplexer ----------------------------------------------------- */

/* An output that feeds every output added to it, in order. begin is put off until
 * the first entry (or end), so that a context completed as the run goes on (the
 * device, found when the GPU is first needed) reaches the outputs whole. Each
 * call goes to every output even when one fails; the first error is returned.
 * Outputs added are destroyed with the multiplexer. */
int gb_output_mux(gb_output **out, gb_err *err);
int gb_output_mux_add(gb_output *mux, gb_output *o, gb_err *err);
int gb_output_mux_count(const gb_output *mux);

#endif
