/* Looking after a cache: the listing and its filters, staleness, show, rm, gc,
 * compacting, verify. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cache_fixtures.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

static const gb_cache_versions NOW = {.engine = "0.1.0", .nvrtc = "13.0"};

static void set_fp(gb_best_record *r, const char *fp)
{
    free(r->id.kernel_fp);
    r->id.kernel_fp = strdup(fp);
}

static void list(fixture *f, const gb_cache_filter *filter, gb_cache_listing *out)
{
    if (gb_cache_list(f->cache, filter, &NOW, out, &f->err)) fail_msg("%s", f->err.msg);
}

static void put_best(fixture *f, const char *kernel, const char *device, int64_t n, int64_t when)
{
    gb_best_record r = fx_best(kernel, device, n, 64, 0.5, when);
    fx_put_best(f->cache, &r, NULL);
    gb_best_record_free(&r);
}

static void put_trial(fixture *f, const char *kernel, const char *device, int64_t n, int64_t b,
                      const char *cubin)
{
    gb_trial_record t = fx_trial(kernel, device, n, b, 0.5, 1000);
    if (cubin) strcpy(t.cubin, cubin);
    fx_put_trial(f->cache, &t, NULL);
    gb_trial_record_free(&t);
}

static void test_parse_shape_reads_what_ls_prints(void **state)
{
    fixture *f = *state;
    gb_fields shape;
    assert_int_equal(
        gb_cache_parse_shape("K=1024,M=0.5,dt=\"f,32\",on=true,tag=x", &shape, &f->err), GB_OK);
    assert_int_equal(shape.n, 5);
    gb_strbuf sb = GB_STRBUF_INIT;
    gb_fields_append_canonical(&sb, &shape, NULL, 0);
    assert_string_equal(gb_sb_str(&sb), "K=1024,M=0.5,dt=\"f,32\",on=true,tag=\"x\"");
    gb_sb_free(&sb);
    gb_fields_free(&shape);
    assert_int_equal(gb_cache_parse_shape("K=1,M", &shape, &f->err), GB_EINVAL);
    assert_non_null(strstr(f->err.msg, "'M' is not NAME=VALUE"));
    assert_int_equal(gb_cache_parse_shape("=3", &shape, &f->err), GB_EINVAL);
}

static void test_ls_filters_and_counts_trials_and_cubins(void **state)
{
    fixture *f = *state;
    char hex[33];
    put_best(f, "gemm", "H200", 1024, 100);
    put_best(f, "gemm", "H100", 1024, 100);
    put_best(f, "scale", "H200", 7, 100);
    put_trial(f, "gemm", "H200", 1024, 1, NULL);
    put_trial(f, "gemm", "H200", 1024, 2, NULL);
    put_trial(f, "scale", "H200", 7, 2, NULL);
    gb_trial_record flying = fx_trial("gemm", "H100", 1024, 1, 0, 1000);
    flying.in_flight = true;
    flying.status = GB_TRIAL_CRASHED;
    fx_put_trial(f->cache, &flying, NULL);
    gb_trial_record_free(&flying);
    fx_put_cubin(f->cache, 1, "13.0", 1000, hex);
    gb_cache_listing l;
    list(f, NULL, &l);
    assert_int_equal(l.n, 3);
    assert_int_equal(l.n_stale, 0);
    assert_int_equal(l.n_trials, 4);
    assert_int_equal(l.n_status[GB_TRIAL_OK], 3);
    assert_int_equal(l.n_in_flight, 1);
    assert_int_equal(l.n_cubins, 1);
    assert_true(l.cubin_bytes > 1000);
    assert_string_equal(l.entries[0].rec.id.device, "H100"); /* by kernel, then device */
    gb_cache_listing_free(&l);
    gb_cache_filter by_kernel = {.kernel = "gemm"}, by_device = {.device = "H200"};
    list(f, &by_kernel, &l);
    assert_int_equal(l.n, 2);
    assert_int_equal(l.n_trials, 3);
    gb_cache_listing_free(&l);
    list(f, &by_device, &l);
    assert_int_equal(l.n, 2);
    assert_int_equal(l.n_trials, 3);
    gb_cache_listing_free(&l);
    gb_fields shape = fx_fields("N", 7);
    gb_cache_filter by_shape = {.shape = &shape};
    list(f, &by_shape, &l);
    assert_int_equal(l.n, 1);
    assert_string_equal(l.entries[0].rec.id.kernel, "scale");
    gb_cache_listing_free(&l);
    gb_fields_free(&shape);
}

