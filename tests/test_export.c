/* The exporter: tables from a cache filled through the C API, written as headers
 * that gcc (C99), g++ (C++17) and nvcc compile with -Wall -Wextra -Werror and whose
 * lookups tests/export/lookup.c checks; names that are not C identifiers; the JSON
 * form; files left untouched when unchanged; devices, older entries, fallbacks; and
 * gpubench-tune --export-header. The tools come from GB_BINARY_DIR/cli. */
#include "scratch.h"
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "base/json.h"
#include "cache/cache.h"
#include "cache/record.h"
#include "report/export/export.h"

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef GB_NVCC
#define GB_NVCC ""
#endif

#define TK_DEVICE "GPU \"q\" \\ ?\?= */ \303\251/sm_90/2"

typedef struct fixture {
    char dir[64];
    char cache_dir[128];
    gb_cache *cache;
    int status;
    char out[1 << 16];
    char err[1 << 16];
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "/tmp/gb-test-export-XXXXXX");
    if (!f || !mkdtemp(f->dir)) return -1;
    snprintf(f->cache_dir, sizeof f->cache_dir, "%s/cache", f->dir);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    gb_cache_close(f->cache);
    scratch_remove(f->dir);
    free(f);
    return 0;
}

/* ---- helpers ------------------------------------------------------------ */

/* Runs a shell command in the fixture's folder; its status and output land in f. */
static int sh(fixture *f, const char *fmt, ...)
{
    char cmd[8192], full[9000], path[128];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    snprintf(full, sizeof full, "cd %s && (%s) >%s/stdout 2>%s/stderr", f->dir, cmd, f->dir,
             f->dir);
    int status = system(full);
    f->status = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
    snprintf(path, sizeof path, "%s/stdout", f->dir);
    scratch_read(path, f->out, sizeof f->out);
    snprintf(path, sizeof path, "%s/stderr", f->dir);
    scratch_read(path, f->err, sizeof f->err);
    return f->status;
}

/* gpubench with the given arguments (a shell fragment), in the fixture's folder. */
#define GPUBENCH(f, ...) sh(f, "%s/cli/gpubench " __VA_ARGS__)
static const char *bin(void)
{
    return getenv("GB_BINARY_DIR");
}

static void expect_ok(fixture *f)
{
    if (f->status != 0)
        fail_msg("exit status %d\nstdout: %s\nstderr: %s", f->status, f->out, f->err);
}

static void open_cache(fixture *f)
{
    gb_err err;
    if (!f->cache && gb_cache_open(f->cache_dir, 0, &f->cache, &err)) fail_msg("%s", err.msg);
}

/* Fields from "M=1024,N=512,dtype='f32',SCALE=0.5": quoted values are strings. */
static gb_fields fields(const char *text)
{
    gb_fields out = {0};
    char copy[512], *save = NULL;
    snprintf(copy, sizeof copy, "%s", text);
    for (char *item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(item, '=');
        assert_non_null(eq);
        *eq = '\0';
        gb_value v;
        char *value = eq + 1;
        if (value[0] == '\'') {
            value[strlen(value) - 1] = '\0';
            assert_int_equal(gb_value_str(value + 1, &v), GB_OK);
        } else {
            v = gb_value_num(strtod(value, NULL));
        }
        assert_int_equal(gb_fields_set(&out, item, &v), GB_OK);
        gb_value_free(&v);
    }
    return out;
}

/* Stores a best record as the tuner would (cache/record.h). */
static void put_best_fields(fixture *f, const char *kernel, const char *kernel_fp,
                            const char *device, gb_fields shape, gb_fields config, double median_ms,
                            int64_t when)
{
    open_cache(f);
    gb_best_record rec = {.id = {(char *)kernel, (char *)kernel_fp, (char *)device, shape},
                          .space_fp = "0",
                          .config = config,
                          .when = when};
    rec.stats.median = median_ms;
    snprintf(rec.mode, sizeof rec.mode, "cold");
    snprintf(rec.engine_version, sizeof rec.engine_version, "0.1.0");
    json_t *json = gb_best_record_to_json(&rec);
    assert_non_null(json);
    gb_key key;
    gb_err err;
    assert_int_equal(gb_record_best_key(&rec.id, &key), GB_OK);
    if (gb_cache_put_json(f->cache, GB_DB_BEST, &key, json, &err)) fail_msg("%s", err.msg);
    json_decref(json);
    gb_fields_free(&shape);
    gb_fields_free(&config);
}

