/* Storing records that come from elsewhere (transfer.h): the checks they must pass,
 * the rule for a key both sides hold, and the one-transaction put. */
#include "cache/transfer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Bounds on single records, far above what gpubench writes. */
#define MAX_NAME       128
#define MAX_DEVICE     256
#define MAX_FIELDS     64
#define MAX_VALUE_STR  256
#define MAX_SAMPLES    (1 << 20)
#define MAX_TIE        256
#define MAX_SOURCES    256
#define MAX_PATH       4096
#define MAX_REASON     (64 << 10)
#define MAX_LOG        (1 << 20)
#define MAX_CUBIN_META ((size_t)1 << 20)
#define MAX_LOWERED    64

size_t gb_transfer_skipped(const gb_transfer_summary *s)
{
    return s->best.skipped + s->trials.skipped + s->cubins.skipped;
}

/* ---- checks --------------------------------------------------------------- */

/* [A-Za-z0-9_.-]{1,max}: the script's alphabet for names. */
static bool plain_name(const char *s, size_t max)
{
    size_t n = s ? strlen(s) : 0;
    if (n == 0 || n > max) return false;
    return strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-") == n;
}

/* [A-Za-z_][A-Za-z0-9_]{0,63}: a parameter or shape field, which becomes a C name. */
static bool identifier(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    if (n == 0 || n > 64 || (s[0] >= '0' && s[0] <= '9')) return false;
    return strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_") == n;
}

/* At most max bytes and no control characters (tab and newline where lines are). */
static bool clean_text(const char *s, size_t max, bool lines)
{
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)s; p && *p; p++, n++) {
        if (n >= max) return false;
        if (*p == 0x7f || (*p < 0x20 && !(lines && (*p == '\n' || *p == '\t')))) return false;
    }
    return true;
}

static bool hex32(const char *s)
{
    gb_key key;
    return gb_key_from_hex(s, &key) == GB_OK;
}

static int check_fields(const gb_fields *f, const char *what, gb_err *err)
{
    if (f->n > MAX_FIELDS)
        return gb_err_set(err, GB_EINVAL, "%s has %d fields (at most %d)", what, f->n, MAX_FIELDS);
    for (int i = 0; i < f->n; i++) {
        if (!identifier(f->names[i]))
            return gb_err_set(err, GB_EINVAL,
                              "%s field '%.64s' is not a name ([A-Za-z_][A-Za-z0-9_]*)", what,
                              f->names[i]);
        const gb_value *v = &f->values[i];
        if (v->kind == GB_VAL_STR && !clean_text(v->str, MAX_VALUE_STR, false))
            return gb_err_set(err, GB_EINVAL,
                              "%s field %s: a string over %d bytes or with control characters",
                              what, f->names[i], MAX_VALUE_STR);
        if (v->kind == GB_VAL_NUM && !isfinite(v->num))
            return gb_err_set(err, GB_EINVAL, "%s field %s is not a finite number", what,
                              f->names[i]);
    }
    return GB_OK;
}

int gb_transfer_check_id(const gb_record_id *id, gb_err *err)
{
    if (!plain_name(id->kernel, MAX_NAME))
        return gb_err_set(err, GB_EINVAL, "kernel name is not 1 to %d of [A-Za-z0-9_.-]", MAX_NAME);
    if (!plain_name(id->kernel_fp, 64))
        return gb_err_set(err, GB_EINVAL, "kernel_fp is not 1 to 64 of [A-Za-z0-9_.-]");
    if (!id->device[0] || !clean_text(id->device, MAX_DEVICE, false))
        return gb_err_set(err, GB_EINVAL,
                          "device is empty, over %d bytes or has control characters", MAX_DEVICE);
    return check_fields(&id->shape, "shape", err);
}

static bool mode_ok(const char *mode)
{
    return !strcmp(mode, "cold") || !strcmp(mode, "hot");
}

static int check_sources(const gb_best_record *rec, gb_err *err)
{
    if (rec->n_sources > MAX_SOURCES)
        return gb_err_set(err, GB_EINVAL, "more than %d sources", MAX_SOURCES);
    for (int i = 0; i < rec->n_sources; i++) {
        const gb_record_source *s = &rec->sources[i];
        if (s->path[0] != '/' || !clean_text(s->path, MAX_PATH, false) || !hex32(s->hash))
            return gb_err_set(err, GB_EINVAL,
                              "source %d: the path is not absolute and clean, or the hash is "
                              "not 32 hex digits",
                              i + 1);
    }
    return GB_OK;
}

/* A sharded run's best lists at least one of its shards, each below the count,
 * in order, once. */
