/* The upkeep commands of inspect.h: rm, gc and verify. Walks only read; what they
 * decide to remove is removed after the walk, one transaction per record (a walk's
 * callback may not write: see gb_cache_foreach). */
#include "cache/inspect.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct keylist {
    gb_key *keys;
    size_t n;
    size_t cap;
} keylist;

static int keylist_add(keylist *kl, const gb_key *key)
{
    if (kl->n == kl->cap) {
        size_t cap = kl->cap ? 2 * kl->cap : 64;
        gb_key *grown = realloc(kl->keys, cap * sizeof *grown);
        if (!grown) return GB_ENOMEM;
        kl->keys = grown;
        kl->cap = cap;
    }
    kl->keys[kl->n++] = *key;
    return GB_OK;
}

static int delete_all(gb_cache *cache, gb_cache_db db, const keylist *kl, gb_err *err)
{
    for (size_t i = 0; i < kl->n; i++) {
        int rc = gb_cache_del(cache, db, &kl->keys[i], err);
        if (rc && rc != GB_ENOTFOUND) return rc; /* gone already: another process removed it */
    }
    return GB_OK;
}

/* ---- rm ------------------------------------------------------------------- */

typedef struct rm_walk {
    const gb_cache_rm_opts *opts;
    const gb_cache_listing *removed; /* stale_only: the best records going */
    keylist trials;
    gb_err *err;
} rm_walk;

static bool in_removed(const gb_cache_listing *l, const gb_record_id *id)
{
    for (int i = 0; i < l->n; i++) {
        if (gb_record_id_equal(&l->entries[i].rec.id, id)) return true;
    }
    return false;
}

static int pick_trial(void *ctx, const gb_cache_item *item)
{
    rm_walk *w = ctx;
    gb_trial_record rec;
    gb_err why;
    int rc = gb_cache_read_trial(item->value, item->len, &rec, &why);
    if (rc == GB_ENOMEM) return gb_err_set(w->err, rc, "out of memory");
    if (rc) return 0; /* unreadable: not ours to judge; verify reports it */
    bool go = w->opts->stale_only ? in_removed(w->removed, &rec.id)
                                  : gb_cache_filter_match(&w->opts->filter, &rec.id);
    gb_trial_record_free(&rec);
    if (go && keylist_add(&w->trials, &item->key))
        return gb_err_set(w->err, GB_ENOMEM, "out of memory");
    return 0;
}

int gb_cache_rm(gb_cache *cache, const gb_cache_rm_opts *opts, gb_cache_rm_summary *out,
                gb_err *err)
{
    gb_cache_listing l;
    keylist best = {0};
    rm_walk w = {.opts = opts, .removed = &l, .err = err};
    memset(out, 0, sizeof *out);
    int rc = gb_cache_list(cache, &opts->filter, opts->now, &l, err);
    if (rc) return rc;
    int n = 0; /* keep in l only what goes */
    for (int i = 0; i < l.n; i++) {
        if (opts->stale_only && !l.entries[i].stale) {
            gb_best_record_free(&l.entries[i].rec);
            continue;
        }
        l.entries[n++] = l.entries[i];
    }
    l.n = n;
    for (int i = 0; rc == GB_OK && i < l.n; i++)
        if (keylist_add(&best, &l.entries[i].key)) rc = gb_err_set(err, GB_ENOMEM, "out of memory");
    if (rc == GB_OK) rc = gb_cache_walk(cache, GB_DB_TRIALS, pick_trial, &w, err);
    if (rc == GB_OK && !opts->dry_run) rc = delete_all(cache, GB_DB_BEST, &best, err);
    if (rc == GB_OK && !opts->dry_run) rc = delete_all(cache, GB_DB_TRIALS, &w.trials, err);
    if (rc == GB_OK) {
        out->n_best = best.n;
        out->n_trials = w.trials.n;
    }
    gb_cache_listing_free(&l);
    free(best.keys);
    free(w.trials.keys);
    return rc;
}

/* ---- gc ------------------------------------------------------------------- */

