/*
 * Tuned tables for other builds: what `gpubench export` and `gpubench-tune
 * --export-header` write.
 *
 * A gb_export_table is one kernel's best configurations on one device: a row per
 * shape key (the key fields' values, the configuration, its median time), sorted by
 * key, with the distinct configurations numbered in table order and a default for
 * shapes the table does not hold. It is built row by row (from the cache by
 * gb_export_load, or from a JSON table by gb_export_read_json), then finished: the
 * names are checked as C identifiers, the columns typed, the default chosen and the
 * content hashed. Two writers turn a finished table into text: a C header
 * (gb_export_write_c, several tables to one header) and JSON (gb_export_write_json).
 * gb_export_save puts text in a file atomically, and leaves a file that already
 * holds it untouched, so builds that depend on it do not rebuild.
 *
 * Everything in a row came from a cache that may have been copied from another
 * machine: the writers escape every string and the finish step validates every name
 * and number, so nothing reaches a header unchecked. docs/export.md is the manual.
 */
#ifndef GB_REPORT_EXPORT_H
#define GB_REPORT_EXPORT_H

#include "base/error.h"
#include "base/strbuf.h"
#include "base/value.h"
#include "cache/cache.h"

#include <stdbool.h>
#include <stdint.h>

#define GB_EXPORT_HASH_HEX 33 /* 32 hex digits of XXH3-128 and a NUL */

/* A key field or a parameter. The kind is the column's: INT, NUM (a column that
 * mixes integers and other numbers is NUM), STR or BOOL. */
typedef struct gb_export_column {
    char *name;
    gb_value_kind kind;
} gb_export_column;

typedef struct gb_export_row {
    gb_value *key;    /* n_keys values, in the columns' order */
    gb_value *config; /* n_params values */
    int config_id;    /* index into the table's configs (set by finish) */
    double median_ms;
    int64_t when;    /* unix seconds it was tuned; 0 when unknown */
    char *engine;    /* gpubench version that tuned it; "" when unknown */
    char *kernel_fp; /* the kernel fingerprint it was tuned with; "" when unknown */
} gb_export_row;

typedef struct gb_export_table {
    char *kernel;
    char *device; /* device fingerprint */
    char *source; /* where the rows came from: "cache DIR" or "table FILE" */
    char *prefix; /* the C name prefix (set by finish) */
    char *note;   /* a JSON table's "note", shown in the header's comment; NULL: none */
    gb_export_column *keys;
    int n_keys;
    gb_export_column *params;
    int n_params;
    gb_export_row *rows;
    int n_rows;
    gb_value *configs; /* n_configs * n_params: the distinct configurations (by finish) */
    int n_configs;
    double max_distance;     /* a nearer entry than this (sum of |log2| over the numeric key
                                fields) is near; farther ones are not: the default answers.
                                < 0 (what init sets): no limit. Set it before finish. */
    int default_id;          /* the configuration for shapes with no near entry */
    bool default_given;      /* chosen by the user rather than by the rule */
    int n_older;             /* entries of a shape left out because a newer one was taken */
    int n_unusable;          /* entries left out: other key or parameter names, or no time */
    char unusable_note[256]; /* why the first unusable entry was left out */
    int n_unreadable;        /* records of the cache that could not be decoded (any kernel) */
    char hash[GB_EXPORT_HASH_HEX];
    bool finished;
} gb_export_table;

/* An empty table for kernel on device; rows come from gb_export_table_add. */
int gb_export_table_init(gb_export_table *t, const char *kernel, const char *device,
                         const char *source, gb_err *err);
void gb_export_table_free(gb_export_table *t); /* NULL and a zeroed table are fine */

/* Adds a row. The first row names the columns; a later row with other key or
 * parameter names, a value whose kind does not fit its column, a time that is not a
 * positive finite number or a non-finite value gives GB_EINVAL (nothing added), with
 * a message naming the shape and the field. engine and kernel_fp may be NULL. */
