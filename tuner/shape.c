/* A shape's set-up and end, which every driver shares (tuner/run.h): the GPU's
 * claim, the arguments and check as the script gives them, the problem and the
 * reference on the GPU, a space the constraints left empty, and the best kept. */
#include "tuner/run.h"

#include "tuner/variant.h"

#include <stdlib.h>
#include <string.h>

/* ---- the GPU's claim -------------------------------------------------------- */

/* Claims the GPU through the front end (gb_gpu_claim) before measuring a shape;
 * *out_waited says another process had it first. */
static int claim_gpu(run *r, bool *out_waited)
{
    const gb_gpu_claim *c = &r->opts->claim;
    *out_waited = false;
    if (!c->take) return GB_OK;
    char activity[320];
    snprintf(activity, sizeof activity, "%s %s", r->bench ? "benchmarking" : "tuning", r->k->name);
    double waited_s = 0;
    int rc = c->take(c->ctx, activity, out_waited, &waited_s, r->err);
    r->result->timing.lease_wait_s += waited_s;
    return rc;
}

/* ---- the script's view of the shape ----------------------------------------- */

/* Tolerances by the dtype of the first checked output, when the script gives none:
 * close to what torch.testing uses, so a correct kernel in that precision passes. */
static void default_tolerance(gb_dtype dtype, double *rtol, double *atol)
{
    switch (dtype) {
    case GB_DT_F64:
        *rtol = 1e-7, *atol = 1e-7;
        break;
    case GB_DT_F32:
        *rtol = 1e-5, *atol = 1e-6;
        break;
    case GB_DT_F16:
        *rtol = 1e-3, *atol = 1e-5;
        break;
    case GB_DT_BF16:
        *rtol = 1e-2, *atol = 1e-5;
        break;
    case GB_DT_FP8_E4M3:
    case GB_DT_FP8_E5M2:
        *rtol = 1.25e-1, *atol = 1e-3;
        break;
    default:
        *rtol = 0, *atol = 0;
        break;
    }
}

/* The check for this shape: by default every "output" and every inout tensor is
 * compared. */
static int resolve_check(run *r, gb_arg *args, int n_args)
{
    gb_check_spec c = r->k->check;
    for (int i = 0; r->k->check.n_outputs == 0 && i < n_args; i++)
        if (args[i].kind == GB_ARG_TENSOR && (args[i].init == GB_INIT_OUTPUT || args[i].inout))
            c.outputs[c.n_outputs++] = i;
    for (int i = 0; i < c.n_outputs; i++) {
        int pos = c.outputs[i];
        if (pos >= n_args || args[pos].kind != GB_ARG_TENSOR)
            return gb_err_set(r->err, GB_ESCRIPT,
                              "kernel %s: check.outputs names argument %d, which is not a tensor "
                              "(args gives %d arguments)",
                              r->k->name, pos + 1, n_args);
    }
    for (int i = 0; i < c.n_outputs; i++)
        args[c.outputs[i]].checked = true;
    double rtol = 0, atol = 0;
    if (c.n_outputs > 0) default_tolerance(args[c.outputs[0]].dtype, &rtol, &atol);
    if (c.rtol < 0) c.rtol = rtol;
    if (c.atol < 0) c.atol = atol;
    r->current.check = c;
    return GB_OK;
}

/* A library reference's GEMM on this shape, checked against the arguments: what
 * it names must be tensors of its types and sizes, its result checked. */
static int resolve_ref_gemm(run *r, const gb_fields *shape, const gb_arg *args, int n_args)
{
    const gb_kernel_def *ref = r->k->reference;
    gb_err e = {0};
    int rc = ref->hooks.gemm(ref->hooks_ctx, shape, &r->current.ref_gemm, r->err);
    if (rc) return rc;
    if (gb_gemm_check(&r->current.ref_gemm, &e) ||
        gb_gemm_check_args(&r->current.ref_gemm, args, n_args, &e))
        return gb_err_set(r->err, GB_ESCRIPT, "kernel %s: reference %s: %s", r->k->name, ref->name,
                          e.msg);
    return GB_OK;
}

/* Errors here are the script's, found before anything is compiled or run. */
int gb_run_shape_args(run *r, const gb_fields *shape, gb_shape_result *res, gb_arg *args,
                      int *n_args)
{
    const gb_kernel_hooks *h = &r->k->hooks;
    int rc = h->args(r->k->hooks_ctx, shape, args, n_args, r->err);
    if (rc == GB_OK) rc = resolve_check(r, args, *n_args);
    if (rc == GB_OK && gb_kernel_is_library(r->k->reference))
        rc = resolve_ref_gemm(r, shape, args, *n_args);
    if (rc == GB_OK && h->work)
        rc = h->work(r->k->hooks_ctx, shape, &res->flops, &res->bytes, r->err);
    return rc;
}

/* ---- the problem and the reference on the GPU ------------------------------- */

