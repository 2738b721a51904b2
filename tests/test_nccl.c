/*
 * NCCL collectives (engine/nccl.h, engine/collective.h, exec/collective_run.h, gb.collective):
 *
 * - the loader: a missing library is one sentence naming it and GB_ENODRIVER; a
 *   library without NCCL's entry points is refused by name;
 * - nccl-tests' bandwidths for each op over 2, 4 and 8 ranks, and the buffers
 *   each rank holds;
 * - the request's checks, made before anything starts;
 * - the supervisor against a stand-in child (this program started with
 *   "--collective" and GB_TEST_FAKE_COLLECTIVE set): a set-up or a step that hangs
 *   is killed with its process group and named, the rows before it are kept, a
 *   child that dies or reports an error is named, NCCL_NVLS_ENABLE=0 reaches the
 *   child unless multicast is asked for;
 * - gb.collective's argument errors at the script's line, its rows as a script
 *   sees them (from the stand-in), and the sentence without a driver or NCCL;
 * - on GPUs (skipped without a driver, without NCCL, or with fewer than two GPUs
 *   where two are needed): each op correct and timed for f32, f16 and bf16 on all
 *   GPUs and on one; a GPU that does not exist is refused.
 */
#include "exec/collective_run.h"
#include "engine/driver.h"
#include "engine/nccl.h"
#include "exec/proto.h"
#include "gpu_present.h"
#include "lua_fixture.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#define FAKE_ENV    "GB_TEST_FAKE_COLLECTIVE"
#define PIDFILE_ENV "GB_TEST_FAKE_PIDFILE"

static void contains_at(const char *text, const char *part, const char *file, int line)
{
    if (strstr(text, part)) return;
    print_error("\"%s\" does not contain \"%s\"\n", text, part);
    _fail(file, line);
}
#define assert_contains(text, part) contains_at((text), (part), __FILE__, __LINE__)

static void near_at(double got, double want, double tolerance, const char *file, int line)
{
    if (fabs(got - want) <= tolerance) return;
    print_error("%.17g is not within %g of %.17g\n", got, tolerance, want);
    _fail(file, line);
}
#define assert_near(got, want, tolerance) near_at((got), (want), (tolerance), __FILE__, __LINE__)

/* ---- the loader ------------------------------------------------------------ */

/* The loader loads once per process: each case runs in a child of its own, which
 * exits with 0 when its assertions held. */
static void in_child(void (*fn)(void))
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        fn();
        fflush(NULL);
        _exit(0);
    }
    int status = 0;
    assert_true(pid > 0 && waitpid(pid, &status, 0) == pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

#define CHILD_CHECK(cond)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: %s (%s)\n", __FILE__, __LINE__, #cond, err.msg);               \
            _exit(1);                                                                              \
        }                                                                                          \
    } while (0)

static void load_missing(void)
{
    gb_err err = {0};
    setenv("GPUBENCH_NCCL", "/nonexistent/gpubench-test/libnccl.so.2", 1);
    CHILD_CHECK(gb_nccl_load(&err) == GB_ENODRIVER);
    CHILD_CHECK(strstr(err.msg, "/nonexistent/gpubench-test/libnccl.so.2 not found: install NCCL "
                                "(libnccl2)"));
    CHILD_CHECK(!strchr(err.msg, '\n'));
    gb_err again = {0};
    CHILD_CHECK(gb_nccl_load(&again) == GB_ENODRIVER && !strcmp(again.msg, err.msg));
    CHILD_CHECK(gb_nccl_library() == NULL);
}

static void test_a_missing_library_is_one_sentence_and_enodriver(void **state)
{
    (void)state;
    in_child(load_missing);
}

/* libm is a library, but not NCCL: the first entry point is named. */
static void load_not_nccl(void)
{
    gb_err err = {0};
    setenv("GPUBENCH_NCCL", "libm.so.6", 1);
    CHILD_CHECK(gb_nccl_load(&err) == GB_ENODRIVER);
    CHILD_CHECK(strstr(err.msg, "libm.so.6 has no ncclGetErrorString"));
}

static void test_a_library_without_nccl_entry_points_is_refused_by_name(void **state)
{
    (void)state;
    in_child(load_not_nccl);
}

