#include "exec/exec.h"

#include "base/clock.h"
#include "base/strbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct gb_exec {
    const gb_backend_ops *ops;
    void *backend;
    bool open;
    int started;
    gb_device_info info;
    /* The current problem and reference, replayed on every fresh backend. */
    gb_arg args[GB_MAX_ARGS];
    int n_args;
    uint64_t seed;
    bool have_problem, problem_live;
    gb_variant ref;
    void *ref_cubin;
    char *ref_name;
    gb_gemm ref_gemm; /* a library GEMM reference's description */
    bool have_ref, ref_live;
};

int gb_exec_create(const gb_backend_ops *ops, void *backend, gb_exec **out, gb_err *err)
{
    gb_exec *exec = calloc(1, sizeof *exec);
    if (!exec) {
        ops->destroy(backend);
        return gb_err_set(err, GB_ENOMEM, "out of memory");
    }
    exec->ops = ops;
    exec->backend = backend;
    *out = exec;
    return GB_OK;
}

static void close_backend(gb_exec *exec)
{
    if (exec->open) exec->ops->close(exec->backend);
    exec->open = false;
    exec->problem_live = false;
    exec->ref_live = false;
}

void gb_exec_destroy(gb_exec *exec)
{
    if (!exec) return;
    close_backend(exec);
    exec->ops->destroy(exec->backend);
    free(exec->ref_cubin);
    free(exec->ref_name);
    free(exec);
}

/* Brings the backend to the state the tuner last asked for. */
static int ensure_ready(gb_exec *exec, gb_err *err)
{
    int rc = GB_OK;
    if (!exec->open) {
        if ((rc = exec->ops->open(exec->backend, &exec->info, err))) return rc;
        exec->open = true;
        exec->started++;
    }
    if (exec->have_problem && !exec->problem_live) {
        rc = exec->ops->set_problem(exec->backend, exec->args, exec->n_args, exec->seed, err);
        exec->problem_live = rc == GB_OK;
    }
    if (rc == GB_OK && exec->have_ref && !exec->ref_live) {
        rc = exec->ops->reference(exec->backend, &exec->ref, err);
        exec->ref_live = rc == GB_OK;
    }
    if (rc) close_backend(exec);
    return rc;
}

int gb_exec_device(gb_exec *exec, gb_device_info *out, gb_err *err)
{
    if (exec->started > 0 && !exec->open) { /* stopped on purpose: the device is the same */
        *out = exec->info;
        return GB_OK;
    }
    int rc = ensure_ready(exec, err);
    if (rc == GB_OK) *out = exec->info;
    return rc;
}

int gb_exec_set_problem(gb_exec *exec, const gb_arg *args, int n_args, uint64_t seed, gb_err *err)
{
    if (n_args < 0 || n_args > GB_MAX_ARGS)
        return gb_err_set(err, GB_EINVAL, "%d arguments (at most %d)", n_args, GB_MAX_ARGS);
    if (n_args > 0) memcpy(exec->args, args, (size_t)n_args * sizeof *args);
    exec->n_args = n_args;
    exec->seed = seed;
    exec->have_problem = true;
    exec->problem_live = false;
    exec->have_ref = false; /* a reference belongs to one problem */
    exec->ref_live = false;
    return ensure_ready(exec, err);
}

int gb_exec_reference(gb_exec *exec, const gb_variant *ref, gb_err *err)
{
    free(exec->ref_cubin);
    free(exec->ref_name);
    exec->ref = *ref;
    exec->have_ref = false;
    /* A library GEMM has no cubin: its description is kept instead. */
    exec->ref_cubin = malloc(ref->cubin_bytes ? ref->cubin_bytes : 1);
    exec->ref_name = strdup(ref->lowered_name);
    if (!exec->ref_cubin || !exec->ref_name) return gb_err_set(err, GB_ENOMEM, "out of memory");
    if (ref->cubin_bytes) memcpy(exec->ref_cubin, ref->cubin, ref->cubin_bytes);
    if (ref->gemm) exec->ref_gemm = *ref->gemm;
    exec->ref.cubin = ref->cubin_bytes ? exec->ref_cubin : NULL;
    exec->ref.gemm = ref->gemm ? &exec->ref_gemm : NULL;
    exec->ref.lowered_name = exec->ref_name;
    /* Borrowed names would not outlive the call; the reference runs without a range. */
    exec->ref.kernel_name = exec->ref.config_text = NULL;
    exec->have_ref = true;
    exec->ref_live = false;
    return ensure_ready(exec, err);
}

static bool backend_lost(int rc)
{
    return rc == GB_EFAULT || rc == GB_ETIMEOUT || rc == GB_EPROTO;
}

int gb_exec_ceilings(gb_exec *exec, gb_ceilings *out, gb_err *err)
{
    memset(out, 0, sizeof *out);
    if (!exec->ops->ceilings)
        return gb_err_set(err, GB_EINVAL, "this executor cannot measure the device's ceilings");
    int rc = ensure_ready(exec, err);
    if (rc == GB_OK) rc = exec->ops->ceilings(exec->backend, out, err);
    if (rc == GB_EINTR || backend_lost(rc)) close_backend(exec);
    return rc;
}

int gb_exec_trial(gb_exec *exec, const gb_variant *v, const gb_check_spec *check,
                  const gb_measure_opts *opts, double timeout_s, gb_trial_result *out, gb_err *err)
{
    memset(out, 0, sizeof *out);
    int rc = ensure_ready(exec, err);
    if (rc) return rc;
    gb_err trial_err = {0};
    double start_ms = gb_now_ms();
    rc = exec->ops->trial(exec->backend, v, check, opts, timeout_s, out, &trial_err);
    out->phases.total_ms = gb_now_ms() - start_ms;
    out->gpu = exec->info.ordinal;
    if (rc == GB_OK) return GB_OK;
    if (rc == GB_EINTR) close_backend(exec); /* the worker was ended mid-trial */
    if (!backend_lost(rc)) return gb_err_copy(err, &trial_err);
    out->status = rc == GB_ETIMEOUT ? GB_TRIAL_TIMEOUT : GB_TRIAL_CRASHED;
    gb_strlcpy(out->reason, trial_err.msg, sizeof out->reason);
    close_backend(exec);
    return GB_OK;
}

int gb_exec_race(gb_exec *exec, const gb_variant *variants, int n, const gb_measure_opts *opts,
                 double timeout_s, gb_measurement *out, gb_err *err)
{
    int rc = ensure_ready(exec, err);
    if (rc) return rc;
    rc = exec->ops->race(exec->backend, variants, n, opts, timeout_s, out, err);
    if (rc == GB_EINTR || backend_lost(rc)) close_backend(exec);
    return rc;
}

int gb_exec_cublas_rate(gb_exec *exec, gb_math math, int64_t m, int64_t n, int64_t k,
                        double *out_tflops, gb_err *err)
{
    *out_tflops = 0;
    if (!exec->ops->cublas_rate)
        return gb_err_set(err, GB_EINVAL, "this backend cannot measure cuBLASLt's rate");
    int rc = ensure_ready(exec, err);
    if (rc) return rc;
    rc = exec->ops->cublas_rate(exec->backend, math, m, n, k, out_tflops, err);
    if (rc == GB_EINTR || backend_lost(rc)) close_backend(exec);
    return rc;
}

void gb_exec_stop_backend(gb_exec *exec)
{
    if (exec) close_backend(exec);
}

int gb_exec_backends_started(const gb_exec *exec)
{
    return exec->started;
}
