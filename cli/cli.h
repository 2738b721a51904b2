/*
 * The command-line front ends. gpubench-tune and `gpubench tune` share
 * gb_cli_tune; `gpubench cache ...` is gb_cli_cache; `gpubench export` is
 * gb_cli_export; `gpubench replay` is gb_cli_replay; `gpubench compare` is
 * gb_cli_compare; `gpubench repro` is gb_cli_repro; `gpubench report` is
 * gb_cli_report (cli/outputs.h: the report options it shares with gpubench-tune);
 * `gpubench info` is gb_cli_info. Each returns the process's exit status (see
 * gb_cli_exit_status, cli/common.h).
 */
#ifndef GB_CLI_CLI_H
#define GB_CLI_CLI_H

#include "base/error.h"

/* argv[0] is the program name as it should appear in messages. */
int gb_cli_tune(int argc, char **argv);
int gb_cli_cache(int argc, char **argv);
int gb_cli_export(int argc, char **argv);
int gb_cli_replay(int argc, char **argv);
int gb_cli_compare(int argc, char **argv);
int gb_cli_repro(int argc, char **argv);
int gb_cli_report(int argc, char **argv);
int gb_cli_info(int argc, char **argv);

struct gb_cache;

/* gpubench-tune --export-header: one header at path with a table for each kernel
 * (on devices[i]; "": the kernel's only device), each prefixed by the kernel's name.
 * Messages are printed; returns an exit status. */
int gb_cli_export_kernels(const char *prog, struct gb_cache *cache, const char *path,
                          const char *const *kernels, const char *const *devices, int n);

#endif
