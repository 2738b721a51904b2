/* The tuning session (session/session.c) over the tuner's fake GPU backend
 * (tuner_fixture.h): the GPU opened once and its device noted in the run's
 * context, every call counted, noted once per kernel and device and handed to
 * the outputs; no GPU switches the session to compiling only, or is the call's
 * error with require_gpu; a request that does not check never opens the GPU; the
 * outputs begun, fed (a saved run too) and ended; replay from the session's
 * cache with its strategy and seed. */
#include "session/session.h"
#include "tuner_fixture.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An output that counts what it is given. */
typedef struct counting {
    gb_output base;
    int begun, shapes, calls, ended, destroyed;
    char kernel[64];
} counting;

static int count_begin(gb_output *o, const gb_run_context *ctx, gb_err *err)
{
    (void)ctx, (void)err;
    ((counting *)o)->begun++;
    return GB_OK;
}

static int count_shape(gb_output *o, const gb_report_entry *e, gb_err *err)
{
    (void)err;
    counting *c = (counting *)o;
    c->shapes++;
    snprintf(c->kernel, sizeof c->kernel, "%s", e->kernel);
    return GB_OK;
}

static int count_call(gb_output *o, const char *kernel, const gb_tune_result *call, gb_err *err)
{
    (void)kernel, (void)call, (void)err;
    ((counting *)o)->calls++;
    return GB_OK;
}

static int count_end(gb_output *o, gb_err *err)
{
    (void)err;
    ((counting *)o)->ended++;
    return GB_OK;
}

static void count_destroy(gb_output *o)
{
    ((counting *)o)->destroyed++; /* the tests' own, on their stacks */
}

static const gb_output_ops COUNTING = {.name = "counting",
                                       .begin = count_begin,
                                       .shape = count_shape,
                                       .call_end = count_call,
                                       .end = count_end,
                                       .destroy = count_destroy};

typedef struct opener {
    fixture *f;
    int opened;
    int fail; /* GB_OK, or what opening returns (GB_ENOGPU: no GPU) */
} opener;

/* The session's own executor over the fixture's fake (destroying it leaves the
 * fake alone). */
static int open_fake(void *ctx, gb_exec **out, gb_err *err)
{
    opener *o = ctx;
    o->opened++;
    if (o->fail) return gb_err_set(err, o->fail, "no CUDA-capable device is detected");
    return gb_exec_create(&fake_ops, &o->f->fake, out, err);
}

static gb_session session_of(fixture *f, opener *o, counting *out, gb_run_context *ctx)
{
    gb_session s = {.tuner = f->opts,
                    .open_exec = open_fake,
                    .open_exec_ctx = o,
                    .output = &out->base,
                    .context = ctx};
    s.tuner.exec = NULL; /* opened by the session, the first time it is needed */
    return s;
}

static void test_tunes_counts_notes_and_reports(void **state)
{
    fixture *f = *state;
    opener o = {.f = f};
    counting out = {.base = {.ops = &COUNTING}};
    gb_run_context ctx = {0};
    gb_session s = session_of(f, &o, &out, &ctx);
    gb_tune_request req = {.shapes = f->shapes, .n_shapes = 2};
    gb_tune_result r;
    gb_err err = {0};
    assert_int_equal(gb_session_tune(&s, &f->kernel, &req, &r, &err), GB_OK);
    assert_int_equal(r.n_shapes, 2);
    assert_true(r.shapes[0].has_best && r.shapes[1].has_best);
    gb_tune_result_free(&r);
    assert_int_equal(o.opened, 1);
    assert_true(ctx.has_device); /* the context learned the device */
    assert_int_equal(s.n_tuned, 1);
    assert_int_equal(s.n_shapes_failed, 0);
    assert_int_equal(out.shapes, 2);
    assert_int_equal(out.calls, 1);
    assert_string_equal(out.kernel, "fake_kernel");
    assert_int_equal(s.n_tuned_kernels, 1);
    assert_string_equal(s.tuned[0].kernel, "fake_kernel");
    assert_true(s.tuned[0].device[0] != '\0');
    /* Again: the same GPU, and the kernel noted once. */
    assert_int_equal(gb_session_tune(&s, &f->kernel, &req, &r, &err), GB_OK);
    gb_tune_result_free(&r);
    assert_int_equal(o.opened, 1);
    assert_int_equal(s.n_tuned, 2);
    assert_int_equal(s.n_tuned_kernels, 1);
    assert_int_equal(out.shapes, 4);
    gb_session_close(&s);
    assert_null(s.tuner.exec);
    assert_int_equal(s.n_tuned_kernels, 0);
}

