/* gpubench export --header OUT (--kernel K | --table FILE) [options], and the
 * export that gpubench-tune --export-header runs after a tuning run. */
#include "cache/cache.h"
#include "base/file.h"
#include "cli/args.h"
#include "cli/cli.h"
#include "cli/common.h"
#include "report/export/export.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef GB_VERSION
#define GB_VERSION "0.0.0"
#endif

static const char USAGE[] =
    "usage: %s export --header OUT --kernel K [options]\n"
    "       %s export --header OUT --table TABLE.json [options]\n"
    "\n"
    "Writes what the cache holds for kernel K on one device as a C header that other\n"
    "builds include: a table from shape key to configuration and measured time, and a\n"
    "lookup that answers any shape (the exact entry, else the nearest shape, else a\n"
    "default). OUT is left untouched when it already holds the same text.\n"
    "\n"
    "options:\n"
    "  --header OUT       the file to write ('-': stdout)\n"
    "  --kernel K         the kernel, by its name in the script\n"
    "  --device D         the device: its fingerprint as `gpubench cache ls` shows it,\n"
    "                     or a part of it that names one; needed when K was tuned on\n"
    "                     several devices\n"
    "  --cache DIR        the cache (default $GPUBENCH_CACHE, else\n"
    "                     $XDG_CACHE_HOME/gpubench, else ~/.cache/gpubench)\n"
    "  --table FILE       read the table from JSON (--format json's, or hand-made)\n"
    "                     instead of the cache\n"
    "  --format c|json    c (default): a C/C++/CUDA header; json: the same table\n"
    "  --prefix NAME      the prefix of the header's names (default: the kernel's name,\n"
    "                     which must then be a C identifier)\n"
    "  --default K=V,...  the configuration for shapes with no near entry (default:\n"
    "                     the one that is best for the most shapes)\n"
    "  --max-distance D   a shape farther than D from every entry gets the default: D is\n"
    "                     the sum over numeric key fields of |log2(asked/entry)|\n"
    "                     (default: no limit, the nearest entry answers)\n"
    "  --kernel-fp HEX    only entries tuned with this kernel fingerprint (or one that\n"
    "                     starts with HEX); default: the newest entry of each shape\n"
    "  --fallback FILE    with no cache, or no entry for K (on D), copy FILE to OUT\n"
    "                     with a warning instead of failing\n"
    "  -q, --quiet        no summary on stderr\n"
    "  -h, --help         this text\n"
    "\n"
    "exit status: 0 written (or unchanged); 1 nothing to export; 2 usage, a name that\n"
    "is not a C identifier, or a cache error.\n";

typedef struct export_args {
    const char *out, *kernel, *device, *cache_dir, *table, *prefix, *default_text;
    const char *kernel_fp, *fallback;
    double max_distance; /* < 0: none */
    bool json, quiet;
} export_args;

enum {
    OPT_HEADER = 256,
    OPT_KERNEL,
    OPT_DEVICE,
    OPT_CACHE,
    OPT_TABLE,
    OPT_FORMAT,
    OPT_PREFIX,
    OPT_DEFAULT,
    OPT_KERNEL_FP,
    OPT_FALLBACK,
    OPT_MAX_DISTANCE,
};

