/*
 * Argument parsing that several commands share: the usage error every command
 * prints the same way, numbers in a range, and the options of compare's test
 * (`--threshold PCT`, `--alpha A`), which `gpubench compare` and `gpubench repro`
 * both take.
 */
#ifndef GB_CLI_ARGS_H
#define GB_CLI_ARGS_H

#include "report/compare/compare.h"

#include <stdbool.h>

/* Prints "PROG CMD: MSG WHAT" and where the options are listed; returns 2. */
int gb_cli_usage_error(const char *prog, const char *cmd, const char *msg, const char *what);

/* What to say when getopt_long returned '?' (call it with opterr set to 0, right
 * after that return): one line naming the option, "needs a value" when it takes
 * one and had none, the options it could mean when it is an ambiguous prefix,
 * else the nearest long option within two edits, and where the options are
 * listed ("PROG CMD --help"; cmd may be NULL). Returns 2. */
struct option;
int gb_cli_bad_option(const char *prog, const char *cmd, char *const *argv,
                      const struct option *longs);

/* text as a number in [lo, hi] (in (lo, hi) when open); false otherwise. */
bool gb_cli_number(const char *text, double lo, double hi, bool open, double *out);

/* --threshold (a percentage from 0 to below 100) or --alpha (between 0 and 1)
 * into opts: -1 when the value is taken, else the exit status of a usage error
 * (named after cmd). is_alpha says which of the two the option is. */
int gb_cli_compare_option(const char *prog, const char *cmd, bool is_alpha, const char *value,
                          gb_compare_opts *opts);

#endif
