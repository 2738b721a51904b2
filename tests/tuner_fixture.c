/* The fixture of the tuner's tests: see tuner_fixture.h. */
#include "scratch.h"
#include "tuner_fixture.h"

#include "base/clock.h"
#include "exec/interrupt.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <ftw.h>
#include <signal.h>
#include <sys/wait.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The kernel's one parameter V tells the fake backend how the variant behaves;
 * the launch hook puts V in grid[0] so the backend can see it. */
const char SOURCE[] = "template <int V> __global__ void k(float *out)\n"
                      "{\n"
                      "    static_assert(V != 7, \"seven does not compile\");\n"
                      "    if (threadIdx.x == 0) out[0] = V;\n"
                      "}\n"
                      "extern \"C\" __global__ void ref(float *out) { out[0] = 0; }\n";

/* ---- the fake backend --------------------------------------------------- */

static int fake_open(void *self, gb_device_info *info, gb_err *err)
{
    fake *f = self;
    f->opens++;
    memset(info, 0, sizeof *info);
    snprintf(info->name, sizeof info->name, "Fake GPU");
    info->cc_major = 9;
    info->sms = f->sms ? f->sms : 7;
    info->ordinal = f->ordinal;
    info->device_count = 2;
    snprintf(info->arch, sizeof info->arch, "sm_90a");
    snprintf(info->uuid, sizeof info->uuid, FAKE_UUID);
    if (f->ordinal) info->uuid[strlen(info->uuid) - 1] = (char)('0' + f->ordinal % 10);
    return GB_OK;
}

int fake_running, fake_most_running;

