/* A table from the cache's best records: one kernel, one device, the newest entry
 * of each shape (a shape tuned again after the kernel's source changed has an entry
 * per kernel fingerprint). */
#include "cache/inspect.h"
#include "cache/record.h"
#include "report/export/export.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_NAMES 12 /* kernels named in a "not found" message */

typedef struct collected {
    const char *kernel;
    gb_best_record *recs; /* the kernel's records */
    int n;
    int n_unreadable;
    char *others[MAX_NAMES]; /* other kernels in the cache, for the message */
    int n_others;
} collected;

static int note_other(collected *c, const char *kernel)
{
    for (int i = 0; i < c->n_others; i++)
        if (!strcmp(c->others[i], kernel)) return GB_OK;
    if (c->n_others == MAX_NAMES) return GB_OK;
    return (c->others[c->n_others++] = strdup(kernel)) ? GB_OK : GB_ENOMEM;
}

static int collect(void *ctx, const gb_key *key, const void *value, size_t len)
{
    collected *c = ctx;
    gb_best_record rec;
    (void)key;
    if (!value || gb_cache_read_best(value, len, &rec, NULL) != GB_OK) {
        c->n_unreadable++; /* gpubench cache ls reports these too */
        return 0;
    }
    int rc = GB_OK;
    if (strcmp(rec.id.kernel, c->kernel)) {
        rc = note_other(c, rec.id.kernel);
        gb_best_record_free(&rec);
        return rc;
    }
    gb_best_record *grown = realloc(c->recs, (size_t)(c->n + 1) * sizeof *grown);
    if (!grown) {
        gb_best_record_free(&rec);
        return GB_ENOMEM;
    }
    c->recs = grown;
    c->recs[c->n++] = rec;
    return 0;
}

static void collected_free(collected *c)
{
    for (int i = 0; i < c->n; i++)
        gb_best_record_free(&c->recs[i]);
    free(c->recs);
    for (int i = 0; i < c->n_others; i++)
        free(c->others[i]);
}

/* ---- choosing the device ------------------------------------------------ */

/* The distinct devices of the records, quoted and comma-separated, into sb. */
static void list_devices(const collected *c, gb_strbuf *sb)
{
    for (int i = 0; i < c->n; i++) {
        bool seen = false;
        for (int j = 0; j < i && !seen; j++)
            seen = !strcmp(c->recs[j].id.device, c->recs[i].id.device);
        if (!seen) gb_sb_printf(sb, "%s'%s'", sb->len ? ", " : "", c->recs[i].id.device);
    }
}

/* The device asked for: its exact fingerprint, or a part of exactly one; with none
 * asked, the only one there is. */
static int choose_device(const collected *c, const char *dir, const char *asked, const char **out,
                         gb_err *err)
{
    const char *found = NULL;
    bool several = false;
    for (int i = 0; asked && i < c->n; i++)
        if (!strcmp(c->recs[i].id.device, asked)) {
            *out = c->recs[i].id.device;
            return GB_OK;
        }
    for (int i = 0; i < c->n; i++) {
        const char *d = c->recs[i].id.device;
        if (asked && !strstr(d, asked)) continue;
        if (found && strcmp(found, d)) several = true;
        if (!found) found = d;
    }
    if (found && !several) {
        *out = found;
        return GB_OK;
    }
    gb_strbuf sb = GB_STRBUF_INIT;
    list_devices(c, &sb);
    int rc;
    if (!found)
        rc = gb_err_set(err, GB_ENOTFOUND,
                        "cache %s has no entry for kernel %s on device '%s'; it has entries "
                        "for %s",
                        dir, c->kernel, asked, gb_sb_str(&sb));
    else
        rc = gb_err_set(err, GB_EINVAL,
                        "kernel %s has entries for several devices%s%s%s: %s; a table is for one "
                        "device: name it (gpubench export --device D)",
                        c->kernel, asked ? " that match '" : "", asked ? asked : "",
                        asked ? "'" : "", gb_sb_str(&sb));
    gb_sb_free(&sb);
    return rc;
}

static int not_found(const collected *c, const char *dir, gb_err *err)
{
    gb_strbuf sb = GB_STRBUF_INIT;
    for (int i = 0; i < c->n_others; i++)
        gb_sb_printf(&sb, "%s%s", i ? ", " : "", c->others[i]);
    if (c->n_others == MAX_NAMES) gb_sb_puts(&sb, ", ...");
    int rc = gb_err_set(err, GB_ENOTFOUND,
                        "cache %s has no tuned entry for kernel %s%s%s%s; tuned entries come "
                        "from timed runs on a GPU: a --compile-only run, or one on a machine "
                        "without a GPU, keeps compiled variants only",
                        dir, c->kernel, c->n_others ? " (it has " : "", gb_sb_str(&sb),
                        c->n_others ? ")" : "");
    gb_sb_free(&sb);
    return rc;
}

