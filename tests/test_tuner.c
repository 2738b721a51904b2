/* The tuning loop, run against a fake GPU backend: which variant wins, what is
 * recorded, what a rerun reuses, and how failures of every kind are counted.
 * Compiles are real (NVRTC); only the GPU is faked. */
#include "base/clock.h"
#include "cache/cache.h"
#include "cache/inspect.h"
#include "cache/record.h"
#include "engine/exec.h"
#include "engine/interrupt.h"
#include "engine/lease.h"
#include "engine/worker.h"
#include "report/table.h"
#include "tuner/tune.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <ftw.h>
#include <math.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The kernel's one parameter V tells the fake backend how the variant behaves;
 * the launch hook puts V in grid[0] so the backend can see it. */
static const char SOURCE[] = "template <int V> __global__ void k(float *out)\n"
                             "{\n"
                             "    static_assert(V != 7, \"seven does not compile\");\n"
                             "    if (threadIdx.x == 0) out[0] = V;\n"
                             "}\n"
                             "extern \"C\" __global__ void ref(float *out) { out[0] = 0; }\n";

/* ---- the fake backend --------------------------------------------------- */

typedef struct fake {
    int opens, closes, problems, references, trials;
    double median_ms[16];       /* by V; 0 means "wrong" unless listed below */
    gb_trial_status status[16]; /* by V */
    int fault_v;                /* the trial of this V faults (the backend is lost) */
    bool reference_faults;
    uint64_t last_seed;
    gb_check_spec last_check;
    int hang_v;            /* the trial of this V never returns (the tuner is then killed) */
    int interrupt_v;       /* the trial of this V asks for an interrupt, as Ctrl-C would */
    double timeouts[16];   /* the watchdog's deadline each V was given */
    int ran[16];           /* how often each V was run */
    int races, raced;      /* races run, and how many variants the last one had */
    double first_close_ms; /* when the backend was first closed (gb_now_ms) */
    double race_ms[16];    /* what the race measures for V (0: as screened) */
    bool race_fails;
    int contended_trials[16]; /* V's next this many trials see another process (-1: all) */
    int contended_races;      /* the next this many races do (-1: all) */
} fake;

#define FAKE_UUID "GPU-fa4e0000-0000-4000-8000-000000000007"

static int fake_open(void *self, gb_device_info *info, gb_err *err)
{
    fake *f = self;
    f->opens++;
    memset(info, 0, sizeof *info);
    snprintf(info->name, sizeof info->name, "Fake GPU");
    info->cc_major = 9;
    info->sms = 7;
    snprintf(info->arch, sizeof info->arch, "sm_90a");
    snprintf(info->uuid, sizeof info->uuid, FAKE_UUID);
    return GB_OK;
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

static const gb_backend_ops fake_ops = {fake_open, fake_set_problem, fake_reference, fake_trial,
                                        fake_race, fake_close,       fake_destroy};

/* ---- the kernel's hooks -------------------------------------------------- */

typedef struct hooks_ctx {
    int reject_v;       /* the constraint drops this V */
    bool args_fail;     /* the args hook reports a script error */
    int n_outputs_seen; /* check outputs the tuner resolved, via trial */
} hooks_ctx;

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

typedef struct fixture {
    char dir[64];
    char leases[96]; /* $GPUBENCH_LEASE_DIR */
    pid_t holder;    /* a child process holding the GPU's lease, or 0 */
    gb_cache *cache;
    fake fake;
    gb_exec *exec;
    hooks_ctx hooks;
    gb_kernel_def kernel;
    gb_kernel_def reference;
    gb_tuner_opts opts;
    gb_fields shapes[2];
    gb_tune_result result;
    gb_err err;
} fixture;

static void add_param(gb_space *space, const char *name, const int *values, int n)
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
    k->hooks = (gb_kernel_hooks){hook_accept, hook_args, hook_launch, NULL, hook_work};
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

static int setup(void **state)
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

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    return remove(path);
}

static int teardown(void **state)
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
    nftw(f->dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
    free(f);
    return 0;
}

static int tune(fixture *f, int n_shapes)
{
    gb_tune_result_free(&f->result);
    gb_tune_request req = {.shapes = f->shapes, .n_shapes = n_shapes};
    return gb_tune(&f->opts, &f->kernel, &req, &f->result, &f->err);
}

static size_t count(fixture *f, gb_cache_db db)
{
    size_t n = 0;
    assert_int_equal(gb_cache_count(f->cache, db, &n, NULL), GB_OK);
    return n;
}

/* ---- tests -------------------------------------------------------------- */

static void test_fastest_correct_variant_wins_and_ties_go_to_the_earlier_config(void **state)
{
    fixture *f = *state;
    assert_int_equal(tune(f, 1), GB_OK);
    const gb_shape_result *s = &f->result.shapes[0];
    assert_true(s->has_best);
    assert_int_equal(gb_fields_get(&s->best_config, "V")->i, 2);
    assert_float_equal(s->best.median, 1.0, 1e-9);
    assert_float_equal(s->flops, 2e9, 0);
}

static void test_every_status_is_counted(void **state)
{
    fixture *f = *state;
    f->fake.fault_v = 6;
    assert_int_equal(tune(f, 1), GB_OK);
    const gb_shape_result *s = &f->result.shapes[0];
    assert_int_equal(s->n_configs, 8);
    assert_int_equal(s->n_rejected, 1);                       /* V=5 */
    assert_int_equal(s->n_status[GB_TRIAL_COMPILE_ERROR], 1); /* V=7 */
    assert_int_equal(s->n_status[GB_TRIAL_WRONG], 1);         /* V=3 */
    assert_int_equal(s->n_status[GB_TRIAL_LAUNCH_ERROR], 1);  /* V=4 */
    assert_int_equal(s->n_status[GB_TRIAL_CRASHED], 1);       /* V=6 */
    assert_int_equal(s->n_status[GB_TRIAL_OK], 3);            /* V=1, 2, 8 */
    assert_int_equal(s->n_compiled, 6);
    assert_int_equal(s->n_timed, 3);
}

