/* What the cache keeps of a tuning run, and what a later run may reuse
 * (tuner/history.h). */
#include "tuner/history.h"

#include "cache/inspect.h"
#include "cache/transfer.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifndef GB_VERSION
#define GB_VERSION "0.0.0"
#endif

static const char IN_FLIGHT_REASON[] =
    "the tuner stopped while this trial was running (killed, crashed or lost power); "
    "it is not run again unless --retry-crashed";

void gb_history_warn(gb_history *h, const gb_err *e)
{
    if (h->warned || e->code == GB_OK) return;
    h->warned = true;
    if (!h->log) return;
    fprintf(h->log, "gpubench: warning: results are not being saved: %s\n", e->msg);
    fflush(h->log);
}

int gb_history_shape_id(const gb_history *h, const gb_fields *shape, gb_record_id *out)
{
    *out = (gb_record_id){
        .kernel = strdup(h->k->name),
        .kernel_fp = strdup(h->kernel_fp),
        .device = strdup(h->device),
    };
    if (!out->kernel || !out->kernel_fp || !out->device) {
        gb_record_id_free(out);
        return gb_err_set(h->err, GB_ENOMEM, "out of memory");
    }
    int rc = gb_tune_key_fields(h->k, shape, &out->shape, h->err);
    if (rc) gb_record_id_free(out);
    return rc;
}

/* Stores a record and drops the reference to its JSON. */
static void put(gb_history *h, gb_cache_db db, const gb_key *key, json_t *json)
{
    gb_err e = {0};
    if (!json)
        gb_err_set(&e, GB_ENOMEM, "out of memory writing a record");
    else
        gb_cache_put_json(h->cache, db, key, json, &e);
    json_decref(json);
    gb_history_warn(h, &e);
}

int gb_history_ident(const gb_history *h, const gb_record_id *id, const gb_config *config,
                     gb_trial_ident *out)
{
    gb_strbuf text = GB_STRBUF_INIT;
    *out = (gb_trial_ident){.config = *config};
    gb_config_append_canonical(&text, config);
    out->text = gb_sb_take(&text);
    int rc = out->text ? gb_config_to_fields(config, &out->fields) : GB_ENOMEM;
    if (rc == GB_OK) rc = gb_record_trial_key(id, &out->fields, &out->key);
    if (rc) {
        gb_history_ident_free(out);
        return gb_err_set(h->err, GB_ENOMEM, "out of memory");
    }
    return GB_OK;
}

void gb_history_ident_free(gb_trial_ident *t)
{
    gb_fields_free(&t->fields);
    free(t->text);
    t->text = NULL;
}

static void put_trial(gb_history *h, const gb_record_id *id, const gb_trial_ident *t,
                      gb_trial_record *rec)
{
    if (!h->cache) return;
    rec->id = *id;
    rec->when = (int64_t)time(NULL);
    rec->config = t->fields; /* borrowed for the encoding */
    put(h, GB_DB_TRIALS, &t->key, gb_trial_record_to_json(rec));
}

/* This machine's boot id: with a pid, it tells whether the tuner that wrote a
 * write-ahead record may still be running. */
static void boot_id(char out[40])
{
    out[0] = '\0';
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (!f) return;
    if (!fgets(out, 40, f)) out[0] = '\0';
    out[strcspn(out, "\n")] = '\0';
    fclose(f);
}

void gb_history_in_flight(gb_history *h, const gb_record_id *id, const gb_trial_ident *t,
                          const gb_key *cubin)
{
    gb_trial_record rec = {.in_flight = true,
                           .status = GB_TRIAL_CRASHED,
                           .reason = (char *)IN_FLIGHT_REASON,
                           .registers = -1,
                           .gpu = -1,
                           .owner_pid = getpid()};
    boot_id(rec.owner_boot);
    gb_key_hex(cubin, rec.cubin);
    put_trial(h, id, t, &rec);
}

/* A write-ahead record whose tuner is still alive is another tuner's trial in
 * progress (two tuners may share a cache), not a crash. */
static bool owner_alive(const gb_trial_record *rec)
{
    char boot[40];
    boot_id(boot);
    if (!rec->owner_pid || rec->owner_pid == getpid() || !boot[0] || strcmp(boot, rec->owner_boot))
        return false;
    return kill((pid_t)rec->owner_pid, 0) == 0 || errno == EPERM;
}