static void test_an_older_record_for_the_same_shape_is_superseded(void **state)
{
    fixture *f = *state;
    gb_best_record old = fx_best("gemm", "H200", 1024, 64, 0.5, 100);
    gb_best_record new = fx_best("gemm", "H200", 1024, 128, 0.4, 200);
    set_fp(&new, "ffeeddccbbaa99887766554433221100");
    fx_put_best(f->cache, &old, NULL);
    fx_put_best(f->cache, &new, NULL);
    gb_cache_listing l;
    list(f, NULL, &l);
    assert_int_equal(l.n, 2);
    assert_int_equal(l.n_stale, 1);
    assert_int_equal(l.entries[0].stale, 0); /* newest first */
    assert_int_equal(l.entries[1].stale, GB_STALE_SUPERSEDED);
    assert_non_null(
        strstr(l.entries[1].why, "superseded by a record tuned later (fingerprint ffeeddccbbaa)"));
    gb_cache_listing_free(&l);
    gb_best_record_free(&old);
    gb_best_record_free(&new);
}

static void write_file(const char *path, const char *text)
{
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs(text, fp);
    fclose(fp);
}

static void test_a_source_file_that_changed_on_disk_makes_its_records_stale(void **state)
{
    fixture *f = *state;
    char path[256], gone[256];
    snprintf(path, sizeof path, "%s/k.cuh", f->root);
    snprintf(gone, sizeof gone, "%s/gone.cuh", f->root);
    const char *text = "template <int B> __global__ void k() {}\n";
    write_file(path, text);
    gb_best_record r = fx_best("k", "H200", 1, 64, 0.5, 100);
    r.sources = calloc(2, sizeof *r.sources);
    r.sources[0].path = strdup(path);
    gb_key hash = gb_key_of_bytes(text, strlen(text));
    gb_key_hex(&hash, r.sources[0].hash);
    r.sources[1].path = strdup(gone);
    strcpy(r.sources[1].hash, "00000000000000000000000000000000");
    r.n_sources = 2;
    fx_put_best(f->cache, &r, NULL);
    gb_cache_listing l;
    list(f, NULL, &l);
    assert_int_equal(l.entries[0].stale, 0); /* a missing file proves nothing */
    assert_non_null(strstr(l.entries[0].note, "source not found here: "));
    gb_cache_listing_free(&l);
    write_file(path, "template <int B> __global__ void k() { /* edited */ }\n");
    list(f, NULL, &l);
    assert_int_equal(l.entries[0].stale, GB_STALE_SOURCE);
    assert_non_null(strstr(l.entries[0].why, "source changed: "));
    assert_non_null(strstr(l.entries[0].why, path));
    gb_cache_listing_free(&l);
    gb_best_record_free(&r);
}

static void test_older_engine_nvrtc_and_driver_make_records_stale(void **state)
{
    fixture *f = *state;
    gb_best_record a = fx_best("a", "H200", 1, 64, 0.5, 100);
    gb_best_record b = fx_best("b", "H200", 1, 64, 0.5, 100);
    gb_best_record c = fx_best("c", "H200", 1, 64, 0.5, 100);
    gb_best_record d = fx_best("d", "H100", 1, 64, 0.5, 100);
    strcpy(a.engine_version, "0.0.9");
    strcpy(b.nvrtc_version, "12.8");
    c.driver_version = 12040; /* the others on H200 have 13000 */
    d.driver_version = 12040; /* alone on its device: nothing newer to compare with */
    gb_best_record *all[] = {&a, &b, &c, &d};
    for (int i = 0; i < 4; i++)
        fx_put_best(f->cache, all[i], NULL);
    gb_cache_listing l;
    list(f, NULL, &l);
    assert_int_equal(l.n, 4);
    assert_int_equal(l.entries[0].stale, GB_STALE_ENGINE);
    assert_non_null(strstr(l.entries[0].why, "gpubench 0.0.9 older than 0.1.0"));
    assert_int_equal(l.entries[1].stale, GB_STALE_NVRTC);
    assert_non_null(strstr(l.entries[1].why, "NVRTC 12.8 older than 13.0"));
    assert_int_equal(l.entries[2].stale, GB_STALE_DRIVER);
    assert_non_null(strstr(l.entries[2].why, "driver 12040 older than 13000"));
    assert_int_equal(l.entries[3].stale, 0);
    char names[64];
    gb_stale_names(GB_STALE_SUPERSEDED | GB_STALE_NVRTC, names, sizeof names);
    assert_string_equal(names, "superseded,nvrtc");
    gb_cache_listing_free(&l);
    gb_cache_versions newer = {.engine = "0.10.0", .nvrtc = "13.0"}; /* 0.10 > 0.9 > 0.1 */
    assert_int_equal(gb_cache_list(f->cache, NULL, &newer, &l, &f->err), GB_OK);
    assert_int_equal(l.n_stale, 4);
    gb_cache_listing_free(&l);
    for (int i = 0; i < 4; i++)
        gb_best_record_free(all[i]);
}

