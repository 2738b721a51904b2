/* Export files and merging (transfer.h); the storing rules are in ingest.c. */
#include "cache/transfer.h"

#include "cache/base64.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static void note(const gb_transfer_opts *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void note(const gb_transfer_opts *o, const char *fmt, ...)
{
    if (!o->note) return;
    char line[GB_ERR_MSG_BYTES + 256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    o->note(o->note_ctx, line);
}

/* ---- writing a transfer file ---------------------------------------------- */

typedef struct exporting {
    const gb_transfer_opts *opts;
    gb_cache_db db;
    json_t *list;
    gb_transfer_summary *sum;
    char (*cubins)[33]; /* hex keys the exported trials name */
    size_t n_cubins;
    size_t cap_cubins;
    gb_err *err;
} exporting;

static int name_cubin(exporting *x, const char *hex)
{
    for (size_t i = 0; i < x->n_cubins; i++)
        if (!strcmp(x->cubins[i], hex)) return GB_OK;
    if (x->n_cubins == x->cap_cubins) {
        size_t cap = x->cap_cubins ? 2 * x->cap_cubins : 64;
        void *grown = realloc(x->cubins, cap * sizeof *x->cubins);
        if (!grown) return GB_ENOMEM;
        x->cubins = grown;
        x->cap_cubins = cap;
    }
    gb_strlcpy(x->cubins[x->n_cubins++], hex, 33);
    return GB_OK;
}

/* Exports the record as stored (fields a newer gpubench added stay), once it is
 * known to decode. */
static int export_record(void *ctx, const gb_cache_item *item)
{
    exporting *x = ctx;
    gb_err why = {0};
    gb_best_record best;
    gb_trial_record trial;
    gb_transfer_counts *c = x->db == GB_DB_BEST ? &x->sum->best : &x->sum->trials;
    const gb_record_id *id;
    int rc = x->db == GB_DB_BEST ? gb_cache_read_best(item->value, item->len, &best, &why)
                                 : gb_cache_read_trial(item->value, item->len, &trial, &why);
    if (rc == GB_ENOMEM) return gb_err_set(x->err, rc, "out of memory");
    if (rc) {
        char hex[33];
        gb_key_hex(&item->key, hex);
        note(x->opts, "%s record %s does not decode (%s); not exported",
             x->db == GB_DB_BEST ? "best" : "trial", hex, why.msg);
        c->skipped++;
        return 0;
    }
    id = x->db == GB_DB_BEST ? &best.id : &trial.id;
    if (gb_cache_filter_match(&x->opts->filter, id)) {
        json_t *json = json_loadb(item->value, item->len, 0, NULL);
        if (!json || json_array_append_new(x->list, json)) rc = GB_ENOMEM;
        if (!rc && x->db == GB_DB_TRIALS && x->opts->cubins && trial.cubin[0])
            rc = name_cubin(x, trial.cubin);
        if (!rc) c->imported++;
    }
    if (x->db == GB_DB_BEST)
        gb_best_record_free(&best);
    else
        gb_trial_record_free(&trial);
    return rc ? gb_err_set(x->err, rc, "out of memory") : 0;
}

static json_t *cubin_entry(const char *hex, const char *meta_text, const void *cubin, size_t bytes)
{
    json_t *meta = json_loads(meta_text, 0, NULL);
    char *b64 = malloc(gb_base64_encoded_len(bytes) + 1);
    json_t *entry = NULL;
    if (meta && b64) {
        gb_base64_encode(cubin, bytes, b64);
        entry = json_pack("{s:s, s:O, s:s}", "key", hex, "meta", meta, "cubin", b64);
    }
    json_decref(meta);
    free(b64);
    return entry;
}

static int export_cubins(gb_cache *cache, exporting *x, json_t *list, gb_err *err)
{
    for (size_t i = 0; i < x->n_cubins; i++) {
        gb_key key;
        char *meta = NULL;
        void *cubin = NULL;
        size_t bytes = 0;
        gb_err why = {0};
        if (gb_key_from_hex(x->cubins[i], &key)) continue;
        int rc = gb_cache_get_cubin(cache, &key, &meta, &cubin, &bytes, &why);
        if (rc == GB_ENOTFOUND) continue; /* collected, or never stored */
        if (rc == GB_OK) {
            json_t *entry = cubin_entry(x->cubins[i], meta, cubin, bytes);
            if (!entry || json_array_append_new(list, entry)) rc = GB_ENOMEM;
            if (!rc) x->sum->cubins.imported++;
        } else if (rc == GB_ECACHE) {
            note(x->opts, "cubin %s: %s; not exported", x->cubins[i], why.msg);
            x->sum->cubins.skipped++;
            rc = GB_OK;
        } else {
            gb_err_copy(err, &why);
        }
        free(meta);
        free(cubin);
        if (rc == GB_ENOMEM) return gb_err_set(err, rc, "out of memory");
        if (rc) return rc;
    }
    return GB_OK;
}

int gb_transfer_file_make(gb_cache *cache, const gb_transfer_opts *opts, json_t **out,
                          gb_transfer_summary *sum, gb_err *err)
{
    memset(sum, 0, sizeof *sum);
    *out = NULL;
    json_t *doc =
        json_pack("{s:s, s:i, s:s, s:i, s:I}", "format", GB_TRANSFER_FORMAT, "version",
                  GB_TRANSFER_VERSION, "engine", opts->engine ? opts->engine : "", "schema",
                  GB_CACHE_SCHEMA, "exported", (json_int_t)(opts->now ? opts->now : time(NULL)));
    json_t *best = json_array(), *trials = json_array(), *cubins = json_array();
    exporting x = {.opts = opts, .sum = sum, .err = err};
    int rc = doc && best && trials && cubins ? GB_OK : gb_err_set(err, GB_ENOMEM, "out of memory");
    x.db = GB_DB_BEST;
    x.list = best;
    if (rc == GB_OK) rc = gb_cache_walk(cache, GB_DB_BEST, export_record, &x, err);
    x.db = GB_DB_TRIALS;
    x.list = trials;
    if (rc == GB_OK) rc = gb_cache_walk(cache, GB_DB_TRIALS, export_record, &x, err);
    if (rc == GB_OK && opts->cubins) rc = export_cubins(cache, &x, cubins, err);
    if (rc == GB_OK) {
        json_object_set(doc, "best", best);
        json_object_set(doc, "trials", trials);
        if (opts->cubins) json_object_set(doc, "cubins", cubins);
        *out = doc;
        doc = NULL;
    }
    json_decref(doc);
    json_decref(best);
    json_decref(trials);
    json_decref(cubins);
    free(x.cubins);
    return rc;
}

/* ---- the file's text ------------------------------------------------------ */

static void put_json(gb_strbuf *sb, const json_t *v)
{
    char *text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    if (!text)
        sb->failed = 1;
    else
        gb_sb_puts(sb, text);
    free(text);
}

char *gb_transfer_file_dump(const json_t *doc)
{
    gb_strbuf sb = GB_STRBUF_INIT;
    const char *key;
    const json_t *value;
    bool first = true;
    gb_sb_putc(&sb, '{');
    json_object_foreach((json_t *)doc, key, value)
    {
        json_t *name = json_string(key);
        if (!first) gb_sb_puts(&sb, json_is_array(value) ? ",\n" : ",");
        first = false;
        put_json(&sb, name);
        json_decref(name);
        gb_sb_putc(&sb, ':');
        if (!json_is_array(value)) {
            put_json(&sb, value);
            continue;
        }
        size_t i;
        const json_t *item;
        gb_sb_putc(&sb, '[');
        json_array_foreach(value, i, item)
        {
            gb_sb_puts(&sb, i ? ",\n" : "\n");
            put_json(&sb, item);
        }
        gb_sb_puts(&sb, json_array_size(value) ? "\n]" : "]");
    }
    gb_sb_puts(&sb, "}\n");
    return gb_sb_take(&sb);
}

/* ---- import --------------------------------------------------------------- */

/* One best or trial record from the file: counted in sum whatever happens; only a
 * cache error stops the import. */
static int import_record(gb_cache *cache, gb_cache_db db, const json_t *json, const char *place,
                         const gb_transfer_opts *o, gb_transfer_summary *sum, gb_err *err)
{
    gb_err why = {0};
    gb_transfer_counts *c = db == GB_DB_BEST ? &sum->best : &sum->trials;
    bool decoded;
    int rc;
    if (db == GB_DB_BEST) {
        gb_best_record rec;
        rc = gb_best_record_from_json(json, &rec, &why);
        decoded = rc == GB_OK;
        if (decoded) rc = gb_transfer_put_best(cache, &rec, sum, &why);
        gb_best_record_free(&rec);
    } else {
        gb_trial_record rec;
        rc = gb_trial_record_from_json(json, &rec, &why);
        decoded = rc == GB_OK;
        if (decoded) rc = gb_transfer_put_trial(cache, &rec, sum, &why);
        gb_trial_record_free(&rec);
    }
    if (rc == GB_ENOMEM) return gb_err_set(err, rc, "out of memory");
    if (!decoded) c->skipped++; /* a failed check was counted by the put */
    if (rc && decoded && rc != GB_EINVAL) return gb_err_copy(err, &why); /* storing failed */
    if (rc) note(o, "%s: %s; skipped", place, why.msg);
    return GB_OK;
}

static int import_cubin(gb_cache *cache, const json_t *entry, size_t index,
                        const gb_transfer_opts *o, gb_transfer_summary *sum, gb_err *err)
{
    gb_err why = {0};
    gb_key key;
    const char *hex = json_string_value(json_object_get(entry, "key"));
    const char *b64 = json_string_value(json_object_get(entry, "cubin"));
    const json_t *meta = json_object_get(entry, "meta");
    size_t len = b64 ? strlen(b64) : 0, bytes = 0;
    void *cubin = NULL;
    int rc = GB_OK;
    if (!hex || gb_key_from_hex(hex, &key) || !json_is_object(meta) || !b64)
        rc = gb_err_set(&why, GB_EINVAL, "it needs key (32 hex digits), meta and cubin");
    else if (len / 4 * 3 > GB_TRANSFER_MAX_CUBIN_BYTES)
        rc = gb_err_set(&why, GB_EINVAL, "its cubin is over %zu MiB",
                        GB_TRANSFER_MAX_CUBIN_BYTES >> 20);
    else if (!(cubin = malloc(len / 4 * 3 + 1)))
        rc = gb_err_set(err, GB_ENOMEM, "out of memory");
    else if (gb_base64_decode(b64, len, cubin, len / 4 * 3 + 1, &bytes))
        rc = gb_err_set(&why, GB_EINVAL, "its cubin is not base64");
    if (rc == GB_EINVAL) sum->cubins.skipped++;
    if (rc == GB_OK) rc = gb_transfer_put_cubin(cache, &key, meta, cubin, bytes, sum, &why);
    free(cubin);
    if (rc == GB_EINVAL) {
        note(o, "cubins[%zu]: %s; skipped", index, why.msg);
        return GB_OK;
    }
    return rc && rc != GB_ENOMEM ? gb_err_copy(err, &why) : rc;
}

/* The document's header: a transfer file of a version this build reads. */
static int check_header(const json_t *doc, gb_err *err)
{
    const char *format = json_string_value(json_object_get(doc, "format"));
    const json_t *version = json_object_get(doc, "version");
    if (!json_is_object(doc) || !format || strcmp(format, GB_TRANSFER_FORMAT))
        return gb_err_set(err, GB_EINVAL, "not a gpubench export file (\"format\" is not \"%s\")",
                          GB_TRANSFER_FORMAT);
    if (!json_is_integer(version) || json_integer_value(version) < 1)
        return gb_err_set(err, GB_EINVAL, "\"version\" is not a whole number from 1");
    if (json_integer_value(version) > GB_TRANSFER_VERSION)
        return gb_err_set(err, GB_EINVAL,
                          "export format version %lld is newer than this gpubench reads (%d): "
                          "upgrade gpubench",
                          (long long)json_integer_value(version), GB_TRANSFER_VERSION);
    static const char *const lists[] = {"best", "trials", "cubins"};
    size_t n = 0;
    for (size_t i = 0; i < 3; i++) {
        const json_t *list = json_object_get(doc, lists[i]);
        if (list && !json_is_array(list))
            return gb_err_set(err, GB_EINVAL, "\"%s\" is not a list", lists[i]);
        n += json_array_size(list);
    }
    if (n > GB_TRANSFER_MAX_RECORDS)
        return gb_err_set(err, GB_ELIMIT, "%zu records, more than the %d an import takes", n,
                          GB_TRANSFER_MAX_RECORDS);
    return GB_OK;
}

int gb_transfer_file_read(gb_cache *cache, const char *text, size_t len,
                          const gb_transfer_opts *opts, gb_transfer_summary *sum, gb_err *err)
{
    memset(sum, 0, sizeof *sum);
    if (len > GB_TRANSFER_MAX_FILE_BYTES)
        return gb_err_set(err, GB_ELIMIT, "%zu bytes, more than the %zu MiB an import reads", len,
                          GB_TRANSFER_MAX_FILE_BYTES >> 20);
    json_error_t jerr;
    json_t *doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!doc)
        return gb_err_set(err, GB_EINVAL, "line %d, column %d: %s", jerr.line, jerr.column,
                          jerr.text);
    int rc = check_header(doc, err);
    const json_t *best = json_object_get(doc, "best"), *trials = json_object_get(doc, "trials");
    const json_t *cubins = json_object_get(doc, "cubins"), *v;
    size_t i;
    char place[64];
    json_array_foreach(best, i, v)
    {
        snprintf(place, sizeof place, "best[%zu]", i);
        if (rc == GB_OK) rc = import_record(cache, GB_DB_BEST, v, place, opts, sum, err);
    }
    json_array_foreach(trials, i, v)
    {
        snprintf(place, sizeof place, "trials[%zu]", i);
        if (rc == GB_OK) rc = import_record(cache, GB_DB_TRIALS, v, place, opts, sum, err);
    }
    if (!opts->cubins) sum->cubins_ignored = json_array_size(cubins);
    json_array_foreach(cubins, i, v)
    {
        if (rc == GB_OK && opts->cubins) rc = import_cubin(cache, v, i, opts, sum, err);
    }
    json_decref(doc);
    return rc;
}

