/*
 * Reading a Kernel Tuner cache file: the document, its tuning parameters and each
 * entry's configuration and time. Two readers share it so that they read the same
 * files the same way: the importer (ktuner.c, `gpubench cache load --from
 * kernel-tuner`) and `gpubench replay` (tuner/replay_load.c), which replays
 * strategies against the file's table.
 *
 * The file's layout is described in ktuner.h and docs/cache.md. Nothing here
 * stores or prints: an entry that does not read comes back as GB_EINVAL with the
 * reason, and each caller decides whether that skips the entry or refuses the file.
 */
#ifndef GB_CACHE_KTUNER_FILE_H
#define GB_CACHE_KTUNER_FILE_H

#include "base/error.h"
#include "base/value.h"
#include "engine/trial.h"

#include <jansson.h>
#include <stdbool.h>

#define GB_KTUNER_MAX_ENTRIES 200000
#define GB_KTUNER_MAX_PARAMS  32 /* gpubench's limit on a space's parameters */
#define GB_KTUNER_MAX_VALUES  10000

/* One tuning parameter: its name and the values tune_params lists, in that order. */
typedef struct gb_ktuner_param {
    const char *name; /* points into the document */
    gb_value *values; /* owned */
    int n_values;
} gb_ktuner_param;

typedef struct gb_ktuner_file {
    json_t *doc;                                  /* a reference of its own */
    gb_ktuner_param params[GB_KTUNER_MAX_PARAMS]; /* in tune_params_keys order */
    int n_params;
    const json_t *cache; /* the "cache" object, keyed by the values joined with commas */
} gb_ktuner_file;

/* Parses the file's text (len bytes, not necessarily NUL-terminated). Kernel Tuner
 * appends to its cache as it goes, so a run that was stopped leaves the file
 * without its closing braces; such a file is closed the way Kernel Tuner closes
 * it. NULL, with GB_EINVAL naming the line and column, when it is not JSON. */
json_t *gb_ktuner_parse(const char *text, size_t len, gb_err *err);

/* Whether doc looks like a Kernel Tuner cache: an object with "tune_params" and
 * "cache". */
bool gb_ktuner_is_cache(const json_t *doc);

/* Reads the parameters and the cache object of doc (f takes a reference of its
 * own). GB_EINVAL naming what is wrong: not an object, no tune_params or cache
 * object, a parameter listed twice, named other than [A-Za-z_][A-Za-z0-9_]* or
 * without 1 to GB_KTUNER_MAX_VALUES values; GB_ELIMIT over GB_KTUNER_MAX_ENTRIES
 * entries. Close f in any case. */
int gb_ktuner_file_open(gb_ktuner_file *f, json_t *doc, gb_err *err);
/* NULL and a zeroed f are no-ops. */
void gb_ktuner_file_close(gb_ktuner_file *f);

/* What one cache entry says. */
typedef struct gb_ktuner_entry {
    int index[GB_KTUNER_MAX_PARAMS]; /* per parameter, its value's place in params[i].values */
    gb_trial_status status;          /* GB_TRIAL_OK when time is a number */
    double time_ms;                  /* ok: "time", positive; NAN otherwise */
    const char *failure;             /* not ok: the time string, e.g. "InvalidConfig" */
} gb_ktuner_entry;

/* Reads one entry of f->cache. GB_EINVAL with the reason when the entry is not an
 * object, has no "time" (a number or a string), a time that is not a positive
 * number, or a parameter that is missing or not one of tune_params' values;
 * GB_ENOMEM. */
int gb_ktuner_entry_read(const gb_ktuner_file *f, const json_t *entry, gb_ktuner_entry *out,
                         gb_err *err);

/* Kernel Tuner's failure strings as statuses: "Compilation..." is compile_error,
 * every other string (RuntimeFailedConfig, InvalidConfig, ...) launch_error. It
 * raises on a failed verification instead of caching it, so none means wrong. */
gb_trial_status gb_ktuner_failure_status(const char *failure);

#endif
