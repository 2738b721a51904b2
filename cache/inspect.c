/* What a cache holds: filters, decoding, the listing with staleness, and show. The
 * upkeep commands (rm, gc, verify) are in upkeep.c. */
#include "cache/inspect.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A source file bigger than this is not hashed: no template is that large, and a
 * path from another machine may name anything. */
#define MAX_SOURCE_BYTES ((size_t)64 << 20)

/* ---- filters and shapes --------------------------------------------------- */

bool gb_cache_filter_match(const gb_cache_filter *f, const gb_record_id *id)
{
    if (!f) return true;
    if (f->kernel && strcmp(f->kernel, id->kernel) != 0) return false;
    if (f->device && strcmp(f->device, id->device) != 0) return false;
    return !f->shape || gb_fields_equal(f->shape, &id->shape);
}

/* One value as the tables print it. */
static int parse_value(const char *text, gb_value *out)
{
    size_t n = strlen(text);
    char *end = NULL;
    if (n >= 2 && text[0] == '"' && text[n - 1] == '"') {
        char buf[1024];
        size_t k = 0;
        for (size_t i = 1; i + 1 < n; i++) {
            if (text[i] == '\\' && i + 2 < n) i++;
            if (k + 1 >= sizeof buf) return GB_EINVAL;
            buf[k++] = text[i];
        }
        buf[k] = '\0';
        return gb_value_str(buf, out);
    }
    if (!strcmp(text, "true") || !strcmp(text, "false")) {
        *out = gb_value_bool(text[0] == 't');
        return GB_OK;
    }
    errno = 0;
    long long i = strtoll(text, &end, 10);
    if (n && *end == '\0' && errno == 0) {
        *out = gb_value_int(i);
        return GB_OK;
    }
    double d = strtod(text, &end);
    if (n && *end == '\0' && isfinite(d)) {
        *out = gb_value_num(d);
        return GB_OK;
    }
    return gb_value_str(text, out);
}

/* The next "name=value" of text, honouring quotes; returns its length. */
static size_t next_item(const char *text)
{
    bool quoted = false;
    size_t i = 0;
    for (; text[i] && (quoted || text[i] != ','); i++) {
        if (text[i] == '\\' && quoted && text[i + 1])
            i++;
        else if (text[i] == '"')
            quoted = !quoted;
    }
    return i;
}

int gb_cache_parse_shape(const char *text, gb_fields *out, gb_err *err)
{
    memset(out, 0, sizeof *out);
    for (const char *p = text; *p;) {
        size_t n = next_item(p);
        char item[1100];
        if (n >= sizeof item) {
            gb_fields_free(out);
            return gb_err_set(err, GB_EINVAL, "shape '%s': a field is too long", text);
        }
        memcpy(item, p, n);
        item[n] = '\0';
        char *eq = strchr(item, '=');
        gb_value v = {0};
        if (!eq || eq == item || parse_value(eq + 1, &v) != GB_OK) {
            gb_fields_free(out);
            return gb_err_set(err, GB_EINVAL, "shape '%s': '%s' is not NAME=VALUE", text, item);
        }
        *eq = '\0';
        int rc = gb_fields_set(out, item, &v);
        gb_value_free(&v);
        if (rc) {
            gb_fields_free(out);
            return gb_err_set(err, rc, "shape '%s': out of memory", text);
        }
        p += n;
        if (*p == ',') p++;
    }
    return GB_OK;
}

/* ---- decoding ------------------------------------------------------------- */

static int load(const void *value, size_t len, json_t **out, gb_err *err)
{
    *out = NULL;
    if (!value) return gb_err_set(err, GB_ECACHE, "bad header");
    return gb_json_parse(value, len, out, err);
}

int gb_cache_read_best(const void *value, size_t len, gb_best_record *out, gb_err *err)
{
    json_t *json = NULL;
    memset(out, 0, sizeof *out);
    int rc = load(value, len, &json, err);
    if (rc == GB_OK) rc = gb_best_record_from_json(json, out, err);
    json_decref(json);
    return rc == GB_ENOMEM ? rc : rc ? GB_ECACHE : GB_OK;
}

