/*
 * The records gpubench keeps in the cache, their keys and their JSON form.
 *
 * A record's identity is (kernel name, kernel fingerprint, device fingerprint,
 * shape key) and, for a trial, the configuration. The JSON value repeats the
 * identity in readable form, so `gpubench cache ls` and the header exporter need
 * nothing but the cache. Every value carries the cache schema in its header
 * (cache.h); fields added later are optional, so old records stay readable.
 *
 * Both records are wire types (base/wire.h), described by the X-macros below and
 * nesting the engine's statistics and check result: reading one checks every
 * field's type and range, and that the record makes sense as a whole (a kernel
 * name, a hex fingerprint, a device, a shape), so records from another machine
 * (cache load) or a damaged file (cache verify) can be read without trust.
 */
#ifndef GB_CACHE_RECORD_H
#define GB_CACHE_RECORD_H

#include "base/error.h"
#include "base/json.h"
#include "base/wire.h"
#include "base/value.h"
#include "cache/key.h"
#include "engine/trial.h"
#include "engine/stats.h"
#include "engine/wire_types.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct gb_record_id {
    char *kernel;
    char *kernel_fp; /* hex of the kernel fingerprint */
    char *device;    /* device fingerprint, gb_device_fingerprint() */
    gb_fields shape; /* the shape's key fields only */
} gb_record_id;

/* The identity's fields sit in the record's own object. */
#define GB_RECORD_ID_WIRE(X)                                                                       \
    X(kernel, STRING, "kernel", .max_len = GB_RECORD_MAX_NAME)                                     \
    X(kernel_fp, STRING, "kernel_fp", .max_len = 64)                                               \
    X(device, STRING, "device", .max_len = GB_RECORD_MAX_NAME)                                     \
    X(shape, FIELDS, "shape")

/* Limits on what a record may hold. */
#define GB_RECORD_MAX_NAME    ((size_t)1 << 16) /* kernel name, device fingerprint, a tie's config */
#define GB_RECORD_MAX_LOG     16384             /* a trial's compiler log, cut to this on writing */
#define GB_RECORD_MAX_TEXT    ((size_t)1 << 16) /* a trial's reason */
#define GB_RECORD_MAX_PATH    4096              /* a source file's path */
#define GB_RECORD_MAX_SOURCES 4096              /* files in a best's source closure */
#define GB_RECORD_MAX_SHARDS  4096              /* parts of a sharded run (tuner/shard.h) */

int gb_record_id_copy(const gb_record_id *src, gb_record_id *out);
void gb_record_id_free(gb_record_id *id);
/* The same record identity: kernel, kernel fingerprint, device and shape. */
bool gb_record_id_equal(const gb_record_id *a, const gb_record_id *b);

int gb_record_best_key(const gb_record_id *id, gb_key *out);
int gb_record_trial_key(const gb_record_id *id, const gb_fields *config, gb_key *out);

/* One file of a kernel's source closure and the XXH3-128 hex of its content when the
 * kernel was tuned: what `gpubench cache ls --stale` compares with the file now. */
typedef struct gb_record_source {
    char *path; /* absolute */
    char hash[33];
} gb_record_source;

#define GB_RECORD_SOURCE_WIRE(X)                                                                   \
    X(path, STRING, "path", .max_len = GB_RECORD_MAX_PATH)                                         \
    X(hash, CHARS, "hash")