static void test_every_trial_is_recorded_with_its_status(void **state)
{
    fixture *f = *state;
    assert_int_equal(tune(f, 1), GB_OK);
    assert_int_equal(count(f, GB_DB_TRIALS), 7); /* all but the rejected V=5 */
    assert_int_equal(count(f, GB_DB_BEST), 1);
    gb_record_id id = {.kernel = "fake_kernel",
                       .kernel_fp = f->result.kernel_fp,
                       .device = f->result.device,
                       .shape = f->shapes[0]};
    gb_fields config = {0};
    gb_value v = gb_value_int(7);
    gb_fields_set(&config, "V", &v);
    gb_key key;
    json_t *json = NULL;
    gb_trial_record rec;
    assert_int_equal(gb_record_trial_key(&id, &config, &key), GB_OK);
    assert_int_equal(gb_cache_get_json(f->cache, GB_DB_TRIALS, &key, &json, NULL), GB_OK);
    assert_int_equal(gb_trial_record_from_json(json, &rec, NULL), GB_OK);
    assert_int_equal(rec.status, GB_TRIAL_COMPILE_ERROR);
    assert_non_null(strstr(rec.reason, "fake.cu:3: error"));
    assert_non_null(strstr(rec.log, "seven does not compile")); /* NVRTC's whole log */
    gb_trial_record_free(&rec);
    json_decref(json);
    v = gb_value_int(2); /* an ok trial keeps its clock */
    gb_fields_set(&config, "V", &v);
    assert_int_equal(gb_record_trial_key(&id, &config, &key), GB_OK);
    assert_int_equal(gb_cache_get_json(f->cache, GB_DB_TRIALS, &key, &json, NULL), GB_OK);
    assert_int_equal(gb_trial_record_from_json(json, &rec, NULL), GB_OK);
    assert_int_equal(rec.status, GB_TRIAL_OK);
    assert_float_equal(rec.clock_mhz, 1980, 0);
    assert_string_equal(rec.mode, "cold");
    assert_int_equal(gb_json_len(gb_json_get(json, "samples_ms")), 11);
    assert_int_equal(rec.n_samples, 11); /* read back, owned by the record */
    assert_true(rec.samples_ms[10] > rec.samples_ms[0]);
    gb_trial_record_free(&rec);
    json_decref(json);
    gb_fields_free(&config);
}

static void test_second_run_reports_from_the_cache_without_trials(void **state)
{
    fixture *f = *state;
    assert_int_equal(tune(f, 2), GB_OK);
    int trials = f->fake.trials;
    assert_int_equal(tune(f, 2), GB_OK);
    assert_int_equal(f->fake.trials, trials);
    for (int i = 0; i < 2; i++) {
        assert_true(f->result.shapes[i].cached);
        assert_int_equal(gb_fields_get(&f->result.shapes[i].best_config, "V")->i, 2);
    }
}

static void test_force_tunes_again(void **state)
{
    fixture *f = *state;
    assert_int_equal(tune(f, 1), GB_OK);
    int trials = f->fake.trials;
    f->opts.force = true;
    assert_int_equal(tune(f, 1), GB_OK);
    assert_int_equal(f->fake.trials, 2 * trials);
    assert_false(f->result.shapes[0].cached);
}

static void test_a_changed_space_is_tuned_again(void **state)
{
    fixture *f = *state;
    assert_int_equal(tune(f, 1), GB_OK);
    int trials = f->fake.trials;
    static const int W[] = {0, 1};
    add_param(&f->kernel.space, "W", W, 2);
    free(f->kernel.entry);
    f->kernel.entry = strdup("k<${V} + ${W}>");
    assert_int_equal(tune(f, 1), GB_OK);
    assert_true(f->fake.trials > trials);
    assert_false(f->result.shapes[0].cached);
}

static void test_compiles_are_reused_from_the_cache(void **state)
{
    fixture *f = *state;
    f->opts.compile_only = true;
    f->opts.exec = NULL;
    assert_int_equal(tune(f, 2), GB_OK);
    assert_int_equal(f->result.n_compiles, 7); /* one row per compile, not per shape */
    for (int i = 0; i < f->result.n_compiles; i++)
        assert_false(f->result.compiles[i].cached);
    assert_int_equal(tune(f, 1), GB_OK);
    int errors = 0;
    for (int i = 0; i < f->result.n_compiles; i++) {
        errors += f->result.compiles[i].error != NULL;
        if (!f->result.compiles[i].error)
            assert_true(f->result.compiles[i].cached);
        else
            assert_non_null(strstr(f->result.compiles[i].error, "seven does not compile"));
    }
    assert_int_equal(errors, 1); /* failed compiles are not cached: they are retried */
    assert_int_equal(f->fake.trials, 0);
}

static void test_a_crash_restarts_the_backend_and_replays_the_problem(void **state)
{
    fixture *f = *state;
    f->fake.fault_v = 6;
    assert_int_equal(tune(f, 1), GB_OK);
    assert_int_equal(f->fake.opens, 2);
    assert_int_equal(f->fake.closes, 1);
    assert_int_equal(f->fake.problems, 2);
    assert_int_equal(f->fake.references, 2);
    assert_int_equal(f->fake.last_seed, 7);
    assert_int_equal(gb_fields_get(&f->result.shapes[0].best_config, "V")->i, 2);
}

static void test_a_failing_reference_fails_the_shape_not_the_run(void **state)
{
    fixture *f = *state;
    f->fake.reference_faults = true;
    assert_int_equal(tune(f, 2), GB_OK);
    for (int i = 0; i < 2; i++) {
        assert_false(f->result.shapes[i].has_best);
        assert_non_null(strstr(f->result.shapes[i].failure, "reference fake_ref"));
    }
    assert_int_equal(f->fake.trials, 0);
}

static void test_budget_limits_the_trials(void **state)
{
    fixture *f = *state;
    gb_tune_request req = {.shapes = f->shapes, .n_shapes = 1, .max_evals = 3};
    assert_int_equal(gb_tune(&f->opts, &f->kernel, &req, &f->result, &f->err), GB_OK);
    assert_int_equal(f->fake.trials, 3); /* V = 1, 2, 3 (V = 5 is rejected, not counted) */
    assert_int_equal(gb_fields_get(&f->result.shapes[0].best_config, "V")->i, 2);
}

static void test_a_script_error_in_a_hook_stops_the_run(void **state)
{
    fixture *f = *state;
    f->hooks.args_fail = true;
    assert_int_equal(tune(f, 2), GB_ESCRIPT);
    assert_non_null(
        strstr(f->err.msg, "test.lua:7: tuning fake_kernel: attempt to index a nil value"));
    assert_int_equal(f->fake.trials, 0);
}

static void test_no_correct_variant_leaves_the_shape_without_a_best(void **state)
{
    fixture *f = *state;
    for (int v = 0; v < 16; v++)
        f->fake.status[v] = GB_TRIAL_WRONG;
    assert_int_equal(tune(f, 1), GB_OK);
    assert_false(f->result.shapes[0].has_best);
    assert_int_equal(count(f, GB_DB_BEST), 0);
}