static const struct option long_options[] = {
    {"header", required_argument, NULL, OPT_HEADER},
    {"output", required_argument, NULL, OPT_HEADER},
    {"kernel", required_argument, NULL, OPT_KERNEL},
    {"device", required_argument, NULL, OPT_DEVICE},
    {"cache", required_argument, NULL, OPT_CACHE},
    {"table", required_argument, NULL, OPT_TABLE},
    {"format", required_argument, NULL, OPT_FORMAT},
    {"prefix", required_argument, NULL, OPT_PREFIX},
    {"default", required_argument, NULL, OPT_DEFAULT},
    {"kernel-fp", required_argument, NULL, OPT_KERNEL_FP},
    {"fallback", required_argument, NULL, OPT_FALLBACK},
    {"max-distance", required_argument, NULL, OPT_MAX_DISTANCE},
    {"quiet", no_argument, NULL, 'q'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static int usage_error(const char *prog, const char *msg)
{
    fprintf(stderr, "%s export: %s\n", prog, msg);
    fprintf(stderr, USAGE, prog, prog);
    return 2;
}

/* The option's slot in a, or NULL for one that takes no text. */
static const char **slot(int c, export_args *a)
{
    switch (c) {
    case OPT_HEADER:
        return &a->out;
    case OPT_KERNEL:
        return &a->kernel;
    case OPT_DEVICE:
        return &a->device;
    case OPT_CACHE:
        return &a->cache_dir;
    case OPT_TABLE:
        return &a->table;
    case OPT_PREFIX:
        return &a->prefix;
    case OPT_DEFAULT:
        return &a->default_text;
    case OPT_KERNEL_FP:
        return &a->kernel_fp;
    case OPT_FALLBACK:
        return &a->fallback;
    default:
        return NULL;
    }
}

/* Returns -1 to go on, or an exit status. */
static int apply_option(int c, const char *prog, export_args *a)
{
    const char **text = slot(c, a);
    if (text) {
        *text = optarg;
        return -1;
    }
    if (c == OPT_MAX_DISTANCE) {
        char *end = NULL;
        a->max_distance = strtod(optarg, &end);
        if (!*optarg || *end || !(a->max_distance >= 0 && a->max_distance <= 1000))
            return usage_error(prog, "--max-distance needs a number from 0 to 1000");
        return -1;
    }
    if (c == OPT_FORMAT) {
        if (strcmp(optarg, "c") && strcmp(optarg, "json"))
            return usage_error(prog, "--format is c or json");
        a->json = !strcmp(optarg, "json");
        return -1;
    }
    if (c == 'q') {
        a->quiet = true;
        return -1;
    }
    if (c == 'h') return printf(USAGE, prog, prog), 0;
    fprintf(stderr, USAGE, prog, prog);
    return 2;
}

static int parse_args(int argc, char **argv, export_args *a)
{
    const char *prog = argv[0];
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "qh", long_options, NULL)) != -1) {
        if (c == '?') return gb_cli_bad_option(prog, "export", argv, long_options);
        int status = apply_option(c, prog, a);
        if (status >= 0) return status;
    }
    if (optind < argc) {
        fprintf(stderr, "%s export: unexpected argument '%s'\n", prog, argv[optind]);
        return 2;
    }
    if (!a->out) return usage_error(prog, "no --header OUT given");
    if (!a->kernel == !a->table)
        return usage_error(prog, "give one of --kernel K and --table FILE");
    if (a->table && (a->device || a->cache_dir || a->kernel_fp || a->fallback))
        return usage_error(prog, "--table takes the whole table: no --device, --cache, "
                                 "--kernel-fp or --fallback");
    return -1;
}

/* ---- the fallback ------------------------------------------------------- */

/* A fallback header must define the same names as the header it stands for; a
 * JSON one must be a table. */
static int check_fallback(const char *path, const char *text, const char *prefix, bool json,
                          gb_err *err)
{
    char want[300];
    if (json)
        snprintf(want, sizeof want, "\"gpubench-tuned-table\"");
    else {
        int n = snprintf(want, sizeof want, "#define %s_TUNED_HASH ", prefix);
        for (int i = 8; i < n; i++)
            want[i] = (char)toupper((unsigned char)want[i]);
    }
    if (strstr(text, want)) return GB_OK;
    return gb_err_set(err, GB_EINVAL,
                      "fallback %s does not contain '%s': it is not the %s for prefix %s", path,
                      want, json ? "JSON table" : "header", prefix);
}

/* why: the message that said there is nothing to export. */
static int use_fallback(const char *prog, const export_args *a, const char *prefix, const char *why,
                        gb_err *err)
{
    char *text = NULL;
    size_t len = 0;
    bool unchanged = false;
    int rc = gb_read_file(a->fallback, (size_t)64 << 20, "fallback ", &text, &len, err);
    if (!rc) rc = check_fallback(a->fallback, text, prefix, a->json, err);
    if (!rc) rc = gb_export_save(a->out, text, len, &unchanged, err);
    if (!rc)
        fprintf(stderr, "%s export: warning: %s; %s %s from the fallback %s\n", prog, why,
                unchanged ? "kept" : "wrote", a->out, a->fallback);
    free(text);
    return rc;
}