/* The winner for one shape. */
typedef struct gb_best_record {
    gb_record_id id;
    char *space_fp; /* hex hash of the tuning space the winner was chosen from */
    gb_fields config;
    gb_stats stats;     /* milliseconds: the race's, to the full criterion */
    char mode[8];       /* "cold" or "hot" */
    char timer[8];      /* what timed the samples: "cupti" or "events" */
    double clock_mhz;   /* median SM clock of the samples */
    int n_throttled;    /* samples taken while the GPU throttled (kept, not in stats) */
    bool capped;        /* the measurement hit its cap before the noise target */
    bool contended;     /* other processes used the GPU during the measurement; the tuner
                           never writes such a best, and never answers from one */
    double *samples_ms; /* every sample of the race (NULL, 0 when none) */
    int n_samples;
    char **tie; /* leaders whose interval overlapped the fastest's; the winner first */
    int n_tie;
    int n_leaders; /* how many raced */
    double flops;  /* per launch, 0 when the script gives none */
    double bytes;
    bool has_baseline;
    gb_stats baseline;    /* the reference, when it was timed */
    char *baseline_lib;   /* "cuBLAS" when the reference was a library call, else NULL */
    bool complete;        /* every accepted configuration was tried (no budget cut it short) */
    char strategy[32];    /* the search that found it: "exhaustive", "auto", a script's name */
    uint64_t seed;        /* the strategy's seed */
    int64_t budget_evals; /* its budget; 0: none on that axis */
    double budget_seconds;
    int n_configs; /* the space, the constraints' rejections, and what was measured */
    int n_rejected;
    int n_timed;
    int n_failed;
    int64_t when; /* unix seconds */
    char engine_version[32];
    char nvrtc_version[16];
    int driver_version;
    gb_record_source *sources; /* the source closure's files (NULL, 0 when unknown) */
    int n_sources;
    /* A sharded run (tuner/shard.h) was split into shard_count parts (0: it was
     * not), and this best is the fastest of the parts listed in shards (sorted,
     * distinct): one shard's as its run stored it, more once merged. */
    int shard_count;
    int *shards;
    int n_shards;
} gb_best_record;

/* The fields added after the first release are optional: a record without them
 * reads as before they existed (mode "cold", no samples or tie, complete). */
#define GB_BEST_RECORD_WIRE(X)                                                                     \
    X(id, STRUCT, "id", .type = &gb_wire_record_id, .flags = GB_WIRE_INLINE_STRUCT)                \
    X(space_fp, STRING, "space_fp", .max_len = 64, .flags = GB_WIRE_OPTIONAL, .dflt_str = "")      \
    X(config, FIELDS, "config")                                                                    \
    X(stats, STRUCT, "stats", .type = &gb_wire_stats)                                              \
    X(mode, CHARS, "mode", .flags = GB_WIRE_OPTIONAL, .dflt_str = "cold")                          \
    X(timer, CHARS, "timer", .flags = GB_WIRE_OPTIONAL, .dflt_str = "events")                      \
    X(clock_mhz, DOUBLE, "clock_mhz", GB_WIRE_RANGE(0, INFINITY), .flags = GB_WIRE_OPTIONAL)       \
    X(n_throttled, INT, "n_throttled", GB_RECORD_COUNT)                                            \
    X(capped, BOOL, "capped", .flags = GB_WIRE_OPTIONAL)                                           \
    X(contended, BOOL, "contended", .flags = GB_WIRE_OPTIONAL)                                     \
    X(samples_ms, DOUBLE, "samples_ms", .arity = GB_WIRE_OWNED,                                    \
      .count = offsetof(gb_best_record, n_samples), .max_items = GB_MEASURE_MAX_SAMPLES,           \
      GB_WIRE_RANGE(0, INFINITY), .flags = GB_WIRE_OPTIONAL)                                       \
    X(tie, STRING, "tie", .arity = GB_WIRE_OWNED, .count = offsetof(gb_best_record, n_tie),        \
      .max_items = GB_MAX_RACE, .max_len = GB_RECORD_MAX_NAME, .flags = GB_WIRE_OPTIONAL)          \
    X(n_leaders, INT, "n_leaders", GB_RECORD_COUNT)                                                \
    X(flops, DOUBLE, "flops", .flags = GB_WIRE_OPTIONAL | GB_WIRE_NULL_NAN)                        \
    X(bytes, DOUBLE, "bytes", .flags = GB_WIRE_OPTIONAL | GB_WIRE_NULL_NAN)                        \
    X(baseline, STRUCT, "baseline", .type = &gb_wire_stats, .flags = GB_WIRE_NULLABLE,             \
      .present = offsetof(gb_best_record, has_baseline))                                           \
    X(baseline_lib, STRING, "baseline_lib", .max_len = 16, .flags = GB_WIRE_OPTIONAL)              \
    X(complete, BOOL, "complete", .flags = GB_WIRE_OPTIONAL, .dflt = 1)                            \
    X(strategy, CHARS, "strategy", .flags = GB_WIRE_OPTIONAL, .dflt_str = "exhaustive")            \
    X(seed, UINT64, "seed", .flags = GB_WIRE_OPTIONAL)                                             \
    X(budget_evals, INT64, "budget_evals", GB_WIRE_RANGE(0, INT64_MAX), .flags = GB_WIRE_OPTIONAL) \
    X(budget_seconds, DOUBLE, "budget_seconds", GB_WIRE_RANGE(0, INFINITY),                        \
      .flags = GB_WIRE_OPTIONAL)                                                                   \
    X(n_configs, INT, "n_configs", GB_RECORD_COUNT)                                                \
    X(n_rejected, INT, "n_rejected", GB_RECORD_COUNT)                                              \
    X(n_timed, INT, "n_timed", GB_RECORD_COUNT)                                                    \
    X(n_failed, INT, "n_failed", GB_RECORD_COUNT)                                                  \
    X(when, INT64, "when", .flags = GB_WIRE_OPTIONAL)                                              \
    X(engine_version, CHARS, "engine", .flags = GB_WIRE_OPTIONAL)                                  \
    X(nvrtc_version, CHARS, "nvrtc", .flags = GB_WIRE_OPTIONAL)                                    \
    X(driver_version, INT, "driver", GB_RECORD_COUNT)                                              \
    X(sources, STRUCT, "sources", .type = &gb_wire_record_source, .arity = GB_WIRE_OWNED,          \
      .count = offsetof(gb_best_record, n_sources), .max_items = GB_RECORD_MAX_SOURCES,            \
      .flags = GB_WIRE_OPTIONAL)                                                                   \
    X(shard_count, INT, "shard_count", GB_WIRE_RANGE(0, GB_RECORD_MAX_SHARDS),                     \
      .flags = GB_WIRE_OPTIONAL)                                                                   \
    X(shards, INT, "shards", .arity = GB_WIRE_OWNED, .count = offsetof(gb_best_record, n_shards),  \
      .max_items = GB_RECORD_MAX_SHARDS, GB_WIRE_RANGE(0, GB_RECORD_MAX_SHARDS - 1),               \
      .flags = GB_WIRE_OPTIONAL)