static void test_check_defaults_to_the_output_tensors_with_dtype_tolerances(void **state)
{
    fixture *f = *state;
    assert_int_equal(tune(f, 1), GB_OK);
    assert_int_equal(f->fake.last_check.n_outputs, 1);
    assert_int_equal(f->fake.last_check.outputs[0], 0);
    assert_float_equal(f->fake.last_check.rtol, 1e-4, 0); /* f32 */
    assert_float_equal(f->fake.last_check.atol, 1e-5, 0);
}

static void test_check_outputs_must_name_tensors(void **state)
{
    fixture *f = *state;
    f->kernel.check = (gb_check_spec){.n_outputs = 1, .outputs = {1}, .rtol = -1, .atol = -1};
    assert_int_equal(tune(f, 1), GB_ESCRIPT); /* argument 2 is a scalar */
    assert_non_null(strstr(f->err.msg, "check.outputs names argument 2"));
}

static int count_trials(fixture *f)
{
    int n = 0;
    for (int v = 0; v < 16; v++)
        n += f->fake.ran[v];
    return n;
}

static void test_a_rerun_resumes_and_skips_finished_trials(void **state)
{
    fixture *f = *state;
    gb_tune_request req = {.shapes = f->shapes, .n_shapes = 1, .max_evals = 3};
    assert_int_equal(gb_tune(&f->opts, &f->kernel, &req, &f->result, &f->err), GB_OK);
    assert_int_equal(count_trials(f), 3); /* V = 1, 2, 3 */
    memset(f->fake.ran, 0, sizeof f->fake.ran);
    assert_int_equal(tune(f, 1), GB_OK); /* no budget: the rest of the space */
    assert_int_equal(f->fake.ran[1] + f->fake.ran[2] + f->fake.ran[3], 0);
    assert_int_equal(f->fake.ran[4] + f->fake.ran[6] + f->fake.ran[8], 3);
    const gb_shape_result *s = &f->result.shapes[0];
    assert_int_equal(s->n_resumed, 3);
    assert_int_equal(s->n_status[GB_TRIAL_WRONG], 1); /* V=3, from the first run */
    assert_int_equal(gb_fields_get(&s->best_config, "V")->i, 2);
}

/* A value added to a parameter's list makes a new space (no cached best answers it),
 * but the configurations measured before are resumed from their trial records:
 * only the new ones reach the GPU. */
static void test_a_value_added_to_a_parameter_measures_only_the_new_configs(void **state)
{
    fixture *f = *state;
    assert_int_equal(tune(f, 1), GB_OK);
    size_t recorded = count(f, GB_DB_TRIALS); /* V=7's compile error too */
    memset(f->fake.ran, 0, sizeof f->fake.ran);
    static const int V[] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    gb_space_free(&f->kernel.space);
    add_param(&f->kernel.space, "V", V, 9);
    assert_int_equal(tune(f, 1), GB_OK);
    const gb_shape_result *s = &f->result.shapes[0];
    assert_false(s->cached);
    assert_int_equal(count_trials(f), 1);
    assert_int_equal(f->fake.ran[9], 1);
    assert_int_equal(s->n_resumed, recorded);
    assert_int_equal(gb_fields_get(&s->best_config, "V")->i, 2);
}

/* Runs the tuner in a child process that hangs in the trial of V=4 and is then
 * killed, as kill -9 or a power cut would end it. */
static void kill_tuner_during_v4(fixture *f)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        /* The child opens its own handles: LMDB's must not cross a fork. */
        gb_cache *cache = NULL;
        gb_exec *exec = NULL;
        f->fake.hang_v = 4;
        if (gb_cache_open(f->dir, 0, &cache, NULL) ||
            gb_exec_create(&fake_ops, &f->fake, &exec, NULL))
            _exit(1);
        f->opts.cache = cache;
        f->opts.exec = exec;
        gb_tune_result result;
        gb_tune_request req = {.shapes = f->shapes, .n_shapes = 1};
        gb_tune(&f->opts, &f->kernel, &req, &result, NULL);
        _exit(2); /* not reached: V=4 hangs */
    }
    size_t n = 0;
    for (int i = 0; i < 3000 && n < 4; i++) { /* V=1..3 done and V=4's write-ahead record */
        usleep(10000);
        gb_cache_count(f->cache, GB_DB_TRIALS, &n, NULL);
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    assert_int_equal(n, 4);
}

static void
test_a_trial_that_was_running_when_the_tuner_died_is_crashed_and_not_retried(void **state)
{
    fixture *f = *state;
    kill_tuner_during_v4(f);
    assert_int_equal(tune(f, 1), GB_OK);
    assert_int_equal(f->fake.ran[4], 0);
    assert_int_equal(f->fake.ran[1] + f->fake.ran[2] + f->fake.ran[3], 0); /* resumed */
    const gb_shape_result *s = &f->result.shapes[0];
    assert_int_equal(s->n_status[GB_TRIAL_CRASHED], 1);
    bool found = false;
    for (int i = 0; i < s->n_failures; i++)
        found |= !strcmp(s->failures[i].config, "V=4") &&
                 strstr(s->failures[i].reason, "the tuner stopped while this trial was running");
    assert_true(found);
    assert_int_equal(gb_fields_get(&s->best_config, "V")->i, 2);
}

static void test_retry_crashed_runs_an_interrupted_trial_again(void **state)
{
    fixture *f = *state;
    kill_tuner_during_v4(f);
    f->opts.retry_crashed = true;
    assert_int_equal(tune(f, 1), GB_OK);
    assert_int_equal(f->fake.ran[4], 1);
    assert_int_equal(f->result.shapes[0].n_status[GB_TRIAL_CRASHED], 0);
}

static void test_an_interrupt_keeps_finished_trials_and_stores_no_best(void **state)
{
    fixture *f = *state;
    f->fake.interrupt_v = 2;
    assert_int_equal(tune(f, 2), GB_EINTR);
    gb_interrupt_clear();
    assert_int_equal(f->result.n_shapes, 1);
    assert_true(f->result.shapes[0].interrupted);
    assert_int_equal(count(f, GB_DB_TRIALS), 2); /* V=1 and V=2 finished */
    assert_int_equal(count(f, GB_DB_BEST), 0);
    f->fake.interrupt_v = 0;
    memset(f->fake.ran, 0, sizeof f->fake.ran);
    assert_int_equal(tune(f, 2), GB_OK);
    assert_int_equal(f->result.shapes[0].n_resumed, 2);
    assert_int_equal(f->fake.ran[1] + f->fake.ran[2], 2); /* the second shape's only */
}