static int check_shards(const gb_best_record *rec, gb_err *err)
{
    if (rec->shard_count <= 1 && rec->n_shards == 0) return GB_OK;
    if (rec->shard_count <= 1 || rec->n_shards == 0)
        return gb_err_set(err, GB_EINVAL, "shards and shard_count disagree");
    for (int i = 0; i < rec->n_shards; i++)
        if (rec->shards[i] >= rec->shard_count || (i > 0 && rec->shards[i] <= rec->shards[i - 1]))
            return gb_err_set(err, GB_EINVAL,
                              "shards are not increasing shard numbers below shard_count %d",
                              rec->shard_count);
    return GB_OK;
}

int gb_transfer_check_best(const gb_best_record *rec, gb_err *err)
{
    int rc = gb_transfer_check_id(&rec->id, err);
    if (!rc) rc = check_fields(&rec->config, "config", err);
    if (rc) return rc;
    if (rec->space_fp[0] && !plain_name(rec->space_fp, 64))
        return gb_err_set(err, GB_EINVAL, "space_fp is not 1 to 64 of [A-Za-z0-9_.-]");
    if (!mode_ok(rec->mode)) return gb_err_set(err, GB_EINVAL, "mode is not \"cold\" or \"hot\"");
    if (rec->n_samples > MAX_SAMPLES)
        return gb_err_set(err, GB_EINVAL, "more than %d samples", MAX_SAMPLES);
    if (rec->n_tie > MAX_TIE) return gb_err_set(err, GB_EINVAL, "more than %d tied", MAX_TIE);
    if ((rc = check_shards(rec, err))) return rc;
    for (int i = 0; i < rec->n_tie; i++)
        if (!clean_text(rec->tie[i], 4096, false))
            return gb_err_set(err, GB_EINVAL, "tie %d is over 4096 bytes or has control characters",
                              i + 1);
    if (!clean_text(rec->engine_version, sizeof rec->engine_version, false) ||
        !clean_text(rec->nvrtc_version, sizeof rec->nvrtc_version, false))
        return gb_err_set(err, GB_EINVAL, "engine or nvrtc has control characters");
    if (rec->n_configs < 0 || rec->n_rejected < 0 || rec->n_timed < 0 || rec->n_failed < 0)
        return gb_err_set(err, GB_EINVAL, "a negative count");
    return check_sources(rec, err);
}

int gb_transfer_check_trial(const gb_trial_record *rec, gb_err *err)
{
    int rc = gb_transfer_check_id(&rec->id, err);
    if (!rc) rc = check_fields(&rec->config, "config", err);
    if (rc) return rc;
    if (!clean_text(rec->reason, MAX_REASON, true))
        return gb_err_set(err, GB_EINVAL, "reason is over %d bytes or has control characters",
                          MAX_REASON);
    if (rec->log && !clean_text(rec->log, MAX_LOG, true))
        return gb_err_set(err, GB_EINVAL, "log is over %d bytes or has control characters",
                          MAX_LOG);
    if (rec->cubin[0] && !hex32(rec->cubin))
        return gb_err_set(err, GB_EINVAL, "cubin is not 32 hex digits");
    if (rec->has_stats && !mode_ok(rec->mode))
        return gb_err_set(err, GB_EINVAL, "mode is not \"cold\" or \"hot\"");
    if (rec->n_samples > MAX_SAMPLES)
        return gb_err_set(err, GB_EINVAL, "more than %d samples", MAX_SAMPLES);
    if (!clean_text(rec->owner_boot, sizeof rec->owner_boot, false))
        return gb_err_set(err, GB_EINVAL, "owner_boot has control characters");
    return GB_OK;
}

/* ---- the rule for equal keys ---------------------------------------------- */

static bool clean(const gb_best_record *r)
{
    return r->complete && gb_best_record_whole(r) && !r->capped && !r->contended &&
           r->n_throttled == 0;
}

bool gb_transfer_best_wins(const gb_best_record *in, const gb_best_record *old)
{
    if (clean(in) != clean(old)) return clean(in);
    if (in->n_timed != old->n_timed) return in->n_timed > old->n_timed;
    return in->when > old->when;
}

bool gb_transfer_trial_wins(const gb_trial_record *in, const gb_trial_record *old)
{
    if (in->in_flight) return false;
    if (old->in_flight) return true;
    return in->when > old->when;
}

/* ---- storing -------------------------------------------------------------- */

enum outcome { IMPORTED, REPLACED, KEPT, COMBINED };

typedef struct decision {
    const gb_best_record *best; /* one of these two */
    const gb_trial_record *trial;
    bool tuner;          /* a best a tuning run stores: it replaces what it cannot fold with */
    const char *payload; /* the incoming record */
    char *combined;      /* a best folded with another shard's (malloc'd) */
    enum outcome outcome;
} decision;