typedef struct named {
    char (*hex)[33];
    size_t n;
    size_t cap;
    gb_err *err;
} named;

/* Only the "cubin" field matters, so trials are parsed, not decoded. */
static int note_named(void *ctx, const gb_cache_item *item)
{
    named *nm = ctx;
    json_t *json = item->value ? json_loadb(item->value, item->len, 0, NULL) : NULL;
    const char *hex = json_string_value(json_object_get(json, "cubin"));
    if (hex && strlen(hex) == 32) {
        if (nm->n == nm->cap) {
            size_t cap = nm->cap ? 2 * nm->cap : 256;
            void *grown = realloc(nm->hex, cap * sizeof *nm->hex);
            if (!grown) {
                json_decref(json);
                return gb_err_set(nm->err, GB_ENOMEM, "out of memory");
            }
            nm->hex = grown;
            nm->cap = cap;
        }
        memcpy(nm->hex[nm->n++], hex, 33);
    }
    json_decref(json);
    return 0;
}

static int compare_hex(const void *a, const void *b)
{
    return strcmp(a, b);
}

typedef struct sweep {
    const named *names;
    const char *nvrtc;
    bool unnamed; /* remove the cubins no trial names too */
    gb_cache_gc_summary *sum;
    keylist doomed;
    gb_err *err;
} sweep;

/* The NVRTC version in a cubin record's JSON, or "" when it has none. */
static void cubin_nvrtc(const gb_cache_item *item, char out[16])
{
    const char *meta;
    const void *cubin;
    size_t meta_len, cubin_len;
    out[0] = '\0';
    if (gb_cache_split_cubin(item->value, item->len, &meta, &meta_len, &cubin, &cubin_len)) return;
    json_t *json = json_loadb(meta, meta_len, 0, NULL);
    const char *v = json_string_value(json_object_get(json, "nvrtc"));
    if (v) gb_strlcpy(out, v, 16);
    json_decref(json);
}

static int judge_cubin(void *ctx, const gb_cache_item *item)
{
    sweep *s = ctx;
    char hex[33], nvrtc[16];
    s->sum->n_cubins++;
    gb_key_hex(&item->key, hex);
    cubin_nvrtc(item, nvrtc);
    bool other = nvrtc[0] && strcmp(nvrtc, s->nvrtc) != 0;
    bool unnamed = s->names->n == 0 ||
                   !bsearch(hex, s->names->hex, s->names->n, sizeof *s->names->hex, compare_hex);
    if (!other && unnamed && !s->unnamed) s->sum->n_kept_unnamed++;
    if (!other && (!unnamed || !s->unnamed)) return 0;
    s->sum->n_other_nvrtc += other;
    s->sum->n_unnamed += !other && unnamed;
    s->sum->n_removed++;
    s->sum->bytes_removed += GB_KEY_BYTES + 4 + item->len; /* key, header, payload */
    return keylist_add(&s->doomed, &item->key) ? gb_err_set(s->err, GB_ENOMEM, "out of memory") : 0;
}

int gb_cache_gc(gb_cache *cache, const char *nvrtc, bool unnamed, bool dry_run,
                gb_cache_gc_summary *out, gb_err *err)
{
    named names = {.err = err};
    sweep s = {.names = &names, .nvrtc = nvrtc, .unnamed = unnamed, .sum = out, .err = err};
    memset(out, 0, sizeof *out);
    int rc = gb_cache_walk(cache, GB_DB_TRIALS, note_named, &names, err);
    if (rc == GB_OK && names.n > 1) qsort(names.hex, names.n, sizeof *names.hex, compare_hex);
    if (rc == GB_OK) rc = gb_cache_walk(cache, GB_DB_CUBINS, judge_cubin, &s, err);
    if (rc == GB_OK && !dry_run) rc = delete_all(cache, GB_DB_CUBINS, &s.doomed, err);
    free(names.hex);
    free(s.doomed.keys);
    return rc;
}

/* ---- verify --------------------------------------------------------------- */

static const char *const DB_NAMES[GB_DB_COUNT] = {"best", "trials", "cubins", "meta"};