static void test_no_gpu_compiles_only_and_says_so(void **state)
{
    fixture *f = *state;
    opener o = {.f = f, .fail = GB_ENOGPU};
    counting out = {.base = {.ops = &COUNTING}};
    gb_run_context ctx = {0};
    gb_session s = session_of(f, &o, &out, &ctx);
    char *log = NULL;
    size_t log_len = 0;
    s.tuner.log = open_memstream(&log, &log_len);
    gb_tune_request req = {.shapes = f->shapes, .n_shapes = 1};
    gb_tune_result r;
    gb_err err = {0};
    assert_int_equal(gb_session_tune(&s, &f->kernel, &req, &r, &err), GB_OK);
    assert_true(r.compile_only);
    assert_int_equal(f->fake.trials, 0);
    gb_tune_result_free(&r);
    assert_true(s.gpu_missing);
    assert_string_equal(s.gpu_missing_err.msg, "no CUDA-capable device is detected");
    /* A second call does not try the GPU again. */
    assert_int_equal(gb_session_tune(&s, &f->kernel, &req, &r, &err), GB_OK);
    gb_tune_result_free(&r);
    assert_int_equal(o.opened, 1);
    fclose(s.tuner.log);
    assert_non_null(strstr(log, "no CUDA-capable device is detected; compiling only"));
    free(log);
    assert_int_equal(gb_session_gpu(&s, NULL, &err), GB_ENOGPU);
    gb_session_close(&s);
}

static void test_require_gpu_makes_no_gpu_the_error(void **state)
{
    fixture *f = *state;
    opener o = {.f = f, .fail = GB_ENOGPU};
    counting out = {.base = {.ops = &COUNTING}};
    gb_session s = session_of(f, &o, &out, NULL);
    s.require_gpu = true;
    gb_tune_request req = {.shapes = f->shapes, .n_shapes = 1};
    gb_tune_result r;
    gb_err err = {0};
    assert_int_equal(gb_session_tune(&s, &f->kernel, &req, &r, &err), GB_ENOGPU);
    assert_string_equal(err.msg, "no CUDA-capable device is detected");
    gb_tune_result_free(&r);
    assert_false(s.gpu_missing);
    assert_int_equal(s.n_tuned, 0);
    assert_int_equal(out.shapes, 0);
    gb_session_close(&s);
}

static void test_a_request_that_does_not_check_never_opens_the_gpu(void **state)
{
    fixture *f = *state;
    opener o = {.f = f};
    counting out = {.base = {.ops = &COUNTING}};
    gb_session s = session_of(f, &o, &out, NULL);
    f->hooks.args_fail = true;
    gb_tune_request req = {.shapes = f->shapes, .n_shapes = 1};
    gb_tune_result r;
    gb_err err = {0};
    assert_int_equal(gb_session_tune(&s, &f->kernel, &req, &r, &err), GB_ESCRIPT);
    gb_tune_result_free(&r);
    assert_int_equal(o.opened, 0);
    assert_int_equal(s.n_tuned, 0);
    gb_session_close(&s);
}

/* The session begins its outputs, hands them a saved run's entries and calls as
 * a live run's (`gpubench report`), and ends them once. */
static void test_the_outputs_are_begun_fed_a_saved_run_and_ended(void **state)
{
    fixture *f = *state;
    opener o = {.f = f};
    counting out = {.base = {.ops = &COUNTING}};
    gb_run_context ctx = {0};
    gb_session s = session_of(f, &o, &out, NULL);
    s.output = NULL;
    gb_err err = {0};
    assert_int_equal(gb_session_begin_outputs(&s, &out.base, &ctx, &err), GB_OK);
    assert_int_equal(out.begun, 1);
    assert_ptr_equal(s.context, &ctx);
    gb_shape_result shapes[2];
    memset(shapes, 0, sizeof shapes);
    gb_report_entry entries[2] = {{.kernel = "saved", .result = &shapes[0]},
                                  {.kernel = "saved", .result = &shapes[1]}};
    gb_report_call call = {.kernel = "saved", .first_entry = 0, .result = {.n_shapes = 2}};
    gb_report saved = {.entries = entries, .n_entries = 2, .calls = &call, .n_calls = 1};
    assert_int_equal(gb_session_show(&s, &saved, &err), GB_OK);
    assert_int_equal(out.shapes, 2);
    assert_int_equal(out.calls, 1);
    assert_string_equal(out.kernel, "saved");
    assert_int_equal(o.opened, 0); /* showing never opens the GPU */
    assert_int_equal(gb_session_end_outputs(&s, &err), GB_OK);
    assert_int_equal(out.ended, 1);
    assert_int_equal(out.destroyed, 1);
    assert_null(s.output);
    assert_int_equal(gb_session_end_outputs(&s, &err), GB_OK); /* none left: nothing to do */
    assert_int_equal(out.ended, 1);
    gb_session_close(&s);
}

