/*
 * Looking after a cache: what it holds, which results are stale, one kernel's
 * results in detail, and the upkeep commands (remove, collect cubins nobody needs,
 * verify). This is the library under `gpubench cache ls|show|rm|gc|verify`: it
 * reads and writes the cache and returns what it found; it prints nothing.
 *
 * A best record is stale when any of these holds (gb_stale bits):
 *   superseded  a newer record exists for the same kernel, device and shape (the
 *               kernel's fingerprint changed since: another source, entry or options);
 *   source      a file of the kernel's source closure, as recorded when it was tuned,
 *               now has other content on disk (a file that is gone proves nothing
 *               and is only noted);
 *   schema, engine, nvrtc
 *               the record was written by an older cache schema, gpubench or NVRTC
 *               than the versions given as `now`;
 *   driver      its CUDA driver is older than the newest driver recorded in the
 *               cache for the same device (the driver itself is never loaded).
 */
#ifndef GB_CACHE_INSPECT_H
#define GB_CACHE_INSPECT_H

#include "base/error.h"
#include "base/value.h"
#include "cache/cache.h"
#include "cache/record.h"

#include <stdbool.h>
#include <stddef.h>

/* Where library code reports something worth a line (a skipped record, a problem
 * verify found); the CLI prints it. May be NULL. */
typedef void (*gb_cache_note_fn)(void *ctx, const char *msg);

/* Which records a command applies to; NULL fields match everything. */
typedef struct gb_cache_filter {
    const char *kernel;
    const char *device;
    const gb_fields *shape; /* the shape's key fields, all of them */
} gb_cache_filter;

bool gb_cache_filter_match(const gb_cache_filter *filter, const gb_record_id *id);

/* Parses a shape as the tables print it, "K=1024,M=1024,N=1024" or
 * `dt="f32",n=4096`: integers, other numbers, true/false, quoted or bare strings.
 * GB_EINVAL naming the bad part. */
int gb_cache_parse_shape(const char *text, gb_fields *out, gb_err *err);

/* Decodes the payload of a best or trial record (JSON text). GB_ECACHE when it does
 * not parse or decode, with the reason. */
int gb_cache_read_best(const void *value, size_t len, gb_best_record *out, gb_err *err);
int gb_cache_read_trial(const void *value, size_t len, gb_trial_record *out, gb_err *err);

/* Called with each decoded trial record gb_cache_walk_trials lets through. fn may
 * keep the record by moving it out (what it leaves zeroed is not freed); what is
 * left is freed after the call. Non-zero ends the walk with that status, err set. */
typedef int (*gb_cache_trial_fn)(void *ctx, gb_trial_record *rec, gb_err *err);

/* Decodes every trial record and gives fn those that match filter. Records that do
 * not decode are skipped and counted in *out_unreadable (NULL: not counted); `cache
 * verify` is what reports them. GB_ENOMEM, a cache error, or fn's status. */
int gb_cache_walk_trials(gb_cache *cache, const gb_cache_filter *filter, gb_cache_trial_fn fn,
                         void *ctx, size_t *out_unreadable, gb_err *err);

/* The versions records are compared with. */
typedef struct gb_cache_versions {
    const char *engine; /* this gpubench, e.g. "0.1.0" */
    const char *nvrtc;  /* this build's NVRTC, e.g. "13.0" */
} gb_cache_versions;

enum gb_stale {
    GB_STALE_SUPERSEDED = 1 << 0,
    GB_STALE_SOURCE = 1 << 1,
    GB_STALE_SCHEMA = 1 << 2,
    GB_STALE_ENGINE = 1 << 3,
    GB_STALE_NVRTC = 1 << 4,
    GB_STALE_DRIVER = 1 << 5,
};

/* The names of the bits in stale, comma-separated ("superseded,nvrtc"); "" for 0. */
void gb_stale_names(unsigned stale, char *out, size_t out_bytes);