void gb_history_trial(gb_history *h, const gb_record_id *id, const gb_trial_ident *ident,
                      const gb_trial_result *t, int registers, const char *log, const gb_key *cubin)
{
    /* compiled and not skipped: it reached a GPU */
    bool ran = cubin && t->status != GB_TRIAL_SKIPPED;
    gb_trial_record rec = {
        .status = t->status,
        .reason = (char *)t->reason,
        .check = t->check,
        .has_stats = t->status == GB_TRIAL_OK,
        .stats = t->measurement.stats,
        .clock_mhz = t->measurement.clock_mhz_median,
        .contended = t->status == GB_TRIAL_OK && t->measurement.contended,
        .samples_ms = t->measurement.samples_ms,
        .n_samples = t->measurement.n_samples,
        .registers = registers,
        .log = (char *)log,
        .gpu = ran ? t->gpu : -1,
    };
    gb_strlcpy(rec.mode, gb_measure_mode_name(h->mode), sizeof rec.mode);
    gb_strlcpy(rec.timer, gb_measurement_timer(&t->measurement), sizeof rec.timer);
    if (cubin) gb_key_hex(cubin, rec.cubin); /* what `cache gc` keeps */
    put_trial(h, id, ident, &rec);
}

void gb_history_forget(gb_history *h, const gb_trial_ident *t)
{
    gb_err e = {0};
    if (!h->cache) return;
    if (gb_cache_del(h->cache, GB_DB_TRIALS, &t->key, &e) != GB_ENOTFOUND) gb_history_warn(h, &e);
}

/* A reused timing keeps its record's samples, for the reports (none if memory is
 * short: the statistics are what the search needs). */
static void keep_samples(const gb_trial_record *rec, gb_measurement *m)
{
    m->stats = rec->stats;
    m->clock_mhz_median = rec->clock_mhz;
    m->contended = rec->contended;
    gb_measure_mode_parse(rec->mode, &m->mode);
    gb_timer_parse(rec->timer, &m->timer);
    size_t n = rec->n_samples > 0 ? (size_t)rec->n_samples : 0;
    double *samples = n ? malloc(n * sizeof *samples) : NULL;
    double *clocks = n ? calloc(n, sizeof *clocks) : NULL; /* not kept: unknown */
    bool *throttled = n ? calloc(n, sizeof *throttled) : NULL;
    if (!samples || !clocks || !throttled) {
        free(samples);
        free(clocks);
        free(throttled);
        return;
    }
    memcpy(samples, rec->samples_ms, n * sizeof *samples);
    m->samples_ms = samples;
    m->clock_mhz = clocks;
    m->throttled = throttled;
    m->n_samples = (int)n;
}

/* Whether this run may reuse a recorded trial, and as what. */
static bool reusable(const gb_history *h, const gb_trial_record *rec, gb_trial_result *out)
{
    bool lost =
        rec->in_flight || rec->status == GB_TRIAL_CRASHED || rec->status == GB_TRIAL_TIMEOUT;
    /* A timing is reused only in the mode it was taken in, by the timer this run
     * uses (events read about a microsecond more than CUPTI), and only when no
     * other process shared the GPU then; failures are kept, except a skip, which
     * depends on this run's options. */
    bool timed_alike = rec->has_stats && strcmp(rec->mode, gb_measure_mode_name(h->mode)) == 0 &&
                       strcmp(rec->timer, h->timer) == 0 && !rec->contended;
    bool reuse = !(lost && h->retry_crashed) && !(rec->in_flight && owner_alive(rec)) &&
                 !(rec->status == GB_TRIAL_OK && !timed_alike) && rec->status != GB_TRIAL_SKIPPED;
    if (reuse) {
        memset(out, 0, sizeof *out);
        out->status = rec->in_flight ? GB_TRIAL_CRASHED : rec->status;
        gb_strlcpy(out->reason, rec->reason, sizeof out->reason);
        out->check = rec->check;
        keep_samples(rec, &out->measurement);
    }
    return reuse;
}

bool gb_history_resume(const gb_history *h, const gb_trial_ident *t, gb_trial_result *out)
{
    gb_trial_record rec;
    json_t *json = NULL;
    gb_err e;
    if (h->force || !h->cache) return false;
    if (gb_cache_get_json(h->cache, GB_DB_TRIALS, &t->key, &json, &e) != GB_OK) return false;
    bool ok = gb_trial_record_from_json(json, &rec, &e) == GB_OK;
    json_decref(json);
    if (!ok) return false;
    bool reuse = reusable(h, &rec, out);
    gb_trial_record_free(&rec);
    return reuse;
}