/* A trial of trial_ms, counted among those running at once. */
static void fake_take_time(const fake *f)
{
    if (!f->trial_ms) return;
    int now = __atomic_add_fetch(&fake_running, 1, __ATOMIC_SEQ_CST);
    int most = __atomic_load_n(&fake_most_running, __ATOMIC_SEQ_CST);
    while (now > most && !__atomic_compare_exchange_n(&fake_most_running, &most, now, false,
                                                      __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
        ;
    usleep((useconds_t)f->trial_ms * 1000);
    __atomic_sub_fetch(&fake_running, 1, __ATOMIC_SEQ_CST);
}

static int fake_set_problem(void *self, const gb_arg *args, int n, uint64_t seed, gb_err *err)
{
    fake *f = self;
    f->problems++;
    f->last_seed = seed;
    return GB_OK;
}

static int fake_reference(void *self, const gb_variant *ref, gb_err *err)
{
    fake *f = self;
    f->references++;
    if (f->reference_faults) return gb_err_set(err, GB_ELAUNCH, "cuLaunchKernel: refused");
    return GB_OK;
}

/* Whether the next of a countdown's events is contended (-1: every one). */
static bool take_contended(int *left)
{
    if (*left == 0) return false;
    if (*left > 0) (*left)--;
    return true;
}

static void fake_measure(double median, gb_measurement *m)
{
    m->n_samples = 11;
    m->samples_ms = malloc(11 * sizeof(double));
    m->clock_mhz = malloc(11 * sizeof(double));
    m->throttled = calloc(11, sizeof(bool));
    for (int i = 0; i < 11; i++) {
        m->samples_ms[i] = median + (i - 5) * 1e-4;
        m->clock_mhz[i] = 1980;
    }
    m->launches_per_sample = 1;
    gb_measurement_summarise(m);
}

static int fake_trial(void *self, const gb_variant *v, const gb_check_spec *check,
                      const gb_measure_opts *opts, double timeout_s, gb_trial_result *out,
                      gb_err *err)
{
    fake *f = self;
    int V = (int)v->launch.grid[0];
    f->trials++;
    f->ran[V]++;
    f->timeouts[V] = timeout_s;
    fake_take_time(f);
    f->last_check = *check;
    if (V == f->hang_v) pause();
    if (V == f->interrupt_v) gb_interrupt_request();
    if (V == f->fault_v)
        return gb_err_set(err, GB_EFAULT, "cuStreamSynchronize: CUDA_ERROR_ILLEGAL_ADDRESS");
    out->status = f->status[V];
    if (out->status != GB_TRIAL_OK) {
        snprintf(out->reason, sizeof out->reason, "fake %s", gb_trial_status_name(out->status));
        return GB_OK;
    }
    fake_measure(f->median_ms[V], &out->measurement);
    out->measurement.contended = take_contended(&f->contended_trials[V]);
    out->measurement.n_other_procs = out->measurement.contended;
    return GB_OK;
}

static int fake_race(void *self, const gb_variant *vs, int n, const gb_measure_opts *opts,
                     double timeout_s, gb_measurement *out, gb_err *err)
{
    fake *f = self;
    f->races++;
    f->raced = n;
    bool contended = take_contended(&f->contended_races);
    for (int i = 0; i < n; i++) {
        fake_measure(f->race_ms[vs[i].launch.grid[0]] > 0 ? f->race_ms[vs[i].launch.grid[0]]
                                                          : f->median_ms[vs[i].launch.grid[0]],
                     &out[i]);
        out[i].contended = contended;
        out[i].n_other_procs = 2 * contended;
    }
    return f->race_fails ? gb_err_set(err, GB_EFAULT, "the GPU worker was killed by signal 9")
                         : GB_OK;
}

static void fake_close(void *self)
{
    fake *f = self;
    if (f->closes++ == 0) f->first_close_ms = gb_now_ms();
}

static void fake_destroy(void *self)
{
    (void)self; /* the fixture owns the fake */
}

const gb_backend_ops fake_ops = {.open = fake_open,
                                 .set_problem = fake_set_problem,
                                 .reference = fake_reference,
                                 .trial = fake_trial,
                                 .race = fake_race,
                                 .close = fake_close,
                                 .destroy = fake_destroy};

/* ---- the kernel's hooks -------------------------------------------------- */

static int hook_accept(void *ctx, const gb_config *c, bool *ok, gb_err *err)
{
    *ok = gb_config_get(c, "V")->i != ((hooks_ctx *)ctx)->reject_v;
    return GB_OK;
}

static int hook_args(void *ctx, const gb_fields *shape, gb_arg *out, int *n, gb_err *err)
{
    if (((hooks_ctx *)ctx)->args_fail)
        return gb_err_set(err, GB_ESCRIPT, "test.lua:7: attempt to index a nil value");
    out[0] = (gb_arg){.kind = GB_ARG_TENSOR,
                      .dtype = GB_DT_F32,
                      .n_dims = 1,
                      .dims = {4},
                      .init = GB_INIT_OUTPUT};
    out[1] = (gb_arg){.kind = GB_ARG_SCALAR, .dtype = GB_DT_I32, .int_value = 4};
    *n = 2;
    return GB_OK;
}

static int hook_launch(void *ctx, const gb_config *c, const gb_fields *shape, gb_launch *out,
                       gb_err *err)
{
    const gb_value *v = c ? gb_config_get(c, "V") : NULL;
    *out = (gb_launch){.grid = {v ? (uint32_t)v->i : 1, 1, 1}, .block = {32, 1, 1}};
    return GB_OK;
}

static int hook_work(void *ctx, const gb_fields *shape, double *flops, double *bytes, gb_err *err)
{
    *flops = 2e9;
    *bytes = 4e6;
    return GB_OK;
}

/* ---- fixture ------------------------------------------------------------ */

void add_param(gb_space *space, const char *name, const int *values, int n)
{
    gb_value v[16];
    for (int i = 0; i < n; i++)
        v[i] = gb_value_int(values[i]);
    assert_int_equal(gb_space_add(space, name, v, n, NULL), GB_OK);
}

static void make_kernel(fixture *f)
{
    static const int V[] = {1, 2, 3, 4, 5, 6, 7, 8};
    gb_kernel_def *k = &f->kernel;
    k->name = strdup("fake_kernel");
    k->source = strdup(SOURCE);
    k->source_name = strdup("fake.cu");
    k->entry = strdup("k<${V}>");
    add_param(&k->space, "V", V, 8);
    k->check = (gb_check_spec){.rtol = -1, .atol = -1};
    k->hooks = (gb_kernel_hooks){hook_accept, hook_args, hook_launch, NULL, hook_work, NULL};
    k->hooks_ctx = &f->hooks;
    gb_kernel_def *r = &f->reference;
    r->name = strdup("fake_ref");
    r->source = strdup(SOURCE);
    r->source_name = strdup("fake.cu");
    r->entry = strdup("ref");
    r->hooks = (gb_kernel_hooks){.launch = hook_launch};
    k->reference = r;
}

static void make_fake(fake *fk)
{
    memset(fk, 0, sizeof *fk);
    for (int v = 0; v < 16; v++) {
        fk->status[v] = GB_TRIAL_OK;
        fk->median_ms[v] = 2.0 + v;
    }
    fk->median_ms[2] = 1.0; /* the fastest */
    fk->median_ms[8] = 1.0; /* as fast: the earlier configuration (V=2) must win */
    fk->status[3] = GB_TRIAL_WRONG;
    fk->status[4] = GB_TRIAL_LAUNCH_ERROR;
}

int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "/tmp/gb-test-tuner-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    assert_int_equal(gb_cache_open(f->dir, 0, &f->cache, NULL), GB_OK);
    make_fake(&f->fake);
    assert_int_equal(gb_exec_create(&fake_ops, &f->fake, &f->exec, NULL), GB_OK);
    f->hooks.reject_v = 5;
    make_kernel(f);
    f->opts = (gb_tuner_opts){.cache = f->cache,
                              .exec = f->exec,
                              .jobs = 2,
                              .seed = 7,
                              .measure = gb_measure_defaults(),
                              .contended_pause_s = 0.001};
    snprintf(f->leases, sizeof f->leases, "%s/leases", f->dir);
    setenv("GPUBENCH_LEASE_DIR", f->leases, 1);
    gb_value m = gb_value_int(64);
    gb_fields_set(&f->shapes[0], "M", &m);
    m = gb_value_int(128);
    gb_fields_set(&f->shapes[1], "M", &m);
    *state = f;
    return 0;
}

int teardown(void **state)
{
    fixture *f = *state;
    if (f->holder > 0) {
        kill(f->holder, SIGKILL);
        waitpid(f->holder, NULL, 0);
    }
    gb_tune_result_free(&f->result);
    f->kernel.reference = NULL;
    gb_kernel_def_free(&f->kernel);
    gb_kernel_def_free(&f->reference);
    gb_exec_destroy(f->exec);
    gb_cache_close(f->cache);
    for (int i = 0; i < 2; i++)
        gb_fields_free(&f->shapes[i]);
    scratch_remove(f->dir);
    free(f);
    return 0;
}

int tune(fixture *f, int n_shapes)
{
    gb_tune_result_free(&f->result);
    gb_tune_request req = {.shapes = f->shapes, .n_shapes = n_shapes, .baseline = f->baseline};
    return gb_tune(&f->opts, &f->kernel, &req, &f->result, &f->err);
}

size_t count(fixture *f, gb_cache_db db)
{
    size_t n = 0;
    assert_int_equal(gb_cache_count(f->cache, db, &n, NULL), GB_OK);
    return n;
}

int count_trials(fixture *f)
{
    int n = 0;
    for (int v = 0; v < 16; v++)
        n += f->fake.ran[v];
    return n;
}

int read_trial_of(fixture *f, int V, gb_trial_record *out)
{
    gb_record_id id = {.kernel = "fake_kernel",
                       .kernel_fp = f->result.kernel_fp,
                       .device = f->result.device,
                       .shape = f->shapes[0]};
    gb_fields config = {0};
    gb_value v = gb_value_int(V);
    gb_fields_set(&config, "V", &v);
    gb_key key;
    json_t *json = NULL;
    int rc = gb_record_trial_key(&id, &config, &key);
    if (rc == GB_OK) rc = gb_cache_get_json(f->cache, GB_DB_TRIALS, &key, &json, NULL);
    if (rc == GB_OK) rc = gb_trial_record_from_json(json, out, NULL);
    json_decref(json);
    gb_fields_free(&config);
    return rc;
}

int read_best_of(fixture *f, gb_best_record *out, gb_key *out_key)
{
    gb_record_id id = {.kernel = "fake_kernel",
                       .kernel_fp = f->result.kernel_fp,
                       .device = f->result.device,
                       .shape = f->shapes[0]};
    gb_key key;
    json_t *json = NULL;
    int rc = gb_record_best_key(&id, &key);
    if (rc == GB_OK) rc = gb_cache_get_json(f->cache, GB_DB_BEST, &key, &json, NULL);
    if (rc == GB_OK) rc = gb_best_record_from_json(json, out, NULL);
    json_decref(json);
    if (out_key) *out_key = key;
    return rc;
}
