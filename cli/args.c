/* Argument parsing that several commands share (cli/args.h). */
#include "cli/args.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int gb_cli_usage_error(const char *prog, const char *cmd, const char *msg, const char *what)
{
    fprintf(stderr, "%s %s: %s%s\n", prog, cmd, msg, what);
    fprintf(stderr, "(`%s %s --help` lists the options)\n", prog, cmd);
    return 2;
}

/* Levenshtein distance of a[0..na) and b[0..nb), names of at most 63 characters. */
static size_t edits(const char *a, size_t na, const char *b, size_t nb)
{
    size_t row[64];
    if (na > 63 || nb > 63) return (size_t)-1;
    for (size_t j = 0; j <= nb; j++)
        row[j] = j;
    for (size_t i = 1; i <= na; i++) {
        size_t diagonal = row[0];
        row[0] = i;
        for (size_t j = 1; j <= nb; j++) {
            size_t above = row[j], best = diagonal + (a[i - 1] != b[j - 1]);
            if (above + 1 < best) best = above + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            row[j] = best;
            diagonal = above;
        }
    }
    return row[nb];
}

int gb_cli_bad_option(const char *prog, const char *cmd, char *const *argv,
                      const struct option *longs)
{
    const char *given = optind > 0 ? argv[optind - 1] : "";
    char who[128], where[160];
    snprintf(who, sizeof who, "%s%s%s", prog, cmd ? " " : "", cmd ? cmd : "");
    snprintf(where, sizeof where, "(see `%s --help`)", who);
    if (optopt != 0) { /* a known option with a value missing or not taken, or a short one */
        for (const struct option *o = longs; o->name; o++)
            if (o->val == optopt && o->flag == NULL) {
                fprintf(stderr, "%s: option '--%s' %s %s\n", who, o->name,
                        o->has_arg == no_argument ? "takes no value" : "needs a value", where);
                return 2;
            }
        if (optopt > 0 && optopt < 128)
            fprintf(stderr, "%s: unknown option '-%c' %s\n", who, optopt, where);
        else
            fprintf(stderr, "%s: unknown option '%s' %s\n", who, given, where);
        return 2;
    }
    /* a long option: the ones it is a prefix of, or the nearest within two edits */
    const char *name = given[0] == '-' && given[1] == '-' ? given + 2 : NULL;
    size_t len = name ? strcspn(name, "=") : 0, best = 3, prefixed = 0;
    char could[512] = "";
    const char *nearest = NULL;
    for (const struct option *o = longs; name && o->name; o++) {
        if (len > 0 && !strncmp(o->name, name, len)) {
            size_t used = strlen(could);
            snprintf(could + used, sizeof could - used, "%s--%s", prefixed++ ? ", " : "", o->name);
        }
        size_t d = edits(name, len, o->name, strlen(o->name));
        if (d < best) best = d, nearest = o->name;
    }
    if (prefixed > 1)
        fprintf(stderr, "%s: option '%s' is ambiguous: %s %s\n", who, given, could, where);
    else if (nearest)
        fprintf(stderr, "%s: unknown option '%s' (did you mean '--%s'?) %s\n", who, given, nearest,
                where);
    else
        fprintf(stderr, "%s: unknown option '%s' %s\n", who, given, where);
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