static void test_show_groups_trials_under_their_best(void **state)
{
    fixture *f = *state;
    put_best(f, "gemm", "H200", 1024, 100);
    put_trial(f, "gemm", "H200", 1024, 2, NULL);
    put_trial(f, "gemm", "H200", 1024, 1, NULL);
    put_trial(f, "gemm", "H200", 2048, 1, NULL); /* a shape with no best */
    put_trial(f, "scale", "H200", 1024, 1, NULL);
    gb_cache_group *groups;
    int n, unreadable;
    gb_cache_filter filter = {.kernel = "gemm"};
    assert_int_equal(gb_cache_show(f->cache, &filter, &NOW, &groups, &n, &unreadable, &f->err),
                     GB_OK);
    assert_int_equal(n, 2);
    assert_true(groups[0].has_best);
    assert_int_equal(groups[0].n_trials, 2);
    assert_false(groups[1].has_best);
    assert_int_equal(groups[1].n_trials, 1);
    gb_cache_groups_free(groups, n);
    gb_fields shape = fx_fields("N", 2048);
    filter.shape = &shape;
    assert_int_equal(gb_cache_show(f->cache, &filter, &NOW, &groups, &n, &unreadable, &f->err),
                     GB_OK);
    assert_int_equal(n, 1);
    assert_false(groups[0].has_best);
    gb_cache_groups_free(groups, n);
    gb_fields_free(&shape);
}

static void test_rm_removes_what_matches_and_its_trials(void **state)
{
    fixture *f = *state;
    put_best(f, "gemm", "H200", 1024, 100);
    put_best(f, "gemm", "H100", 1024, 100);
    put_best(f, "scale", "H200", 7, 100);
    put_trial(f, "gemm", "H200", 1024, 1, NULL);
    put_trial(f, "gemm", "H100", 1024, 1, NULL);
    put_trial(f, "gemm", "H100", 4096, 1, NULL); /* no best, but gemm's */
    put_trial(f, "scale", "H200", 7, 1, NULL);
    gb_cache_rm_summary sum;
    gb_cache_rm_opts o = {.filter = {.kernel = "gemm", .device = "H100"}, .dry_run = true};
    assert_int_equal(gb_cache_rm(f->cache, &o, &sum, &f->err), GB_OK);
    assert_int_equal(sum.n_best, 1);
    assert_int_equal(sum.n_trials, 2);
    assert_int_equal(fx_count(f->cache, GB_DB_BEST), 3); /* a dry run removes nothing */
    o.dry_run = false;
    assert_int_equal(gb_cache_rm(f->cache, &o, &sum, &f->err), GB_OK);
    assert_int_equal(fx_count(f->cache, GB_DB_BEST), 2);
    assert_int_equal(fx_count(f->cache, GB_DB_TRIALS), 2);
    gb_fields shape = fx_fields("N", 7);
    o = (gb_cache_rm_opts){.filter = {.shape = &shape}};
    assert_int_equal(gb_cache_rm(f->cache, &o, &sum, &f->err), GB_OK);
    assert_int_equal(sum.n_best, 1);
    assert_int_equal(sum.n_trials, 1);
    assert_int_equal(fx_count(f->cache, GB_DB_BEST), 1);
    gb_fields_free(&shape);
}

