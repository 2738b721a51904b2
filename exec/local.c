/* The in-process backend: a GPU session in this process. A fault poisons the
 * context, so the executor closes this backend and opens a new session; the
 * primary context is reset in between so the new one starts clean. */
#include "engine/driver.h"
#include "exec/exec.h"

#include "base/clock.h"
#include "base/strbuf.h"
#include "engine/gpu.h"
#include "engine/nvtx.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct local_backend {
    int ordinal;
    gb_gpu *gpu;
    gb_gpu_kernel *ref;
    gb_launch ref_launch;
} local_backend;

static int local_open(void *self, gb_device_info *out_info, gb_err *err)
{
    local_backend *b = self;
    int rc = gb_gpu_open(b->ordinal, &b->gpu, err);
    if (rc == GB_OK) *out_info = *gb_gpu_device(b->gpu);
    return rc;
}

static void local_close(void *self)
{
    local_backend *b = self;
    if (!b->gpu) return;
    gb_gpu_unload(b->gpu, b->ref);
    b->ref = NULL;
    gb_gpu_close(b->gpu);
    b->gpu = NULL;
}

static void local_destroy(void *self)
{
    local_close(self);
    free(self);
}

static int local_set_problem(void *self, const gb_arg *args, int n_args, uint64_t seed, gb_err *err)
{
    local_backend *b = self;
    return gb_gpu_set_problem(b->gpu, args, n_args, seed, err);
}

/* A variant's kernel: its cubin's function, or its library GEMM. */
static int load_variant(local_backend *b, const gb_variant *v, gb_gpu_kernel **out, gb_err *err)
{
    if (v->gemm) return gb_gpu_load_gemm(b->gpu, v->gemm, out, err);
    return gb_gpu_load(b->gpu, v->cubin, v->cubin_bytes, v->lowered_name, v->launch.smem_bytes, out,
                       err);
}

static int local_reference(void *self, const gb_variant *ref, gb_err *err)
{
    local_backend *b = self;
    gb_gpu_unload(b->gpu, b->ref);
    b->ref = NULL;
    int rc = load_variant(b, ref, &b->ref, err);
    if (rc == GB_OK) rc = gb_gpu_run_reference(b->gpu, b->ref, &ref->launch, err);
    return rc;
}

static void describe_wrong(const gb_check_result *c, char *out, size_t n)
{
    snprintf(out, n,
             "%lld of %lld elements outside the tolerance (max abs err %.3g, max rel err %.3g; "
             "first at argument %d, element %lld)",
             (long long)c->n_bad, (long long)c->n_compared, c->max_abs_err, c->max_rel_err,
             c->first_bad_output + 1, (long long)c->first_bad_index);
}

/* The kernel's name in NVTX ranges: the script's, else the lowered one. */
static const char *range_kernel(const gb_variant *v)
{
    return v->kernel_name ? v->kernel_name : v->lowered_name;
}

/* Opens the NVTX range of one step of a variant's trial: "check sgemm BK=8,BM=64". */
static void push_step(const char *step, const gb_variant *v)
{
    const char *config = v->config_text ? v->config_text : "";
    gb_nvtx_push("%s %s%s%s", step, range_kernel(v), *config ? " " : "", config);
}

/* Refused launches and loads are the variant's fault, not the backend's. */
static int settle(int rc, const gb_err *e, gb_trial_result *out)
{
    if (rc != GB_ELAUNCH) return rc;
    out->status = GB_TRIAL_LAUNCH_ERROR;
    gb_strlcpy(out->reason, e->msg, sizeof out->reason);
    return GB_OK;
}

/* The kernel's own share of the samples: their times, each sample's launches. */
static double kernel_ms(const gb_measurement *m)
{
    double sum = 0;
    for (int i = 0; i < m->n_samples; i++)
        sum += m->samples_ms[i];
    return sum * (m->launches_per_sample > 0 ? m->launches_per_sample : 1);
}

/* Measures an ok variant; the phases get the warm-up and the samples. */
static int measure_phases(local_backend *b, gb_gpu_kernel *k, const gb_variant *v,
                          const gb_measure_opts *opts, gb_trial_result *out, gb_err *err)
{
    out->status = GB_TRIAL_OK;
    push_step("measure", v);
    int rc = gb_gpu_measure(b->gpu, k, &v->launch, opts, &out->measurement, err);
    gb_nvtx_pop();
    if (rc) return rc;
    out->phases.warmup_ms = out->measurement.warmup_ms;
    out->phases.sample_ms = out->measurement.wall_ms;
    out->phases.kernel_ms = kernel_ms(&out->measurement);
    out->phases.timer_ms = out->measurement.timer_ms;
    out->phases.n_samples =
        out->measurement.n_warmup + out->measurement.n_samples + out->measurement.n_switch;
    return GB_OK;
}