typedef struct recorded_walk {
    const gb_history *h;
    const gb_record_id *id;
    gb_history_visit_fn fn;
    void *ctx;
} recorded_walk;

static int visit_trial(void *ctx, const gb_cache_item *item)
{
    recorded_walk *w = ctx;
    const char *fp = w->id->kernel_fp;
    /* Most records are another kernel's: a look for the fingerprint's text skips
     * them without parsing. */
    if (!item->value || !memmem(item->value, item->len, fp, strlen(fp))) return 0;
    gb_trial_record rec;
    gb_err e;
    if (gb_cache_read_trial(item->value, item->len, &rec, &e) != GB_OK)
        return 0; /* a damaged record is `cache verify`'s to report */
    gb_config config;
    gb_trial_result t;
    int rc = 0;
    if (gb_record_id_equal(&rec.id, w->id) &&
        gb_config_from_fields(&w->h->k->space, &rec.config, &config) == GB_OK &&
        reusable(w->h, &rec, &t)) {
        rc = w->fn(w->ctx, &config, &t);
        gb_trial_result_free(&t);
    }
    gb_trial_record_free(&rec);
    return rc;
}

int gb_history_recorded(gb_history *h, const gb_record_id *id, gb_history_visit_fn fn, void *ctx)
{
    recorded_walk w = {h, id, fn, ctx};
    gb_err e = {0};
    if (h->force || !h->cache) return GB_OK;
    int rc = gb_cache_walk(h->cache, GB_DB_TRIALS, visit_trial, &w, &e);
    if (rc == GB_OK || !e.code) return rc; /* fn's own error is in h->err */
    gb_history_warn(h, &e);                /* an unreadable cache: the search starts afresh */
    return GB_OK;
}

void gb_history_store_best(gb_history *h, const gb_record_id *id, const gb_shape_result *res)
{
    gb_best_record rec = {
        .id = *id,
        .space_fp = (char *)h->space_fp, /* borrowed for the encoding, like the rest */
        .config = res->best_config,
        .stats = res->best,
        .flops = res->flops,
        .bytes = res->bytes,
        .has_baseline = res->has_baseline,
        .baseline = res->baseline.stats,
        .complete = res->complete,
        .seed = res->seed,
        .budget_evals = res->budget_evals,
        .budget_seconds = res->budget_seconds,
        .n_configs = res->n_configs > INT_MAX ? INT_MAX : (int)res->n_configs,
        .n_rejected = res->n_rejected > INT_MAX ? INT_MAX : (int)res->n_rejected,
        .n_timed = res->n_timed,
        .n_failed = gb_shape_n_failed(res),
        .when = (int64_t)time(NULL),
        .driver_version = h->driver_version,
        .clock_mhz = res->best_measurement.clock_mhz_median,
        .n_throttled = res->best_measurement.n_throttled,
        .capped = res->best_measurement.capped,
        .contended = res->contended,
        .samples_ms = res->best_measurement.samples_ms,
        .n_samples = res->best_measurement.n_samples,
        .tie = res->tie,
        .n_tie = res->n_tie,
        .n_leaders = res->n_leaders,
        .sources = (gb_record_source *)h->sources,
        .n_sources = h->n_sources,
    };
    /* A cached baseline answers only a run whose reference is of the same kind. */
    if (h->reference_lib[0]) rec.baseline_lib = (char *)h->reference_lib;
    gb_strlcpy(rec.mode, gb_measure_mode_name(h->mode), sizeof rec.mode);
    gb_strlcpy(rec.timer, gb_measurement_timer(&res->best_measurement), sizeof rec.timer);
    gb_strlcpy(rec.engine_version, GB_VERSION, sizeof rec.engine_version);
    gb_strlcpy(rec.strategy, res->strategy, sizeof rec.strategy);
    gb_nvrtc_version(rec.nvrtc_version);
    int shard = h->shard.index;
    if (h->shard.count > 1) {
        rec.shard_count = h->shard.count;
        rec.shards = &shard;
        rec.n_shards = 1;
    }
    gb_err e = {0};
    if (h->cache) gb_transfer_store_best(h->cache, &rec, &e);
    gb_history_warn(h, &e);
}

