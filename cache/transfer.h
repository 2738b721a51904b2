/*
 * Moving results between caches: write them to a transfer file (versioned JSON),
 * read one in, and merge another cache directory in. The file format is
 * documented in docs/cache.md ("Transfer files"); GB_TRANSFER_VERSION is its
 * version, GB_TRANSFER_FORMAT the name it carries (from before "export" meant the
 * C header alone).
 *
 * What comes from elsewhere is data. The importer never trusts a key it is given:
 * every best and trial record is decoded, checked (names, sizes, characters: see
 * gb_transfer_check_*), encoded again and stored under the key its content gives.
 * A record that fails is skipped with a note naming its place, and the rest go on.
 * Each record is stored in its own transaction, which also applies the rule for a
 * key that is already there (gb_transfer_best_wins, gb_transfer_trial_wins), so an
 * interrupted import leaves whole records only.
 *
 * Cubins are GPU code that a later tuning run will load, and their key (a hash of
 * the source, options, target and NVRTC) cannot be recomputed from the cubin. So
 * they travel only when asked for (cubins in the options), on both sides.
 */
#ifndef GB_CACHE_TRANSFER_H
#define GB_CACHE_TRANSFER_H

#include "cache/inspect.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GB_TRANSFER_FORMAT  "gpubench-cache-export"
#define GB_TRANSFER_VERSION 1

/* Bounds on what an import accepts. */
#define GB_TRANSFER_MAX_FILE_BYTES  ((size_t)256 << 20)
#define GB_TRANSFER_MAX_RECORDS     2000000
#define GB_TRANSFER_MAX_CUBIN_BYTES ((size_t)64 << 20)

/* What happened to the records of one database. */
typedef struct gb_transfer_counts {
    size_t imported; /* the key was free */
    size_t replaced; /* the key held a record that lost to this one */
    size_t kept;     /* the key held a record that won (or the same cubin) */
    size_t combined; /* the key held another shard's best of the same run: now both's */
    size_t skipped;  /* did not decode, failed a check, or (cubins) differed */
} gb_transfer_counts;

typedef struct gb_transfer_summary {
    gb_transfer_counts best, trials, cubins;
    size_t in_flight;      /* trials that were in flight where they came from */
    size_t cubins_ignored; /* cubins present but not asked for */
} gb_transfer_summary;

/* Records skipped, in all databases: the import's exit status depends on it. */
size_t gb_transfer_skipped(const gb_transfer_summary *sum);

typedef struct gb_transfer_opts {
    bool cubins;            /* export: include the cubins the exported trials name;
                               import, merge: take the file's cubins */
    gb_cache_filter filter; /* export: what to export */
    const char *engine;     /* export: the gpubench version written in the file */
    int64_t now;            /* export: its time; 0 for time(NULL) */
    gb_cache_note_fn note;  /* skipped records, conflicts */
    void *note_ctx;
} gb_transfer_opts;

/* The transfer file's document (a new reference in *out). Records that do not decode are
 * left out and counted as skipped. */
int gb_transfer_file_make(gb_cache *cache, const gb_transfer_opts *opts, json_t **out,
                          gb_transfer_summary *sum, gb_err *err);

/* The document as the file's text: the header fields, then one record per line.
 * Malloc'd; NULL when out of memory. */
char *gb_transfer_file_dump(const json_t *doc);

/* Reads a transfer file's text (len bytes; it need not be NUL-terminated).
 * GB_EINVAL when it is not a transfer file of a version this build reads, GB_ELIMIT
 * when it is over a bound, a cache error when storing fails; GB_OK otherwise, also
 * when records were skipped (see sum). */
int gb_transfer_file_read(gb_cache *cache, const char *text, size_t len,
                          const gb_transfer_opts *opts, gb_transfer_summary *sum, gb_err *err);

/* Folds the cache src into cache by the same rules. src must be another
 * environment than cache (the CLI opens it read-only). */
int gb_cache_merge(gb_cache *cache, gb_cache *src, const gb_transfer_opts *opts,
                   gb_transfer_summary *sum, gb_err *err);

/* The rule for a key both sides hold; true when incoming replaces existing.
 * best: two bests of different shards of one run are folded into one
 * (gb_best_record_combinable, cache/record.h); otherwise a clean record (complete
 * search of the whole space, not capped, no throttled sample) beats one that is
 * not; then the one with more timed configurations; then the newer.
 * trials: a finished record beats one in flight; then the newer. In flight
 * incoming never wins. On a full tie the existing record stays. */
bool gb_transfer_best_wins(const gb_best_record *incoming, const gb_best_record *existing);
bool gb_transfer_trial_wins(const gb_trial_record *incoming, const gb_trial_record *existing);

/* The checks a record from elsewhere must pass before it is stored: names in the
 * script's alphabet, bounded sizes, no control characters, hex where hex belongs.
 * GB_EINVAL naming the field. */
int gb_transfer_check_id(const gb_record_id *id, gb_err *err);
int gb_transfer_check_best(const gb_best_record *rec, gb_err *err);
int gb_transfer_check_trial(const gb_trial_record *rec, gb_err *err);

/* Stores one decoded record from elsewhere by the rules above: checks it, keys it
 * from its content and applies the equal-key rule in one transaction; counts land in
 * sum. A trial in flight is stored as crashed and not in flight. GB_EINVAL (counted
 * as skipped) when a check fails; cache errors pass through. */
int gb_transfer_put_best(gb_cache *cache, const gb_best_record *rec, gb_transfer_summary *sum,
                         gb_err *err);
int gb_transfer_put_trial(gb_cache *cache, const gb_trial_record *rec, gb_transfer_summary *sum,
                          gb_err *err);

/* What a tuning run stores as a shape's best: folded with another shard's best of
 * the same run that the key holds (two shards may share one cache), in place of
 * anything else there. One transaction. */
int gb_transfer_store_best(gb_cache *cache, const gb_best_record *rec, gb_err *err);

/* Stores a cubin from elsewhere under key: it must be an ELF file within the bounds,
 * and its JSON half is rebuilt from the fields gpubench reads (lowered, log,
 * compile_ms, resources, nvrtc, arch), each checked. A cubin already there under
 * the key must be the same bytes: a different one is kept, and this one counted as
 * skipped with GB_EINVAL. */
int gb_transfer_put_cubin(gb_cache *cache, const gb_key *key, const json_t *meta, const void *cubin,
                          size_t cubin_bytes, gb_transfer_summary *sum, gb_err *err);

/* The reason given to an imported trial that was in flight where it came from. */
#define GB_IMPORTED_IN_FLIGHT_REASON                                                               \
    "in flight on the machine it was imported from (its tuner was running it, or stopped "         \
    "during it); not run again unless --retry-crashed"

#endif