/* Another shard's best of the same run is there: the key gets both folded. */
static int combine(decision *d, const gb_best_record *old, const void **out_new,
                   size_t *out_new_len)
{
    gb_best_record both;
    int rc = gb_best_record_combine(d->best, old, &both);
    json_t *json = rc == GB_OK ? gb_best_record_to_json(&both) : NULL;
    gb_best_record_free(&both);
    free(d->combined);
    d->combined = json ? json_dumps(json, JSON_COMPACT) : NULL;
    json_decref(json);
    if (!d->combined) return GB_ENOMEM;
    *out_new = d->combined;
    *out_new_len = strlen(d->combined);
    d->outcome = COMBINED;
    return GB_OK;
}

/* Runs inside the write transaction: no cache calls, no printing. */
static int decide(void *ctx, const void *old, size_t old_len, const void **out_new,
                  size_t *out_new_len)
{
    decision *d = ctx;
    gb_err ignored;
    bool wins = true; /* over nothing, or over a record that does not decode */
    d->outcome = IMPORTED;
    if (old && d->best) {
        gb_best_record rec;
        int rc = gb_cache_read_best(old, old_len, &rec, &ignored);
        if (rc == GB_ENOMEM) return rc;
        if (rc == GB_OK && gb_best_record_combinable(d->best, &rec))
            rc = combine(d, &rec, out_new, out_new_len);
        else if (rc == GB_OK)
            wins = d->tuner || gb_transfer_best_wins(d->best, &rec);
        gb_best_record_free(&rec);
        if (rc == GB_ENOMEM || d->outcome == COMBINED) return rc;
    } else if (old) {
        gb_trial_record rec;
        int rc = gb_cache_read_trial(old, old_len, &rec, &ignored);
        if (rc == GB_ENOMEM) return rc;
        if (rc == GB_OK) wins = gb_transfer_trial_wins(d->trial, &rec);
        gb_trial_record_free(&rec);
    }
    if (old) d->outcome = wins ? REPLACED : KEPT;
    if (wins) {
        *out_new = d->payload;
        *out_new_len = strlen(d->payload);
    }
    return GB_OK;
}

static void count(gb_transfer_counts *c, enum outcome o)
{
    if (o == IMPORTED)
        c->imported++;
    else if (o == REPLACED)
        c->replaced++;
    else if (o == COMBINED)
        c->combined++;
    else
        c->kept++;
}

static int store(gb_cache *cache, gb_cache_db db, const gb_key *key, json_t *json, decision *d,
                 gb_err *err)
{
    char *text = json ? json_dumps(json, JSON_COMPACT) : NULL;
    json_decref(json);
    if (!text) return gb_err_set(err, GB_ENOMEM, "out of memory encoding a record");
    d->payload = text;
    int rc = gb_cache_update(cache, db, key, decide, d, err);
    if (rc == GB_ENOMEM) gb_err_set(err, rc, "out of memory");
    free(text);
    free(d->combined);
    return rc;
}

int gb_transfer_put_best(gb_cache *cache, const gb_best_record *rec, gb_transfer_summary *sum,
                         gb_err *err)
{
    gb_key key;
    decision d = {.best = rec};
    int rc = gb_transfer_check_best(rec, err);
    if (rc) {
        sum->best.skipped++;
        return rc;
    }
    if ((rc = gb_record_best_key(&rec->id, &key))) return gb_err_set(err, rc, "out of memory");
    if ((rc = store(cache, GB_DB_BEST, &key, gb_best_record_to_json(rec), &d, err))) return rc;
    count(&sum->best, d.outcome);
    return GB_OK;
}

int gb_transfer_store_best(gb_cache *cache, const gb_best_record *rec, gb_err *err)
{
    gb_key key;
    decision d = {.best = rec, .tuner = true};
    int rc = gb_record_best_key(&rec->id, &key);
    if (rc) return gb_err_set(err, rc, "out of memory");
    return store(cache, GB_DB_BEST, &key, gb_best_record_to_json(rec), &d, err);
}

int gb_transfer_put_trial(gb_cache *cache, const gb_trial_record *rec, gb_transfer_summary *sum,
                          gb_err *err)
{
    gb_key key;
    decision d = {.trial = rec};
    int rc = gb_transfer_check_trial(rec, err);
    if (rc) {
        sum->trials.skipped++;
        return rc;
    }
    if ((rc = gb_record_trial_key(&rec->id, &rec->config, &key)))
        return gb_err_set(err, rc, "out of memory");
    /* Here it would block the configuration as another tuner's trial in progress, or
     * be taken for this machine's own; it is what it was: a trial that did not end. */
    gb_trial_record stored = *rec;
    if (rec->in_flight) {
        stored.in_flight = false;
        stored.status = GB_TRIAL_CRASHED;
        stored.reason = GB_IMPORTED_IN_FLIGHT_REASON;
        stored.owner_pid = 0;
        stored.owner_boot[0] = '\0';
        sum->in_flight++;
    }
    if ((rc = store(cache, GB_DB_TRIALS, &key, gb_trial_record_to_json(&stored), &d, err)))
        return rc;
    count(&sum->trials, d.outcome);
    return GB_OK;
}