int gb_run_reference_variant(run *r, const gb_fields *shape, gb_compile_job **job, gb_variant *v,
                             gb_err *e)
{
    const gb_kernel_def *ref = r->k->reference;
    const gb_compile_out *out;
    gb_config none;
    gb_key fp;
    *job = NULL;
    if (gb_kernel_is_library(ref)) { /* nothing to compile: its GEMM on this shape */
        *v = (gb_variant){.lowered_name = "cublasLtMatmul",
                          .kernel_name = ref->name,
                          .gemm = &r->current.ref_gemm,
                          .launch = {.grid = {1, 1, 1}, .block = {1, 1, 1}}};
        return GB_OK;
    }
    gb_config_at(&ref->space, 0, &none);
    int rc = gb_variant_source_fp(ref, &fp, r->err);
    if (rc == GB_OK) rc = ref->hooks.launch(ref->hooks_ctx, &none, shape, &v->launch, r->err);
    if (rc == GB_OK) rc = gb_variant_job(ref, &fp, r->arch, &none, shape, job, r->err);
    if (rc == GB_OK && gb_compiler_wait(r->compiler, *job, &out, e) == GB_OK) {
        v->cubin = out->cubin;
        v->cubin_bytes = out->cubin_bytes;
        v->lowered_name = out->lowered[0];
        v->kernel_name = ref->name;
    }
    return rc;
}

/* Runs the reference; a failure of the reference fails the shape, not the run. */
static int run_reference(run *r, const gb_fields *shape, gb_shape_result *res)
{
    gb_compile_job *job = NULL;
    gb_variant v = {0};
    gb_err e = {0};
    int rc = gb_run_reference_variant(r, shape, &job, &v, &e);
    for (int i = 0; rc == GB_OK && !e.code && i < gb_run_n_gpus(r); i++)
        gb_exec_reference(gb_run_exec(r, i), &v, &e);
    gb_compile_job_free(job);
    if (rc) return rc;
    if (e.code == GB_ENODRIVER || e.code == GB_ENOGPU) return gb_err_copy(r->err, &e);
    if (e.code && asprintf(&res->failure, "reference %s: %s", r->k->reference->name, e.msg) < 0)
        return gb_err_set(r->err, GB_ENOMEM, "out of memory");
    return GB_OK;
}

static bool fatal(int rc)
{
    return rc == GB_ENODRIVER || rc == GB_ENOGPU || rc == GB_ESCRIPT || rc == GB_EINTR;
}

static int set_problem(run *r, const gb_fields *shape, gb_shape_result *res)
{
    gb_arg args[GB_MAX_ARGS];
    int n_args = 0;
    int rc = gb_run_shape_args(r, shape, res, args, &n_args);
    if (rc) return rc;
    gb_err e = {0};
    for (int i = 0; rc == GB_OK && i < gb_run_n_gpus(r); i++)
        rc = gb_exec_set_problem(gb_run_exec(r, i), args, n_args, r->opts->seed, &e);
    if (rc == GB_OK || fatal(rc)) return gb_err_copy(r->err, &e);
    const char *where = r->k->args_where;
    if (asprintf(&res->failure, "%s%ssetting up the arguments: %s", where ? where : "",
                 where ? ": " : "", e.msg) < 0)
        return gb_err_set(r->err, GB_ENOMEM, "out of memory");
    return GB_OK;
}

int gb_run_prepare(run *r, const gb_fields *shape, const gb_record_id *id, gb_shape_result *res,
                   bool *out_cached)
{
    bool waited = false;
    *out_cached = false;
    int rc = claim_gpu(r, &waited);
    /* Whoever had the GPU may have tuned this very shape meanwhile. */
    if (rc == GB_OK && waited && !r->bench && gb_history_cached_best(&r->history, id, res)) {
        *out_cached = true;
        return GB_OK;
    }
    if (rc == GB_OK) rc = set_problem(r, shape, res);
    if (rc == GB_OK && !res->failure && r->k->reference) rc = run_reference(r, shape, res);
    return rc;
}

bool gb_run_wants_baseline(const run *r)
{
    return r->req->baseline && r->k->reference;
}

/* ---- the end --------------------------------------------------------------- */

int gb_run_none_valid(run *r, gb_shape_result *res, int64_t tried)
{
    if (tried > 0 || !r->current.search.exhausted || r->opts->shard.count > 1 || res->failure)
        return GB_OK;
    if (asprintf(&res->failure,
                 "no valid configuration: the constraints rejected all %llu of the space",
                 (unsigned long long)r->current.search.n_rejected) < 0)
        return gb_err_set(r->err, GB_ENOMEM, "out of memory");
    return GB_OK;
}

int gb_run_settle(run *r, const gb_record_id *id, const leader *best, gb_shape_result *res, int rc)
{
    res->interrupted = rc == GB_EINTR;
    if ((rc && rc != GB_EINTR) || !best->has) return rc;
    res->has_best = true;
    res->best = best->stats;
    res->contended = best->contended; /* shown, never stored */
    if (gb_config_to_fields(&best->config, &res->best_config))
        return gb_err_set(r->err, GB_ENOMEM, "out of memory");
    /* A search cut short by a budget is stored too, marked incomplete. */
    if (rc == GB_OK && !r->bench && !res->contended) gb_history_store_best(&r->history, id, res);
    return rc;
}