static void put_best(fixture *f, const char *kernel, const char *device, const char *shape,
                     const char *config, double median_ms, int64_t when)
{
    put_best_fields(f, kernel, "f1", device, fields(shape), fields(config), median_ms, when);
}

/* Kernel tk of tests/export/lookup.c: four shapes, three configurations. */
static void fill_tk(fixture *f)
{
    put_best(f, "tk", TK_DEVICE, "M=1024,N=1024,dtype='f32'", "ALGO='ws',BM=64,BN=64,SCALE=0.5",
             0.1, 1700000000);
    put_best(f, "tk", TK_DEVICE, "M=4096,N=4096,dtype='f32'", "ALGO='ws',BM=128,BN=128,SCALE=1.5",
             0.9, 1700000100);
    put_best(f, "tk", TK_DEVICE, "M=1024,N=1024,dtype='f16'", "ALGO='ws',BM=128,BN=128,SCALE=1.5",
             0.05, 1700000200);
    gb_fields config = fields("BM=128,BN=64,SCALE=0.5"), shape = fields("M=2048,N=512");
    gb_value v;
    assert_int_equal(gb_value_str("s\"k\\\n*/?\?/", &v), GB_OK); /* untrusted bytes */
    gb_fields_set(&config, "ALGO", &v);
    gb_value_free(&v);
    assert_int_equal(gb_value_str("f32", &v), GB_OK);
    gb_fields_set(&shape, "dtype", &v);
    gb_value_free(&v);
    /* A time no calendar shows: exported as unknown, not passed to gmtime. */
    put_best_fields(f, "tk", "f1", TK_DEVICE, shape, config, 0.3, INT64_MAX / 2);
}

static void fill_gemm(fixture *f)
{
    put_best(f, "gemm", "NVIDIA H200/sm_90/132", "K=1024,M=1024,N=1024", "BM=64,BN=64", 0.125,
             1700000000);
    put_best(f, "gemm", "NVIDIA H200/sm_90/132", "K=4096,M=4096,N=4096", "BM=128,BN=128", 0.5,
             1700000000);
}

/* Whether the fixture's file name holds needle. */
static bool contains_file(fixture *f, const char *name, const char *needle)
{
    static char buf[1 << 17];
    char path[256];
    snprintf(path, sizeof path, "%s/%s", f->dir, name);
    scratch_read(path, buf, sizeof buf);
    return strstr(buf, needle) != NULL;
}

/* Compiles tests/export/lookup.c and unused.c with one compiler and runs lookup. */
static void compile_and_run(fixture *f, const char *compiler, const char *name)
{
    const char *src = getenv("GB_SOURCE_DIR");
    if (sh(f,
           "%s -I. -o %s %s/tests/export/lookup.c && %s -I. -c -o %s_unused.o "
           "%s/tests/export/unused.c && ./%s",
           compiler, name, src, compiler, name, src, name))
        fail_msg("%s (exit %d):\n%s%s", compiler, f->status, f->out, f->err);
}

/* ---- tests -------------------------------------------------------------- */

static void test_names_must_be_c_identifiers_and_not_keywords(void **state)
{
    gb_err err;
    const char *good[] = {"gemm_f32", "_x", "M", "BK2"};
    const char *bad[] = {"gemm.f32", "2x",  "",   "a-b",  "int",
                         "class",    "__x", "_X", "NULL", "tuned_i_"};
    for (size_t i = 0; i < sizeof good / sizeof *good; i++)
        assert_int_equal(gb_export_check_name(good[i], "name", &err), GB_OK);
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        assert_int_equal(gb_export_check_name(bad[i], "parameter", &err), GB_EINVAL);
        assert_non_null(strstr(err.msg, "parameter '"));
    }
}