/* ---- the newest entry of each shape ------------------------------------- */

typedef struct pick {
    const gb_best_record *rec;
    char *shape; /* canonical text of its key */
} pick;

/* By shape, then newest first; equal times go by fingerprint, so the choice does
 * not depend on the order LMDB returned the records in. */
static int compare_picks(const void *pa, const void *pb)
{
    const pick *a = pa, *b = pb;
    int c = strcmp(a->shape, b->shape);
    if (!c) c = (a->rec->when < b->rec->when) - (a->rec->when > b->rec->when);
    if (!c) c = strcmp(b->rec->id.kernel_fp, a->rec->id.kernel_fp);
    return c;
}

/* Newest first overall, so the newest entry names the columns. */
static int compare_newest(const void *pa, const void *pb)
{
    const pick *a = pa, *b = pb;
    int c = (a->rec->when < b->rec->when) - (a->rec->when > b->rec->when);
    return c ? c : strcmp(a->shape, b->shape);
}

/* Keeps the newest pick of each shape (*n becomes how many) and adds them. */
static int add_picks(pick *p, int *n, gb_export_table *t, gb_err *err)
{
    qsort(p, (size_t)*n, sizeof *p, compare_picks);
    int kept = 0;
    for (int i = 0; i < *n; i++) {
        if (kept && !strcmp(p[kept - 1].shape, p[i].shape)) {
            t->n_older++;
            free(p[i].shape);
            continue;
        }
        p[kept++] = p[i];
    }
    *n = kept;
    qsort(p, (size_t)kept, sizeof *p, compare_newest);
    for (int i = 0; i < kept; i++) {
        const gb_best_record *r = p[i].rec;
        gb_err why = {0};
        int rc = gb_export_table_add(t, &r->id.shape, &r->config, r->stats.median, r->when,
                                     r->engine_version, r->id.kernel_fp, &why);
        if (rc == GB_ENOMEM) return gb_err_copy(err, &why);
        if (rc && !t->n_unusable++) gb_strlcpy(t->unusable_note, why.msg, sizeof t->unusable_note);
    }
    return GB_OK;
}

static bool wanted(const gb_best_record *r, const char *device, const char *kernel_fp)
{
    return !strcmp(r->id.device, device) &&
           (!kernel_fp || !strncmp(r->id.kernel_fp, kernel_fp, strlen(kernel_fp)));
}

static int build(const collected *c, const char *device, const gb_export_query *q,
                 gb_export_table *t, gb_err *err)
{
    pick *p = calloc((size_t)c->n + 1, sizeof *p);
    int n = 0, rc = p ? GB_OK : GB_ENOMEM;
    for (int i = 0; i < c->n && !rc; i++) {
        if (!wanted(&c->recs[i], device, q->kernel_fp)) continue;
        gb_strbuf sb = GB_STRBUF_INIT;
        gb_fields_append_canonical(&sb, &c->recs[i].id.shape, NULL, 0);
        p[n] = (pick){&c->recs[i], gb_sb_take(&sb)};
        rc = p[n++].shape ? GB_OK : GB_ENOMEM;
    }
    if (rc) gb_err_set(err, rc, "out of memory");
    if (!rc && n == 0)
        rc = gb_err_set(err, GB_ENOTFOUND,
                        "kernel %s has no entry on device '%s' tuned with a kernel fingerprint "
                        "starting with '%s'",
                        c->kernel, device, q->kernel_fp);
    if (!rc) rc = add_picks(p, &n, t, err);
    for (int i = 0; p && i < n; i++)
        free(p[i].shape);
    free(p);
    return rc;
}

int gb_export_load(gb_cache *cache, const gb_export_query *q, gb_export_table *out, gb_err *err)
{
    collected c = {.kernel = q->kernel};
    const char *dir = gb_cache_dir(cache), *device = NULL;
    char source[4200];
    memset(out, 0, sizeof *out);
    int rc = gb_cache_foreach(cache, GB_DB_BEST, collect, &c, err);
    if (rc == GB_ENOMEM) gb_err_set(err, rc, "out of memory");
    if (!rc && c.n == 0) rc = not_found(&c, dir, err);
    if (!rc) rc = choose_device(&c, dir, q->device, &device, err);
    snprintf(source, sizeof source, "cache %s", dir);
    if (!rc) rc = gb_export_table_init(out, q->kernel, device, source, err);
    if (!rc) rc = build(&c, device, q, out, err);
    if (!rc) out->n_unreadable = c.n_unreadable;
    if (!rc && out->n_rows == 0)
        rc = gb_err_set(err, GB_EINVAL, "kernel %s: none of its %d entries is usable: %s",
                        q->kernel, out->n_unusable, out->unusable_note);
    if (rc) gb_export_table_free(out);
    collected_free(&c);
    return rc;
}
