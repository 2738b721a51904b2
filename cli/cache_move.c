/* gpubench cache save and load (transfer files; also called export and import)
 * and merge. */
#include "base/file.h"
#include "cache/ktuner.h"
#include "cli/cache_cli.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef GB_VERSION
#define GB_VERSION "0.0.0"
#endif

/* ---- files ---------------------------------------------------------------- */

/* Writes text to path through a temporary file beside it, so a reader never sees
 * half a transfer file; '-' is standard output. */
static int write_output(const char *path, const char *text, gb_err *err)
{
    size_t len = strlen(text);
    if (!strcmp(path, "-"))
        return fwrite(text, 1, len, stdout) == len && fflush(stdout) == 0
                   ? GB_OK
                   : gb_err_set(err, GB_EIO, "standard output: %s", strerror(errno));
    char tmp[4200];
    if (snprintf(tmp, sizeof tmp, "%s.tmp-%ld", path, (long)getpid()) >= (int)sizeof tmp)
        return gb_err_set(err, GB_EINVAL, "%s: the path is too long", path);
    FILE *f = fopen(tmp, "wb");
    if (!f) return gb_err_set(err, GB_EIO, "%s: %s", tmp, strerror(errno));
    bool ok = fwrite(text, 1, len, f) == len;
    ok = fflush(f) == 0 && ok && fsync(fileno(f)) == 0;
    int why = errno;
    ok = fclose(f) == 0 && ok;
    if (ok && rename(tmp, path) == 0) return GB_OK;
    why = ok ? errno : why;
    unlink(tmp);
    return gb_err_set(err, GB_EIO, "%s: %s", path, strerror(why));
}

/* ---- summaries ------------------------------------------------------------ */

static void print_counts(const char *what, const gb_transfer_counts *c)
{
    printf("  %-7s %zu new, %zu replaced, %zu kept, ", what, c->imported, c->replaced, c->kept);
    if (c->combined) printf("%zu combined with another shard's, ", c->combined);
    printf("%zu skipped\n", c->skipped);
}

static int report(const cache_args *a, const char *from, const gb_transfer_summary *s)
{
    size_t skipped = gb_transfer_skipped(s);
    if (a->json) {
        int status = gb_cache_cli_print_json(json_pack(
            "{s:s, s:s, s:o, s:o, s:o, s:I, s:I}", "cache", a->dir, "from", from, "best",
            gb_cache_cli_counts_json(&s->best), "trials", gb_cache_cli_counts_json(&s->trials),
            "cubins", gb_cache_cli_counts_json(&s->cubins), "in_flight", (json_int_t)s->in_flight,
            "cubins_not_taken", (json_int_t)s->cubins_ignored));
        return status ? status : skipped > 0;
    }
    printf("%s: %s %s\n", a->dir, a->cmd[0] == 'm' ? "merged" : "imported", from);
    print_counts("best", &s->best);
    print_counts("trials", &s->trials);
    print_counts("cubins", &s->cubins);
    if (s->in_flight)
        printf("(%zu trial(s) were in flight where they came from: stored as crashed)\n",
               s->in_flight);
    if (s->cubins_ignored)
        printf("(%zu cubin(s) not taken: they are GPU code; pass --cubins to trust them)\n",
               s->cubins_ignored);
    if (skipped) printf("(%zu record(s) skipped: the messages above say why)\n", skipped);
    return skipped > 0;
}

/* ---- save ---------------------------------------------------------------- */

int gb_cache_cmd_save(cache_args *a)
{
    gb_cache *cache = NULL;
    gb_transfer_summary sum;
    gb_err err = {0};
    json_t *doc = NULL;
    char *text = NULL;
    const char *file = a->pos[0];
    int status = gb_cache_cli_open(a, false, false, &cache);
    if (status) return status;
    if (!cache) return gb_cache_cli_fail(a, "no cache here yet: nothing to save");
    gb_transfer_opts opts = {.cubins = a->cubins,
                             .filter = a->filter,
                             .engine = GB_VERSION,
                             .note = gb_cache_cli_note,
                             .note_ctx = a};
    int rc = gb_transfer_file_make(cache, &opts, &doc, &sum, &err);
    gb_cache_close(cache);
    if (rc == GB_OK && !(text = gb_transfer_file_dump(doc)))
        rc = gb_err_set(&err, GB_ENOMEM, "out of memory");
    if (rc == GB_OK) rc = write_output(file, text, &err);
    json_decref(doc);
    free(text);
    if (rc) return gb_cache_cli_fail(a, err.msg);
    /* With the transfer file on standard output, the summary goes to standard error. */
    fprintf(strcmp(file, "-") ? stdout : stderr,
            "%s: exported %zu best, %zu trial(s) and %zu cubin(s) to %s\n", a->dir,
            sum.best.imported, sum.trials.imported, sum.cubins.imported, file);
    return gb_transfer_skipped(&sum) > 0;
}

/* ---- load ---------------------------------------------------------------- */