/* ---- cubins --------------------------------------------------------------- */

/* The JSON half of a cubin record rebuilt from the fields gpubench reads, each
 * checked; NULL (with err) when one is wrong. */
static json_t *clean_cubin_meta(const json_t *meta, gb_err *err)
{
    const json_t *lowered = json_object_get(meta, "lowered");
    const json_t *res = json_object_get(meta, "resources");
    const char *log = json_string_value(json_object_get(meta, "log"));
    const char *nvrtc = json_string_value(json_object_get(meta, "nvrtc"));
    const char *arch = json_string_value(json_object_get(meta, "arch"));
    if (!json_is_array(lowered) || json_array_size(lowered) > MAX_LOWERED || !json_is_array(res) ||
        json_array_size(res) != 5 || !log || !clean_text(log, MAX_LOG, true) ||
        (nvrtc && !clean_text(nvrtc, 16, false)) || (arch && !plain_name(arch, 32))) {
        gb_err_set(err, GB_EINVAL, "its JSON lacks lowered, log or resources, or one is wrong");
        return NULL;
    }
    json_t *out = json_object(), *names = json_array(), *nums = json_array();
    size_t i;
    const json_t *v;
    json_array_foreach(lowered, i, v)
    {
        const char *s = json_string_value(v);
        if (!s || !clean_text(s, 4096, false)) {
            gb_err_set(err, GB_EINVAL, "lowered name %zu is not clean text", i + 1);
            goto fail;
        }
        json_array_append_new(names, json_string(s));
    }
    json_array_foreach(res, i, v) json_array_append_new(nums, json_integer(json_integer_value(v)));
    json_object_set_new(out, "lowered", names);
    json_object_set_new(out, "log", json_string(log));
    json_object_set_new(out, "compile_ms",
                        json_real(json_number_value(json_object_get(meta, "compile_ms"))));
    json_object_set_new(out, "resources", nums);
    if (nvrtc) json_object_set_new(out, "nvrtc", json_string(nvrtc));
    if (arch) json_object_set_new(out, "arch", json_string(arch));
    return out;
fail:
    json_decref(out);
    json_decref(names);
    json_decref(nums);
    return NULL;
}

int gb_transfer_put_cubin(gb_cache *cache, const gb_key *key, const json_t *meta, const void *cubin,
                          size_t cubin_bytes, gb_transfer_summary *sum, gb_err *err)
{
    static const unsigned char ELF[4] = {0x7f, 'E', 'L', 'F'};
    char *old_meta = NULL, *text = NULL;
    void *old = NULL;
    size_t old_bytes = 0;
    if (cubin_bytes < 4 || cubin_bytes > GB_TRANSFER_MAX_CUBIN_BYTES || memcmp(cubin, ELF, 4)) {
        sum->cubins.skipped++;
        return gb_err_set(err, GB_EINVAL, "not an ELF cubin of 4 bytes to %zu MiB",
                          GB_TRANSFER_MAX_CUBIN_BYTES >> 20);
    }
    json_t *clean_meta = clean_cubin_meta(meta, err);
    if (!clean_meta) {
        sum->cubins.skipped++;
        return GB_EINVAL;
    }
    text = json_dumps(clean_meta, JSON_COMPACT);
    json_decref(clean_meta);
    if (!text) return gb_err_set(err, GB_ENOMEM, "out of memory");
    int rc = gb_cache_get_cubin(cache, key, &old_meta, &old, &old_bytes, err);
    if (rc == GB_OK) {
        /* Same key, same content: a cubin is a function of its key's inputs. */
        bool same = old_bytes == cubin_bytes && !memcmp(old, cubin, cubin_bytes);
        if (same)
            sum->cubins.kept++;
        else
            sum->cubins.skipped++;
        rc = same ? GB_OK
                  : gb_err_set(err, GB_EINVAL,
                               "differs from the cubin this cache holds under that key; the "
                               "cache's is kept");
    } else if (rc == GB_ENOTFOUND || rc == GB_ECACHE) { /* free, or unreadable: replaced */
        gb_transfer_counts *c = &sum->cubins;
        bool was_there = rc == GB_ECACHE;
        rc = strlen(text) > MAX_CUBIN_META
                 ? gb_err_set(err, GB_EINVAL, "its JSON is over %zu bytes", MAX_CUBIN_META)
                 : gb_cache_put_cubin(cache, key, text, cubin, cubin_bytes, err);
        if (rc == GB_EINVAL) c->skipped++;
        if (rc == GB_OK) *(was_there ? &c->replaced : &c->imported) += 1;
    }
    free(text);
    free(old_meta);
    free(old);
    return rc;
}