int gb_export_table_add(gb_export_table *t, const gb_fields *shape, const gb_fields *config,
                        double median_ms, int64_t when, const char *engine, const char *kernel_fp,
                        gb_err *err);

/* Checks and completes the table: prefix (NULL: the kernel's name), key and
 * parameter names must be C identifiers and not C or C++ keywords; rows are sorted
 * by key and a shape may appear once; configurations are numbered in table order;
 * the default is default_text ("BM=64,BN=128,...": every parameter once; NULL: the
 * configuration that is best for the most shapes, the first in table order on a
 * tie); the hash covers kernel, device, columns, rows and default. GB_EINVAL with a
 * message naming the bad name or value; GB_ENOTFOUND when the table has no rows. */
int gb_export_table_finish(gb_export_table *t, const char *prefix, const char *default_text,
                           gb_err *err);

/* 0 when name is a C identifier that is not a C or C++ keyword; else GB_EINVAL with
 * "WHAT 'name' is not ..." in err. */
int gb_export_check_name(const char *name, const char *what, gb_err *err);

/* How a lookup was answered: the shape's own entry; the nearest entry (the same
 * string and boolean key fields, the least sum over the numeric ones of
 * |log2(asked/entry)|, or log2(1 + |asked - entry|) where a value is <= 0; ties:
 * the first in table order), within max_distance; or no entry: the default. */
typedef enum gb_export_match {
    GB_EXPORT_EXACT,
    GB_EXPORT_NEAREST,
    GB_EXPORT_DEFAULT
} gb_export_match;

#define GB_EXPORT_MAX_KEYS 64 /* key fields a lookup takes */

/* The row of a finished table that answers shape, by the rule of the header's
 * lookup (docs/export.md): *out_row is its index and *out_match says how, or
 * *out_row is -1 and *out_match GB_EXPORT_DEFAULT (the configuration is then
 * t->configs[t->default_id]). GB_EINVAL when shape lacks a key field or has one of
 * another kind (a string where the entries have numbers), naming it. */
int gb_export_table_lookup(const gb_export_table *t, const gb_fields *shape, int *out_row,
                           gb_export_match *out_match, gb_err *err);

/* Which entries of the cache a table is made of. */
typedef struct gb_export_query {
    const char *kernel;
    const char *device;    /* a device fingerprint, or a part of one that names one device;
                              NULL: the kernel's only device (several is GB_EINVAL) */
    const char *kernel_fp; /* NULL: the newest entry of each shape; else only entries tuned
                              with a kernel fingerprint that starts with this */
} gb_export_query;

/* Loads the query's rows from the cache's best records into out (initialised here;
 * not finished). GB_ENOTFOUND when the cache has no entry for the kernel (on the
 * device asked for), with a message naming the kernels and devices it has. */
int gb_export_load(gb_cache *cache, const gb_export_query *q, gb_export_table *out, gb_err *err);

/* Reads a table that gb_export_write_json wrote (or a hand-made one of the same
 * form: kernel, device, entries of {shape, config, median_ms}; docs/export.md) into
 * out (not finished). A "default" configuration in it is returned in *out_default
 * as "k=v,..." text (malloc'd, NULL when there is none) for gb_export_table_finish. */
int gb_export_read_json(const char *path, gb_export_table *out, char **out_default, gb_err *err);

/* The C header for finished tables (each under its own prefix, so the tables of
 * several kernels can share a header), and the JSON form of one table. version is
 * gpubench's. GB_ENOMEM if out ran out of memory. */
int gb_export_write_c(const gb_export_table *const *tables, int n_tables, const char *version,
                      gb_strbuf *out, gb_err *err);
int gb_export_write_json(const gb_export_table *t, const char *version, gb_strbuf *out,
                         gb_err *err);

/* Writes len bytes to path through a temporary file in the same directory and a
 * rename, unless path already holds exactly these bytes: then *out_unchanged is set
 * and the file is not touched. path "-" writes to stdout. */
int gb_export_save(const char *path, const char *text, size_t len, bool *out_unchanged,
                   gb_err *err);

#endif