/* Load, check, measure, unload; each phase timed, for the run's breakdown. */
static int local_trial(void *self, const gb_variant *v, const gb_check_spec *check,
                       const gb_measure_opts *opts, double timeout_s, gb_trial_result *out,
                       gb_err *err)
{
    (void)timeout_s; /* a hang here hangs the process: the worker's supervisor watches */
    local_backend *b = self;
    gb_gpu_kernel *k = NULL;
    gb_trial_phases *ph = &out->phases;
    double start_ms = gb_now_ms(), at_ms;
    int rc = load_variant(b, v, &k, err);
    ph->load_ms = (at_ms = gb_now_ms()) - start_ms;
    if (rc == GB_OK) {
        push_step("check", v);
        rc = gb_gpu_verify(b->gpu, k, &v->launch, check, &out->check, err);
        gb_nvtx_pop();
        ph->check_ms = gb_now_ms() - at_ms;
    }
    if (rc == GB_OK && out->check.n_bad > 0) {
        out->status = GB_TRIAL_WRONG;
        describe_wrong(&out->check, out->reason, sizeof out->reason);
    } else if (rc == GB_OK) {
        rc = measure_phases(b, k, v, opts, out, err);
    }
    gb_gpu_unload(b->gpu, k);
    ph->session_ms = gb_now_ms() - start_ms;
    return settle(rc, err, out);
}

static int local_race(void *self, const gb_variant *vs, int n, const gb_measure_opts *opts,
                      double timeout_s, gb_measurement *out, gb_err *err)
{
    local_backend *b = self;
    (void)timeout_s;
    gb_gpu_kernel **kernels = calloc((size_t)n, sizeof *kernels);
    gb_launch *launches = calloc((size_t)n, sizeof *launches);
    int rc = kernels && launches ? GB_OK : gb_err_set(err, GB_ENOMEM, "out of memory"), loaded = 0;
    for (; rc == GB_OK && loaded < n; loaded++) {
        launches[loaded] = vs[loaded].launch;
        rc = load_variant(b, &vs[loaded], &kernels[loaded], err);
    }
    if (rc == GB_OK) {
        gb_nvtx_push("race %s", n > 0 ? range_kernel(&vs[0]) : "");
        rc = gb_gpu_race(b->gpu, kernels, launches, n, opts, out, err);
        gb_nvtx_pop();
    }
    for (int i = 0; i < loaded; i++)
        gb_gpu_unload(b->gpu, kernels[i]);
    free(kernels);
    free(launches);
    return rc;
}

static int local_ceilings(void *self, gb_ceilings *out, gb_err *err)
{
    local_backend *b = self;
    gb_nvtx_push("measure ceilings");
    int rc = gb_gpu_measure_ceilings(b->gpu, out, err);
    gb_nvtx_pop();
    return rc;
}

static int local_cublas_rate(void *self, gb_math math, int64_t m, int64_t n, int64_t k,
                             double *out_tflops, gb_err *err)
{
    local_backend *b = self;
    gb_nvtx_push("cublas rate %s", gb_math_name(math));
    int rc = gb_gpu_cublas_rate(b->gpu, math, m, n, k, out_tflops, err);
    gb_nvtx_pop();
    return rc;
}

const gb_backend_ops gb_local_backend_ops = {
    .open = local_open,
    .set_problem = local_set_problem,
    .reference = local_reference,
    .trial = local_trial,
    .race = local_race,
    .ceilings = local_ceilings,
    .cublas_rate = local_cublas_rate,
    .close = local_close,
    .destroy = local_destroy,
};

void *gb_local_backend_new(int ordinal)
{
    local_backend *b = calloc(1, sizeof *b);
    if (b) b->ordinal = ordinal;
    return b;
}

int gb_exec_local(int ordinal, gb_exec **out, gb_err *err)
{
    void *b = gb_local_backend_new(ordinal);
    if (!b) return gb_err_set(err, GB_ENOMEM, "out of memory");
    return gb_exec_create(&gb_local_backend_ops, b, out, err);
}