static void
test_headers_compile_with_gcc_gxx_and_nvcc_and_look_up_exact_nearest_default(void **state)
{
    fixture *f = *state;
    fill_tk(f);
    fill_gemm(f);
    GPUBENCH(f, "export --cache cache --kernel tk --header tk_tuned.h", bin());
    expect_ok(f);
    GPUBENCH(f,
             "export --cache cache --kernel tk --prefix tkm --header tkm_tuned.h "
             "--max-distance 1 --default ALGO=plain,BM=32,BN=32,SCALE=2",
             bin());
    expect_ok(f);
    GPUBENCH(f, "export --cache cache --kernel gemm --header gemm_tuned.h", bin());
    expect_ok(f);
    compile_and_run(f, "gcc -std=c99 -pedantic -Wall -Wextra -Werror", "lookup_c");
    compile_and_run(f, "g++ -std=c++17 -pedantic -Wall -Wextra -Werror -x c++", "lookup_cxx");
    if (!*GB_NVCC || access(GB_NVCC, X_OK) != 0) return; /* nvcc is optional here */
    char nvcc[512];
    snprintf(nvcc, sizeof nvcc,
             "%s -std=c++17 -x cu -Werror all-warnings -Xcompiler -Wall,-Wextra,-Werror", GB_NVCC);
    compile_and_run(f, nvcc, "lookup_cu");
}

/* The run-time lookup (gb_export_table_lookup) gives what the header's gives on the
 * cases tests/export/lookup.c checks. */
static const gb_export_row *look_up(gb_export_table *t, const char *shape, gb_export_match *match)
{
    gb_err err;
    gb_fields asked = fields(shape);
    int row = -2;
    if (gb_export_table_lookup(t, &asked, &row, match, &err)) fail_msg("%s", err.msg);
    gb_fields_free(&asked);
    return row >= 0 ? &t->rows[row] : NULL;
}

static int64_t config_int(const gb_export_table *t, const gb_export_row *r, const char *name)
{
    for (int i = 0; i < t->n_params; i++)
        if (!strcmp(t->params[i].name, name)) return r->config[i].i;
    fail_msg("no parameter %s", name);
    return -1;
}

static void test_the_run_time_lookup_answers_as_the_header_does(void **state)
{
    fixture *f = *state;
    fill_tk(f);
    gb_err err;
    gb_export_table t;
    gb_export_query q = {.kernel = "tk"};
    if (gb_export_load(f->cache, &q, &t, &err) || gb_export_table_finish(&t, NULL, NULL, &err))
        fail_msg("%s", err.msg);
    gb_export_match m;
    const gb_export_row *r = look_up(&t, "M=2048,N=512,dtype='f32'", &m);
    assert_true(m == GB_EXPORT_EXACT && config_int(&t, r, "BM") == 128 && r->median_ms == 0.3);
    r = look_up(&t, "M=3000,N=3000,dtype='f32'", &m);
    assert_true(m == GB_EXPORT_NEAREST && r->median_ms == 0.9);
    r = look_up(&t, "M=2048,N=2048,dtype='f32'", &m); /* a tie: the first in table order */
    assert_true(m == GB_EXPORT_NEAREST && config_int(&t, r, "BM") == 64);
    r = look_up(&t, "M=1000,N=1000,dtype='f16'", &m);
    assert_true(m == GB_EXPORT_NEAREST && r->median_ms == 0.05);
    r = look_up(&t, "M=0,N=1024,dtype='f32'", &m);
    assert_true(m == GB_EXPORT_NEAREST && config_int(&t, r, "BM") == 64);
    assert_null(look_up(&t, "M=1024,N=1024,dtype='bf16'", &m));
    assert_int_equal(m, GB_EXPORT_DEFAULT);
    t.max_distance = 1; /* as --max-distance 1 */
    assert_non_null(look_up(&t, "M=3000,N=3000,dtype='f32'", &m));
    assert_null(look_up(&t, "M=2048,N=2048,dtype='f32'", &m));

    /* A shape without a key field, or with one of another kind, is refused by name. */
    int row;
    gb_fields bad = fields("M=1024,N=1024");
    assert_int_equal(gb_export_table_lookup(&t, &bad, &row, &m, &err), GB_EINVAL);
    assert_non_null(strstr(err.msg, "no field 'dtype'"));
    gb_fields_free(&bad);
    bad = fields("M=1024,N='wide',dtype='f32'");
    assert_int_equal(gb_export_table_lookup(&t, &bad, &row, &m, &err), GB_EINVAL);
    assert_non_null(strstr(err.msg, "'N' is a string"));
    gb_fields_free(&bad);
    gb_export_table_free(&t);
}