/* Without GPUBENCH_NCCL: libnccl.so.2 if the machine has it, else the sentence. */
static void load_default(void)
{
    gb_err err = {0};
    unsetenv("GPUBENCH_NCCL");
    int rc = gb_nccl_load(&err);
    if (rc == GB_OK) {
        int version = 0;
        CHILD_CHECK(gb_nccl_library() && gb_nccl.ncclGetVersion(&version) == ncclSuccess);
        CHILD_CHECK(version >= 21000); /* bf16 came in 2.10 */
    } else {
        CHILD_CHECK(rc == GB_ENODRIVER);
        CHILD_CHECK(strstr(err.msg, "libnccl.so.2 not found: install NCCL (libnccl2"));
        CHILD_CHECK(strstr(err.msg, "LD_LIBRARY_PATH"));
    }
}

static void test_the_default_library_loads_or_says_how_to_get_it(void **state)
{
    (void)state;
    in_child(load_default);
}

static void test_version_codes_read_as_text(void **state)
{
    (void)state;
    char text[16];
    gb_nccl_version_text(22803, text, sizeof text);
    assert_string_equal(text, "2.28.3");
    gb_nccl_version_text(21005, text, sizeof text);
    assert_string_equal(text, "2.10.5");
    gb_nccl_version_text(2804, text, sizeof text); /* before 2.9: a digit less */
    assert_string_equal(text, "2.8.4");
}

/* ---- bandwidths and buffers ------------------------------------------------- */

static void expect_bw(gb_collective_op op, int n, double factor)
{
    double alg = 0, bus = 0;
    /* 1e9 bytes in 100 ms: 10 GB/s of algorithm bandwidth, whatever the op */
    gb_collective_bandwidth(op, 1000000000, n, 100.0, &alg, &bus);
    assert_near(alg, 10.0, 1e-12);
    assert_near(bus, 10.0 * factor, 1e-12);
}

static void test_bandwidths_are_nccl_tests_for_each_op_and_rank_count(void **state)
{
    (void)state;
    int ranks[] = {2, 4, 8};
    for (int i = 0; i < 3; i++) {
        double n = ranks[i];
        expect_bw(GB_COLL_ALL_REDUCE, ranks[i], 2 * (n - 1) / n);
        expect_bw(GB_COLL_ALL_GATHER, ranks[i], (n - 1) / n);
        expect_bw(GB_COLL_REDUCE_SCATTER, ranks[i], (n - 1) / n);
        expect_bw(GB_COLL_BROADCAST, ranks[i], 1.0);
    }
    double alg = 0, bus = 0; /* 8 ranks: all_reduce moves 1.75x the buffer per rank */
    gb_collective_bandwidth(GB_COLL_ALL_REDUCE, 1 << 30, 8, 10.0, &alg, &bus);
    assert_near(alg, (double)(1 << 30) / 1e9 / 0.01, 1e-9);
    assert_near(bus, alg * 1.75, 1e-9);
    gb_collective_bandwidth(GB_COLL_ALL_REDUCE, 1 << 30, 1, 10.0, &alg, &bus);
    assert_near(bus, 0.0, 0); /* one rank moves nothing */
    gb_collective_bandwidth(GB_COLL_BROADCAST, 4096, 2, 0.0, &alg, &bus);
    assert_near(alg, 0.0, 0);
}

static void test_each_rank_holds_the_buffers_its_op_needs(void **state)
{
    (void)state;
    /* 1 MiB of f32 over 4 ranks: 262144 elements in all */
    gb_collective_shape s = gb_collective_shape_of(GB_COLL_ALL_GATHER, 1 << 20, 4, 4);
    assert_true(s.count == 65536 && s.in_elems == 65536 && s.out_elems == 262144);
    s = gb_collective_shape_of(GB_COLL_REDUCE_SCATTER, 1 << 20, 4, 4);
    assert_true(s.count == 65536 && s.in_elems == 262144 && s.out_elems == 65536);
    s = gb_collective_shape_of(GB_COLL_ALL_REDUCE, 1 << 20, 2, 4);
    assert_true(s.count == 524288 && s.in_elems == 524288 && s.out_elems == 524288);
    s = gb_collective_shape_of(GB_COLL_BROADCAST, 1 << 20, 2, 8);
    assert_true(s.count == 524288 && s.in_elems == 524288 && s.out_elems == 524288);
}