static void test_the_watchdog_deadline_follows_the_shape_s_trials(void **state)
{
    fixture *f = *state;
    f->opts.trial_timeout_s = 30;
    assert_int_equal(tune(f, 1), GB_OK);
    assert_float_equal(f->fake.timeouts[1], 30, 0); /* nothing known yet: the cap */
    assert_float_equal(f->fake.timeouts[8], 5, 0);  /* fast trials so far: the floor */
    f->opts.trial_timeout_s = 2;
    f->opts.force = true;
    assert_int_equal(tune(f, 1), GB_OK);
    assert_float_equal(f->fake.timeouts[8], 2, 0); /* never above the cap */
}

static void test_a_trial_in_flight_in_a_live_tuner_is_not_taken_for_a_crash(void **state)
{
    fixture *f = *state;
    assert_int_equal(tune(f, 1), GB_OK);
    /* Rewrite V=2's record as in flight in a tuner that is alive: our parent. */
    gb_record_id id = {.kernel = "fake_kernel",
                       .kernel_fp = f->result.kernel_fp,
                       .device = f->result.device,
                       .shape = f->shapes[0]};
    gb_fields config = {0};
    gb_value v = gb_value_int(2);
    gb_fields_set(&config, "V", &v);
    gb_trial_record rec = {.id = id,
                           .config = config,
                           .in_flight = true,
                           .status = GB_TRIAL_CRASHED,
                           .reason = "in flight",
                           .owner_pid = getppid()};
    FILE *boot = fopen("/proc/sys/kernel/random/boot_id", "r");
    assert_non_null(fgets(rec.owner_boot, sizeof rec.owner_boot, boot));
    fclose(boot);
    rec.owner_boot[strcspn(rec.owner_boot, "\n")] = '\0';
    json_t *json = gb_trial_record_to_json(&rec);
    gb_key key;
    assert_int_equal(gb_record_trial_key(&id, &config, &key), GB_OK);
    assert_int_equal(gb_cache_put_json(f->cache, GB_DB_TRIALS, &key, json, NULL), GB_OK);
    json_decref(json);
    gb_fields_free(&config);
    assert_int_equal(gb_record_best_key(&id, &key), GB_OK); /* tune the shape again */
    assert_int_equal(gb_cache_del(f->cache, GB_DB_BEST, &key, NULL), GB_OK);
    memset(f->fake.ran, 0, sizeof f->fake.ran);
    assert_int_equal(tune(f, 1), GB_OK);
    assert_int_equal(f->fake.ran[2], 1); /* run, not reported as crashed */
    assert_int_equal(f->fake.ran[1], 0); /* resumed */
}

static void test_the_leaders_race_and_the_race_decides(void **state)
{
    fixture *f = *state;
    f->fake.race_ms[8] = 0.5; /* screened as fast as V=2; raced, faster */
    assert_int_equal(tune(f, 1), GB_OK);
    const gb_shape_result *s = &f->result.shapes[0];
    assert_int_equal(f->fake.races, 1);
    assert_int_equal(s->n_leaders, 2); /* V=2 and V=8; V=1 (3 ms) is out of the margin */
    assert_int_equal(gb_fields_get(&s->best_config, "V")->i, 8);
    assert_float_equal(s->best.median, 0.5, 1e-3);
    assert_int_equal(s->n_tie, 0);
}

static void test_overlapping_intervals_are_a_tie_won_by_the_canonical_order(void **state)
{
    fixture *f = *state;
    assert_int_equal(tune(f, 1), GB_OK); /* V=2 and V=8 race to the same time */
    const gb_shape_result *s = &f->result.shapes[0];
    assert_int_equal(s->n_tie, 2);
    assert_string_equal(s->tie[0], "V=2");
    assert_string_equal(s->tie[1], "V=8");
    assert_int_equal(gb_fields_get(&s->best_config, "V")->i, 2);
}

static void test_a_failed_race_keeps_the_screening_best(void **state)
{
    fixture *f = *state;
    f->fake.race_fails = true;
    assert_int_equal(tune(f, 1), GB_OK);
    const gb_shape_result *s = &f->result.shapes[0];
    assert_non_null(strstr(s->race_failure, "killed by signal 9"));
    assert_int_equal(gb_fields_get(&s->best_config, "V")->i, 2);
}

static void test_the_best_record_keeps_the_race_s_samples_clock_and_tie(void **state)
{
    fixture *f = *state;
    assert_int_equal(tune(f, 1), GB_OK);
    gb_record_id id = {.kernel = "fake_kernel",
                       .kernel_fp = f->result.kernel_fp,
                       .device = f->result.device,
                       .shape = f->shapes[0]};
    gb_key key;
    json_t *json = NULL;
    gb_best_record rec;
    assert_int_equal(gb_record_best_key(&id, &key), GB_OK);
    assert_int_equal(gb_cache_get_json(f->cache, GB_DB_BEST, &key, &json, NULL), GB_OK);
    assert_int_equal(gb_best_record_from_json(json, &rec, NULL), GB_OK);
    assert_int_equal(rec.n_samples, 11);
    assert_float_equal(rec.clock_mhz, 1980, 0);
    assert_string_equal(rec.mode, "cold");
    assert_int_equal(rec.n_tie, 2);
    assert_int_equal(rec.n_leaders, 2);
    gb_best_record_free(&rec);
    json_decref(json);
    assert_int_equal(tune(f, 1), GB_OK); /* from the cache: the tie comes back too */
    assert_true(f->result.shapes[0].cached);
    assert_int_equal(f->result.shapes[0].n_tie, 2);
}

/* ---- sharing the GPU: contended measurements ------------------------------ */

static int read_trial_of(fixture *f, int V, gb_trial_record *out)
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

static void forget_best(fixture *f)
{
    gb_record_id id = {.kernel = "fake_kernel",
                       .kernel_fp = f->result.kernel_fp,
                       .device = f->result.device,
                       .shape = f->shapes[0]};
    gb_key key;
    assert_int_equal(gb_record_best_key(&id, &key), GB_OK);
    assert_int_equal(gb_cache_del(f->cache, GB_DB_BEST, &key, NULL), GB_OK);
}

