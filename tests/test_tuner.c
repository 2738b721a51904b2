/* The tuning loop, run against a fake GPU backend: which variant wins, what is
 * recorded, what a rerun reuses, and how failures of every kind are counted.
 * Compiles are real (NVRTC); only the GPU is faked. */
#include "cache/cache.h"
#include "cache/record.h"
#include "engine/exec.h"
#include "engine/interrupt.h"
#include "tuner/tune.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <ftw.h>
#include <math.h>
#include <signal.h>
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
    int hang_v;          /* the trial of this V never returns (the tuner is then killed) */
    int interrupt_v;     /* the trial of this V asks for an interrupt, as Ctrl-C would */
    double timeouts[16]; /* the watchdog's deadline each V was given */
    int ran[16];         /* how often each V was run */
    int races, raced;    /* races run, and how many variants the last one had */
    double race_ms[16];  /* what the race measures for V (0: as screened) */
    bool race_fails;
} fake;

static int fake_open(void *self, gb_device_info *info, gb_err *err)
{
    fake *f = self;
    f->opens++;
    memset(info, 0, sizeof *info);
    snprintf(info->name, sizeof info->name, "Fake GPU");
    info->cc_major = 9;
    info->sms = 7;
    snprintf(info->arch, sizeof info->arch, "sm_90a");
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
    if (out->status == GB_TRIAL_OK)
        fake_measure(f->median_ms[V], &out->measurement);
    else
        snprintf(out->reason, sizeof out->reason, "fake %s", gb_trial_status_name(out->status));
    return GB_OK;
}

static int fake_race(void *self, const gb_variant *vs, int n, const gb_measure_opts *opts,
                     double timeout_s, gb_measurement *out, gb_err *err)
{
    fake *f = self;
    f->races++;
    f->raced = n;
    for (int i = 0; i < n; i++)
        fake_measure(f->race_ms[vs[i].launch.grid[0]] > 0 ? f->race_ms[vs[i].launch.grid[0]]
                                                          : f->median_ms[vs[i].launch.grid[0]],
                     &out[i]);
    return f->race_fails ? gb_err_set(err, GB_EFAULT, "the GPU worker was killed by signal 9")
                         : GB_OK;
}

static void fake_close(void *self)
{
    ((fake *)self)->closes++;
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
    f->opts = (gb_tuner_opts){
        .cache = f->cache, .exec = f->exec, .jobs = 2, .seed = 7, .measure = gb_measure_defaults()};
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
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
