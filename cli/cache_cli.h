/*
 * Internal to `gpubench cache`: cache_main.c parses the command line and
 * dispatches; cache_ls.c prints ls and show, cache_move.c runs export, import and
 * merge, cache_upkeep.c rm, gc and verify. Each command returns the exit status:
 * 0 ok, 1 when it found problems or skipped records (or show found nothing), 2 for
 * a usage or cache error.
 */
#ifndef GB_CLI_CACHE_CLI_H
#define GB_CLI_CACHE_CLI_H

#include "cache/transfer.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

typedef struct cache_args {
    const char *prog; /* "gpubench" */
    const char *cmd;
    const char *dir; /* --cache DIR or the default */
    char default_dir[4096];
    char **pos; /* the arguments after the command */
    int n_pos;
    bool json, all, stale, dry_run, cubins, compact, unnamed;
    const char *kernel, *device, *shape_text, *from, *kernel_fp;
    gb_fields shape; /* parsed shape_text */
    gb_cache_filter filter;
    char nvrtc[16];
    gb_cache_versions now;
} cache_args;

int gb_cache_cmd_ls(cache_args *a);
int gb_cache_cmd_show(cache_args *a);
int gb_cache_cmd_rm(cache_args *a);
int gb_cache_cmd_gc(cache_args *a);
int gb_cache_cmd_verify(cache_args *a);
int gb_cache_cmd_save(cache_args *a);
int gb_cache_cmd_load(cache_args *a);
int gb_cache_cmd_merge(cache_args *a);

/* Opens a->dir, read-only unless writable. Without `create`, a directory without a
 * cache in it is no error: *out stays NULL, and the caller says so with
 * gb_cache_cli_no_cache (nothing is created by looking). Errors are printed; the
 * return is then the exit status 2. */
int gb_cache_cli_open(cache_args *a, bool writable, bool create, gb_cache **out);

/* "DIR: no cache here yet" (or its JSON); returns 0. */
int gb_cache_cli_no_cache(const cache_args *a);

/* Prints "PROG cache CMD: message" on stderr and returns 2. */
int gb_cache_cli_fail(const cache_args *a, const char *msg);

/* A note from the library, on stderr. ctx is the cache_args. */
void gb_cache_cli_note(void *ctx, const char *msg);

/* s with control characters replaced by '?' and cut to its first line and at most
 * n - 1 bytes: a record may come from elsewhere, and its text must not steer the
 * terminal. */
const char *gb_cache_cli_text(const char *s, char *buf, size_t n);

/* "1.4 MB", "512 B" */
void gb_cache_cli_bytes(double bytes, char *buf, size_t n);

/* Local "YYYY-MM-DD HH:MM" of a unix time. */
void gb_cache_cli_when(int64_t when, char *buf, size_t n);

/* Prints json on stdout, indented, and frees it; 2 when it is NULL (out of memory). */
int gb_cache_cli_print_json(json_t *json);

/* A transfer summary as JSON (new reference). */
json_t *gb_cache_cli_counts_json(const gb_transfer_counts *c);

#endif