typedef struct gb_cache_entry {
    gb_key key;
    unsigned schema;
    gb_best_record rec;
    unsigned stale; /* gb_stale bits; 0 when current */
    char why[512];  /* the reasons in words: "source changed: /t/sgemm.cuh" */
    char note[512]; /* what could not be judged: "source not found: /t/x.cuh" */
} gb_cache_entry;

typedef struct gb_cache_listing {
    gb_cache_entry *entries; /* by kernel, device and shape, newest first within each */
    int n;
    int n_stale;
    int n_unreadable; /* best records that did not decode */
    size_t n_trials;  /* trial records matching the filter */
    size_t n_status[GB_TRIAL_STATUS_COUNT];
    size_t n_in_flight;
    size_t n_trials_unreadable;
    size_t n_cubins; /* the whole cache's: cubins belong to no kernel name */
    size_t cubin_bytes;
} gb_cache_listing;

/* Lists the best records that match filter, with their staleness judged against now,
 * and counts the trials and cubins. */
int gb_cache_list(gb_cache *cache, const gb_cache_filter *filter, const gb_cache_versions *now,
                  gb_cache_listing *out, gb_err *err);
void gb_cache_listing_free(gb_cache_listing *listing);

/* One (kernel, kernel fingerprint, device, shape): its best, if any, and its trials
 * ordered by status and then configuration. */
typedef struct gb_cache_group {
    gb_record_id id;
    bool has_best;
    gb_cache_entry best;
    gb_trial_record *trials;
    int n_trials;
} gb_cache_group;

/* Every group of the records that match filter (kernel required), ordered like the
 * listing. Unreadable records are counted in *out_unreadable. */
int gb_cache_show(gb_cache *cache, const gb_cache_filter *filter, const gb_cache_versions *now,
                  gb_cache_group **out, int *out_n, int *out_unreadable, gb_err *err);
void gb_cache_groups_free(gb_cache_group *groups, int n);

typedef struct gb_cache_rm_opts {
    gb_cache_filter filter;
    bool stale_only;              /* only stale best records (judged against now) */
    const gb_cache_versions *now; /* with stale_only */
    bool dry_run;                 /* count, remove nothing */
} gb_cache_rm_opts;

typedef struct gb_cache_rm_summary {
    size_t n_best;
    size_t n_trials;
} gb_cache_rm_summary;

/* Removes the best records that match (and, with stale_only, are stale) and every
 * trial of the same kernel, fingerprint, device and shape. Without stale_only, trials
 * that match the filter go too, whether or not they have a best. Each removal is its
 * own transaction. */
int gb_cache_rm(gb_cache *cache, const gb_cache_rm_opts *opts, gb_cache_rm_summary *out,
                gb_err *err);

typedef struct gb_cache_gc_summary {
    size_t n_cubins;       /* cubins before */
    size_t n_removed;      /* of which removed: */
    size_t n_unnamed;      /*   named by no trial record (with unnamed) */
    size_t n_other_nvrtc;  /*   compiled by another NVRTC than now->nvrtc */
    size_t bytes_removed;  /* their record sizes */
    size_t n_kept_unnamed; /* named by no trial and kept (without unnamed) */
} gb_cache_gc_summary;

/* Removes the cubins whose NVRTC version is known and differs from nvrtc (such a
 * cubin's key can never be asked for again) and, with unnamed, those that no
 * trial record names: a --compile-only run's, which a GPU host may still time
 * (kept by default), the references', and those of trials since removed. */
int gb_cache_gc(gb_cache *cache, const char *nvrtc, bool unnamed, bool dry_run,
                gb_cache_gc_summary *out, gb_err *err);

typedef struct gb_cache_verify_summary {
    size_t n_checked[GB_DB_COUNT];
    size_t n_problems;
} gb_cache_verify_summary;

/* Checks every record: its header, that it decodes, that a best or trial record sits
 * under the key its content gives, that a cubin record splits into JSON and a cubin.
 * Each problem goes to note, naming the database and the key. */
int gb_cache_verify(gb_cache *cache, gb_cache_note_fn note, void *note_ctx,
                    gb_cache_verify_summary *out, gb_err *err);

#endif