static void test_sizes_are_named_in_binary_units(void **state)
{
    (void)state;
    char text[32];
    int64_t bytes[] = {6, 4096, 1 << 30, 1536, 3 << 20};
    const char *names[] = {"6 B", "4 KiB", "1 GiB", "1536 B", "3 MiB"};
    for (int i = 0; i < 5; i++) {
        gb_collective_format_bytes(bytes[i], text, sizeof text);
        assert_string_equal(text, names[i]);
    }
}

/* ---- the request's checks ----------------------------------------------------- */

static gb_collective_request request(gb_collective_op op, gb_dtype dtype, int64_t bytes, int g0,
                                     int g1)
{
    gb_collective_request req;
    gb_collective_request_defaults(op, &req);
    req.n_dtypes = 1;
    req.dtypes[0] = dtype;
    req.n_sizes = 1;
    req.sizes[0] = bytes;
    req.n_gpus = 2;
    req.gpus[0] = g0;
    req.gpus[1] = g1;
    return req;
}

static void expect_refused(const gb_collective_request *req, const char *needle)
{
    gb_err err = {0};
    assert_int_equal(gb_collective_check(req, &err), GB_EINVAL);
    assert_contains(err.msg, needle);
}

static void test_the_defaults_are_4_kib_to_1_gib_in_three_dtypes_on_every_gpu(void **state)
{
    (void)state;
    gb_collective_request req;
    gb_collective_request_defaults(GB_COLL_ALL_REDUCE, &req);
    assert_int_equal(req.n_sizes, 19);
    assert_true(req.sizes[0] == 4096 && req.sizes[18] == 1 << 30);
    assert_int_equal(req.n_dtypes, 3);
    assert_true(req.n_gpus == 0 && !req.nvls);
    gb_err err = {0};
    assert_int_equal(gb_collective_check(&req, &err), GB_OK);
}

static void test_bad_requests_are_refused_naming_what_is_wrong(void **state)
{
    (void)state;
    gb_collective_request req = request(GB_COLL_ALL_REDUCE, GB_DT_F32, 4096, 0, 1);
    req.op = (gb_collective_op)99;
    expect_refused(&req, "unknown collective 99");
    gb_collective_op op;
    assert_int_equal(gb_collective_op_parse("all_to_all", &op), GB_EINVAL);
    assert_int_equal(gb_collective_op_parse("reduce_scatter", &op), GB_OK);
    assert_int_equal(op, GB_COLL_REDUCE_SCATTER);

    req = request(GB_COLL_ALL_REDUCE, GB_DT_F64, 4096, 0, 1);
    expect_refused(&req, "dtypes: f64 is not one of f32, f16 and bf16");
    req = request(GB_COLL_ALL_REDUCE, GB_DT_F32, 6, 0, 1);
    expect_refused(&req, "all_reduce: 6 B is not a whole number of f32 elements (4 B each)");
    req = request(GB_COLL_ALL_REDUCE, GB_DT_F32, 4096, 1, 1);
    expect_refused(&req, "gpus: GPU 1 is listed twice");
    req = request(GB_COLL_ALL_REDUCE, GB_DT_F32, 4096, -1, 1);
    expect_refused(&req, "gpus: -1 is not a GPU ordinal");
    req = request(GB_COLL_ALL_GATHER, GB_DT_F32, 12, 0, 1);
    expect_refused(&req, "all_gather over 2 GPUs: 12 B does not split into 2 parts of whole f32 "
                         "elements: sizes must be multiples of 8 B");
    req = request(GB_COLL_REDUCE_SCATTER, GB_DT_BF16, 6, 0, 1);
    expect_refused(&req, "reduce_scatter over 2 GPUs: 6 B does not split");
    req = request(GB_COLL_BROADCAST, GB_DT_F16, 6, 0, 1); /* broadcast does not split */
    gb_err err = {0};
    assert_int_equal(gb_collective_check(&req, &err), GB_OK);
    req.sizes[0] = 0;
    expect_refused(&req, "sizes[1]: 0 bytes is outside 1 B to 1 TiB");
    req = request(GB_COLL_ALL_REDUCE, GB_DT_F32, 4096, 0, 1);
    req.n_dtypes = 2;
    req.dtypes[1] = GB_DT_F32;
    expect_refused(&req, "dtypes: f32 is listed twice");
    req = request(GB_COLL_ALL_REDUCE, GB_DT_F32, 4096, 0, 1);
    req.measure.noise = 0;
    expect_refused(&req, "measure: noise");
}