static void test_a_contended_trial_is_measured_again_and_the_clean_result_stands(void **state)
{
    fixture *f = *state;
    f->fake.contended_trials[1] = 1; /* someone else was on the GPU the first time only */
    assert_int_equal(tune(f, 1), GB_OK);
    assert_int_equal(f->fake.ran[1], 2);
    assert_int_equal(f->fake.ran[2], 1);
    assert_int_equal(f->result.shapes[0].n_contended, 0);
    gb_trial_record rec;
    assert_int_equal(read_trial_of(f, 1, &rec), GB_OK);
    assert_int_equal(rec.status, GB_TRIAL_OK);
    assert_false(rec.contended);
    gb_trial_record_free(&rec);
}

static void
test_a_trial_that_stays_contended_is_kept_marked_and_measured_again_by_a_rerun(void **state)
{
    fixture *f = *state;
    f->fake.contended_trials[1] = -1;
    assert_int_equal(tune(f, 1), GB_OK);
    const gb_shape_result *s = &f->result.shapes[0];
    assert_int_equal(f->fake.ran[1], 2);
    assert_int_equal(s->n_contended, 1);
    assert_int_equal(s->n_status[GB_TRIAL_OK], 4); /* V=1 is still an ok trial */
    gb_trial_record rec;
    assert_int_equal(read_trial_of(f, 1, &rec), GB_OK);
    assert_int_equal(rec.status, GB_TRIAL_OK);
    assert_true(rec.contended);
    gb_trial_record_free(&rec);
    assert_int_equal(count(f, GB_DB_BEST), 1); /* the race was clean */
    forget_best(f);
    memset(f->fake.ran, 0, sizeof f->fake.ran);
    f->fake.contended_trials[1] = 0;
    assert_int_equal(tune(f, 1), GB_OK);
    assert_int_equal(f->fake.ran[1], 1); /* measured again, not resumed */
    assert_int_equal(f->fake.ran[2], 0); /* resumed */
    assert_int_equal(read_trial_of(f, 1, &rec), GB_OK);
    assert_false(rec.contended);
    gb_trial_record_free(&rec);
}

static void test_once_the_gpu_stays_shared_later_trials_are_not_measured_twice(void **state)
{
    fixture *f = *state;
    for (int v = 0; v < 16; v++)
        f->fake.contended_trials[v] = -1;
    assert_int_equal(tune(f, 1), GB_OK);
    assert_int_equal(f->fake.ran[1], 2);
    assert_int_equal(f->fake.ran[2] + f->fake.ran[6] + f->fake.ran[8], 3);
    assert_int_equal(f->result.shapes[0].n_contended, 4); /* V = 1, 2, 6, 8 */
}

static void test_a_contended_race_is_run_again_and_a_clean_one_is_stored(void **state)
{
    fixture *f = *state;
    f->fake.contended_races = 1;
    assert_int_equal(tune(f, 1), GB_OK);
    const gb_shape_result *s = &f->result.shapes[0];
    assert_int_equal(f->fake.races, 2);
    assert_true(s->has_best);
    assert_false(s->contended);
    assert_false(s->best_measurement.contended);
    assert_int_equal(count(f, GB_DB_BEST), 1);
}

static void test_a_race_that_stays_contended_is_reported_and_never_stored(void **state)
{
    fixture *f = *state;
    f->fake.contended_races = -1;
    assert_int_equal(tune(f, 1), GB_OK);
    const gb_shape_result *s = &f->result.shapes[0];
    assert_int_equal(f->fake.races, 2);
    assert_true(s->has_best); /* shown, with its figures ... */
    assert_true(s->contended);
    assert_int_equal(s->best_measurement.n_other_procs, 2);
    assert_int_equal(gb_fields_get(&s->best_config, "V")->i, 2);
    assert_int_equal(count(f, GB_DB_BEST), 0); /* ... but not kept */
    f->fake.contended_races = 0;
    assert_int_equal(tune(f, 1), GB_OK); /* so the next run tunes it again */
    assert_false(f->result.shapes[0].cached);
    assert_int_equal(f->fake.races, 3);
    assert_int_equal(count(f, GB_DB_BEST), 1);
}

static void test_the_table_says_contended_and_that_the_best_was_not_stored(void **state)
{
    fixture *f = *state;
    f->fake.contended_races = -1;
    f->fake.contended_trials[1] = -1;
    assert_int_equal(tune(f, 1), GB_OK);
    f->result.timing.lease_wait_s = 2.5; /* as if it had waited for the lease */
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    gb_report_tune(out, "fake_kernel", &f->result, false, false);
    fclose(out);
    assert_non_null(strstr(text, "contended\n")); /* the row's last column */
    assert_non_null(strstr(text, "the GPU was in use by 2 other process(es) while the best was "
                                 "measured, and again after a pause: the best is not stored (tune "
                                 "again when the GPU is free)"));
    assert_non_null(strstr(text, "1 trial(s) were screened while another process used the GPU"));
    assert_non_null(strstr(text, "2.5 s waiting for the GPU's lease"));
    free(text);
}

static void test_a_contended_screening_best_is_not_stored_when_the_race_fails(void **state)
{
    fixture *f = *state;
    f->fake.race_fails = true;
    f->fake.contended_trials[2] = -1; /* the fastest */
    assert_int_equal(tune(f, 1), GB_OK);
    const gb_shape_result *s = &f->result.shapes[0];
    assert_non_null(s->race_failure);
    assert_int_equal(gb_fields_get(&s->best_config, "V")->i, 2);
    assert_true(s->contended);
    assert_int_equal(count(f, GB_DB_BEST), 0);
}

static void test_a_best_record_marked_contended_does_not_answer_from_the_cache(void **state)
{
    fixture *f = *state;
    assert_int_equal(tune(f, 1), GB_OK);
    gb_record_id id = {.kernel = "fake_kernel",
                       .kernel_fp = f->result.kernel_fp,
                       .device = f->result.device,
                       .shape = f->shapes[0]};
    gb_key key;
    json_t *json = NULL;
    gb_best_record rec;
    assert_int_equal(gb_record_best_key(&id, &key), GB_OK);
    assert_int_equal(gb_cache_get_json(f->cache, GB_DB_BEST, &key, &json, NULL), GB_OK);
    assert_int_equal(gb_best_record_from_json(json, &rec, NULL), GB_OK);
    json_decref(json);
    assert_false(rec.contended);
    rec.contended = true; /* as another writer might have stored it */
    json = gb_best_record_to_json(&rec);
    assert_int_equal(gb_cache_put_json(f->cache, GB_DB_BEST, &key, json, NULL), GB_OK);
    json_decref(json);
    gb_best_record_free(&rec);
    assert_int_equal(tune(f, 1), GB_OK);
    assert_false(f->result.shapes[0].cached);
}

