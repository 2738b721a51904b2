/*
 * Internal to tuner/: the trial history of one gb_tune call, behind a handle of
 * its own. What the cache keeps of the run (every trial, the write-ahead record
 * of one about to reach the GPU, each shape's best) and what a later run may
 * reuse from it (a finished trial, a best that answers the shape, the recorded
 * trials a search goes on from).
 *
 * The handle knows the run's identity in the records (kernel, fingerprints,
 * device, the timing criterion and timer) and the options that decide reuse
 * (--force, --retry-crashed, the shard); it does not know the search, the
 * executors or the shape being tuned. The cache may be NULL: nothing is kept and
 * nothing reused. A record that cannot be written is warned about once, on log,
 * and the run goes on.
 */
#ifndef GB_TUNER_HISTORY_H
#define GB_TUNER_HISTORY_H

#include "cache/record.h"
#include "tuner/kernel.h"
#include "tuner/opts.h"
#include "tuner/result.h"

#include <stdbool.h>
#include <stdio.h>

typedef struct gb_history {
    gb_cache *cache;    /* NULL: no cache */
    bool force;         /* reuse nothing: re-tune every shape */
    bool retry_crashed; /* run trials recorded as crashed or timeout again */
    gb_shard shard;     /* the run's part of every space */
    /* The run's identity: the strings are the run's, filled before the first
     * shape (the handle only points at them). */
    const gb_kernel_def *k;
    const char *kernel_fp;
    const char *device;              /* its fingerprint; "" without a device */
    const char *space_fp;            /* gb_variant_space_fp */
    const char *reference_lib;       /* "cuBLAS" for a library reference, else "" */
    const gb_record_source *sources; /* the kernel's source files, for the bests */
    int n_sources;
    int driver_version;
    gb_measure_mode mode; /* the criterion's mode: a timing is reused only in it */
    const char *timer;    /* "cupti" or "events": the same for the timer */
    FILE *log;            /* the warning; NULL: none */
    bool warned;          /* the cache could not be written, and the user was told */
    gb_err *err;          /* where a failure that stops the run goes */
} gb_history;

/* A configuration's identity within a shape, made once per trial and carried to
 * every use: its values by name, its canonical text, its trial record's key. */
typedef struct gb_trial_ident {
    gb_config config;
    gb_fields fields;
    char *text; /* "BK=8,BM=64,BN=64" */
    gb_key key; /* of its trial record, for the shape's id */
} gb_trial_ident;

/* The cache identity of a shape (its key fields). */
int gb_history_shape_id(const gb_history *h, const gb_fields *shape, gb_record_id *out);

/* The configuration of the shape's cached best, whatever space it came from;
 * GB_ENOTFOUND when there is none. */
int gb_history_best_config(const gb_history *h, const gb_record_id *id, gb_fields *out);

/* A cached best chosen from the same space answers the shape without trials. */
bool gb_history_cached_best(const gb_history *h, const gb_record_id *id, gb_shape_result *res);
void gb_history_store_best(gb_history *h, const gb_record_id *id, const gb_shape_result *res);

/* The trial's identity in the shape (GB_ENOMEM with h->err set). */
int gb_history_ident(const gb_history *h, const gb_record_id *id, const gb_config *config,
                     gb_trial_ident *out);
void gb_history_ident_free(gb_trial_ident *t);

/* A finished trial of an earlier run that this run reuses instead of running it
 * again; an interrupted one (the write-ahead record) comes back as crashed. */
bool gb_history_resume(const gb_history *h, const gb_trial_ident *t, gb_trial_result *out);

/* Every reusable trial an earlier run recorded for the shape (what
 * gb_history_resume would reuse), for a search to go on from: fn is called with
 * each one's configuration, in this space, and its result. */
typedef int (*gb_history_visit_fn)(void *ctx, const gb_config *config, const gb_trial_result *t);
int gb_history_recorded(gb_history *h, const gb_record_id *id, gb_history_visit_fn fn, void *ctx);

/* The write-ahead record, committed before a trial reaches the GPU; cubin is the
 * key of the cubin it runs. */
void gb_history_in_flight(gb_history *h, const gb_record_id *id, const gb_trial_ident *t,
                          const gb_key *cubin);
/* The trial's outcome, replacing the write-ahead record; log is NVRTC's for a
 * compile error, else NULL; cubin is NULL when there is none. */
void gb_history_trial(gb_history *h, const gb_record_id *id, const gb_trial_ident *t,
                      const gb_trial_result *res, int registers, const char *log,
                      const gb_key *cubin);
/* Drops the write-ahead record of a trial the user interrupted. */
void gb_history_forget(gb_history *h, const gb_trial_ident *t);

/* Warns once that the cache could not be written (e->code GB_OK: nothing). */
void gb_history_warn(gb_history *h, const gb_err *e);

#endif