/* ---- a row on the wire ---------------------------------------------------------- */

static gb_collective_row fake_row(const gb_collective_request *req, int step)
{
    gb_collective_row row = {.op = req->op, .n_gpus = 2, .gpus = {0, 1}, .n_warmup = 3};
    row.dtype = req->dtypes[step / req->n_sizes];
    row.bytes = req->sizes[step % req->n_sizes];
    row.count = row.bytes / (int64_t)gb_dtype_bytes(row.dtype);
    double samples[] = {0.5, 0.5, 0.5, 0.5, 0.5};
    gb_stats_compute(samples, 5, &row.ms);
    return row;
}

static void test_a_row_reads_back_with_its_bandwidths_derived(void **state)
{
    (void)state;
    gb_collective_request req = request(GB_COLL_ALL_REDUCE, GB_DT_BF16, 1 << 20, 0, 1);
    gb_collective_row row = fake_row(&req, 0), back;
    row.errors = 3;
    row.has_first_error = true;
    row.first_error = (gb_collective_mismatch){1, 17, NAN, 4.0};
    json_t *j = gb_wire_encode(&gb_wire_collective_row, &row);
    gb_err err = {0};
    assert_int_equal(gb_wire_decode(&gb_wire_collective_row, j, &back, &err), GB_OK);
    assert_true(back.count == 1 << 19 && back.n_gpus == 2 && back.gpus[1] == 1);
    assert_near(back.algbw_gbps, (double)(1 << 20) / 1e9 / 0.5e-3, 1e-9);
    assert_near(back.busbw_gbps, back.algbw_gbps, 1e-9); /* 2(n-1)/n = 1 for n = 2 */
    assert_true(!back.correct && back.errors == 3 && back.first_error.index == 17);
    assert_true(isnan(back.first_error.got));
    json_object_set_new(j, "count", json_integer(12)); /* 12 bf16 are not 1 MiB */
    assert_int_equal(gb_wire_decode(&gb_wire_collective_row, j, &back, &err), GB_EINVAL);
    assert_contains(err.msg, "row.count: 12 bf16 elements are not 1048576 bytes");
    json_decref(j);
}

/* ---- the supervisor, against a stand-in child --------------------------------------- */

/* The stand-in: reads the request like the real child, then does what
 * GB_TEST_FAKE_COLLECTIVE says: "hang-setup", "hang-step" (ready, one row, then
 * nothing), "die" (ready, then SIGKILL), "error" (an error line naming
 * NCCL_NVLS_ENABLE as it found it). Its pid goes to GB_TEST_FAKE_PIDFILE, and a
 * grandchild sleeps in its process group. */
static int fake_child(const char *mode, int fd)
{
    gb_collective_reader reader = {.fd = fd};
    json_t *line = NULL;
    const char *kind;
    const json_t *payload;
    gb_collective_request req;
    gb_err err = {0};
    if (gb_collective_recv(&reader, -1, &line, &kind, &payload, &err) ||
        gb_wire_decode(&gb_wire_collective_request, payload, &req, &err))
        return 2;
    json_decref(line);
    gb_collective_reader_free(&reader);
    pid_t sleeper = fork();
    if (sleeper == 0) {
        for (;;)
            pause();
    }
    FILE *pids = getenv(PIDFILE_ENV) ? fopen(getenv(PIDFILE_ENV), "w") : NULL;
    if (pids) fprintf(pids, "%d %d\n", (int)getpid(), (int)sleeper), fclose(pids);
    gb_collective_ready ready = {.n_gpus = 2, .gpus = {0, 1}, .nccl_version = 22803};
    if (!strcmp(mode, "error")) {
        const char *nvls = getenv("NCCL_NVLS_ENABLE");
        gb_proto_error e = {.code = GB_ECUDA};
        snprintf(e.message, sizeof e.message, "NCCL_NVLS_ENABLE=%s", nvls ? nvls : "(unset)");
        gb_collective_send(fd, "error", &gb_wire_proto_error, &e, &err);
        return 1;
    }
    if (strcmp(mode, "hang-setup") != 0)
        gb_collective_send(fd, "ready", &gb_wire_collective_ready, &ready, &err);
    if (!strcmp(mode, "die")) kill(getpid(), SIGKILL);
    if (!strcmp(mode, "hang-step")) {
        gb_collective_row row = fake_row(&req, 0);
        gb_collective_send(fd, "row", &gb_wire_collective_row, &row, &err);
    }
    for (;;)
        pause();
}

