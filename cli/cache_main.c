/* gpubench cache ls|path [--cache DIR] [--all] */
#include "cache/cache.h"
#include "cache/record.h"
#include "cli/cli.h"
#include "report/table.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char USAGE[] =
    "usage: %s cache COMMAND [--cache DIR]\n"
    "\n"
    "commands:\n"
    "  ls [--all]   the tuned kernels: kernel, shape, device, best configuration and\n"
    "               its time. An entry whose kernel source has changed since is stale;\n"
    "               stale entries are listed with --all.\n"
    "  path         the cache's directory\n"
    "\n"
    "The cache is $GPUBENCH_CACHE, else $XDG_CACHE_HOME/gpubench, else\n"
    "~/.cache/gpubench, unless --cache DIR names another.\n";

typedef struct listing {
    gb_best_record *recs;
    int n;
    int n_unreadable;
} listing;

static int collect(void *ctx, const gb_key *key, const void *value, size_t len)
{
    listing *l = ctx;
    json_t *json = NULL;
    gb_err err;
    (void)key;
    if (!value || gb_json_parse(value, len, &json, &err) != GB_OK) {
        l->n_unreadable++;
        return 0;
    }
    gb_best_record *grown = realloc(l->recs, (size_t)(l->n + 1) * sizeof *grown);
    if (!grown) {
        json_decref(json);
        return GB_ENOMEM;
    }
    l->recs = grown;
    if (gb_best_record_from_json(json, &l->recs[l->n], &err) == GB_OK)
        l->n++;
    else
        l->n_unreadable++;
    json_decref(json);
    return 0;
}

static void shape_text(const gb_best_record *r, gb_strbuf *sb)
{
    gb_sb_reset(sb);
    gb_fields_append_canonical(sb, &r->id.shape, NULL, 0);
}

/* Orders by kernel, device and shape, newest first within each. */
static int compare_records(const void *pa, const void *pb)
{
    const gb_best_record *a = pa, *b = pb;
    int c = strcmp(a->id.kernel, b->id.kernel);
    if (!c) c = strcmp(a->id.device, b->id.device);
    gb_strbuf sa = GB_STRBUF_INIT, sbb = GB_STRBUF_INIT;
    shape_text(a, &sa);
    shape_text(b, &sbb);
    if (!c) c = strcmp(gb_sb_str(&sa), gb_sb_str(&sbb));
    gb_sb_free(&sa);
    gb_sb_free(&sbb);
    if (!c) c = (a->when < b->when) - (a->when > b->when);
    return c;
}

/* The newest entry of a (kernel, device, shape) is current; older ones were tuned
 * from another version of the kernel's source and are stale. */
static bool same_slot(const gb_best_record *a, const gb_best_record *b)
{
    gb_strbuf sa = GB_STRBUF_INIT, sbb = GB_STRBUF_INIT;
    shape_text(a, &sa);
    shape_text(b, &sbb);
    bool same = !strcmp(a->id.kernel, b->id.kernel) && !strcmp(a->id.device, b->id.device) &&
                !strcmp(gb_sb_str(&sa), gb_sb_str(&sbb));
    gb_sb_free(&sa);
    gb_sb_free(&sbb);
    return same;
}

static void add_row(gb_table *t, const gb_best_record *r, bool stale)
{
    gb_strbuf sb = GB_STRBUF_INIT;
    char when[32];
    time_t tt = (time_t)r->when;
    struct tm tm;
    strftime(when, sizeof when, "%Y-%m-%d %H:%M", localtime_r(&tt, &tm));
    gb_table_cell(t, "%s", r->id.kernel);
    shape_text(r, &sb);
    gb_table_cell(t, "%s", gb_sb_str(&sb));
    gb_sb_reset(&sb);
    gb_fields_append_canonical(&sb, &r->config, NULL, 0);
    gb_table_cell(t, "%s", sb.len ? gb_sb_str(&sb) : "-");
    gb_table_cell(t, "%.4f", r->stats.median);
    if (r->flops > 0)
        gb_table_cell(t, "%.2f", r->flops / (r->stats.median * 1e-3) / 1e12);
    else
        gb_table_cell(t, "-");
    gb_table_cell(t, "%s", r->id.device);
    gb_table_cell(t, "%s", when);
    gb_table_cell(t, "%s", stale ? "stale" : "");
    gb_sb_free(&sb);
}

static int list(gb_cache *cache, bool all, gb_err *err)
{
    listing l = {0};
    int rc = gb_cache_foreach(cache, GB_DB_BEST, collect, &l, err);
    static const char *const headers[] = {
        "kernel", "shape", "best config", "median ms", "TFLOP/s", "device", "tuned", "", NULL};
    gb_table t;
    gb_table_init(&t, headers, "lllrrlll");
    if (l.n > 1) qsort(l.recs, (size_t)l.n, sizeof *l.recs, compare_records);
    int n_stale = 0;
    for (int i = 0; i < l.n; i++) {
        bool stale = i > 0 && same_slot(&l.recs[i - 1], &l.recs[i]);
        n_stale += stale;
        if (!stale || all) add_row(&t, &l.recs[i], stale);
    }
    if (rc == GB_OK) {
        printf("%s: %d tuned shape(s)\n", gb_cache_dir(cache), l.n - n_stale);
        if (t.n_rows) gb_table_print(&t, stdout);
        if (n_stale && !all) printf("(%d stale entries hidden; --all shows them)\n", n_stale);
        if (l.n_unreadable) printf("(%d unreadable entries skipped)\n", l.n_unreadable);
    }
    gb_table_free(&t);
    for (int i = 0; i < l.n; i++)
        gb_best_record_free(&l.recs[i]);
    free(l.recs);
    return rc;
}

int gb_cli_cache(int argc, char **argv)
{
    static const struct option opts[] = {
        {"cache", required_argument, NULL, 'c'},
        {"all", no_argument, NULL, 'a'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *dir = NULL, *prog = argv[0];
    bool all = false;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        if (c == 'c')
            dir = optarg;
        else if (c == 'a')
            all = true;
        else if (c == 'h')
            return printf(USAGE, prog), 0;
        else
            return fprintf(stderr, USAGE, prog), 2;
    }
    const char *cmd = optind < argc ? argv[optind] : NULL;
    if (!cmd || (strcmp(cmd, "ls") && strcmp(cmd, "path"))) {
        fprintf(stderr, cmd ? "%s cache: unknown command '%s'\n" : "%s cache: no command\n", prog,
                cmd);
        fprintf(stderr, USAGE, prog);
        return 2;
    }
    /* Looking never creates or changes anything. */
    gb_cache *cache = NULL;
    gb_err err = {0};
    char path[4096];
    int rc = dir ? GB_OK : gb_cache_default_dir(path, sizeof path, &err);
    if (!dir) dir = path;
    if (rc == GB_OK && !strcmp(cmd, "path")) {
        printf("%s\n", dir);
        return 0;
    }
    if (rc == GB_OK && access(dir, F_OK) != 0) {
        printf("%s: no cache here yet\n", dir);
        return 0;
    }
    if (rc == GB_OK) rc = gb_cache_open(dir, GB_CACHE_READONLY, &cache, &err);
    if (rc == GB_OK) rc = list(cache, all, &err);
    gb_cache_close(cache);
    if (rc) fprintf(stderr, "%s: %s\n", prog, err.msg);
    return gb_cli_exit_status(rc);
}