static void test_a_benchmark_that_stays_contended_says_so(void **state)
{
    fixture *f = *state;
    gb_fields config = {0};
    gb_value v = gb_value_int(2);
    gb_fields_set(&config, "V", &v);
    f->fake.contended_trials[2] = -1;
    gb_tune_request req = {.shapes = f->shapes, .n_shapes = 1, .fixed_config = &config};
    assert_int_equal(gb_tune(&f->opts, &f->kernel, &req, &f->result, &f->err), GB_OK);
    const gb_shape_result *s = &f->result.shapes[0];
    assert_int_equal(f->fake.ran[2], 2);
    assert_true(s->has_best);
    assert_true(s->contended);
    assert_true(s->best_measurement.contended);
    gb_fields_free(&config);
}

/* ---- sharing the GPU: the lease ------------------------------------------- */

/* Starts a child that holds the fake GPU's lease, saying it is busy with
 * activity, until it is killed; returns once it holds it. */
static pid_t hold_lease_in_child(fixture *f, const char *activity)
{
    int ready[2];
    assert_int_equal(pipe(ready), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        gb_lease *lease = NULL;
        if (gb_lease_acquire_as(FAKE_UUID, 5, activity, NULL, &lease, NULL) != GB_OK) _exit(1);
        if (write(ready[1], "r", 1) != 1) _exit(1);
        for (;;)
            pause();
    }
    close(ready[1]);
    char c = 0;
    assert_int_equal(read(ready[0], &c, 1), 1);
    close(ready[0]);
    f->holder = pid;
    return pid;
}

static void test_a_run_that_measures_holds_the_gpu_s_lease_until_the_session_ends(void **state)
{
    fixture *f = *state;
    gb_tuner_lease lease = {.wait_s = 0};
    f->opts.lease = &lease;
    assert_int_equal(tune(f, 1), GB_OK);
    assert_non_null(lease.held);
    char path[160];
    snprintf(path, sizeof path, "%s/" FAKE_UUID ".lock", f->leases);
    assert_string_equal(gb_lease_path(lease.held), path);
    gb_lease *other = NULL;
    assert_int_equal(gb_lease_acquire(FAKE_UUID, 0, &other, NULL), GB_EBUSY);
    char text[2048] = "";
    FILE *file = fopen(path, "r");
    text[fread(text, 1, sizeof text - 1, file)] = '\0';
    fclose(file);
    assert_non_null(strstr(text, "activity=tuning fake_kernel\n"));
    gb_tuner_lease_end(&lease);
    assert_null(lease.held);
    assert_int_equal(gb_lease_acquire(FAKE_UUID, 0, &other, NULL), GB_OK);
    gb_lease_release(other);
}

static void test_a_run_answered_from_the_cache_or_compiling_only_takes_no_lease(void **state)
{
    fixture *f = *state;
    assert_int_equal(tune(f, 1), GB_OK); /* fills the cache, without a lease */
    gb_tuner_lease lease = {.wait_s = 0};
    f->opts.lease = &lease;
    int trials = f->fake.trials;
    assert_int_equal(tune(f, 1), GB_OK);
    assert_true(f->result.shapes[0].cached);
    assert_null(lease.held);
    f->opts.compile_only = true;
    f->opts.exec = NULL;
    assert_int_equal(tune(f, 2), GB_OK);
    assert_null(lease.held);
    assert_int_equal(f->fake.trials, trials);
}

static void test_a_busy_gpu_makes_the_run_wait_then_give_up_naming_the_holder(void **state)
{
    fixture *f = *state;
    pid_t holder = hold_lease_in_child(f, "tuning other.lua");
    char log_path[128], who[64];
    snprintf(log_path, sizeof log_path, "%s/log", f->dir);
    f->opts.log = fopen(log_path, "w");
    gb_tuner_lease lease = {.wait_s = 0.3};
    f->opts.lease = &lease;
    assert_int_equal(tune(f, 1), GB_EBUSY);
    double end_ms = gb_now_ms();
    fclose(f->opts.log);
    f->opts.log = NULL;
    snprintf(who, sizeof who, "is in use by pid %ld (", (long)holder);
    assert_non_null(strstr(f->err.msg, FAKE_UUID));
    assert_non_null(strstr(f->err.msg, who));
    assert_non_null(strstr(f->err.msg, "tuning other.lua"));
    assert_null(lease.held);
    assert_int_equal(f->fake.trials, 0); /* nothing was measured */
    assert_int_equal(f->fake.problems, 0);
    /* The worker was ended before the wait, not after: no context of ours on the GPU
     * while waiting. */
    assert_true(f->fake.closes >= 1 && f->fake.first_close_ms < end_ms - 250);
    assert_true(f->result.timing.lease_wait_s >= 0.3);
    char text[1024] = "";
    FILE *log = fopen(log_path, "r");
    text[fread(text, 1, sizeof text - 1, log)] = '\0';
    fclose(log);
    assert_non_null(strstr(text, who));
    assert_non_null(strstr(text, "waiting up to 0.3 s (--lease-wait)"));
}

static void test_a_lease_wait_of_zero_gives_up_at_once(void **state)
{
    fixture *f = *state;
    hold_lease_in_child(f, NULL);
    gb_tuner_lease lease = {.wait_s = 0};
    f->opts.lease = &lease;
    assert_int_equal(tune(f, 1), GB_EBUSY);
    assert_non_null(strstr(f->err.msg, "not waiting (--lease-wait 0)"));
    assert_true(f->result.timing.lease_wait_s == 0);
    assert_int_equal(f->fake.trials, 0);
}

static void test_a_session_without_the_lease_keeps_no_worker_between_runs(void **state)
{
    fixture *f = *state;
    assert_int_equal(tune(f, 1), GB_OK); /* fills the cache, without leases */
    assert_int_equal(f->fake.closes, 0);
    gb_tuner_lease lease = {.wait_s = 0};
    f->opts.lease = &lease;
    assert_int_equal(tune(f, 1), GB_OK); /* from the cache: no lease taken ... */
    assert_true(f->result.shapes[0].cached);
    assert_int_equal(f->fake.closes, 1); /* ... and the worker is not left on the GPU */
    assert_int_equal(tune(f, 1), GB_OK);
    assert_int_equal(f->fake.opens, 1);  /* the device is known: no worker started for it */
    assert_int_equal(tune(f, 2), GB_OK); /* the second shape measures: the lease, a worker */
    assert_non_null(lease.held);
    assert_int_equal(f->fake.opens, 2);
    assert_int_equal(f->fake.closes, 1); /* the holder keeps its worker */
    gb_tuner_lease_end(&lease);
}