/* True when pid is gone or a zombie no one has reaped yet. */
static bool dead(int pid)
{
    char path[64], text[256] = "";
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f) return true;
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    const char *close_paren = strrchr(text, ')');
    return close_paren && close_paren[1] == ' ' && close_paren[2] == 'Z';
}

typedef struct fake_run {
    int rc;
    gb_err err;
    gb_collective_result result;
    int child_pid, sleeper_pid;
} fake_run;

static void run_fake(const char *mode, gb_collective_request *req, fake_run *out)
{
    char pidfile[] = "/tmp/gb-test-nccl-XXXXXX";
    int fd = mkstemp(pidfile);
    assert_true(fd >= 0);
    close(fd);
    setenv(FAKE_ENV, mode, 1);
    setenv(PIDFILE_ENV, pidfile, 1);
    gb_collective_opts opts = {.step_timeout_s = 0.5, .setup_timeout_s = 0.5};
    memset(out, 0, sizeof *out);
    out->rc = gb_collective_run(&opts, req, &out->result, &out->err);
    unsetenv(FAKE_ENV);
    unsetenv(PIDFILE_ENV);
    FILE *f = fopen(pidfile, "r");
    assert_non_null(f);
    assert_int_equal(fscanf(f, "%d %d", &out->child_pid, &out->sleeper_pid), 2);
    fclose(f);
    unlink(pidfile);
}

/* The child and what it started are gone (the sleeper within a second: another
 * process may be the one to reap it). */
static void expect_group_gone(const fake_run *r)
{
    assert_true(dead(r->child_pid));
    for (int i = 0; i < 100 && !dead(r->sleeper_pid); i++)
        usleep(10000);
    assert_true(dead(r->sleeper_pid));
}

static void test_a_set_up_that_hangs_is_killed_and_named(void **state)
{
    (void)state;
    gb_collective_request req = request(GB_COLL_ALL_REDUCE, GB_DT_F32, 4096, 0, 1);
    fake_run r;
    run_fake("hang-setup", &req, &r);
    assert_int_equal(r.rc, GB_ETIMEOUT);
    assert_string_equal(r.err.msg, "all_reduce on GPUs 0,1: setting up CUDA, NCCL's communicators "
                                   "and the buffers did not finish within 0.5 s: killed");
    assert_int_equal(r.result.n_rows, 0);
    expect_group_gone(&r);
    gb_collective_result_free(&r.result);
}

static void test_a_step_that_hangs_is_killed_and_the_rows_before_it_are_kept(void **state)
{
    (void)state;
    gb_collective_request req = request(GB_COLL_ALL_REDUCE, GB_DT_BF16, 4096, 0, 1);
    req.n_sizes = 2;
    req.sizes[1] = 1 << 30;
    fake_run r;
    run_fake("hang-step", &req, &r);
    assert_int_equal(r.rc, GB_ETIMEOUT);
    assert_string_equal(r.err.msg,
                        "all_reduce bf16 1 GiB on GPUs 0,1 did not finish within 0.5 s: killed");
    assert_int_equal(r.result.n_rows, 1);
    assert_true(r.result.rows[0].bytes == 4096 && r.result.rows[0].dtype == GB_DT_BF16);
    assert_true(r.result.nccl_version == 22803 && r.result.n_gpus == 2);
    expect_group_gone(&r);
    gb_collective_result_free(&r.result);
}

static void test_a_child_that_dies_is_named_with_its_signal(void **state)
{
    (void)state;
    gb_collective_request req = request(GB_COLL_BROADCAST, GB_DT_F32, 4096, 0, 1);
    fake_run r;
    run_fake("die", &req, &r);
    assert_int_equal(r.rc, GB_EFAULT);
    assert_contains(r.err.msg, "broadcast f32 4 KiB on GPUs 0,1: the collective process was "
                               "killed by signal 9");
    expect_group_gone(&r);
    gb_collective_result_free(&r.result);
}