static void test_rm_stale_removes_only_stale_records_and_their_trials(void **state)
{
    fixture *f = *state;
    gb_best_record old = fx_best("gemm", "H200", 1024, 64, 0.5, 100);
    gb_best_record new = fx_best("gemm", "H200", 1024, 128, 0.4, 200);
    set_fp(&new, "ffeeddccbbaa99887766554433221100");
    fx_put_best(f->cache, &old, NULL);
    fx_put_best(f->cache, &new, NULL);
    put_trial(f, "gemm", "H200", 1024, 1, NULL); /* the old fingerprint's */
    gb_trial_record t = fx_trial("gemm", "H200", 1024, 1, 0.4, 200);
    free(t.id.kernel_fp);
    t.id.kernel_fp = strdup(new.id.kernel_fp);
    fx_put_trial(f->cache, &t, NULL);
    gb_cache_rm_summary sum;
    gb_cache_rm_opts o = {.stale_only = true, .now = &NOW};
    assert_int_equal(gb_cache_rm(f->cache, &o, &sum, &f->err), GB_OK);
    assert_int_equal(sum.n_best, 1);
    assert_int_equal(sum.n_trials, 1);
    gb_key key;
    assert_int_equal(gb_record_best_key(&new.id, &key), GB_OK);
    assert_true(fx_has(f->cache, GB_DB_BEST, &key));
    assert_int_equal(gb_record_trial_key(&t.id, &t.config, &key), GB_OK);
    assert_true(fx_has(f->cache, GB_DB_TRIALS, &key));
    assert_int_equal(fx_count(f->cache, GB_DB_BEST), 1);
    gb_trial_record_free(&t);
    gb_best_record_free(&old);
    gb_best_record_free(&new);
}

static void test_gc_drops_cubins_no_trial_names_and_other_nvrtc_ones(void **state)
{
    fixture *f = *state;
    char named[33], other[33];
    gb_key kept = fx_put_cubin(f->cache, 1, "13.0", 2000, named);
    gb_key unnamed = fx_put_cubin(f->cache, 2, "13.0", 3000, NULL);
    gb_key old = fx_put_cubin(f->cache, 3, "12.8", 4000, other);
    put_trial(f, "gemm", "H200", 1, 1, named);
    put_trial(f, "gemm", "H200", 1, 2, other); /* named, but no NVRTC here asks for it */
    gb_cache_gc_summary sum;
    assert_int_equal(gb_cache_gc(f->cache, "13.0", true, true, &sum, &f->err), GB_OK);
    assert_int_equal(sum.n_removed, 2);
    assert_int_equal(fx_count(f->cache, GB_DB_CUBINS), 3);
    /* without unnamed, the cubin no trial names stays (a compile-only run's) */
    assert_int_equal(gb_cache_gc(f->cache, "13.0", false, true, &sum, &f->err), GB_OK);
    assert_int_equal(sum.n_removed, 1);
    assert_int_equal(sum.n_other_nvrtc, 1);
    assert_int_equal(sum.n_unnamed, 0);
    assert_int_equal(sum.n_kept_unnamed, 1);
    assert_int_equal(gb_cache_gc(f->cache, "13.0", true, false, &sum, &f->err), GB_OK);
    assert_int_equal(sum.n_cubins, 3);
    assert_int_equal(sum.n_removed, 2);
    assert_int_equal(sum.n_unnamed, 1);
    assert_int_equal(sum.n_other_nvrtc, 1);
    assert_true(sum.bytes_removed > 7000 && sum.bytes_removed < 7400);
    assert_true(fx_has(f->cache, GB_DB_CUBINS, &kept));
    assert_false(fx_has(f->cache, GB_DB_CUBINS, &unnamed));
    assert_false(fx_has(f->cache, GB_DB_CUBINS, &old));
}

static size_t file_bytes(const char *dir)
{
    char path[256];
    struct stat st;
    snprintf(path, sizeof path, "%s/data.mdb", dir);
    assert_int_equal(stat(path, &st), 0);
    return (size_t)st.st_size;
}

static void test_compact_gives_freed_space_back_and_keeps_the_records(void **state)
{
    fixture *f = *state;
    char hex[33];
    for (int i = 0; i < 60; i++)
        fx_put_cubin(f->cache, 100 + i, "13.0", 100000, NULL);
    fx_put_cubin(f->cache, 1, "13.0", 5000, hex);
    put_trial(f, "gemm", "H200", 1, 1, hex);
    gb_cache_gc_summary sum;
    assert_int_equal(gb_cache_gc(f->cache, "13.0", true, false, &sum, &f->err), GB_OK);
    assert_int_equal(sum.n_removed, 60);
    gb_cache_close(f->cache);
    f->cache = NULL;
    size_t before, after;
    assert_int_equal(gb_cache_compact(f->dir, &before, &after, &f->err), GB_OK);
    assert_true(before > 6000000);
    assert_true(after < 1000000);
    assert_int_equal(after, file_bytes(f->dir));
    assert_int_equal(gb_cache_open(f->dir, 0, &f->cache, &f->err), GB_OK);
    assert_int_equal(fx_count(f->cache, GB_DB_CUBINS), 1);
    assert_int_equal(fx_count(f->cache, GB_DB_TRIALS), 1);
    put_trial(f, "gemm", "H200", 1, 2, NULL); /* and it takes writes */
    assert_int_equal(fx_count(f->cache, GB_DB_TRIALS), 2);
}

