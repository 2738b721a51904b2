/*
 * What every front end shares: the exit status of an error code. The front ends
 * themselves are declared in cli/cli.h.
 */
#ifndef GB_CLI_COMMON_H
#define GB_CLI_COMMON_H

#include "base/error.h"

/* The exit status for an error code: 2 usage/script/cache, 3 no usable GPU,
 * 130 interrupted, 1 otherwise. */
int gb_cli_exit_status(int code);

#endif