/* An optional count: an integer >= 0, 0 when absent. */
#define GB_RECORD_COUNT GB_WIRE_RANGE(0, INT_MAX), .flags = GB_WIRE_OPTIONAL

extern const gb_wire_type gb_wire_record_id;     /* gb_record_id (inline in the records) */
extern const gb_wire_type gb_wire_record_source; /* gb_record_source (a best's sources) */
extern const gb_wire_type gb_wire_best_record;   /* gb_best_record */
extern const gb_wire_type gb_wire_trial_record;  /* gb_trial_record */

/* The record as JSON; NULL on ENOMEM. */
json_t *gb_best_record_to_json(const gb_best_record *rec);

/* Whether the best was chosen from its whole space: its run was not sharded, or
 * the bests of all its shards were folded into it. */
bool gb_best_record_whole(const gb_best_record *rec);

/* Whether the shards' bests a and b are of one sharded run, which
 * gb_best_record_combine can fold: the same count and space, and no shard in both. */
bool gb_best_record_combinable(const gb_best_record *a, const gb_best_record *b);

/* Folds two combinable bests into out: the faster one (a clean measurement, then
 * the lower median), over both's shards, with their counts of configurations
 * rejected, timed and failed and their budgets added up; complete when both were.
 * GB_ENOMEM; out is zeroed first and freed with gb_best_record_free. */
int gb_best_record_combine(const gb_best_record *a, const gb_best_record *b, gb_best_record *out);
/* Reads a record (out zeroed first; free it with gb_best_record_free). GB_ECACHE
 * with err naming the field ("best_record.stats.median_ms: expected a number >= 0
 * or null") when it does not read or does not make sense; GB_ENOMEM. */
int gb_best_record_from_json(const json_t *json, gb_best_record *out, gb_err *err);
void gb_best_record_free(gb_best_record *rec);

/* One measured (or failed) configuration. A record written before the trial is
 * sent to the GPU has in_flight set, status crashed and a reason saying so: if the
 * tuner dies during the trial, that is what the next run finds. */