int gb_cache_read_trial(const void *value, size_t len, gb_trial_record *out, gb_err *err)
{
    json_t *json = NULL;
    memset(out, 0, sizeof *out);
    int rc = load(value, len, &json, err);
    if (rc == GB_OK) rc = gb_trial_record_from_json(json, out, err);
    json_decref(json);
    return rc == GB_ENOMEM ? rc : rc ? GB_ECACHE : GB_OK;
}

/* ---- staleness ------------------------------------------------------------ */

void gb_stale_names(unsigned stale, char *out, size_t out_bytes)
{
    static const char *const names[] = {"superseded", "source", "schema",
                                        "engine",     "nvrtc",  "driver"};
    size_t n = 0;
    out[0] = '\0';
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        if (!(stale & 1u << i)) continue;
        int w = snprintf(out + n, out_bytes - n, "%s%s", n ? "," : "", names[i]);
        if (w < 0 || (size_t)w >= out_bytes - n) return;
        n += (size_t)w;
    }
}

/* Compares dotted version numbers ("0.10.1" > "0.9"); missing parts count as 0. */
static int version_cmp(const char *a, const char *b)
{
    while (*a || *b) {
        char *ea, *eb;
        unsigned long x = strtoul(a, &ea, 10), y = strtoul(b, &eb, 10);
        if (x != y) return x < y ? -1 : 1;
        a = *ea == '.' ? ea + 1 : ea + strlen(ea);
        b = *eb == '.' ? eb + 1 : eb + strlen(eb);
    }
    return 0;
}

static void append(char *buf, size_t bytes, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void append(char *buf, size_t bytes, const char *fmt, ...)
{
    size_t n = strlen(buf);
    if (n + 3 >= bytes) return;
    if (n) {
        strcpy(buf + n, "; ");
        n += 2;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + n, bytes - n, fmt, ap);
    va_end(ap);
}

/* The content hash of the regular file at path; false when there is none to read.
 * Opened without blocking, so a FIFO named by a record from elsewhere cannot hang. */
static bool hash_file(const char *path, char out[33])
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return false;
    struct stat st;
    char *buf = NULL;
    bool ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (size_t)st.st_size <= MAX_SOURCE_BYTES;
    size_t size = ok ? (size_t)st.st_size : 0, got = 0;
    if (ok && !(buf = malloc(size ? size : 1))) ok = false;
    while (ok && got < size) {
        ssize_t r = read(fd, buf + got, size - got);
        if (r <= 0)
            ok = r == 0 ? false : errno == EINTR;
        else
            got += (size_t)r;
    }
    close(fd);
    if (ok) {
        gb_key key = gb_key_of_bytes(buf, size);
        gb_key_hex(&key, out);
    }
    free(buf);
    return ok;
}

static void judge_sources(gb_cache_entry *e)
{
    for (int i = 0; i < e->rec.n_sources; i++) {
        const gb_record_source *s = &e->rec.sources[i];
        char now[33];
        if (!hash_file(s->path, now)) {
            append(e->note, sizeof e->note, "source not found here: %s", s->path);
        } else if (strcmp(now, s->hash) != 0) {
            e->stale |= GB_STALE_SOURCE;
            append(e->why, sizeof e->why, "source changed: %s", s->path);
        }
    }
    if (e->rec.n_sources == 0)
        append(e->note, sizeof e->note, "sources not recorded: the template is not checked");
}

static void judge(gb_cache_entry *e, const gb_cache_versions *now, int newest_driver)
{
    const gb_best_record *r = &e->rec;
    if (e->schema < GB_CACHE_SCHEMA) {
        e->stale |= GB_STALE_SCHEMA;
        append(e->why, sizeof e->why, "schema %u older than %d", e->schema, GB_CACHE_SCHEMA);
    }
    if (now && now->engine && r->engine_version[0] &&
        version_cmp(r->engine_version, now->engine) < 0) {
        e->stale |= GB_STALE_ENGINE;
        append(e->why, sizeof e->why, "gpubench %s older than %s", r->engine_version, now->engine);
    }
    if (now && now->nvrtc && r->nvrtc_version[0] && version_cmp(r->nvrtc_version, now->nvrtc) < 0) {
        e->stale |= GB_STALE_NVRTC;
        append(e->why, sizeof e->why, "NVRTC %s older than %s", r->nvrtc_version, now->nvrtc);
    }
    if (r->driver_version > 0 && r->driver_version < newest_driver) {
        e->stale |= GB_STALE_DRIVER;
        append(e->why, sizeof e->why, "driver %d older than %d, the newest recorded for %s",
               r->driver_version, newest_driver, r->id.device);
    }
    judge_sources(e);
}

