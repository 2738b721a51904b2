/* gpubench report RUN.json [options]: a saved run rendered again (the table, CSV,
 * HTML, JSON) through a session's outputs, on any machine: no GPU, no cache. */
#include "cli/args.h"
#include "cli/cli.h"
#include "cli/outputs.h"
#include "session/session.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

static const char USAGE[] =
    "usage: %s report RUN.json [options]\n"
    "\n"
    "Renders a run saved with `gpubench-tune --json` (or `--out DIR`'s run.json) again:\n"
    "the table, and the files the options name. No GPU and no cache are needed.\n"
    "\n"
    "options:\n"
    "  --table          the terminal table (the default when no file is "
    "named)\n" GB_CLI_OUTPUT_USAGE "  -v, --verbose    every failed trial below the table\n"
    "  -h, --help       this text\n"
    "\n"
    "exit status: 0 done; 2 usage, or RUN.json cannot be read or a file cannot be\n"
    "written.\n";

enum { OPT_TABLE = 256 };

static const struct option long_options[] = {
    {"table", no_argument, NULL, OPT_TABLE},
    GB_CLI_OUTPUT_LONG_OPTIONS,
    {"verbose", no_argument, NULL, 'v'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

typedef struct report_args {
    gb_cli_outputs outputs;
    bool table, verbose;
    const char *file;
} report_args;

/* Returns -1 to go on, or an exit status. */
static int parse_args(int argc, char **argv, report_args *a)
{
    const char *prog = argv[0];
    optind = 1;
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "vh", long_options, NULL)) != -1) {
        if (c == '?') return gb_cli_bad_option(prog, "report", argv, long_options);
        if (c == OPT_TABLE)
            a->table = true;
        else if (c == 'v')
            a->verbose = true;
        else if (c == 'h') {
            printf(USAGE, prog);
            return 0;
        } else if (gb_cli_outputs_option(&a->outputs, c, optarg, prog) != 0) {
            if (c == '?') fprintf(stderr, USAGE, prog);
            return 2;
        }
    }
    if (optind + 1 != argc) {
        fprintf(stderr, "%s report: needs one RUN.json\n", prog);
        fprintf(stderr, USAGE, prog);
        return 2;
    }
    a->file = argv[optind];
    const gb_cli_outputs *o = &a->outputs;
    if (!o->json && !o->csv && !o->html && !o->out_dir) a->table = true;
    return -1;
}

/* The saved run goes through a session's outputs, as its calls went when it ran. */
int gb_cli_report(int argc, char **argv)
{
    report_args a = {0};
    int status = parse_args(argc, argv, &a);
    if (status >= 0) return status;
    gb_report report = {0};
    gb_session session;
    gb_session_init(&session);
    gb_output *out = NULL;
    gb_err err = {0};
    gb_table_opts table = {.verbose = a.verbose, .compile_only = false};
    int rc = gb_report_load_json(a.file, &report, &err);
    if (rc == GB_OK) {
        table.compile_only = report.context.compile_only;
        rc = gb_cli_outputs_open(&a.outputs, a.table ? stdout : NULL, &table, &out, &err);
    }
    if (rc) {
        fprintf(stderr, "%s: %s\n", argv[0], err.msg);
        gb_report_free(&report);
        return 2;
    }
    /* An output's error is said when the outputs end, with the file it names. */
    gb_err ignored = {0};
    gb_session_begin_outputs(&session, out, &report.context, &ignored);
    gb_session_show(&session, &report, &ignored);
    status = gb_cli_outputs_close(&a.outputs, &session, argv[0]);
    gb_session_close(&session);
    gb_report_free(&report);
    return status;
}