/* Whether a best answers this run: one of the whole space answers any run; one of
 * some shards answers a run of one of them. */
static bool covers(const gb_history *h, const gb_best_record *rec)
{
    if (gb_best_record_whole(rec)) return true;
    if (rec->shard_count != h->shard.count) return false;
    for (int i = 0; i < rec->n_shards; i++)
        if (rec->shards[i] == h->shard.index) return true;
    return false;
}

static int read_best(const gb_history *h, const gb_record_id *id, gb_best_record *out)
{
    gb_key key;
    json_t *json = NULL;
    gb_err e;
    if (!h->cache) return GB_ENOTFOUND;
    int rc = gb_record_best_key(id, &key);
    if (rc == GB_OK) rc = gb_cache_get_json(h->cache, GB_DB_BEST, &key, &json, &e);
    if (rc == GB_OK) rc = gb_best_record_from_json(json, out, &e);
    json_decref(json);
    return rc == GB_ENOMEM ? rc : rc ? GB_ENOTFOUND : GB_OK;
}

int gb_history_best_config(const gb_history *h, const gb_record_id *id, gb_fields *out)
{
    gb_best_record rec;
    int rc = read_best(h, id, &rec);
    if (rc) return rc;
    rc = gb_fields_copy(&rec.config, out);
    gb_best_record_free(&rec);
    return rc;
}

/* A limit of 0 is none. The request asks for no more than the record's search
 * had when, on each axis, it has a limit and that limit is within the record's. */
static bool within(double asked, double had)
{
    return had == 0 || (asked > 0 && asked <= had);
}

bool gb_history_cached_best(const gb_history *h, const gb_record_id *id, gb_shape_result *res)
{
    gb_best_record rec;
    if (h->force || read_best(h, id, &rec) != GB_OK) return false;
    bool hit;
    /* A winner of a search cut short by a budget answers only requests that ask
     * for no more; a larger budget goes on from its trials (search_run.c). */
    bool covered = rec.complete || (within((double)res->budget_evals, (double)rec.budget_evals) &&
                                    within(res->budget_seconds, rec.budget_seconds) &&
                                    (res->budget_evals > 0 || res->budget_seconds > 0));
    hit = strcmp(rec.space_fp, h->space_fp) == 0 && covered && covers(h, &rec) && !rec.contended &&
          strcmp(rec.mode, gb_measure_mode_name(h->mode)) == 0 && /* cold is not hot */
          strcmp(rec.timer, h->timer) == 0 &&                     /* nor events CUPTI */
          gb_fields_copy(&rec.config, &res->best_config) == GB_OK;
    if (hit) {
        res->cached = res->has_best = true;
        res->best = rec.stats;
        res->best_measurement.clock_mhz_median = rec.clock_mhz;
        res->n_leaders = rec.n_leaders;
        res->best_measurement.n_throttled = rec.n_throttled;
        res->best_measurement.capped = rec.capped;
        res->best_measurement.contended = rec.contended;
        gb_measure_mode_parse(rec.mode, &res->best_measurement.mode);
        gb_timer_parse(rec.timer, &res->best_measurement.timer);
        res->tie = rec.tie; /* moved, like the samples */
        res->n_tie = rec.n_tie;
        res->best_measurement.samples_ms = rec.samples_ms;
        res->best_measurement.n_samples = rec.n_samples;
        rec.tie = NULL;
        rec.n_tie = 0;
        rec.samples_ms = NULL;
        rec.n_samples = 0;
        /* a baseline timed with another kind of reference (cuBLAS, or a kernel) is not
         * this run's: the column would name the wrong one */
        res->has_baseline = rec.has_baseline &&
                            strcmp(rec.baseline_lib ? rec.baseline_lib : "", h->reference_lib) == 0;
        res->baseline.stats = rec.baseline;
        res->flops = rec.flops;
        res->bytes = rec.bytes;
        res->n_rejected = (uint64_t)rec.n_rejected;
        res->n_timed = rec.n_timed;
        gb_strlcpy(res->strategy, rec.strategy, sizeof res->strategy);
        res->seed = rec.seed;
        res->budget_evals = rec.budget_evals;
        res->budget_seconds = rec.budget_seconds;
    }
    gb_best_record_free(&rec);
    return hit;
}