typedef struct gb_trial_record {
    gb_record_id id;
    gb_fields config;
    bool in_flight;
    int64_t owner_pid; /* in flight: the tuner running it, and its machine's boot id */
    char owner_boot[40];
    gb_trial_status status;
    char *reason; /* "" for ok */
    gb_check_result check;
    bool has_stats;
    gb_stats stats;     /* the screening measurement's */
    char mode[8];       /* how it was timed: "cold" or "hot" (with stats) */
    char timer[8];      /* ... and by what: "cupti" or "events" (with stats) */
    double clock_mhz;   /* its median SM clock; 0 when unknown */
    bool contended;     /* other processes used the GPU during its measurement (with stats) */
    double *samples_ms; /* its samples (NULL, 0 when none); owned when read */
    int n_samples;
    int registers;
    char cubin[33]; /* hex of the cubin's cache key; "" when unknown or none */
    char *log;      /* compile_error: NVRTC's log (at most 16 KiB of it); NULL otherwise */
    int gpu;        /* the ordinal of the GPU it ran on; -1 when it did not run or is unknown */
    int64_t when;
} gb_trial_record;

/* The owner is written only for a record in flight; the timing's mode, clock and
 * samples only with its statistics. */
#define GB_TRIAL_RECORD_WIRE(X)                                                                    \
    X(id, STRUCT, "id", .type = &gb_wire_record_id, .flags = GB_WIRE_INLINE_STRUCT)                \
    X(config, FIELDS, "config")                                                                    \
    X(status, ENUM, "status", .enumeration = &gb_wire_enum_trial_status)                           \
    X(in_flight, BOOL, "in_flight", .flags = GB_WIRE_OPTIONAL)                                     \
    X(owner_pid, INT64, "owner_pid", GB_WIRE_RANGE(0, INT64_MAX), .when = trial_in_flight)         \
    X(owner_boot, CHARS, "owner_boot", .when = trial_in_flight)                                    \
    X(reason, STRING, "reason", .max_len = GB_RECORD_MAX_TEXT, .flags = GB_WIRE_OPTIONAL,          \
      .dflt_str = "")                                                                              \
    X(check, STRUCT, "check", .type = &gb_wire_check_result)                                       \
    X(stats, STRUCT, "stats", .type = &gb_wire_stats, .flags = GB_WIRE_NULLABLE,                   \
      .present = offsetof(gb_trial_record, has_stats))                                             \
    X(mode, CHARS, "mode", .when = trial_timed, .dflt_str = "cold")                                \
    X(timer, CHARS, "timer", .when = trial_timed, .flags = GB_WIRE_OPTIONAL, .dflt_str = "events") \
    X(clock_mhz, DOUBLE, "clock_mhz", GB_WIRE_RANGE(0, INFINITY), .when = trial_timed)             \
    X(contended, BOOL, "contended", .when = trial_timed)                                           \
    X(samples_ms, DOUBLE, "samples_ms", .arity = GB_WIRE_OWNED,                                    \
      .count = offsetof(gb_trial_record, n_samples), .max_items = GB_MEASURE_MAX_SAMPLES,          \
      GB_WIRE_RANGE(0, INFINITY), .when = trial_timed)                                             \
    X(registers, INT, "registers", GB_WIRE_RANGE(-1, INT_MAX), .flags = GB_WIRE_OPTIONAL,          \
      .dflt = -1)                                                                                  \
    X(cubin, CHARS, "cubin", .when = trial_has_cubin)                                              \
    X(log, STRING, "log", .max_len = GB_RECORD_MAX_LOG, .flags = GB_WIRE_OPTIONAL)                 \
    X(gpu, INT, "gpu", GB_WIRE_RANGE(-1, INT_MAX), .flags = GB_WIRE_OPTIONAL, .dflt = -1)          \
    X(when, INT64, "when", .flags = GB_WIRE_OPTIONAL)

/* As for the best record; GB_ECACHE for a record that does not read. */
json_t *gb_trial_record_to_json(const gb_trial_record *rec);
int gb_trial_record_from_json(const json_t *json, gb_trial_record *out, gb_err *err);
void gb_trial_record_free(gb_trial_record *rec);

#endif
