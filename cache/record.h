/*
 * The records gpubench keeps in the cache, their keys and their JSON form.
 *
 * A record's identity is (kernel name, kernel fingerprint, device fingerprint,
 * shape key) and, for a trial, the configuration. The JSON value repeats the
 * identity in readable form, so `gpubench cache ls` and the header exporter need
 * nothing but the cache. Every value carries the cache schema in its header
 * (cache.h); fields added later are optional, so old records stay readable.
 */
#ifndef GB_CACHE_RECORD_H
#define GB_CACHE_RECORD_H

#include "base/error.h"
#include "base/json.h"
#include "base/value.h"
#include "cache/key.h"
#include "engine/exec.h"
#include "engine/stats.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct gb_record_id {
    char *kernel;
    char *kernel_fp; /* hex of the kernel fingerprint */
    char *device;    /* device fingerprint, gb_device_fingerprint() */
    gb_fields shape; /* the shape's key fields only */
} gb_record_id;

int gb_record_id_copy(const gb_record_id *src, gb_record_id *out);
void gb_record_id_free(gb_record_id *id);

int gb_record_best_key(const gb_record_id *id, gb_key *out);
int gb_record_trial_key(const gb_record_id *id, const gb_fields *config, gb_key *out);

/* One file of a kernel's source closure and the XXH3-128 hex of its content when the
 * kernel was tuned: what `gpubench cache ls --stale` compares with the file now. */
typedef struct gb_record_source {
    char *path; /* absolute */
    char hash[33];
} gb_record_source;

/* The winner for one shape. */
typedef struct gb_best_record {
    gb_record_id id;
    char *space_fp; /* hex hash of the tuning space the winner was chosen from */
    gb_fields config;
    gb_stats stats;     /* milliseconds: the race's, to the full criterion */
    char mode[8];       /* "cold" or "hot" */
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
    gb_stats baseline; /* the reference, when it was timed */
    bool complete;     /* every accepted configuration was tried (no budget cut it short) */
    int n_configs;     /* the space, the constraints' rejections, and what was measured */
    int n_rejected;
    int n_timed;
    int n_failed;
    int64_t when; /* unix seconds */
    char engine_version[32];
    char nvrtc_version[16];
    int driver_version;
    gb_record_source *sources; /* the source closure's files (NULL, 0 when unknown) */
    int n_sources;
} gb_best_record;

void gb_best_record_write(gb_jw *w, const gb_best_record *rec);
int gb_best_record_read(const gb_json *json, gb_best_record *out, gb_err *err);
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
    double clock_mhz;   /* its median SM clock; 0 when unknown */
    bool contended;     /* other processes used the GPU during its measurement */
    double *samples_ms; /* its samples (NULL, 0 when none); owned when read */
    int n_samples;
    int registers;
    char cubin[33]; /* hex of the cubin's cache key; "" when unknown or none */
    char *log;      /* compile_error: NVRTC's log (at most 16 KiB of it); NULL otherwise */
    int64_t when;
} gb_trial_record;

void gb_trial_record_write(gb_jw *w, const gb_trial_record *rec);
int gb_trial_record_read(const gb_json *json, gb_trial_record *out, gb_err *err);
void gb_trial_record_free(gb_trial_record *rec);

/* Records as jansson values (new reference; NULL when out of memory) and back.
 * Until base/json moves to jansson these four live in cache/record_bridge.c. */
json_t *gb_best_record_to_json(const gb_best_record *rec);
int gb_best_record_from_json(const json_t *json, gb_best_record *out, gb_err *err);
json_t *gb_trial_record_to_json(const gb_trial_record *rec);
int gb_trial_record_from_json(const json_t *json, gb_trial_record *out, gb_err *err);

/* Statistics as a JSON object and back (missing fields read as NaN). */
void gb_stats_write_json(gb_jw *w, const gb_stats *stats);
void gb_stats_read_json(const gb_json *obj, gb_stats *out);

#endif