static void test_a_kernel_name_that_is_not_a_c_identifier_is_refused(void **state)
{
    fixture *f = *state;
    put_best(f, "gemm.f32", "GPU/sm_90/1", "M=1", "BM=64", 0.5, 1);
    GPUBENCH(f, "export --cache cache --kernel gemm.f32 --header out.h", bin());
    assert_int_equal(f->status, 2);
    assert_non_null(strstr(f->err, "kernel name 'gemm.f32' is not a C identifier"));
    assert_non_null(strstr(f->err, "--prefix NAME"));
    assert_int_equal(access("out.h", F_OK), -1);
    GPUBENCH(f, "export --cache cache --kernel gemm.f32 --prefix 9lives --header out.h", bin());
    assert_int_equal(f->status, 2);
    assert_non_null(strstr(f->err, "--prefix '9lives' is not a C identifier"));
    GPUBENCH(f, "export --cache cache --kernel gemm.f32 --prefix gemm_f32 --header out.h", bin());
    expect_ok(f);
    assert_true(contains_file(f, "out.h", "#define GEMM_F32_TUNED_KERNEL \"gemm.f32\""));
}

static void test_a_parameter_that_is_not_a_c_identifier_is_refused(void **state)
{
    fixture *f = *state;
    put_best(f, "k", "GPU/sm_90/1", "M=1", "B-M=64", 0.5, 1);
    GPUBENCH(f, "export --cache cache --kernel k --header out.h", bin());
    assert_int_equal(f->status, 2);
    assert_non_null(strstr(f->err, "parameter 'B-M' is not a C identifier"));
    put_best(f, "k2", "GPU/sm_90/1", "M=1", "id=3", 0.5, 1);
    GPUBENCH(f, "export --cache cache --kernel k2 --header out.h", bin());
    assert_int_equal(f->status, 2);
    assert_non_null(strstr(f->err, "parameter 'id'"));
}

static time_t mtime(const char *path)
{
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    return st.st_mtime;
}

static void
test_an_unchanged_header_is_left_untouched_and_a_new_entry_changes_the_hash(void **state)
{
    fixture *f = *state;
    fill_gemm(f);
    GPUBENCH(f, "export --cache cache --kernel gemm --header out.h", bin());
    expect_ok(f);
    char path[128], before[1 << 14], after[1 << 14];
    snprintf(path, sizeof path, "%s/out.h", f->dir);
    scratch_read(path, before, sizeof before);
    struct timeval old[2] = {{1000000000, 0}, {1000000000, 0}};
    assert_int_equal(utimes(path, old), 0);
    GPUBENCH(f, "export --cache cache --kernel gemm --header out.h", bin());
    expect_ok(f);
    assert_non_null(strstr(f->err, "unchanged"));
    assert_int_equal(mtime(path), 1000000000);
    put_best(f, "gemm", "NVIDIA H200/sm_90/132", "K=2048,M=2048,N=2048", "BM=64,BN=128", 0.25,
             1700000500);
    GPUBENCH(f, "export --cache cache --kernel gemm --header out.h", bin());
    expect_ok(f);
    assert_true(mtime(path) > 1000000000);
    scratch_read(path, after, sizeof after);
    const char *h1 = strstr(before, "GEMM_TUNED_HASH \""),
               *h2 = strstr(after, "GEMM_TUNED_HASH \"");
    assert_non_null(h1);
    assert_non_null(h2);
    assert_memory_not_equal(h1, h2, 50);
    assert_non_null(strstr(after, "#define GEMM_TUNED_COUNT 3"));
    /* Nothing is left behind from the atomic write. */
    assert_int_equal(sh(f, "ls | grep -c tmp"), 1);
}