/* ---- the listing ---------------------------------------------------------- */

typedef struct collect {
    gb_cache_listing *l;
    int cap;
    int n_unreadable;
    gb_err *err;
} collect;

static int collect_best(void *ctx, const gb_cache_item *item)
{
    collect *c = ctx;
    gb_cache_listing *l = c->l;
    gb_err why;
    if (l->n == c->cap) {
        int cap = c->cap ? 2 * c->cap : 64;
        gb_cache_entry *grown = realloc(l->entries, (size_t)cap * sizeof *grown);
        if (!grown) return gb_err_set(c->err, GB_ENOMEM, "out of memory");
        l->entries = grown;
        c->cap = cap;
    }
    gb_cache_entry *e = &l->entries[l->n];
    memset(e, 0, sizeof *e);
    int rc = gb_cache_read_best(item->value, item->len, &e->rec, &why);
    if (rc == GB_ENOMEM) return gb_err_set(c->err, rc, "out of memory");
    if (rc) {
        c->n_unreadable++;
        return 0;
    }
    e->key = item->key;
    e->schema = item->schema;
    l->n++;
    return 0;
}

static void shape_text(const gb_fields *shape, gb_strbuf *sb)
{
    gb_sb_reset(sb);
    gb_fields_append_canonical(sb, shape, NULL, 0);
}

/* Kernel, device, shape; newest first. */
static int compare_entries(const void *pa, const void *pb)
{
    const gb_best_record *a = &((const gb_cache_entry *)pa)->rec;
    const gb_best_record *b = &((const gb_cache_entry *)pb)->rec;
    int c = strcmp(a->id.kernel, b->id.kernel);
    if (!c) c = strcmp(a->id.device, b->id.device);
    if (!c) {
        gb_strbuf sa = GB_STRBUF_INIT, sbb = GB_STRBUF_INIT;
        shape_text(&a->id.shape, &sa);
        shape_text(&b->id.shape, &sbb);
        c = strcmp(gb_sb_str(&sa), gb_sb_str(&sbb));
        gb_sb_free(&sa);
        gb_sb_free(&sbb);
    }
    if (!c) c = (a->when < b->when) - (a->when > b->when);
    if (!c) c = strcmp(a->id.kernel_fp, b->id.kernel_fp);
    return c;
}

static bool same_slot(const gb_record_id *a, const gb_record_id *b)
{
    return !strcmp(a->kernel, b->kernel) && !strcmp(a->device, b->device) &&
           gb_fields_equal(&a->shape, &b->shape);
}

static int newest_driver(const gb_cache_listing *l, const char *device)
{
    int newest = 0;
    for (int i = 0; i < l->n; i++)
        if (!strcmp(l->entries[i].rec.id.device, device) &&
            l->entries[i].rec.driver_version > newest)
            newest = l->entries[i].rec.driver_version;
    return newest;
}

/* Drops the entries filter does not match, keeping the order. */
static void keep_matching(gb_cache_listing *l, const gb_cache_filter *filter)
{
    int n = 0;
    for (int i = 0; i < l->n; i++) {
        if (gb_cache_filter_match(filter, &l->entries[i].rec.id))
            l->entries[n++] = l->entries[i];
        else
            gb_best_record_free(&l->entries[i].rec);
    }
    l->n = n;
}

static int list_best(gb_cache *cache, const gb_cache_filter *filter, const gb_cache_versions *now,
                     gb_cache_listing *l, gb_err *err)
{
    collect c = {.l = l, .err = err};
    int rc = gb_cache_walk(cache, GB_DB_BEST, collect_best, &c, err);
    l->n_unreadable = c.n_unreadable;
    if (rc) return rc;
    if (l->n > 1) qsort(l->entries, (size_t)l->n, sizeof *l->entries, compare_entries);
    /* Judged over every record, so that a filter does not change the answer. */
    for (int i = 0; i < l->n; i++) {
        gb_cache_entry *e = &l->entries[i];
        if (i > 0 && same_slot(&l->entries[i - 1].rec.id, &e->rec.id)) {
            e->stale |= GB_STALE_SUPERSEDED;
            append(e->why, sizeof e->why, "superseded by a record tuned later (fingerprint %.12s)",
                   l->entries[i - 1].rec.id.kernel_fp);
        }
    }
    for (int i = 0; i < l->n; i++)
        if (gb_cache_filter_match(filter, &l->entries[i].rec.id))
            judge(&l->entries[i], now, newest_driver(l, l->entries[i].rec.id.device));
    keep_matching(l, filter);
    for (int i = 0; i < l->n; i++)
        l->n_stale += l->entries[i].stale != 0;
    return GB_OK;
}