static void test_an_unusable_lease_directory_is_warned_about_and_measuring_goes_on(void **state)
{
    fixture *f = *state;
    char path[160];
    snprintf(path, sizeof path, "%s/file", f->dir);
    fclose(fopen(path, "w"));
    snprintf(path, sizeof path, "%s/file/leases", f->dir);
    setenv("GPUBENCH_LEASE_DIR", path, 1);
    gb_tuner_lease lease = {.wait_s = 0};
    f->opts.lease = &lease;
    assert_int_equal(tune(f, 2), GB_OK);
    assert_true(lease.broken);
    assert_null(lease.held);
    assert_int_equal(count(f, GB_DB_BEST), 2);
}

/* ---- two tuner processes on one cache, with the fake GPU worker ----------- */

typedef struct child_report {
    int rc;
    double waited_s;
    bool cached[2], has_best[2];
} child_report;

static void find_fake_worker(char *out, size_t n)
{
    const char *build = getenv("GB_BINARY_DIR");
    if (build) {
        snprintf(out, n, "%s/tests/fake_worker", build);
        return;
    }
    ssize_t len = readlink("/proc/self/exe", out, n - 1);
    out[len > 0 ? len : 0] = '\0';
    char *slash = strrchr(out, '/');
    snprintf(slash ? slash + 1 : out, n - (size_t)(slash ? slash + 1 - out : 0), "fake_worker");
}

/* Tunes both shapes in a child process of its own, on the fake worker as GPU
 * ordinal, holding the lease as gpubench-tune does; reports through report_fd. */
static pid_t tune_in_child(fixture *f, int ordinal, int report_fd)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid) return pid;
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    char exe[4096];
    find_fake_worker(exe, sizeof exe);
    gb_worker_opts wo = {.exe = exe, .ordinal = ordinal};
    gb_cache *cache = NULL; /* LMDB's handles must not cross a fork: a fresh one */
    gb_exec *exec = NULL;
    gb_tuner_lease lease = {.wait_s = 60};
    child_report report = {.rc = -1};
    if (gb_cache_open(f->dir, 0, &cache, NULL) || gb_exec_worker(&wo, &exec, NULL)) _exit(1);
    f->opts.cache = cache;
    f->opts.exec = exec;
    f->opts.lease = &lease;
    gb_tune_result result;
    gb_tune_request req = {.shapes = f->shapes, .n_shapes = 2};
    report.rc = gb_tune(&f->opts, &f->kernel, &req, &result, NULL);
    report.waited_s = result.timing.lease_wait_s;
    for (int i = 0; i < result.n_shapes && i < 2; i++) {
        report.cached[i] = result.shapes[i].cached;
        report.has_best[i] = result.shapes[i].has_best;
    }
    gb_tune_result_free(&result);
    gb_exec_destroy(exec); /* the worker first, then the lease, as gpubench-tune does */
    gb_tuner_lease_end(&lease);
    gb_cache_close(cache);
    bool sent = write(report_fd, &report, sizeof report) == sizeof report;
    _exit(sent ? 0 : 1);
}

static void run_two_tuners(fixture *f, int ordinal_b, child_report out[2])
{
    int fds[2][2];
    pid_t pids[2];
    for (int i = 0; i < 2; i++) {
        assert_int_equal(pipe(fds[i]), 0);
        pids[i] = tune_in_child(f, i == 0 ? 0 : ordinal_b, fds[i][1]);
        close(fds[i][1]);
    }
    for (int i = 0; i < 2; i++) {
        int status = 0;
        assert_int_equal(read(fds[i][0], &out[i], sizeof out[i]), sizeof out[i]);
        close(fds[i][0]);
        assert_int_equal(waitpid(pids[i], &status, 0), pids[i]);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        assert_int_equal(out[i].rc, GB_OK);
        assert_true(out[i].has_best[0] && out[i].has_best[1]);
    }
    /* Nothing lost: every trial of both shapes and one best per shape. */
    assert_int_equal(count(f, GB_DB_TRIALS), 14);
    assert_int_equal(count(f, GB_DB_BEST), 2);
}

static void test_two_tuners_on_one_gpu_take_turns_and_the_second_finds_the_results(void **state)
{
    fixture *f = *state;
    child_report r[2];
    run_two_tuners(f, 0, r);
    /* One measured; the other waited for the lease and was then answered from the
     * cache for both shapes. */
    int waited = r[0].waited_s > 0 ? 0 : 1;
    assert_true(r[waited].waited_s > 0);
    assert_true(r[waited].cached[0] && r[waited].cached[1]);
    assert_true(r[1 - waited].waited_s == 0);
    assert_false(r[1 - waited].cached[0] || r[1 - waited].cached[1]);
}

static void test_two_tuners_on_two_gpus_share_one_cache_and_lose_nothing(void **state)
{
    fixture *f = *state;
    child_report r[2];
    run_two_tuners(f, 1, r); /* two ordinals: two leases, measured at once */
    assert_true(r[0].waited_s == 0 && r[1].waited_s == 0);
}

static void write_file(const char *path, const char *text)
{
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs(text, fp);
    fclose(fp);
}

static void hex_of(const char *text, char out[33])
{
    gb_key key = gb_key_of_bytes(text, strlen(text));
    gb_key_hex(&key, out);
}

/* What `gpubench cache ls --stale` and `cache gc` rely on: a best lists the files of
 * its kernel's source closure with their hashes, a trial names its cubin, and a
 * cubin record says which NVRTC compiled it. */