static void test_multicast_is_off_in_the_child_unless_asked_for(void **state)
{
    (void)state;
    gb_collective_request req = request(GB_COLL_ALL_REDUCE, GB_DT_F32, 4096, 0, 1);
    setenv("NCCL_NVLS_ENABLE", "1", 1);
    fake_run r;
    run_fake("error", &req, &r);
    assert_int_equal(r.rc, GB_ECUDA); /* the child's code and message come through */
    assert_string_equal(r.err.msg, "NCCL_NVLS_ENABLE=0");
    req.nvls = true;
    run_fake("error", &req, &r);
    assert_string_equal(r.err.msg, "NCCL_NVLS_ENABLE=1"); /* the environment's, untouched */
    unsetenv("NCCL_NVLS_ENABLE");
    gb_collective_result_free(&r.result);
}

/* ---- gb.collective in scripts ------------------------------------------------------- */

static void expect_script_error(fixture *f, const char *call, const char *needle)
{
    char text[1024];
    snprintf(text, sizeof text, REQUIRE "local rows = %s\n", call);
    EXPECT_ERROR_AT(f, run(f, text), 2, "gb.collective: ", needle);
}

static void test_bad_arguments_are_script_errors_at_the_call(void **state)
{
    fixture *f = *state;
    expect_script_error(f, "gb.collective 'all_to_all' {}",
                        "unknown collective string \"all_to_all\" (one of: all_reduce, "
                        "all_gather, reduce_scatter, broadcast)");
    expect_script_error(f, "gb.collective 'all_reduce' (5)",
                        "expected a table of options, got integer 5");
    expect_script_error(f, "gb.collective 'all_reduce' { size = { 4096 } }",
                        "unknown option 'size' (did you mean 'sizes'?)");
    expect_script_error(f, "gb.collective 'all_reduce' { sizes = { 0 } }",
                        "sizes[1] must be a positive integer (bytes), got integer 0");
    expect_script_error(f, "gb.collective 'all_reduce' { sizes = {} }",
                        "sizes must be a non-empty list");
    expect_script_error(f, "gb.collective 'all_reduce' { dtypes = { 'f64' } }",
                        "dtypes[1] must be one of f32, f16, bf16, got string \"f64\"");
    expect_script_error(f, "gb.collective 'all_reduce' { gpus = { 0, 0 } }",
                        "gpus lists integer 0 twice");
    expect_script_error(f, "gb.collective 'all_reduce' { gpus = 'some' }",
                        "gpus must be \"all\" or a list of GPU ordinals");
    expect_script_error(f, "gb.collective 'all_reduce' { timeout = -1 }",
                        "timeout must be a positive number of seconds");
    expect_script_error(f, "gb.collective 'all_reduce' { nvls = 'yes' }", "nvls must be a boolean");
    expect_script_error(f, "gb.collective 'all_reduce' { measure = { mode = 'hot' } }",
                        "measure.mode does not apply");
    expect_script_error(f, "gb.collective 'all_reduce' { measure = { noise = 2 } }",
                        "measure.noise must be a number between 0 and 1");
}

static void test_sizes_are_checked_against_dtypes_and_gpus_before_anything_starts(void **state)
{
    fixture *f = *state;
    expect_script_error(f, "gb.collective 'all_reduce' { sizes = { 4096, 6 } }",
                        "all_reduce: 6 B is not a whole number of f32 elements (4 B each)");
    expect_script_error(f, "gb.collective 'all_gather' { sizes = { 12 }, gpus = { 0, 1 } }",
                        "all_gather over 2 GPUs: 12 B does not split into 2 parts");
}

/* The rows of a run that failed part way come with the error; the row's fields
 * are the documented ones. */