typedef struct trial_walk {
    const gb_cache_filter *filter;
    gb_cache_trial_fn fn;
    void *ctx;
    size_t *unreadable;
    gb_err *err;
} trial_walk;

static int walk_trial(void *ctx, const gb_cache_item *item)
{
    trial_walk *w = ctx;
    gb_trial_record rec;
    gb_err why;
    int rc = gb_cache_read_trial(item->value, item->len, &rec, &why);
    if (rc == GB_ENOMEM) return gb_err_set(w->err, rc, "out of memory");
    if (rc) {
        if (w->unreadable) ++*w->unreadable;
        return 0;
    }
    if (gb_cache_filter_match(w->filter, &rec.id)) rc = w->fn(w->ctx, &rec, w->err);
    gb_trial_record_free(&rec);
    return rc;
}

int gb_cache_walk_trials(gb_cache *cache, const gb_cache_filter *filter, gb_cache_trial_fn fn,
                         void *ctx, size_t *out_unreadable, gb_err *err)
{
    trial_walk w = {filter, fn, ctx, out_unreadable, err};
    return gb_cache_walk(cache, GB_DB_TRIALS, walk_trial, &w, err);
}

static int count_trial(void *ctx, gb_trial_record *rec, gb_err *err)
{
    gb_cache_listing *l = ctx;
    (void)err;
    l->n_trials++;
    if (rec->in_flight)
        l->n_in_flight++;
    else
        l->n_status[rec->status]++;
    return 0;
}

static int count_cubin(void *ctx, const gb_cache_item *item)
{
    gb_cache_listing *l = ctx;
    l->n_cubins++;
    l->cubin_bytes += item->len;
    return 0;
}

int gb_cache_list(gb_cache *cache, const gb_cache_filter *filter, const gb_cache_versions *now,
                  gb_cache_listing *out, gb_err *err)
{
    memset(out, 0, sizeof *out);
    int rc = list_best(cache, filter, now, out, err);
    if (rc == GB_OK)
        rc = gb_cache_walk_trials(cache, filter, count_trial, out, &out->n_trials_unreadable, err);
    if (rc == GB_OK) rc = gb_cache_walk(cache, GB_DB_CUBINS, count_cubin, out, err);
    if (rc) gb_cache_listing_free(out);
    return rc;
}

void gb_cache_listing_free(gb_cache_listing *l)
{
    if (!l) return;
    for (int i = 0; i < l->n; i++)
        gb_best_record_free(&l->entries[i].rec);
    free(l->entries);
    memset(l, 0, sizeof *l);
}

/* ---- show ----------------------------------------------------------------- */

typedef struct grouping {
    gb_cache_group *groups;
    int n;
    int cap;
    gb_err *err;
} grouping;

static gb_cache_group *group_for(grouping *g, const gb_record_id *id)
{
    for (int i = 0; i < g->n; i++)
        if (gb_record_id_equal(&g->groups[i].id, id)) return &g->groups[i];
    if (g->n == g->cap) {
        int cap = g->cap ? 2 * g->cap : 16;
        gb_cache_group *grown = realloc(g->groups, (size_t)cap * sizeof *grown);
        if (!grown) return NULL;
        g->groups = grown;
        g->cap = cap;
    }
    gb_cache_group *grp = &g->groups[g->n];
    memset(grp, 0, sizeof *grp);
    if (gb_record_id_copy(id, &grp->id) != GB_OK) return NULL;
    g->n++;
    return grp;
}

/* Keeps the record (moved) in its group. */
static int group_trial(void *ctx, gb_trial_record *rec, gb_err *err)
{
    grouping *g = ctx;
    gb_cache_group *grp = group_for(g, &rec->id);
    gb_trial_record *grown =
        grp ? realloc(grp->trials, (size_t)(grp->n_trials + 1) * sizeof *grown) : NULL;
    if (!grown) return gb_err_set(err, GB_ENOMEM, "out of memory");
    grp->trials = grown;
    grp->trials[grp->n_trials++] = *rec;
    memset(rec, 0, sizeof *rec);
    return 0;
}

