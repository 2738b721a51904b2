/*
 * What the C API's run-time lookup (gpubench_lookup) costs.
 *
 *   api_lookup DIR [N_SHAPES [N_OTHER]]   fills a new cache in DIR with N_SHAPES
 *                                         (default 1000) best entries of one kernel
 *                                         (M, N, K over a grid) and N_OTHER (default
 *                                         10000) of other kernels, then times
 *
 * the session's open, the first lookup (which reads and keeps the kernel's table),
 * and 10^5 lookups after it, half of shapes the table holds (exact) and half of
 * shapes between them (nearest): per lookup, the median of 5 rounds. Built with
 * the tests (tests/CMakeLists.txt).
 */
#include "base/clock.h"
#include "cache/cache.h"
#include "cache/record.h"
#include "gpubench/gpubench.h"

#include <stdio.h>
#include <stdlib.h>

#define LOOKUPS 100000
#define ROUNDS  5

static void die(const char *what, const char *why)
{
    fprintf(stderr, "api_lookup: %s: %s\n", what, why);
    exit(1);
}

/* A best entry of kernel for M x N x K, as the tuner stores one. */
static void put(gb_cache *cache, const char *kernel, int64_t m, int64_t n, int64_t k)
{
    gb_best_record rec = {.id = {(char *)kernel, "0", "BENCH GPU/sm_90/132", {0}}, .space_fp = "0"};
    gb_value v;
    v = gb_value_int(m), gb_fields_set(&rec.id.shape, "M", &v);
    v = gb_value_int(n), gb_fields_set(&rec.id.shape, "N", &v);
    v = gb_value_int(k), gb_fields_set(&rec.id.shape, "K", &v);
    v = gb_value_int(m % 3 == 0 ? 128 : 64), gb_fields_set(&rec.config, "BM", &v);
    rec.stats.median = 1e-6 * (double)(m * n * k);
    rec.when = 1700000000;
    snprintf(rec.mode, sizeof rec.mode, "cold");
    json_t *json = gb_best_record_to_json(&rec);
    gb_key key;
    gb_err err = {0};
    if (!json || gb_record_best_key(&rec.id, &key) ||
        gb_cache_put_json(cache, GB_DB_BEST, &key, json, &err))
        die("filling the cache", err.msg);
    json_decref(json);
    gb_fields_free(&rec.id.shape);
    gb_fields_free(&rec.config);
}

/* The i-th shape of the grid: sizes 64 x 1..side in each field. */
static void grid_shape(int i, int side, int64_t *m, int64_t *n, int64_t *k)
{
    *m = 64 * (1 + i % side);
    *n = 64 * (1 + (i / side) % side);
    *k = 64 * (1 + i / (side * side));
}

static int compare(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    if (argc < 2) die("usage", "api_lookup DIR [N_SHAPES [N_OTHER]]");
    int n_shapes = argc > 2 ? atoi(argv[2]) : 1000, n_other = argc > 3 ? atoi(argv[3]) : 10000;
    int side = 1;
    while (side * side * side < n_shapes)
        side++;
    gb_cache *cache = NULL;
    gb_err err = {0};
    if (gb_cache_open(argv[1], 0, &cache, &err)) die(argv[1], err.msg);
    for (int i = 0; i < n_shapes; i++) {
        int64_t m, n, k;
        grid_shape(i, side, &m, &n, &k);
        put(cache, "bench_gemm", m, n, k);
    }
    for (int i = 0; i < n_other; i++)
        put(cache, i % 2 ? "other_a" : "other_b", 64 + i, 64, 64);
    gb_cache_close(cache);

    gpubench_error e;
    gpubench_session_options o;
    gpubench_session_options_init(&o);
    o.cache_dir = argv[1];
    o.worker = "/bin/true"; /* never started: nothing here tunes */
    gpubench_session *s = NULL;
    gpubench_kernel *kernel = NULL;
    gpubench_fields *shape = NULL;
    double t0 = gb_now_ms();
    if (gpubench_session_open(&o, &s, &e)) die("open", e.message);
    double t1 = gb_now_ms();
    if (gpubench_kernel_new("bench_gemm", &kernel, &e) || gpubench_fields_new(&shape))
        die("kernel", e.message);
    gpubench_best best = {0};
    gpubench_fields_set_int(shape, "M", 64), gpubench_fields_set_int(shape, "N", 64);
    gpubench_fields_set_int(shape, "K", 64);
    if (gpubench_lookup(s, kernel, shape, &best, &e)) die("first lookup", e.message);
    double t2 = gb_now_ms();
    gpubench_best_clear(&best);
    double per_us[ROUNDS];
    for (int r = 0; r < ROUNDS; r++) {
        double start = gb_now_ms();
        for (int i = 0; i < LOOKUPS; i++) {
            int64_t m, n, k;
            grid_shape(i % n_shapes, side, &m, &n, &k);
            int nearest = i % 2; /* between grid points: the nearest answers */
            gpubench_fields_set_int(shape, "M", m + nearest * 20);
            gpubench_fields_set_int(shape, "N", n);
            gpubench_fields_set_int(shape, "K", k + nearest * 7);
            if (gpubench_lookup(s, kernel, shape, &best, &e)) die("lookup", e.message);
            gpubench_best_clear(&best);
        }
        per_us[r] = (gb_now_ms() - start) * 1e3 / LOOKUPS;
    }
    qsort(per_us, ROUNDS, sizeof *per_us, compare);
    printf("cache: %d entries of the kernel, %d of others\n", n_shapes, n_other);
    printf("session open        %8.2f ms\n", t1 - t0);
    printf("first lookup        %8.2f ms (reads the kernel's table)\n", t2 - t1);
    printf("later lookups       %8.2f us each (median of %d rounds of %d; min %.2f, max %.2f)\n",
           per_us[ROUNDS / 2], ROUNDS, LOOKUPS, per_us[0], per_us[ROUNDS - 1]);
    gpubench_fields_free(shape);
    gpubench_kernel_free(kernel);
    gpubench_session_close(s);
    return 0;
}
