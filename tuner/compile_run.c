/* Compiling only (--compile-only): every accepted configuration of the shape, up
 * to the budget's evaluations, compiled (or found compiled in the cache) for the
 * target, and the kernel's reference too; nothing touches the GPU. Compiles run
 * on the pool, a window ahead. One row per distinct compile: shapes that compile
 * to the same cubin share it. */
#include "tuner/pipeline.h"
#include "tuner/variant.h"

#include "base/strbuf.h"
#include "engine/cubin.h"
#include "exec/interrupt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* NVRTC compiles a configuration's entry (its name expression) in a file of its
 * own, __nv_name_map; an error there is the script's entry (too few template
 * arguments, say), so it is told at the gb.kernel line, with the entry as the
 * script writes it (one group in the table for every configuration), as the
 * log's first diagnostic ("gemm.lua:12: error: entry 'scale<${S}, 3>': ...").
 * Any other log is kept as it is. */
static char *entry_error(const gb_pipeline *r, const char *log)
{
    char first[1024];
    gb_nvrtc_first_error(log, first, sizeof first);
    const char *at = gb_pipeline_kernel(r)->defined_at, *colon = at ? strrchr(at, ':') : NULL;
    if (strncmp(first, "__nv_name_map:", 14) != 0 || !colon) return strdup(log);
    while (colon > at && colon[-1] != ':') /* "file:line: ": back to the line's colon */
        colon--;
    const char *what = strstr(first, "error: ");
    gb_strbuf sb = GB_STRBUF_INIT;
    gb_sb_printf(&sb, "%.*s(%ld): error: entry '%s': %s\n%s", (int)(colon - at - 1), at,
                 strtol(colon, NULL, 10), gb_pipeline_kernel(r)->entry, what ? what + 7 : first,
                 log);
    return gb_sb_take(&sb);
}

/* One row per distinct compile (by cubin key): its resources, its whole compiler
 * output when it failed, and why it exceeds the target's limits when it does. */
static int add_row(gb_pipeline *r, const gb_compile_job *job, const gb_fields *config,
                   const gb_launch *launch, const gb_compile_out *out, int crc, const gb_err *e)
{
    gb_tune_result *tr = gb_pipeline_result(r);
    const gb_key *key = gb_compile_job_key(job);
    for (int i = 0; i < tr->n_compiles; i++)
        if (!memcmp(&tr->compiles[i].key, key, sizeof *key)) return GB_OK;
    gb_compile_row *rows = realloc(tr->compiles, (size_t)(tr->n_compiles + 1) * sizeof *rows);
    if (!rows) return gb_err_set(gb_pipeline_err(r), GB_ENOMEM, "out of memory");
    tr->compiles = rows;
    gb_compile_row *row = &rows[tr->n_compiles++];
    *row = (gb_compile_row){.key = *key,
                            .resources = out->resources,
                            .compile_ms = out->compile_ms,
                            .cached = gb_compile_job_cached(job)};
    char reason[512];
    bool fits =
        crc || gb_arch_check(gb_pipeline_limits(r), launch, &out->resources, reason, sizeof reason);
    if (crc) row->error = entry_error(r, out->log && out->log[0] ? out->log : e->msg);
    if (!fits) row->limit = strdup(reason);
    if (gb_fields_copy(config, &row->config) || (crc && !row->error) || (!fits && !row->limit))
        return gb_err_set(gb_pipeline_err(r), GB_ENOMEM, "out of memory");
    return GB_OK;
}

/* The sizes, as a list ("8, 4, 128 bytes"). */
static void list_sizes(gb_strbuf *sb, const int *sizes, int n)
{
    for (int i = 0; i < n; i++)
        gb_sb_printf(sb, "%s%d", i ? ", " : "", sizes[i]);
    gb_sb_printf(sb, n ? " bytes" : "none");
}

/* What a GPU run would find at the launch, found here from the cubin: the
 * kernel's parameters (their number and sizes) against the shape's arguments,
 * which the reference is given too. A mismatch fails the shape, at the script's
 * args line, with both lists, naming the reference (ref, NULL for the kernel). */
static int check_params(gb_pipeline *r, const gb_compile_out *out, const gb_arg *args, int n_args,
                        const char *ref, gb_shape_result *res)
{
    int sizes[GB_MAX_ARGS + 1], n = -1, given[GB_MAX_ARGS];
    if (!out->lowered[0] || gb_cubin_params(out->cubin, out->cubin_bytes, out->lowered[0], &n,
                                            sizes, GB_MAX_ARGS + 1) != GB_OK)
        return GB_OK; /* a cubin this reader does not know: the launch checks */
    bool same = n == n_args;
    for (int i = 0; i < n_args; i++) {
        given[i] = (int)gb_arg_param_bytes(&args[i]);
        same = same && given[i] == sizes[i];
    }
    if (same) return GB_OK;
    gb_strbuf sb = GB_STRBUF_INIT;
    const char *where = gb_pipeline_kernel(r)->args_where;
    if (ref) gb_sb_printf(&sb, "reference %s: ", ref);
    gb_sb_printf(&sb, "%s%sargs gives %d argument%s (", where ? where : "", where ? ": " : "",
                 n_args, n_args == 1 ? "" : "s");
    for (int i = 0; i < n_args; i++)
        gb_sb_printf(&sb, "%s%s", i ? ", " : "", gb_arg_param_what(&args[i]));
    gb_sb_printf(&sb, ": ");
    list_sizes(&sb, given, n_args);
    gb_sb_printf(&sb, ") but the %s takes %d parameter%s (", ref ? "reference" : "kernel", n,
                 n == 1 ? "" : "s");
    list_sizes(&sb, sizes, n);
    gb_sb_printf(&sb, ")");
    res->failure = gb_sb_take(&sb);
    gb_sb_free(&sb);
    return res->failure ? GB_OK : gb_err_set(gb_pipeline_err(r), GB_ENOMEM, "out of memory");
}

