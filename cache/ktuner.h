/*
 * Kernel Tuner cache files into gpubench records (`gpubench cache load --from
 * kernel-tuner`). A Kernel Tuner cache is a JSON object with "tune_params_keys",
 * "tune_params" (name -> list of values), "device_name", "kernel_name" and "cache":
 * one entry per measured configuration, keyed by its values joined with commas,
 * holding each parameter's value, "time" (milliseconds, or a string such as
 * "InvalidConfig" or "CompilationFailedConfig" for a configuration that failed) and
 * optionally "times" (every run's milliseconds).
 *
 * Every entry becomes a trial; the fastest numeric time becomes the shape's best.
 * Kernel Tuner knows nothing of gpubench's shapes, so the caller names the kernel and
 * the shape the file was measured at. The mapping is documented in docs/cache.md
 * ("Importing from Kernel Tuner"). The text is only data: it is parsed with bounds on
 * every size and nothing in it names a path or reaches a shell.
 */
#ifndef GB_CACHE_KTUNER_H
#define GB_CACHE_KTUNER_H

#include "cache/ktuner_file.h"
#include "cache/transfer.h"

/* With ktuner_file.h's bounds on entries, parameters and values. */
#define GB_KTUNER_MAX_FILE_BYTES ((size_t)64 << 20)
#define GB_KTUNER_MAX_TIMES      100000

typedef struct gb_ktuner_opts {
    const char *kernel;     /* the gpubench kernel name the results belong to */
    const gb_fields *shape; /* the shape's key fields they were measured at */
    const char *kernel_fp;  /* NULL: "kernel-tuner-" and a hash of the file's tune_params */
    const char *device;     /* NULL: the file's device_name */
    int64_t now;            /* the time of entries without a timestamp; 0: time(NULL) */
    gb_cache_note_fn note;  /* entries skipped, with why */
    void *note_ctx;
} gb_ktuner_opts;

typedef struct gb_ktuner_summary {
    gb_transfer_summary stored; /* what happened in the cache (nothing without one) */
    size_t n_entries;           /* in the file's "cache" */
    size_t n_ok;                /* with a numeric time */
    size_t n_failed;            /* with a failure string */
    size_t n_skipped;           /* not usable: see the notes */
    bool has_best;
    double best_ms;         /* the fastest entry's "time" */
    char best_config[1024]; /* its configuration, canonical text */
    char kernel_fp[80];     /* as stored */
    char device[260];
} gb_ktuner_summary;

/* Imports the Kernel Tuner cache text[0..len) into cache (NULL: decode and check
 * only, storing nothing). GB_EINVAL naming what is wrong when the file as a whole
 * cannot be used (not JSON, no tune_params or cache, no device); GB_ELIMIT over a
 * bound; cache errors pass through. GB_OK otherwise, also when entries were skipped. */
int gb_ktuner_import(gb_cache *cache, const char *text, size_t len, const gb_ktuner_opts *opts,
                     gb_ktuner_summary *out, gb_err *err);

#endif