static void test_compact_refuses_while_another_process_has_the_cache_open(void **state)
{
    fixture *f = *state;
    int ready[2];
    assert_int_equal(pipe(ready), 0);
    gb_cache_close(f->cache);
    f->cache = NULL;
    pid_t child = fork();
    if (child == 0) {
        gb_cache *c = NULL;
        gb_err err;
        if (gb_cache_open(f->dir, GB_CACHE_READONLY, &c, &err)) _exit(1);
        if (write(ready[1], "x", 1) != 1) _exit(1);
        pause();
        _exit(0);
    }
    char x;
    assert_int_equal(read(ready[0], &x, 1), 1);
    size_t before, after;
    assert_int_equal(gb_cache_compact(f->dir, &before, &after, &f->err), GB_ECACHE);
    assert_non_null(strstr(f->err.msg, "another process has the cache open"));
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    close(ready[0]);
    close(ready[1]);
    assert_int_equal(gb_cache_compact(f->dir, &before, &after, &f->err), GB_OK);
}

static void test_verify_finds_records_under_the_wrong_key_and_ones_that_do_not_decode(void **state)
{
    fixture *f = *state;
    gb_cache_verify_summary sum;
    put_best(f, "gemm", "H200", 1024, 100);
    put_trial(f, "gemm", "H200", 1024, 1, NULL);
    fx_put_cubin(f->cache, 1, "13.0", 100, NULL);
    assert_int_equal(gb_cache_verify(f->cache, fx_note, f, &sum, &f->err), GB_OK);
    assert_int_equal(sum.n_problems, 0);
    assert_int_equal(sum.n_checked[GB_DB_BEST], 1);
    assert_int_equal(sum.n_checked[GB_DB_TRIALS], 1);
    assert_int_equal(sum.n_checked[GB_DB_CUBINS], 1);

    gb_best_record r = fx_best("gemm", "H200", 512, 64, 0.5, 100);
    gb_key wrong = gb_key_of_bytes("x", 1), junk = gb_key_of_bytes("y", 1);
    fx_put_best(f->cache, &r, &wrong);
    assert_int_equal(gb_cache_put(f->cache, GB_DB_TRIALS, &junk, "{\"kernel\":", 10, &f->err),
                     GB_OK);
    assert_int_equal(gb_cache_put(f->cache, GB_DB_CUBINS, &junk, "\0\0\0\x09{}", 6, &f->err),
                     GB_OK);
    assert_int_equal(gb_cache_verify(f->cache, fx_note, f, &sum, &f->err), GB_OK);
    assert_int_equal(sum.n_problems, 3);
    char hex[33], expect[128];
    gb_key_hex(&wrong, hex);
    snprintf(expect, sizeof expect, "db best: record %s: its content belongs under key ", hex);
    assert_non_null(strstr(f->notes, expect));
    assert_non_null(strstr(f->notes, "db trials: record"));
    assert_non_null(strstr(f->notes, "does not decode"));
    assert_non_null(strstr(f->notes, "db cubins: record"));
    gb_best_record_free(&r);
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, fx_setup, fx_teardown)
    const struct CMUnitTest tests[] = {
        T(test_parse_shape_reads_what_ls_prints),
        T(test_ls_filters_and_counts_trials_and_cubins),
        T(test_an_older_record_for_the_same_shape_is_superseded),
        T(test_a_source_file_that_changed_on_disk_makes_its_records_stale),
        T(test_older_engine_nvrtc_and_driver_make_records_stale),
        T(test_show_groups_trials_under_their_best),
        T(test_rm_removes_what_matches_and_its_trials),
        T(test_rm_stale_removes_only_stale_records_and_their_trials),
        T(test_gc_drops_cubins_no_trial_names_and_other_nvrtc_ones),
        T(test_compact_gives_freed_space_back_and_keeps_the_records),
        T(test_compact_refuses_while_another_process_has_the_cache_open),
        T(test_verify_finds_records_under_the_wrong_key_and_ones_that_do_not_decode),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
