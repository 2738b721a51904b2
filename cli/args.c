/* Argument parsing that several commands share (cli/args.h). */
#include "cli/args.h"

#include <stdio.h>
#include <stdlib.h>

int gb_cli_usage_error(const char *prog, const char *cmd, const char *msg, const char *what)
{
    fprintf(stderr, "%s %s: %s%s\n", prog, cmd, msg, what);
    fprintf(stderr, "(`%s %s --help` lists the options)\n", prog, cmd);
    return 2;
}

bool gb_cli_number(const char *text, double lo, double hi, bool open, double *out)
{
    char *end = NULL;
    double v = strtod(text, &end);
    if (!*text || *end || !(open ? v > lo && v < hi : v >= lo && v <= hi)) return false;
    *out = v;
    return true;
}

int gb_cli_compare_option(const char *prog, const char *cmd, bool is_alpha, const char *value,
                          gb_compare_opts *opts)
{
    double pct;
    if (is_alpha)
        return gb_cli_number(value, 0, 1, true, &opts->alpha)
                   ? -1
                   : gb_cli_usage_error(prog, cmd, "--alpha needs a number between 0 and 1", "");
    if (!gb_cli_number(value, 0, 100, false, &pct) || pct >= 100)
        return gb_cli_usage_error(prog, cmd, "--threshold needs a percentage from 0 to below 100",
                                  "");
    opts->threshold = pct / 100;
    return -1;
}