static const char *PARTIAL =
    REQUIRE "local ok, e = pcall(gb.collective 'all_reduce', { sizes = { 8192, 1024 }, dtypes = "
            "{ 'bf16' }, gpus = { 0, 1 }, timeout = 0.5, setup_timeout = 5 })\n"
            "assert(not ok and e.code and e.rows, tostring(e))\n"
            "assert(tostring(e):find(': gb.collective: all_reduce bf16 1 KiB on GPUs 0,1 did not "
            "finish within 0.5 s: killed', 1, true), tostring(e))\n"
            "assert(#e.rows == 1 and e.rows.nccl_version == '2.28.3' and #e.rows.gpus == 2)\n"
            "local r = e.rows[1]\n"
            "assert(r.op == 'all_reduce' and r.dtype == 'bf16' and r.bytes == 8192 and r.count == "
            "4096)\n"
            "assert(r.gpus[1] == 0 and r.gpus[2] == 1 and r.correct == true and r.errors == 0)\n"
            "assert(r.ms.median == 0.5 and r.ms.min == 0.5 and r.ms.n == 5 and r.ms.stddev == 0)\n"
            "assert(math.abs(r.algbw_gbps - 8192 / 1e9 / 0.5e-3) < 1e-9, r.algbw_gbps)\n"
            "assert(r.busbw_gbps == r.algbw_gbps and r.first_error == nil)\n";

static void test_a_script_gets_the_rows_of_a_run_that_failed_part_way(void **state)
{
    fixture *f = *state;
    setenv(FAKE_ENV, "hang-step", 1);
    int rc = run(f, PARTIAL);
    unsetenv(FAKE_ENV);
    EXPECT_OK(f, rc);
}

/* Without a driver or NCCL (GPUBENCH_NCCL names a file that is not there), the
 * script hears it at its line and the front end gets the code for "no GPU". */
static void test_without_a_driver_or_nccl_the_script_line_says_so(void **state)
{
    fixture *f = *state;
    setenv("GPUBENCH_NCCL", "/nonexistent/gpubench-test/libnccl.so.2", 1);
    int rc = run(f, REQUIRE "local rows = gb.collective 'all_reduce' { sizes = { 4096 } }\n");
    unsetenv("GPUBENCH_NCCL");
    assert_true(rc == GB_ENODRIVER || rc == GB_ENOGPU);
    char where[160];
    snprintf(where, sizeof where, "%s:2: gb.collective: ", f->path);
    assert_ptr_equal(strstr(f->err.msg, where), f->err.msg);
    if (gpu_present())
        assert_contains(f->err.msg, "/nonexistent/gpubench-test/libnccl.so.2 not found: install "
                                    "NCCL (libnccl2)");
    else
        assert_true(strstr(f->err.msg, "CUDA driver") || strstr(f->err.msg, "GPU"));
}

/* ---- on GPUs ----------------------------------------------------------------------- */

/* The number of GPUs, or skip() when there are fewer than needed or no NCCL.
 * The collectives run on every GPU: this process holds all their leases (the
 * children it starts take none). */
static int gpus_or_skip(int needed)
{
    int count = 0;
    if (!gpu_present()) skip();
    if (gb_nccl_load(NULL) != GB_OK) skip();
    assert_int_equal(gb_cu.cuDeviceGetCount(&count), CUDA_SUCCESS);
    if (count < needed) skip();
    assert_true(gpu_lease_take_all());
    return count;
}

/* A quick method: these runs check correctness, not figures. */
static gb_collective_request gpu_request(gb_collective_op op, int n_gpus)
{
    gb_collective_request req;
    gb_collective_request_defaults(op, &req);
    /* multiples of 4 B x 840 (every rank count from 1 to 8): each splits evenly */
    int64_t sizes[] = {6720, 403200, 67200000};
    req.n_sizes = 3;
    memcpy(req.sizes, sizes, sizeof sizes);
    req.n_gpus = n_gpus;
    for (int i = 0; i < n_gpus; i++)
        req.gpus[i] = i;
    req.measure.max_ms = 50;
    req.measure.warmup_ms = 2;
    return req;
}

