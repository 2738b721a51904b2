#include "report_fixture.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static char *dup(const char *s)
{
    char *d = strdup(s);
    assert_non_null(d);
    return d;
}

static gb_fields fields(const char *names[], const int64_t values[], int n)
{
    gb_fields f = {0};
    for (int i = 0; i < n; i++) {
        gb_value v = {.kind = GB_VAL_INT, .i = values[i]};
        assert_int_equal(gb_fields_set(&f, names[i], &v), GB_OK);
    }
    return f;
}

static gb_fields square(int64_t n)
{
    const char *names[] = {"K", "M", "N"};
    int64_t values[] = {n, n, n};
    return fields(names, values, 3);
}

static gb_fields tile(int64_t bm, int64_t bn, int64_t bk)
{
    const char *names[] = {"BK", "BM", "BN"};
    int64_t values[] = {bk, bm, bn};
    return fields(names, values, 3);
}

/* A cold measurement of these samples at a steady 1980 MHz. */
static gb_measurement measured(const double *samples, int n)
{
    gb_measurement m = {.mode = GB_MODE_COLD, .launches_per_sample = 1, .clock_steady = true};
    m.samples_ms = calloc((size_t)n, sizeof *m.samples_ms);
    m.clock_mhz = calloc((size_t)n, sizeof *m.clock_mhz);
    m.throttled = calloc((size_t)n, sizeof *m.throttled);
    assert_true(m.samples_ms && m.clock_mhz && m.throttled);
    for (int i = 0; i < n; i++) {
        m.samples_ms[i] = samples[i];
        m.clock_mhz[i] = 1980;
    }
    m.n_samples = n;
    assert_int_equal(gb_measurement_summarise(&m), GB_OK);
    return m;
}

static void add_trial(gb_shape_result *s, gb_fields config, gb_trial_status status,
                      const char *reason, const double *samples, int n)
{
    s->trials = realloc(s->trials, (size_t)(s->n_trials + 1) * sizeof *s->trials);
    assert_non_null(s->trials);
    gb_trial_note *t = &s->trials[s->n_trials++];
    gb_strbuf text = GB_STRBUF_INIT;
    gb_fields_append_canonical(&text, &config, NULL, 0);
    *t = (gb_trial_note){.config_text = dup(gb_sb_str(&text)),
                         .config = config,
                         .status = status,
                         .reason = dup(reason)};
    gb_sb_free(&text);
    if (status == GB_TRIAL_OK) t->measurement = measured(samples, n);
    s->n_status[status]++;
    s->n_timed += status == GB_TRIAL_OK;
}

static gb_shape_result *shape(int64_t n)
{
    gb_shape_result *s = calloc(1, sizeof *s);
    assert_non_null(s);
    s->shape = square(n);
    gb_strbuf text = GB_STRBUF_INIT;
    gb_fields_append_canonical(&text, &s->shape, NULL, 0);
    s->key_text = dup(gb_sb_str(&text));
    gb_sb_free(&text);
    s->flops = 2.0 * (double)n * (double)n * (double)n;
    s->bytes = 3.0 * 4.0 * (double)n * (double)n;
    s->n_configs = 16;
    return s;
}

static void set_best(gb_shape_result *s, gb_fields config, const double *samples, int n)
{
    s->has_best = true;
    s->best_config = config;
    s->best_measurement = measured(samples, n);
    s->best = s->best_measurement.stats;
}

static gb_shape_result *tuned_1024(void)
{
    gb_shape_result *s = shape(1024);
    static const double fast[] = {0.101, 0.102, 0.100, 0.103, 0.101, 0.102, 0.101, 0.100};
    static const double mid[] = {0.151, 0.150, 0.152, 0.149, 0.150, 0.151};
    static const double slow[] = {0.301, 0.298, 0.300, 0.302, 0.299, 0.300};
    static const double race[] = {0.1005, 0.1010, 0.1008, 0.1004, 0.1009, 0.1006,
                                  0.1007, 0.1011, 0.1005, 0.1008, 0.1006, 0.1007};
    static const double ref[] = {0.5, 0.51, 0.49, 0.5, 0.505, 0.495, 0.5, 0.502, 0.498, 0.5};
    add_trial(s, tile(64, 64, 8), GB_TRIAL_OK, "", slow, 6);
    add_trial(s, tile(64, 128, 8), GB_TRIAL_OK, "", mid, 6);
    add_trial(s, tile(128, 128, 8), GB_TRIAL_OK, "", fast, 8);
    add_trial(s, tile(128, 128, 16), GB_TRIAL_WRONG,
              "output 3: 12 of 1048576 elements differ, max |x - r| 0.5 at index 4097", NULL, 0);
    add_trial(s, tile(256, 256, 16), GB_TRIAL_COMPILE_ERROR,
              "sgemm.cuh(42): error: too many resources requested", NULL, 0);
    set_best(s, tile(128, 128, 8), race, 12);
    s->best_measurement.switch_ms = 0.1031; /* the race's first launches, kept apart */
    s->best_measurement.n_switch = 3;
    s->has_baseline = true;
    s->baseline = measured(ref, 10);
    s->n_leaders = 2;
    s->n_compiled = 5;
    s->n_rejected = 11;
    s->n_checked = 16;
    s->check_s = 1e-5;
    snprintf(s->strategy, sizeof s->strategy, "exhaustive");
    s->seed = 1;
    s->ended_by = GB_END_SPACE;
    s->n_evals = 5;
    s->complete = true;
    return s;
}

