/*
 * The report options every command that shows results takes (cli/outputs.c):
 *
 *   --json FILE   --csv FILE   --csv-format trials|cutlass   --html FILE
 *   --out DIR     --ascii
 *
 * gb_cli_outputs_open builds the multiplexer of what they name, plus the terminal
 * table on a stream, for a session to take (gb_session_begin_outputs);
 * gb_cli_outputs_close ends it (the files are written then) and reports what
 * failed.
 */
#ifndef GB_CLI_OUTPUTS_H
#define GB_CLI_OUTPUTS_H

#include "report/output.h"
#include "session/session.h"

#include <stdbool.h>
#include <stdio.h>

/* getopt_long values of the options, above any a command uses for its own. */
enum {
    GB_OPT_JSON = 1000,
    GB_OPT_CSV,
    GB_OPT_CSV_FORMAT,
    GB_OPT_HTML,
    GB_OPT_OUT,
    GB_OPT_ASCII,
};

#define GB_CLI_OUTPUT_LONG_OPTIONS                                                                 \
    {"json", required_argument, NULL, GB_OPT_JSON}, {"csv", required_argument, NULL, GB_OPT_CSV},  \
        {"csv-format", required_argument, NULL, GB_OPT_CSV_FORMAT},                                \
        {"html", required_argument, NULL, GB_OPT_HTML},                                            \
        {"out", required_argument, NULL, GB_OPT_OUT},                                              \
    {                                                                                              \
        "ascii", no_argument, NULL, GB_OPT_ASCII                                                   \
    }

#define GB_CLI_OUTPUT_USAGE                                                                        \
    "  --json FILE      the run as JSON: context, every trial's statistics and samples\n"          \
    "                   (Google Benchmark's field names; docs/report-json.md)\n"                   \
    "  --csv FILE       a row per trial, for a spreadsheet\n"                                      \
    "  --csv-format F   trials (default) or cutlass: GEMM rows in the CUTLASS profiler's\n"        \
    "                   columns\n"                                                                 \
    "  --html FILE      one self-contained page of charts: performance by shape, every\n"          \
    "                   trial's times, the roofline\n"                                             \
    "  --out DIR        all of them in DIR: run.txt, run.json, run.csv, run.html\n"                \
    "  --ascii          draw the table with plain characters (colour only on a terminal,\n"        \
    "                   never with NO_COLOR set)\n"

typedef struct gb_cli_outputs {
    const char *json, *csv, *html, *out_dir;
    gb_csv_format csv_format;
    bool csv_format_set;
    bool ascii;
    FILE *folder_table; /* --out's run.txt, while open */
} gb_cli_outputs;

/* Takes one of the options above: 0 taken, 2 a bad value (printed), -1 not ours. */
int gb_cli_outputs_option(gb_cli_outputs *o, int opt, const char *arg, const char *prog);

/* The multiplexer: the table on table_stream (NULL: none; colour when it is a
 * terminal and NO_COLOR is unset), then every file the options name. */
int gb_cli_outputs_open(gb_cli_outputs *o, FILE *table_stream, const gb_table_opts *table,
                        gb_output **out, gb_err *err);

/* Ends the session's outputs (gb_session_end_outputs; none is fine): the files
 * are written now. Returns 0, or 2 after printing what could not be written. */
int gb_cli_outputs_close(gb_cli_outputs *o, gb_session *s, const char *prog);

/* The command line as a shell would take it back: the arguments joined by spaces,
 * quoted where they need it (free it). Take it before getopt permutes argv. */
char *gb_cli_join_args(int argc, char **argv);

/* The context of a run that starts now. */
int gb_cli_context_init(gb_run_context *ctx, const char *executable, const char *command_line,
                        const char *script, gb_err *err);

#endif