static double trial_ms(const gb_trial_record *t)
{
    return t->has_stats && isfinite(t->stats.median) ? t->stats.median : INFINITY;
}

/* Status (ok first, in flight last), then time, then configuration. */
static int compare_trials(const void *pa, const void *pb)
{
    const gb_trial_record *a = pa, *b = pb;
    int c = (a->in_flight > b->in_flight) - (a->in_flight < b->in_flight);
    if (!c) c = (a->status > b->status) - (a->status < b->status);
    if (!c) c = (trial_ms(a) > trial_ms(b)) - (trial_ms(a) < trial_ms(b));
    if (!c) {
        gb_strbuf sa = GB_STRBUF_INIT, sbb = GB_STRBUF_INIT;
        shape_text(&a->config, &sa);
        shape_text(&b->config, &sbb);
        c = strcmp(gb_sb_str(&sa), gb_sb_str(&sbb));
        gb_sb_free(&sa);
        gb_sb_free(&sbb);
    }
    return c;
}

/* Groups with a best first, in the listing's order; then the others by id. */
static int compare_groups(const void *pa, const void *pb)
{
    const gb_cache_group *a = pa, *b = pb;
    if (a->has_best != b->has_best) return a->has_best ? -1 : 1;
    if (a->has_best) return compare_entries(&a->best, &b->best);
    int c = strcmp(a->id.device, b->id.device);
    if (!c) {
        gb_strbuf sa = GB_STRBUF_INIT, sbb = GB_STRBUF_INIT;
        shape_text(&a->id.shape, &sa);
        shape_text(&b->id.shape, &sbb);
        c = strcmp(gb_sb_str(&sa), gb_sb_str(&sbb));
        gb_sb_free(&sa);
        gb_sb_free(&sbb);
    }
    return c ? c : strcmp(a->id.kernel_fp, b->id.kernel_fp);
}

static int add_bests(grouping *g, gb_cache_listing *l)
{
    for (int i = 0; i < l->n; i++) {
        gb_cache_group *grp = group_for(g, &l->entries[i].rec.id);
        if (!grp) return gb_err_set(g->err, GB_ENOMEM, "out of memory");
        grp->has_best = true;
        grp->best = l->entries[i]; /* moved */
        memset(&l->entries[i].rec, 0, sizeof l->entries[i].rec);
    }
    l->n = 0;
    return GB_OK;
}

int gb_cache_show(gb_cache *cache, const gb_cache_filter *filter, const gb_cache_versions *now,
                  gb_cache_group **out, int *out_n, int *out_unreadable, gb_err *err)
{
    gb_cache_listing l;
    grouping g = {.err = err};
    size_t unreadable = 0;
    *out = NULL;
    *out_n = 0;
    int rc = list_best(cache, filter, now, memset(&l, 0, sizeof l), err);
    if (rc == GB_OK) rc = add_bests(&g, &l);
    if (rc == GB_OK) rc = gb_cache_walk_trials(cache, filter, group_trial, &g, &unreadable, err);
    *out_unreadable = l.n_unreadable + (int)unreadable;
    gb_cache_listing_free(&l);
    if (rc) {
        gb_cache_groups_free(g.groups, g.n);
        return rc;
    }
    for (int i = 0; i < g.n; i++)
        if (g.groups[i].n_trials > 1)
            qsort(g.groups[i].trials, (size_t)g.groups[i].n_trials, sizeof *g.groups[i].trials,
                  compare_trials);
    if (g.n > 1) qsort(g.groups, (size_t)g.n, sizeof *g.groups, compare_groups);
    *out = g.groups;
    *out_n = g.n;
    return GB_OK;
}

void gb_cache_groups_free(gb_cache_group *groups, int n)
{
    for (int i = 0; groups && i < n; i++) {
        gb_record_id_free(&groups[i].id);
        gb_best_record_free(&groups[i].best.rec);
        for (int j = 0; j < groups[i].n_trials; j++)
            gb_trial_record_free(&groups[i].trials[j]);
        free(groups[i].trials);
    }
    free(groups);
}