static gb_shape_result *failed_2048(void)
{
    gb_shape_result *s = shape(2048);
    add_trial(s, tile(64, 64, 8), GB_TRIAL_CRASHED, "CUDA_ERROR_ILLEGAL_ADDRESS in the kernel",
              NULL, 0);
    add_trial(s, tile(128, 128, 8), GB_TRIAL_TIMEOUT, "no answer within 5.0 s", NULL, 0);
    s->n_compiled = 2;
    snprintf(s->strategy, sizeof s->strategy, "exhaustive");
    s->seed = 1;
    s->ended_by = GB_END_SPACE;
    s->n_evals = 2;
    s->complete = true;
    return s;
}

static gb_shape_result *cached_4096(void)
{
    gb_shape_result *s = shape(4096);
    static const double race[] = {5.21, 5.20, 5.22, 5.21, 5.19, 5.20, 5.21, 5.22, 5.20, 5.21};
    set_best(s, tile(128, 128, 16), race, 10);
    s->cached = true;
    s->n_timed = 12;
    snprintf(s->strategy, sizeof s->strategy, "auto");
    s->seed = 7;
    s->budget_evals = 200;
    return s;
}

static gb_shape_result *copy_bench(void)
{
    gb_shape_result *s = calloc(1, sizeof *s);
    assert_non_null(s);
    const char *names[] = {"N"};
    int64_t n = 16777216, block = 256;
    s->shape = fields(names, &n, 1);
    s->key_text = dup("N=16777216");
    s->bytes = 2.0 * 4.0 * (double)n;
    const char *params[] = {"BLOCK"};
    static const double samples[] = {0.0330, 0.0331, 0.0329, 0.0330, 0.0332,
                                     0.0330, 0.0331, 0.0330, 0.0329, 0.0330};
    add_trial(s, fields(params, &block, 1), GB_TRIAL_OK, "", samples, 10);
    set_best(s, fields(params, &block, 1), samples, 10);
    s->n_compiled = 1;
    return s;
}

static void context(gb_run_context *c)
{
    *c = (gb_run_context){.schema_version = GB_REPORT_SCHEMA_VERSION,
                          .engine_version = dup("0.1.0"),
                          .date = dup("2026-11-24T12:00:00+00:00"),
                          .host_name = dup("bench-host"),
                          .executable = dup("gpubench-tune"),
                          .command_line = dup("gpubench-tune examples/gemm.lua --json run.json"),
                          .script = dup("examples/gemm.lua"),
                          .num_cpus = 16,
                          .nvrtc_version = "13.0",
                          .has_device = true,
                          .arch = "sm_90a"};
    gb_device_info *d = &c->device;
    snprintf(d->name, sizeof d->name, "NVIDIA H200");
    d->cc_major = 9;
    d->cc_minor = 0;
    d->sms = 132;
    d->sm_clock_khz = 1980000;
    d->mem_clock_khz = 2619000;
    d->bus_width_bits = 6144;
    d->peak_gbps = 4800;
    d->l2_bytes = 52428800;
    d->mem_bytes = 150754820096;
    d->driver_version = 13000;
    snprintf(d->arch, sizeof d->arch, "sm_90a");
    snprintf(d->clock_source, sizeof d->clock_source, "nvml");
    gb_roofs_peaks(d, &c->roofs);
    c->roofs.ceiling_gbps = 4220;
}

void report_fixture(gb_report *out)
{
    memset(out, 0, sizeof *out);
    context(&out->context);
    out->n_entries = 4;
    out->entries = calloc(4, sizeof *out->entries);
    assert_non_null(out->entries);
    out->entries[0] = (gb_report_entry){.kernel = dup("gemm_f32"), .result = tuned_1024()};
    out->entries[1] = (gb_report_entry){.kernel = dup("gemm_f32"), .result = failed_2048()};
    out->entries[2] = (gb_report_entry){.kernel = dup("gemm_f32"), .result = cached_4096()};
    out->entries[3] =
        (gb_report_entry){.kernel = dup("copy_f32"), .bench = true, .result = copy_bench()};
}

char *report_fixture_read(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    char buf[4096];
    size_t n;
    while (mem && (n = fread(buf, 1, sizeof buf, f)) > 0)
        fwrite(buf, 1, n, mem);
    fclose(f);
    if (mem) fclose(mem);
    return text;
}

static void first_difference(const char *text, const char *golden, const char *name)
{
    int line = 1;
    const char *a = text, *b = golden;
    while (*a && *a == *b) {
        line += *a == '\n';
        a++, b++;
    }
    const char *ea = strchr(a, '\n'), *eb = strchr(b, '\n');
    print_error("%s differs at line %d:\n  got:    %.*s\n  golden: %.*s\n"
                "(GB_UPDATE_GOLDEN=1 rewrites the golden files)\n",
                name, line, ea ? (int)(ea - a) : (int)strlen(a), a,
                eb ? (int)(eb - b) : (int)strlen(b), b);
}

void report_fixture_golden(const char *text, const char *name)
{
    const char *src = getenv("GB_SOURCE_DIR");
    assert_non_null(src);
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/report/%s", src, name);
    const char *update = getenv("GB_UPDATE_GOLDEN");
    if (update && strcmp(update, "1") == 0) {
        FILE *f = fopen(path, "wb");
        assert_non_null(f);
        fputs(text, f);
        fclose(f);
        return;
    }
    char *golden = report_fixture_read(path);
    if (!golden) {
        print_error("cannot read the golden file %s\n", path);
        fail();
    }
    bool same = strcmp(text, golden) == 0;
    if (!same) first_difference(text, golden, path);
    free(golden);
    if (!same) fail();
}