static void expect_correct_rows(gb_collective_op op, int n_gpus)
{
    gb_collective_request req = gpu_request(op, n_gpus);
    gb_collective_result result;
    gb_err err = {0};
    int rc = gb_collective_run(NULL, &req, &result, &err);
    if (rc) fail_msg("%s on %d GPUs: %s", gb_collective_op_name(op), n_gpus, err.msg);
    assert_int_equal(result.n_rows, 9);
    assert_true(result.nccl_version > 0 && result.n_gpus == n_gpus);
    for (int i = 0; i < result.n_rows; i++) {
        const gb_collective_row *row = &result.rows[i];
        if (!row->correct)
            fail_msg("%s %s %lld B on %d GPUs: %lld wrong, first on rank %d at %lld: %g, not %g",
                     gb_collective_op_name(op), gb_dtype_name(row->dtype), (long long)row->bytes,
                     n_gpus, (long long)row->errors, row->first_error.rank,
                     (long long)row->first_error.index, row->first_error.got,
                     row->first_error.expected);
        assert_true(row->ms.n >= 10 && row->ms.median > 0 && row->algbw_gbps > 0);
        assert_true(n_gpus == 1 || row->busbw_gbps > 0);
        assert_true(row->dtype == req.dtypes[i / 3] && row->bytes == req.sizes[i % 3]);
    }
    gb_collective_result_free(&result);
}

static void test_each_op_is_correct_in_each_dtype_on_every_gpu(void **state)
{
    (void)state;
    int n = gpus_or_skip(2);
    for (int op = 0; op < GB_COLL_OP_COUNT; op++)
        expect_correct_rows((gb_collective_op)op, n);
}

static void test_each_op_runs_on_one_gpu(void **state)
{
    (void)state;
    gpus_or_skip(1);
    for (int op = 0; op < GB_COLL_OP_COUNT; op++)
        expect_correct_rows((gb_collective_op)op, 1);
}

static void test_a_gpu_that_does_not_exist_is_refused(void **state)
{
    (void)state;
    int n = gpus_or_skip(1);
    gb_collective_request req = gpu_request(GB_COLL_ALL_REDUCE, 1);
    req.n_gpus = 2;
    req.gpus[1] = n + 7;
    gb_collective_result result;
    gb_err err = {0};
    assert_int_equal(gb_collective_run(NULL, &req, &result, &err), GB_EINVAL);
    char needle[64];
    snprintf(needle, sizeof needle, "gpus: GPU %d does not exist", n + 7);
    assert_contains(err.msg, needle);
    gb_collective_result_free(&result);
}

int main(int argc, char **argv)
{
    /* gb_collective_run starts this program as its child: the real one, or the
     * stand-in when a test asks for it. */
    if (argc == 2 && strcmp(argv[1], "--collective") == 0)
        return getenv(FAKE_ENV) ? fake_child(getenv(FAKE_ENV), GB_CHILD_FD)
                                : gb_collective_main(GB_CHILD_FD);
#define L(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_missing_library_is_one_sentence_and_enodriver),
        cmocka_unit_test(test_a_library_without_nccl_entry_points_is_refused_by_name),
        cmocka_unit_test(test_the_default_library_loads_or_says_how_to_get_it),
        cmocka_unit_test(test_version_codes_read_as_text),
        cmocka_unit_test(test_bandwidths_are_nccl_tests_for_each_op_and_rank_count),
        cmocka_unit_test(test_each_rank_holds_the_buffers_its_op_needs),
        cmocka_unit_test(test_sizes_are_named_in_binary_units),
        cmocka_unit_test(test_the_defaults_are_4_kib_to_1_gib_in_three_dtypes_on_every_gpu),
        cmocka_unit_test(test_bad_requests_are_refused_naming_what_is_wrong),
        cmocka_unit_test(test_a_row_reads_back_with_its_bandwidths_derived),
        cmocka_unit_test(test_a_set_up_that_hangs_is_killed_and_named),
        cmocka_unit_test(test_a_step_that_hangs_is_killed_and_the_rows_before_it_are_kept),
        cmocka_unit_test(test_a_child_that_dies_is_named_with_its_signal),
        cmocka_unit_test(test_multicast_is_off_in_the_child_unless_asked_for),
        L(test_bad_arguments_are_script_errors_at_the_call),
        L(test_sizes_are_checked_against_dtypes_and_gpus_before_anything_starts),
        L(test_a_script_gets_the_rows_of_a_run_that_failed_part_way),
        L(test_without_a_driver_or_nccl_the_script_line_says_so),
        cmocka_unit_test(test_each_op_is_correct_in_each_dtype_on_every_gpu),
        cmocka_unit_test(test_each_op_runs_on_one_gpu),
        cmocka_unit_test(test_a_gpu_that_does_not_exist_is_refused),
    };
#undef L
    return cmocka_run_group_tests(tests, NULL, NULL);
}