/* Replay through the session: the table from its cache (the trials a tune left),
 * and the searches with its strategy and seed, as the tuner would run them. */
static void test_replay_reads_the_cache_and_runs_the_sessions_strategy_and_seed(void **state)
{
    fixture *f = *state;
    opener o = {.f = f};
    counting out = {.base = {.ops = &COUNTING}};
    gb_session s = session_of(f, &o, &out, NULL);
    gb_tune_request req = {.shapes = f->shapes, .n_shapes = 2};
    gb_tune_result r;
    gb_err err = {0};
    assert_int_equal(gb_session_tune(&s, &f->kernel, &req, &r, &err), GB_OK);
    gb_tune_result_free(&r);

    gb_replay_table t;
    gb_replay_select sel = {.kernel = "fake_kernel"};
    assert_int_equal(gb_session_replay_table(&s, &sel, &t, &err), GB_EINVAL);
    assert_non_null(strstr(err.msg, "holds trials of 2 kernels, shapes or devices"));
    sel.shape = &f->shapes[0];
    assert_int_equal(gb_session_replay_table(&s, &sel, &t, &err), GB_OK);
    assert_int_equal(t.format, GB_REPLAY_CACHE);
    assert_int_equal(t.n_entries, 7); /* V = 1 .. 8 but V=5, which the constraint drops */
    assert_int_equal(t.n_status[GB_TRIAL_OK], 4); /* not V=3 (wrong), 4 (no launch), 7 */
    gb_config best;
    gb_config_at(&t.space, t.entries[t.optimum].ordinal, &best);
    gb_fields fields;
    assert_int_equal(gb_config_to_fields(&best, &fields), GB_OK);
    assert_int_equal(gb_fields_get(&fields, "V")->i, 2); /* the tie goes to the earlier */
    gb_fields_free(&fields);

    gb_replay_opts opts = {.n_seeds = 5, .within_pct = 5};
    gb_replay_stats stats[32], direct;
    int n = 0, best_i = -1;
    s.tuner.strategy = "random";
    s.tuner.seed = 11;
    assert_int_equal(gb_session_replay(&s, &t, &opts, stats, &n, &best_i, &err), GB_OK);
    assert_int_equal(n, 1);
    assert_int_equal(best_i, 0);
    assert_string_equal(stats[0].strategy, "random");
    opts.first_seed = 11; /* what the session's seed means */
    assert_int_equal(gb_replay_run(&t, gb_strategy_find("random"), &opts, &direct, &err), GB_OK);
    assert_memory_equal(stats[0].evals, direct.evals, 5 * sizeof *direct.evals);
    gb_replay_stats_free(&direct);
    gb_replay_stats_free(&stats[0]);
    s.tuner.strategy = NULL; /* every strategy */
    assert_int_equal(gb_session_replay(&s, &t, &opts, stats, &n, &best_i, &err), GB_OK);
    assert_int_equal(n, gb_strategy_n_kinds);
    for (int i = 0; i < n; i++) {
        assert_true(gb_replay_compare(&stats[best_i], &stats[i]) <= 0);
        gb_replay_stats_free(&stats[i]);
    }
    s.tuner.strategy = "simplex";
    assert_int_equal(gb_session_replay(&s, &t, &opts, stats, &n, &best_i, &err), GB_EINVAL);
    assert_string_equal(err.msg, "replay: no strategy 'simplex'");
    gb_replay_table_free(&t);

    s.tuner.cache = NULL;
    assert_int_equal(gb_session_replay_table(&s, &sel, &t, &err), GB_EINVAL);
    gb_session_close(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_tunes_counts_notes_and_reports, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_gpu_compiles_only_and_says_so, setup, teardown),
        cmocka_unit_test_setup_teardown(test_require_gpu_makes_no_gpu_the_error, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_request_that_does_not_check_never_opens_the_gpu,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_the_outputs_are_begun_fed_a_saved_run_and_ended, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(
            test_replay_reads_the_cache_and_runs_the_sessions_strategy_and_seed, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