/* ---- merge ---------------------------------------------------------------- */

typedef struct merging {
    gb_cache *dst;
    gb_cache_db db;
    const gb_transfer_opts *opts;
    gb_transfer_summary *sum;
    gb_err *err;
} merging;

/* Writing into dst from inside src's walk is allowed: they are two environments,
 * each with its own lock. */
static int merge_record(void *ctx, const gb_cache_item *item)
{
    merging *m = ctx;
    char hex[33];
    gb_key_hex(&item->key, hex);
    if (m->db == GB_DB_CUBINS) {
        const char *meta_text;
        const void *cubin;
        size_t meta_len, bytes;
        gb_err why = {0};
        json_t *meta = NULL;
        int rc =
            gb_cache_split_cubin(item->value, item->len, &meta_text, &meta_len, &cubin, &bytes);
        if (rc == GB_OK && !(meta = json_loadb(meta_text, meta_len, 0, NULL))) rc = GB_ECACHE;
        if (rc) {
            m->sum->cubins.skipped++;
            gb_err_set(&why, GB_EINVAL, "does not split into JSON and a cubin");
        } else {
            rc = gb_transfer_put_cubin(m->dst, &item->key, meta, cubin, bytes, m->sum, &why);
        }
        json_decref(meta);
        if (rc && rc != GB_EINVAL) return gb_err_copy(m->err, &why);
        if (rc) note(m->opts, "cubin %s: %s; skipped", hex, why.msg);
        return 0;
    }
    json_t *json = item->value ? json_loadb(item->value, item->len, 0, NULL) : NULL;
    int rc;
    if (!json) {
        *(m->db == GB_DB_BEST ? &m->sum->best.skipped : &m->sum->trials.skipped) += 1;
        note(m->opts, "%s record %s does not parse; skipped",
             m->db == GB_DB_BEST ? "best" : "trial", hex);
        return 0;
    }
    char place[64];
    snprintf(place, sizeof place, "%s record %s", m->db == GB_DB_BEST ? "best" : "trial", hex);
    rc = import_record(m->dst, m->db, json, place, m->opts, m->sum, m->err);
    json_decref(json);
    return rc;
}

static bool same_place(const char *a, const char *b)
{
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

int gb_cache_merge(gb_cache *cache, gb_cache *src, const gb_transfer_opts *opts,
                   gb_transfer_summary *sum, gb_err *err)
{
    memset(sum, 0, sizeof *sum);
    if (same_place(gb_cache_dir(cache), gb_cache_dir(src)))
        return gb_err_set(err, GB_EINVAL, "cache %s: merging a cache into itself",
                          gb_cache_dir(src));
    merging m = {.dst = cache, .opts = opts, .sum = sum, .err = err};
    int rc = GB_OK;
    for (int db = GB_DB_BEST; rc == GB_OK && db <= GB_DB_CUBINS; db++) {
        m.db = (gb_cache_db)db;
        if (db == GB_DB_CUBINS && !opts->cubins)
            rc = gb_cache_count(src, GB_DB_CUBINS, &sum->cubins_ignored, err);
        else
            rc = gb_cache_walk(src, m.db, merge_record, &m, err);
    }
    return rc;
}