static void test_records_name_their_source_files_and_cubins(void **state)
{
    fixture *f = *state;
    char source_path[128], header_path[128], source[1024], hex[33], *real = NULL;
    const char *header = "#define FAKE_COMMON 1\n";
    snprintf(source_path, sizeof source_path, "%s/fake.cu", f->dir);
    snprintf(header_path, sizeof header_path, "%s/fake_common.cuh", f->dir);
    snprintf(source, sizeof source, "#include \"fake_common.cuh\"\n%s", SOURCE);
    write_file(source_path, source);
    write_file(header_path, header);
    gb_kernel_def *k = &f->kernel;
    free(k->source);
    free(k->source_name);
    k->source = strdup(source);
    k->source_name = strdup(source_path);
    k->include_dirs = calloc(1, sizeof *k->include_dirs);
    k->include_dirs[0] = strdup(f->dir);
    k->n_include_dirs = 1;
    assert_int_equal(tune(f, 1), GB_OK);

    gb_record_id id = {.kernel = "fake_kernel",
                       .kernel_fp = f->result.kernel_fp,
                       .device = f->result.device,
                       .shape = f->shapes[0]};
    gb_key key;
    void *value;
    size_t len;
    gb_best_record best;
    assert_int_equal(gb_record_best_key(&id, &key), GB_OK);
    assert_int_equal(gb_cache_get(f->cache, GB_DB_BEST, &key, &value, &len, NULL), GB_OK);
    assert_int_equal(gb_cache_read_best(value, len, &best, NULL), GB_OK);
    free(value);
    assert_int_equal(best.n_sources, 2);
    assert_non_null(real = realpath(source_path, NULL));
    assert_string_equal(best.sources[0].path, real);
    hex_of(source, hex);
    assert_string_equal(best.sources[0].hash, hex);
    free(real);
    assert_non_null(real = realpath(header_path, NULL));
    assert_string_equal(best.sources[1].path, real);
    hex_of(header, hex);
    assert_string_equal(best.sources[1].hash, hex);
    free(real);
    gb_best_record_free(&best);

    gb_fields config = {0};
    gb_value v = gb_value_int(2);
    gb_trial_record trial;
    char *meta = NULL;
    void *cubin = NULL;
    char nvrtc[16], expect[40];
    gb_fields_set(&config, "V", &v);
    assert_int_equal(gb_record_trial_key(&id, &config, &key), GB_OK);
    assert_int_equal(gb_cache_get(f->cache, GB_DB_TRIALS, &key, &value, &len, NULL), GB_OK);
    assert_int_equal(gb_cache_read_trial(value, len, &trial, NULL), GB_OK);
    free(value);
    assert_int_equal(gb_key_from_hex(trial.cubin, &key), GB_OK);
    assert_int_equal(gb_cache_get_cubin(f->cache, &key, &meta, &cubin, &len, NULL), GB_OK);
    gb_nvrtc_version(nvrtc);
    snprintf(expect, sizeof expect, "\"nvrtc\":\"%s\"", nvrtc);
    assert_non_null(strstr(meta, expect));
    free(meta);
    free(cubin);
    gb_trial_record_free(&trial);
    gb_cache_gc_summary gc;
    assert_int_equal(gb_cache_gc(f->cache, nvrtc, false, &gc, NULL), GB_OK);
    assert_true(gb_cache_get_cubin(f->cache, &key, &meta, &cubin, &len, NULL) == GB_OK);
    free(meta);
    free(cubin);
    v = gb_value_int(7); /* did not compile: no cubin to name */
    gb_fields_set(&config, "V", &v);
    assert_int_equal(gb_record_trial_key(&id, &config, &key), GB_OK);
    assert_int_equal(gb_cache_get(f->cache, GB_DB_TRIALS, &key, &value, &len, NULL), GB_OK);
    assert_int_equal(gb_cache_read_trial(value, len, &trial, NULL), GB_OK);
    free(value);
    assert_string_equal(trial.cubin, "");
    gb_trial_record_free(&trial);
    gb_fields_free(&config);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_fastest_correct_variant_wins_and_ties_go_to_the_earlier_config, setup, teardown),
        cmocka_unit_test_setup_teardown(test_every_status_is_counted, setup, teardown),
        cmocka_unit_test_setup_teardown(test_every_trial_is_recorded_with_its_status, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_second_run_reports_from_the_cache_without_trials,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_force_tunes_again, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_changed_space_is_tuned_again, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_a_value_added_to_a_parameter_measures_only_the_new_configs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_compiles_are_reused_from_the_cache, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_crash_restarts_the_backend_and_replays_the_problem,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_failing_reference_fails_the_shape_not_the_run, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_budget_limits_the_trials, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_script_error_in_a_hook_stops_the_run, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_no_correct_variant_leaves_the_shape_without_a_best,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_check_defaults_to_the_output_tensors_with_dtype_tolerances, setup, teardown),
        cmocka_unit_test_setup_teardown(test_check_outputs_must_name_tensors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_rerun_resumes_and_skips_finished_trials, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(
            test_a_trial_that_was_running_when_the_tuner_died_is_crashed_and_not_retried, setup,
            teardown),
        cmocka_unit_test_setup_teardown(test_retry_crashed_runs_an_interrupted_trial_again, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_an_interrupt_keeps_finished_trials_and_stores_no_best,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_the_watchdog_deadline_follows_the_shape_s_trials,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_a_trial_in_flight_in_a_live_tuner_is_not_taken_for_a_crash, setup, teardown),
        cmocka_unit_test_setup_teardown(test_the_leaders_race_and_the_race_decides, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(
            test_overlapping_intervals_are_a_tie_won_by_the_canonical_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_failed_race_keeps_the_screening_best, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_the_best_record_keeps_the_race_s_samples_clock_and_tie,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_a_contended_trial_is_measured_again_and_the_clean_result_stands, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_a_trial_that_stays_contended_is_kept_marked_and_measured_again_by_a_rerun, setup,
            teardown),
        cmocka_unit_test_setup_teardown(
            test_once_the_gpu_stays_shared_later_trials_are_not_measured_twice, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_a_contended_race_is_run_again_and_a_clean_one_is_stored, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_a_race_that_stays_contended_is_reported_and_never_stored, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_the_table_says_contended_and_that_the_best_was_not_stored, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_a_contended_screening_best_is_not_stored_when_the_race_fails, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_a_best_record_marked_contended_does_not_answer_from_the_cache, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_benchmark_that_stays_contended_says_so, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(
            test_a_run_that_measures_holds_the_gpu_s_lease_until_the_session_ends, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_a_run_answered_from_the_cache_or_compiling_only_takes_no_lease, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_a_busy_gpu_makes_the_run_wait_then_give_up_naming_the_holder, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_lease_wait_of_zero_gives_up_at_once, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(
            test_a_session_without_the_lease_keeps_no_worker_between_runs, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_an_unusable_lease_directory_is_warned_about_and_measuring_goes_on, setup,
            teardown),
        cmocka_unit_test_setup_teardown(
            test_two_tuners_on_one_gpu_take_turns_and_the_second_finds_the_results, setup,
            teardown),
        cmocka_unit_test_setup_teardown(
            test_two_tuners_on_two_gpus_share_one_cache_and_lose_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_records_name_their_source_files_and_cubins, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