/* The "hash" of a JSON table file. */
static void json_hash(const char *path, char out[33])
{
    static char text[1 << 16];
    json_t *json = NULL;
    scratch_read(path, text, sizeof text);
    assert_int_equal(gb_json_parse(text, strlen(text), &json, NULL), GB_OK);
    snprintf(out, 33, "%s", gb_json_str(gb_json_get(json, "hash"), ""));
    assert_int_equal(gb_json_len(gb_json_get(json, "entries")), 4);
    assert_string_equal(gb_json_str(gb_json_get(json, "kernel"), ""), "tk");
    assert_string_equal(gb_json_str(gb_json_get(json, "device"), ""), TK_DEVICE);
    const json_t *params = gb_json_get(json, "params");
    assert_string_equal(gb_json_str(gb_json_get(gb_json_at(params, 0), "type"), ""), "string");
    assert_string_equal(gb_json_str(gb_json_get(gb_json_at(params, 3), "type"), ""), "double");
    json_decref(json);
}

static void test_json_holds_the_same_table_and_reads_back_to_the_same_hash(void **state)
{
    fixture *f = *state;
    fill_tk(f);
    GPUBENCH(f, "export --cache cache --kernel tk --header tk.json --format json", bin());
    expect_ok(f);
    GPUBENCH(f, "export --cache cache --kernel tk --header tk.h", bin());
    expect_ok(f);
    char hash[33], path[128], define[80];
    snprintf(path, sizeof path, "%s/tk.json", f->dir);
    json_hash(path, hash);
    snprintf(define, sizeof define, "#define TK_TUNED_HASH \"%s\"", hash);
    assert_true(contains_file(f, "tk.h", define));
    GPUBENCH(f, "export --table tk.json --header again.h", bin());
    expect_ok(f);
    assert_true(contains_file(f, "again.h", define));
}

static void test_several_devices_need_device_which_may_be_part_of_the_fingerprint(void **state)
{
    fixture *f = *state;
    put_best(f, "g", "NVIDIA H200/sm_90/132", "M=1", "B=1", 0.5, 1);
    put_best(f, "g", "NVIDIA H100 80GB HBM3/sm_90/132", "M=1", "B=2", 0.6, 1);
    GPUBENCH(f, "export --cache cache --kernel g --header g.h", bin());
    assert_int_equal(f->status, 2);
    assert_non_null(strstr(f->err, "several devices"));
    assert_non_null(strstr(f->err, "'NVIDIA H200/sm_90/132'"));
    assert_non_null(strstr(f->err, "'NVIDIA H100 80GB HBM3/sm_90/132'"));
    GPUBENCH(f, "export --cache cache --kernel g --device NVIDIA --header g.h", bin());
    assert_int_equal(f->status, 2);
    GPUBENCH(f, "export --cache cache --kernel g --device H100 --header g.h", bin());
    expect_ok(f);
    assert_true(contains_file(f, "g.h", "X(0, 2)"));
    GPUBENCH(f, "export --cache cache --kernel g --device A100 --header g.h", bin());
    assert_int_equal(f->status, 1);
    assert_non_null(strstr(f->err, "no entry for kernel g on device 'A100'"));
}

static void test_the_newest_entry_of_each_shape_is_exported(void **state)
{
    fixture *f = *state;
    const char *dev = "GPU/sm_90/1";
    put_best_fields(f, "g", "0dd", dev, fields("M=1"), fields("B=1"), 0.5, 1000);
    put_best_fields(f, "g", "ae1", dev, fields("M=1"), fields("B=2"), 0.4, 2000);
    put_best_fields(f, "g", "0dd", dev, fields("M=2"), fields("B=3"), 0.4, 1000);
    /* The kernel's parameters changed: an entry with other names is left out. */
    put_best_fields(f, "g", "0dde", dev, fields("M=3"), fields("C=3"), 0.4, 500);
    GPUBENCH(f, "export --cache cache --kernel g --header g.h", bin());
    expect_ok(f);
    assert_non_null(strstr(f->err, "1 older entry left out"));
    assert_non_null(strstr(f->err, "1 entry left out"));
    assert_non_null(strstr(f->err, "from 2 versions of the kernel's source; --kernel-fp ae1"));
    assert_true(contains_file(f, "g.h", "{{1}, {0, 2, 0.4}}"));
    assert_true(contains_file(f, "g.h", "{{2}, {1, 3, 0.4}}"));
    GPUBENCH(f, "export --cache cache --kernel g --kernel-fp 0d --header g.h", bin());
    expect_ok(f);
    assert_true(contains_file(f, "g.h", "{{1}, {0, 1, 0.5}}"));
}