typedef struct checker {
    gb_cache_db db;
    gb_cache_note_fn note;
    void *note_ctx;
    gb_cache_verify_summary *sum;
} checker;

static void problem(checker *c, const gb_key *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void problem(checker *c, const gb_key *key, const char *fmt, ...)
{
    char hex[33], what[1024], line[1200];
    gb_key_hex(key, hex);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(line, sizeof line, "db %s: record %s: %s", DB_NAMES[c->db], hex, what);
    c->sum->n_problems++;
    if (c->note) c->note(c->note_ctx, line);
}

/* The key a best or trial record's content gives, compared with the one it has. */
static void check_key(checker *c, const gb_key *has, const gb_key *gives)
{
    char hex[33];
    if (!memcmp(has->bytes, gives->bytes, GB_KEY_BYTES)) return;
    gb_key_hex(gives, hex);
    problem(c, has, "its content belongs under key %s", hex);
}

static int check_record(void *ctx, const gb_cache_item *item)
{
    checker *c = ctx;
    gb_err why = {0};
    gb_key gives;
    c->sum->n_checked[c->db]++;
    if (!item->value) {
        problem(c, &item->key, "its header is not a gpubench record header");
        return 0;
    }
    if (c->db == GB_DB_BEST) {
        gb_best_record rec;
        int rc = gb_cache_read_best(item->value, item->len, &rec, &why);
        if (rc == GB_ENOMEM) return rc;
        if (rc) problem(c, &item->key, "does not decode: %s", why.msg);
        if (!rc && gb_record_best_key(&rec.id, &gives) == GB_OK) check_key(c, &item->key, &gives);
        if (!rc) gb_best_record_free(&rec);
    } else {
        gb_trial_record rec;
        int rc = gb_cache_read_trial(item->value, item->len, &rec, &why);
        if (rc == GB_ENOMEM) return rc;
        if (rc) problem(c, &item->key, "does not decode: %s", why.msg);
        if (!rc && gb_record_trial_key(&rec.id, &rec.config, &gives) == GB_OK)
            check_key(c, &item->key, &gives);
        if (!rc) gb_trial_record_free(&rec);
    }
    return 0;
}

static int check_cubin(void *ctx, const gb_cache_item *item)
{
    checker *c = ctx;
    const char *meta;
    const void *cubin;
    size_t meta_len, cubin_len;
    c->sum->n_checked[c->db]++;
    if (!item->value) {
        problem(c, &item->key, "its header is not a gpubench record header");
        return 0;
    }
    if (gb_cache_split_cubin(item->value, item->len, &meta, &meta_len, &cubin, &cubin_len)) {
        problem(c, &item->key, "its length field does not fit the record (%zu bytes)", item->len);
        return 0;
    }
    json_error_t jerr;
    json_t *json = json_loadb(meta, meta_len, 0, &jerr);
    if (!json_is_object(json))
        problem(c, &item->key, "its JSON half %s%s",
                json ? "is not an object" : "does not parse: ", json ? "" : jerr.text);
    json_decref(json);
    return 0;
}

static int count_meta(void *ctx, const gb_cache_item *item)
{
    checker *c = ctx;
    c->sum->n_checked[c->db]++;
    if (!item->value) problem(c, &item->key, "its header is not a gpubench record header");
    return 0;
}

int gb_cache_verify(gb_cache *cache, gb_cache_note_fn note, void *note_ctx,
                    gb_cache_verify_summary *out, gb_err *err)
{
    static const gb_cache_item_fn checks[GB_DB_COUNT] = {check_record, check_record, check_cubin,
                                                         count_meta};
    memset(out, 0, sizeof *out);
    for (int db = 0; db < GB_DB_COUNT; db++) {
        checker c = {.db = (gb_cache_db)db, .note = note, .note_ctx = note_ctx, .sum = out};
        int rc = gb_cache_walk(cache, (gb_cache_db)db, checks[db], &c, err);
        if (rc == GB_ENOMEM) return gb_err_set(err, rc, "out of memory");
        if (rc) return rc;
    }
    return GB_OK;
}