static int finish(gb_pipeline *r, gb_pending *p, const gb_arg *args, int n_args,
                  gb_shape_result *res)
{
    const gb_compile_out *out = NULL;
    gb_err cerr = {0};
    int crc = gb_pending_compile(r, p, &out, &cerr);
    if (crc == GB_OK && res->n_compiled == 0 && !res->failure) {
        int rc = check_params(r, out, args, n_args, NULL, res);
        if (rc) return rc;
    }
    res->n_compiled += crc == GB_OK;
    res->n_status[GB_TRIAL_COMPILE_ERROR] += crc != GB_OK;
    gb_pipeline_progress(r)->n_failed += crc != GB_OK;
    int rc = add_row(r, p->job, &p->ident.fields, &p->launch, out, crc, &cerr);
    if (rc == GB_OK) gb_run_progress(r, GB_PROGRESS_COMPILE, NULL);
    return rc;
}

/* The reference must compile too: a broken one would fail every timed run. Its
 * row has no configuration; its failure fails the shape. A library reference
 * (a cuBLAS call) has nothing to compile: its description was checked against the
 * shape's arguments already (gb_run_shape_args), and it has no row. */
static int compile_reference(gb_pipeline *r, const gb_fields *shape, const gb_arg *args, int n_args,
                             gb_shape_result *res)
{
    const gb_kernel_def *ref = gb_pipeline_kernel(r)->reference;
    if (gb_kernel_is_library(ref)) return GB_OK;
    gb_compile_job *job = NULL;
    gb_variant v = {0};
    gb_err e = {0};
    const gb_compile_out *out = NULL;
    gb_fields none = {0};
    int rc = gb_run_reference_variant(r, shape, &job, &v, &e);
    if (rc == GB_OK) gb_compiler_wait(gb_pipeline_compiler(r), job, &out, NULL);
    if (rc == GB_OK) rc = add_row(r, job, &none, &v.launch, out, e.code, &e);
    if (rc == GB_OK && e.code && asprintf(&res->failure, "reference %s: %s", ref->name, e.msg) < 0)
        rc = gb_err_set(gb_pipeline_err(r), GB_ENOMEM, "out of memory");
    if (rc == GB_OK && !e.code && out) rc = check_params(r, out, args, n_args, ref->name, res);
    gb_compile_job_free(job);
    return rc;
}

int gb_compile_shape(gb_pipeline *r, const gb_fields *shape, const gb_record_id *id,
                     gb_shape_result *res)
{
    gb_arg args[GB_MAX_ARGS];
    gb_pending ring[GB_WINDOW_MAX];
    gb_strategy *all = NULL;
    gb_config asked[GB_WINDOW_MAX];
    int n_args = 0, head = 0, count = 0, window = gb_run_window(r);
    const gb_kernel_def *k = gb_pipeline_kernel(r);
    gb_search *search = gb_pipeline_search(r);
    gb_err *err = err;
    int64_t limit = gb_run_shard_share(r, gb_pipeline_request(r)->max_evals), started = 0;
    uint64_t valid = 0;
    res->compile_only = true;
    int rc = gb_run_shape_args(r, shape, res, args, &n_args);
    if (rc == GB_OK) rc = gb_search_init(search, &k->space, gb_tune_accept, (void *)k, 0, err);
    gb_search_set_shard(search, &gb_pipeline_opts(r)->shard);
    if (rc == GB_OK) rc = gb_strategy_exhaustive(search, &all, err);
    if (rc == GB_OK && search->size <= (UINT64_C(1) << 20) &&
        (rc = gb_search_count_valid(r, search->size, &valid)) == GB_OK)
        gb_pipeline_progress(r)->n_planned =
            (int)(limit > 0 && (uint64_t)limit < valid ? (uint64_t)limit : valid);
    if (rc == GB_OK) gb_run_progress(r, GB_PROGRESS_START, NULL);
    if (rc == GB_OK && k->reference) rc = compile_reference(r, shape, args, n_args, res);
    while (rc == GB_OK) {
        int want = window - count, n = 0;
        if (limit > 0 && limit - started < want) want = (int)(limit - started);
        if (want > 0) rc = gb_strategy_ask(all, want, asked, &n, err);
        for (int i = 0; rc == GB_OK && i < n; i++) {
            gb_pending *p = &ring[(head + count) % GB_WINDOW_MAX];
            if ((rc = gb_pending_start(r, shape, id, &asked[i], false, p))) {
                gb_pending_free(r, p);
                break;
            }
            count++, started++;
        }
        if (rc || count == 0) break;
        if (gb_interrupted()) {
            rc = gb_err_set(err, GB_EINTR, "interrupted");
            break;
        }
        rc = finish(r, &ring[head], args, n_args, res);
        gb_pending_free(r, &ring[head]);
        head = (head + 1) % GB_WINDOW_MAX, count--;
    }
    for (; count > 0; count--, head = (head + 1) % GB_WINDOW_MAX)
        gb_pending_free(r, &ring[head]);
    gb_strategy_destroy(all);
    res->n_evals = (int)started;
    res->n_rejected = search->n_rejected;
    res->n_checked = search->n_checked;
    res->check_s = search->check_s;
    res->complete = rc == GB_OK && search->exhausted;
    res->interrupted = rc == GB_EINTR;
    if (rc == GB_OK) rc = gb_run_none_valid(r, res, started);
    return rc;
}