static void test_a_fallback_stands_in_for_a_missing_cache_or_kernel(void **state)
{
    fixture *f = *state;
    sh(f, "printf '#define G_TUNED_HASH \"x\"\\n' > fallback.h");
    GPUBENCH(f, "export --cache cache --kernel g --header g.h", bin());
    assert_int_equal(f->status, 1);
    assert_non_null(strstr(f->err, "no cache at"));
    GPUBENCH(f, "export --cache cache --kernel g --header g.h --fallback fallback.h", bin());
    expect_ok(f);
    assert_non_null(strstr(f->err, "warning: there is no cache at"));
    assert_true(contains_file(f, "g.h", "G_TUNED_HASH"));
    put_best(f, "other", "GPU/sm_90/1", "M=1", "B=1", 0.5, 1);
    GPUBENCH(f, "export --cache cache --kernel g --header g2.h --fallback fallback.h", bin());
    expect_ok(f);
    assert_non_null(strstr(f->err, "no tuned entry for kernel g (it has other); tuned entries "
                                   "come from timed runs on a GPU: a --compile-only run"));
    GPUBENCH(f, "export --cache cache --kernel h --header h.h --fallback fallback.h", bin());
    assert_int_equal(f->status, 2);
    assert_non_null(strstr(f->err, "does not contain '#define H_TUNED_HASH '"));
}

static void test_a_default_must_name_every_parameter_once(void **state)
{
    fixture *f = *state;
    fill_gemm(f);
    GPUBENCH(f, "export --cache cache --kernel gemm --header g.h --default BM=64", bin());
    assert_int_equal(f->status, 2);
    assert_non_null(strstr(f->err, "gives no value for BN"));
    GPUBENCH(f, "export --cache cache --kernel gemm --header g.h --default BM=64,BX=1", bin());
    assert_int_equal(f->status, 2);
    assert_non_null(strstr(f->err, "no parameter 'BX'"));
    GPUBENCH(f, "export --cache cache --kernel gemm --header g.h --default BM=x,BN=1", bin());
    assert_int_equal(f->status, 2);
    GPUBENCH(f, "export --cache cache --kernel gemm --header g.h --default BN=128,BM=128", bin());
    expect_ok(f);
    assert_true(contains_file(f, "g.h", "#define GEMM_TUNED_DEFAULT_ID 1"));
}

static void test_the_checked_in_fallback_is_the_export_of_its_table(void **state)
{
    fixture *f = *state;
    sh(f,
       "cd %s/examples/consumer/fallback && %s/cli/gpubench export --table gemm_f32_tuned.json "
       "--header %s/regenerated.h",
       getenv("GB_SOURCE_DIR"), bin(), f->dir);
    expect_ok(f);
    sh(f, "cmp regenerated.h %s/examples/consumer/fallback/gemm_f32_tuned.h",
       getenv("GB_SOURCE_DIR"));
    if (f->status)
        fail_msg("examples/consumer/fallback/gemm_f32_tuned.h is stale: regenerate it with "
                 "gpubench export --table gemm_f32_tuned.json --header gemm_f32_tuned.h in its "
                 "folder\n%s",
                 f->out);
}