/* ---- loading ------------------------------------------------------------ */

static bool cache_exists(const char *dir)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/data.mdb", dir);
    return access(path, F_OK) == 0;
}

/* The table from the cache; GB_ENOTFOUND (err says why) when there is nothing. */
static int load_from_cache(const export_args *a, gb_export_table *t, gb_err *err)
{
    char dir[4096];
    gb_cache *cache = NULL;
    int rc = GB_OK;
    if (a->cache_dir)
        gb_strlcpy(dir, a->cache_dir, sizeof dir);
    else
        rc = gb_cache_default_dir(dir, sizeof dir, err);
    if (rc) return rc;
    if (!cache_exists(dir)) return gb_err_set(err, GB_ENOTFOUND, "there is no cache at %s", dir);
    rc = gb_cache_open(dir, GB_CACHE_READONLY, &cache, err);
    gb_export_query q = {.kernel = a->kernel, .device = a->device, .kernel_fp = a->kernel_fp};
    if (!rc) rc = gb_export_load(cache, &q, t, err);
    gb_cache_close(cache);
    return rc;
}

static void report(const char *prog, const char *out, const gb_export_table *t, bool unchanged)
{
    fprintf(stderr, "%s export: %s %s: kernel %s on %s, %d shape%s, %d configuration%s, hash %s\n",
            prog, unchanged ? "unchanged" : "wrote", out, t->kernel, t->device, t->n_rows,
            t->n_rows == 1 ? "" : "s", t->n_configs, t->n_configs == 1 ? "" : "s", t->hash);
}

/* How many kernel fingerprints the rows were tuned with, and the newest row's. */
static int count_fingerprints(const gb_export_table *t, const char **out_newest)
{
    int n = 0;
    int64_t newest = INT64_MIN;
    for (int r = 0; r < t->n_rows; r++) {
        const char *fp = t->rows[r].kernel_fp;
        bool seen = !*fp;
        for (int q = 0; q < r && !seen; q++)
            seen = !strcmp(t->rows[q].kernel_fp, fp);
        n += !seen;
        if (*fp && t->rows[r].when > newest) newest = t->rows[r].when, *out_newest = fp;
    }
    return n;
}

/* Warnings about what the table left out or mixes; they go out even with --quiet. */
static void warn_left_out(const char *prog, const gb_export_table *t)
{
    const char *newest = "";
    int n_fps = count_fingerprints(t, &newest);
    if (n_fps > 1)
        fprintf(stderr,
                "%s export: warning: kernel %s: the entries were tuned from %d versions of the "
                "kernel's source; --kernel-fp %.12s takes only the newest version's\n",
                prog, t->kernel, n_fps, newest);
    if (t->n_older)
        fprintf(stderr,
                "%s export: kernel %s: %d older entr%s left out (tuned from an earlier "
                "version of the kernel; the newest entry of each shape is exported)\n",
                prog, t->kernel, t->n_older, t->n_older == 1 ? "y" : "ies");
    if (t->n_unusable)
        fprintf(stderr,
                "%s export: warning: kernel %s: %d entr%s left out, the first because: %s\n", prog,
                t->kernel, t->n_unusable, t->n_unusable == 1 ? "y" : "ies", t->unusable_note);
    if (t->n_unreadable)
        fprintf(stderr, "%s export: warning: %d entr%s of the cache could not be read\n", prog,
                t->n_unreadable, t->n_unreadable == 1 ? "y" : "ies");
}

static int write_table(const char *prog, const export_args *a, gb_export_table *t,
                       const char *default_text, gb_err *err)
{
    gb_strbuf sb = GB_STRBUF_INIT;
    bool unchanged = false;
    const gb_export_table *one[] = {t};
    if (a->max_distance >= 0) t->max_distance = a->max_distance;
    int rc = gb_export_table_finish(t, a->prefix, default_text, err);
    if (!rc && a->json) rc = gb_export_write_json(t, GB_VERSION, &sb, err);
    if (!rc && !a->json) rc = gb_export_write_c(one, 1, GB_VERSION, &sb, err);
    if (!rc) rc = gb_export_save(a->out, gb_sb_str(&sb), sb.len, &unchanged, err);
    if (!rc) warn_left_out(prog, t);
    if (!rc && !a->quiet) report(prog, a->out, t, unchanged);
    gb_sb_free(&sb);
    return rc;
}

