/*
 * What every front end shares: the exit status of an error code, and the cache
 * opened where the user said or where it lives by default. The front ends
 * themselves are declared in cli/cli.h.
 */
#ifndef GB_CLI_COMMON_H
#define GB_CLI_COMMON_H

#include "base/error.h"

/* The exit status for an error code: 2 usage/script/cache, 3 no usable GPU,
 * 130 interrupted, 1 otherwise. */
int gb_cli_exit_status(int code);

/* Opens the cache named by dir, or the default one when dir is NULL
 * (gb_cache_default_dir); flags as gb_cache_open's. */
struct gb_cache;
int gb_cli_open_cache(const char *dir, unsigned flags, struct gb_cache **out, gb_err *err);

#endif