static int import_ktuner(cache_args *a, gb_cache *cache, const char *file, const char *text,
                         size_t len)
{
    gb_ktuner_summary sum;
    gb_err err = {0};
    if (!a->kernel || !a->shape_text)
        return gb_cache_cli_fail(a, "--from kernel-tuner needs --kernel NAME and --shape SHAPE");
    if (a->cubins) return gb_cache_cli_fail(a, "a Kernel Tuner file holds no cubins");
    gb_ktuner_opts opts = {.kernel = a->kernel,
                           .shape = &a->shape,
                           .kernel_fp = a->kernel_fp,
                           .device = a->device,
                           .note = gb_cache_cli_note,
                           .note_ctx = a};
    if (gb_ktuner_import(cache, text, len, &opts, &sum, &err)) return gb_cache_cli_fail(a, err.msg);
    size_t skipped = sum.n_skipped + gb_transfer_skipped(&sum.stored);
    if (a->json) {
        int status = gb_cache_cli_print_json(json_pack(
            "{s:s, s:s, s:s, s:s, s:s, s:I, s:I, s:I, s:I, s:o, s:o, s:o}", "cache", a->dir, "from",
            file, "kernel", a->kernel, "kernel_fp", sum.kernel_fp, "device", sum.device, "entries",
            (json_int_t)sum.n_entries, "timed", (json_int_t)sum.n_ok, "failed",
            (json_int_t)sum.n_failed, "skipped", (json_int_t)sum.n_skipped, "best",
            sum.has_best
                ? json_pack("{s:s, s:f}", "config", sum.best_config, "time_ms", sum.best_ms)
                : json_null(),
            "stored_best", gb_cache_cli_counts_json(&sum.stored.best), "stored_trials",
            gb_cache_cli_counts_json(&sum.stored.trials)));
        return status ? status : skipped > 0;
    }
    char device[300], best[1100];
    printf("%s: imported Kernel Tuner file %s as kernel %s, shape %s, device %s, fingerprint %s\n",
           a->dir, file, a->kernel, a->shape_text,
           gb_cache_cli_text(sum.device, device, sizeof device), sum.kernel_fp);
    printf("  entries %zu: %zu timed, %zu failed, %zu skipped\n", sum.n_entries, sum.n_ok,
           sum.n_failed, sum.n_skipped);
    if (sum.has_best)
        printf("  fastest %s at %.5g ms\n", gb_cache_cli_text(sum.best_config, best, sizeof best),
               sum.best_ms);
    print_counts("best", &sum.stored.best);
    print_counts("trials", &sum.stored.trials);
    if (skipped)
        printf("(%zu entr%s skipped: the messages above say why)\n", skipped,
               skipped == 1 ? "y" : "ies");
    return skipped > 0;
}

int gb_cache_cmd_load(cache_args *a)
{
    const char *file = a->pos[0];
    bool ktuner = a->from != NULL;
    if (ktuner && strcmp(a->from, "kernel-tuner"))
        return gb_cache_cli_fail(a, "--from takes only kernel-tuner");
    if (!ktuner && (a->kernel || a->shape_text || a->kernel_fp || a->device))
        return gb_cache_cli_fail(a, "--kernel, --shape, --kernel-fp and --device go with --from "
                                    "kernel-tuner; a transfer file names its own");
    char *text = NULL;
    size_t len = 0;
    gb_err err = {0};
    size_t max = ktuner ? GB_KTUNER_MAX_FILE_BYTES : GB_TRANSFER_MAX_FILE_BYTES;
    if (gb_read_file(file, max, "", &text, &len, &err)) return gb_cache_cli_fail(a, err.msg);
    gb_cache *cache = NULL;
    int status = gb_cache_cli_open(a, true, true, &cache);
    if (!status && ktuner) {
        status = import_ktuner(a, cache, file, text, len);
    } else if (!status) {
        gb_transfer_summary sum;
        gb_transfer_opts opts = {.cubins = a->cubins, .note = gb_cache_cli_note, .note_ctx = a};
        if (gb_transfer_file_read(cache, text, len, &opts, &sum, &err)) {
            gb_err_prefix(&err, "%s", file);
            status = gb_cache_cli_fail(a, err.msg);
        } else {
            status = report(a, file, &sum);
        }
    }
    gb_cache_close(cache);
    free(text);
    return status;
}

/* ---- merge ---------------------------------------------------------------- */

int gb_cache_cmd_merge(cache_args *a)
{
    gb_cache *src = NULL, *cache = NULL;
    gb_transfer_summary sum;
    gb_err err = {0};
    const char *from = a->pos[0];
    char data[4200];
    struct stat st;
    snprintf(data, sizeof data, "%s/data.mdb", from);
    if (stat(data, &st) != 0) {
        snprintf(data, sizeof data, "%s: no cache there (no data.mdb)", from);
        return gb_cache_cli_fail(a, data);
    }
    struct stat here;
    if (stat(from, &st) == 0 && stat(a->dir, &here) == 0 && st.st_dev == here.st_dev &&
        st.st_ino == here.st_ino)
        return gb_cache_cli_fail(a, "DIR is this cache itself: nothing to merge");
    if (gb_cache_open(from, GB_CACHE_READONLY, &src, &err)) return gb_cache_cli_fail(a, err.msg);
    int status = gb_cache_cli_open(a, true, true, &cache);
    if (!status) {
        gb_transfer_opts opts = {.cubins = a->cubins, .note = gb_cache_cli_note, .note_ctx = a};
        if (gb_cache_merge(cache, src, &opts, &sum, &err))
            status = gb_cache_cli_fail(a, err.msg);
        else
            status = report(a, from, &sum);
    }
    gb_cache_close(cache);
    gb_cache_close(src);
    return status;
}