int gb_cli_export(int argc, char **argv)
{
    const char *prog = argv[0];
    export_args a = {.max_distance = -1};
    int status = parse_args(argc, argv, &a);
    if (status >= 0) return status;
    gb_err err = {0};
    gb_export_table t = {0};
    char *table_default = NULL;
    /* A bad name is reported before anything is read: it is wrong whatever the cache. */
    const char *prefix = a.prefix ? a.prefix : a.kernel;
    int rc =
        prefix ? gb_export_check_name(prefix, a.prefix ? "--prefix" : "kernel name", &err) : GB_OK;
    if (rc && !a.prefix)
        gb_err_set(&err, rc,
                   "kernel name '%s' is not a C identifier, so it cannot prefix the header's "
                   "names: give one with --prefix NAME",
                   a.kernel);
    if (!rc && a.table) rc = gb_export_read_json(a.table, &t, &table_default, &err);
    if (!rc && !a.table) rc = load_from_cache(&a, &t, &err);
    if (rc == GB_ENOTFOUND && a.fallback) {
        rc = use_fallback(prog, &a, prefix, err.msg, &err);
    } else if (!rc) {
        rc = write_table(prog, &a, &t, a.default_text ? a.default_text : table_default, &err);
    }
    if (rc) fprintf(stderr, "%s export: %s\n", prog, err.msg);
    gb_export_table_free(&t);
    free(table_default);
    return gb_cli_exit_status(rc);
}

/* ---- gpubench-tune --export-header -------------------------------------- */

int gb_cli_export_kernels(const char *prog, gb_cache *cache, const char *path,
                          const char *const *kernels, const char *const *devices, int n)
{
    gb_export_table *tables = calloc((size_t)n + 1, sizeof *tables);
    const gb_export_table **list = calloc((size_t)n + 1, sizeof *list);
    gb_strbuf sb = GB_STRBUF_INIT;
    gb_err err = {0};
    bool unchanged = false;
    int rc = tables && list ? GB_OK : gb_err_set(&err, GB_ENOMEM, "out of memory");
    if (!rc && n == 0) rc = gb_err_set(&err, GB_ENOTFOUND, "the script tuned no kernel");
    for (int i = 0; i < n && !rc; i++) {
        gb_export_query q = {.kernel = kernels[i], .device = *devices[i] ? devices[i] : NULL};
        if (gb_export_check_name(kernels[i], "kernel name", &err))
            rc = gb_err_set(&err, GB_EINVAL,
                            "kernel name '%s' is not a C identifier, so it cannot prefix the "
                            "header's names: export it with gpubench export --kernel %s "
                            "--prefix NAME",
                            kernels[i], kernels[i]);
        if (!rc) rc = gb_export_load(cache, &q, &tables[i], &err);
        if (!rc) rc = gb_export_table_finish(&tables[i], NULL, NULL, &err);
        if (!rc) warn_left_out(prog, &tables[i]);
        list[i] = &tables[i];
    }
    if (!rc) rc = gb_export_write_c(list, n, GB_VERSION, &sb, &err);
    if (!rc) rc = gb_export_save(path, gb_sb_str(&sb), sb.len, &unchanged, &err);
    for (int i = 0; i < n && !rc; i++)
        fprintf(stderr, "%s: %s %s: kernel %s on %s, %d shape%s, hash %s\n", prog,
                unchanged ? "unchanged" : "exported to", path, tables[i].kernel, tables[i].device,
                tables[i].n_rows, tables[i].n_rows == 1 ? "" : "s", tables[i].hash);
    if (rc) fprintf(stderr, "%s: --export-header %s: %s\n", prog, path, err.msg);
    for (int i = 0; tables && i < n; i++)
        gb_export_table_free(&tables[i]);
    free(tables);
    free(list);
    gb_sb_free(&sb);
    return gb_cli_exit_status(rc);
}
