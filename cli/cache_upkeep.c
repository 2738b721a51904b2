/* gpubench cache rm, gc and verify. */
#include "cli/cache_cli.h"

#include <stdio.h>
#include <string.h>

int gb_cache_cmd_rm(cache_args *a)
{
    gb_cache *cache = NULL;
    gb_cache_rm_summary sum;
    gb_err err = {0};
    if (!a->kernel && !a->device && !a->shape_text && !a->stale)
        return gb_cache_cli_fail(a, "say what to remove: --kernel, --shape, --device or --stale "
                                    "(to empty the cache, remove its directory)");
    int status = gb_cache_cli_open(a, !a->dry_run, false, &cache);
    if (status) return status;
    if (!cache) return gb_cache_cli_no_cache(a);
    gb_cache_rm_opts opts = {
        .filter = a->filter, .stale_only = a->stale, .now = &a->now, .dry_run = a->dry_run};
    if (gb_cache_rm(cache, &opts, &sum, &err))
        status = gb_cache_cli_fail(a, err.msg);
    else if (a->json)
        status = gb_cache_cli_print_json(
            json_pack("{s:s, s:b, s:I, s:I}", "cache", a->dir, "dry_run", a->dry_run, "best",
                      (json_int_t)sum.n_best, "trials", (json_int_t)sum.n_trials));
    else
        printf("%s: %s %zu best record(s) and %zu trial(s)\n", a->dir,
               a->dry_run ? "would remove" : "removed", sum.n_best, sum.n_trials);
    gb_cache_close(cache);
    return status;
}

static int compact(cache_args *a, json_t *out)
{
    size_t before = 0, after = 0;
    gb_err err = {0};
    char b[32], c[32];
    if (gb_cache_compact(a->dir, &before, &after, &err)) {
        json_decref(out);
        return gb_cache_cli_fail(a, err.msg);
    }
    if (a->json) {
        json_object_set_new(out, "file_bytes_before", json_integer((json_int_t)before));
        json_object_set_new(out, "file_bytes_after", json_integer((json_int_t)after));
        return 0;
    }
    gb_cache_cli_bytes((double)before, b, sizeof b);
    gb_cache_cli_bytes((double)after, c, sizeof c);
    printf("%s: compacted data.mdb from %s to %s\n", a->dir, b, c);
    return 0;
}

int gb_cache_cmd_gc(cache_args *a)
{
    gb_cache *cache = NULL;
    gb_cache_gc_summary sum;
    gb_err err = {0};
    if (a->compact && a->dry_run)
        return gb_cache_cli_fail(a, "--compact and --dry-run exclude each other");
    int status = gb_cache_cli_open(a, !a->dry_run, false, &cache);
    if (status) return status;
    if (!cache) return gb_cache_cli_no_cache(a);
    int rc = gb_cache_gc(cache, a->nvrtc, a->unnamed, a->dry_run, &sum, &err);
    gb_cache_close(cache); /* compacting needs every handle on the cache closed */
    if (rc) return gb_cache_cli_fail(a, err.msg);
    json_t *out = NULL;
    if (a->json) {
        out = json_pack("{s:s, s:b, s:I, s:I, s:I, s:I, s:I, s:I}", "cache", a->dir, "dry_run",
                        a->dry_run, "cubins", (json_int_t)sum.n_cubins, "removed",
                        (json_int_t)sum.n_removed, "named_by_no_trial", (json_int_t)sum.n_unnamed,
                        "other_nvrtc", (json_int_t)sum.n_other_nvrtc, "bytes_freed",
                        (json_int_t)sum.bytes_removed, "kept_named_by_no_trial",
                        (json_int_t)sum.n_kept_unnamed);
    } else {
        char bytes[32];
        gb_cache_cli_bytes((double)sum.bytes_removed, bytes, sizeof bytes);
        printf("%s: %s %zu of %zu cubin(s), %s (%zu named by no trial, %zu compiled by another "
               "NVRTC than %s)\n",
               a->dir, a->dry_run ? "would remove" : "removed", sum.n_removed, sum.n_cubins, bytes,
               sum.n_unnamed, sum.n_other_nvrtc, a->nvrtc);
        if (sum.n_kept_unnamed)
            printf("(kept %zu cubin(s) that no trial names: a --compile-only run's, say, for a GPU "
                   "to time; --unnamed removes them)\n",
                   sum.n_kept_unnamed);
        if (!a->compact && !a->dry_run && sum.n_removed)
            printf("(the file keeps its size and reuses the space; --compact gives it back to "
                   "the file system)\n");
    }
    if (a->compact && (status = compact(a, out))) return status;
    return a->json ? gb_cache_cli_print_json(out) : 0;
}

static void collect_problem(void *ctx, const char *msg)
{
    json_array_append_new(ctx, json_string(msg));
}

int gb_cache_cmd_verify(cache_args *a)
{
    gb_cache *cache = NULL;
    gb_cache_verify_summary sum;
    gb_err err = {0};
    int status = gb_cache_cli_open(a, false, false, &cache);
    if (status) return status;
    if (!cache) return gb_cache_cli_no_cache(a);
    json_t *problems = json_array();
    int rc = a->json ? gb_cache_verify(cache, collect_problem, problems, &sum, &err)
                     : gb_cache_verify(cache, gb_cache_cli_note, a, &sum, &err);
    gb_cache_close(cache);
    if (rc) {
        json_decref(problems);
        return gb_cache_cli_fail(a, err.msg);
    }
    if (a->json) {
        status = gb_cache_cli_print_json(
            json_pack("{s:s, s:{s:I, s:I, s:I}, s:I, s:o}", "cache", a->dir, "checked", "best",
                      (json_int_t)sum.n_checked[GB_DB_BEST], "trials",
                      (json_int_t)sum.n_checked[GB_DB_TRIALS], "cubins",
                      (json_int_t)sum.n_checked[GB_DB_CUBINS], "n_problems",
                      (json_int_t)sum.n_problems, "problems", problems));
        return status ? status : sum.n_problems > 0;
    }
    json_decref(problems);
    printf("%s: checked %zu best, %zu trial and %zu cubin record(s): ", a->dir,
           sum.n_checked[GB_DB_BEST], sum.n_checked[GB_DB_TRIALS], sum.n_checked[GB_DB_CUBINS]);
    if (sum.n_problems)
        printf("%zu problem(s), listed above\n", sum.n_problems);
    else
        printf("no problems\n");
    return sum.n_problems > 0;
}