/* A script whose kernel compiles in a blink; --compile-only needs no GPU. */
static const char TINY[] =
    "local gb = require 'gpubench'\n"
    "local k = gb.kernel { name = '%s', entry = 'scale<${S}>',\n"
    "  source = [[template <int S> __global__ void scale(float *x, int n)\n"
    "    { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] *= S; }]],\n"
    "  params = { S = {2} },\n"
    "  args = function(s) return { gb.tensor('f32', {s.N}, 'randn'), gb.i32(s.N) } end,\n"
    "  grid = function(c, s) return gb.cdiv(s.N, 256) end, block = 256 }\n"
    "gb.tune(k, { shapes = { {N = 1024} } })\n";

static void write_tiny(fixture *f, const char *name, const char *kernel)
{
    char path[128];
    snprintf(path, sizeof path, "%s/%s", f->dir, name);
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fprintf(fp, TINY, kernel);
    fclose(fp);
}

static void test_tune_export_header_writes_the_kernels_the_script_tuned(void **state)
{
    fixture *f = *state;
    put_best(f, "tiny", "GPU/sm_90/1", "N=1024", "S=2", 0.01, 1700000000);
    gb_cache_close(f->cache);
    f->cache = NULL;
    write_tiny(f, "tiny.lua", "tiny");
    sh(f, "%s/cli/gpubench-tune tiny.lua --compile-only --cache cache --export-header t.h", bin());
    expect_ok(f);
    assert_non_null(strstr(f->err, "exported to t.h: kernel tiny on GPU/sm_90/1"));
    assert_true(contains_file(f, "t.h", "#define TINY_TUNED_HASH"));
    sh(f, "%s/cli/gpubench-tune tiny.lua --no-cache --export-header t.h", bin());
    assert_int_equal(f->status, 2);
    write_tiny(f, "dotted.lua", "tiny.v2");
    sh(f, "%s/cli/gpubench-tune dotted.lua --compile-only --cache cache --export-header d.h",
       bin());
    assert_int_equal(f->status, 2);
    assert_non_null(strstr(f->err, "kernel name 'tiny.v2' is not a C identifier"));
    assert_non_null(strstr(f->err, "gpubench export --kernel tiny.v2 --prefix NAME"));
}

static void test_export_help_and_usage_errors(void **state)
{
    fixture *f = *state;
    GPUBENCH(f, "export --help", bin());
    expect_ok(f);
    assert_non_null(strstr(f->out, "--fallback FILE"));
    GPUBENCH(f, "--help", bin());
    assert_non_null(strstr(f->out, "export --header OUT --kernel K"));
    GPUBENCH(f, "export --kernel k", bin());
    assert_int_equal(f->status, 2);
    assert_non_null(strstr(f->err, "no --header OUT"));
    GPUBENCH(f, "export --header x.h", bin());
    assert_int_equal(f->status, 2);
    GPUBENCH(f, "export --header x.h --kernel k --format yaml", bin());
    assert_int_equal(f->status, 2);
    GPUBENCH(f, "export --header x.h --kernel k --max-distance -1", bin());
    assert_int_equal(f->status, 2);
    sh(f, "%s/cli/gpubench-tune --help", bin());
    assert_non_null(strstr(f->out, "--export-header OUT.h"));
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_names_must_be_c_identifiers_and_not_keywords),
        T(test_headers_compile_with_gcc_gxx_and_nvcc_and_look_up_exact_nearest_default),
        T(test_the_run_time_lookup_answers_as_the_header_does),
        T(test_a_kernel_name_that_is_not_a_c_identifier_is_refused),
        T(test_a_parameter_that_is_not_a_c_identifier_is_refused),
        T(test_an_unchanged_header_is_left_untouched_and_a_new_entry_changes_the_hash),
        T(test_json_holds_the_same_table_and_reads_back_to_the_same_hash),
        T(test_several_devices_need_device_which_may_be_part_of_the_fingerprint),
        T(test_the_newest_entry_of_each_shape_is_exported),
        T(test_a_fallback_stands_in_for_a_missing_cache_or_kernel),
        T(test_a_default_must_name_every_parameter_once),
        T(test_the_checked_in_fallback_is_the_export_of_its_table),
        T(test_tune_export_header_writes_the_kernels_the_script_tuned),
        T(test_export_help_and_usage_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
