/* The report's rows as wire views (report/outputs/json_rows.h). */
#include "report/outputs/json_rows.h"

#include "base/value.h"
#include "engine/wire_types.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- enums as the report names them -------------------------------------- */

/* Only what timed samples: a measurement never says auto. */
static const char *timer_name(int v)
{
    return gb_timer_name((gb_timer)v);
}

/* No name (null) for a shape that was no search. */
static const char *end_name(int v)
{
    return v == GB_END_NONE ? NULL : gb_search_end_name((gb_search_end)v);
}

static const gb_wire_enum timer_enum = {GB_TIMER_CUPTI + 1, timer_name};
static const gb_wire_enum end_enum = {GB_END_INTERRUPT + 1, end_name};

/* ---- the entry's fields, on every row ------------------------------------- */

static const gb_json_row_ctx *row_ctx(const void *ctx)
{
    return ctx;
}

static void get_kernel(const void *obj, const void *ctx, void *out)
{
    (void)obj;
    *(const char **)out = row_ctx(ctx)->entry->kernel;
}

static int set_kernel(void *obj, void *ctx, void *value, const char *path, gb_err *err)
{
    (void)obj, (void)path, (void)err;
    gb_report_entry *e = ((gb_json_row_ctx *)ctx)->entry;
    free((char *)e->kernel);
    e->kernel = *(char **)value;
    return GB_OK;
}

static void get_math(const void *obj, const void *ctx, void *out)
{
    (void)obj;
    *(int *)out = (int)row_ctx(ctx)->entry->math;
}

static int set_math(void *obj, void *ctx, void *value, const char *path, gb_err *err)
{
    (void)obj, (void)path, (void)err;
    ((gb_json_row_ctx *)ctx)->entry->math = (gb_math) * (int *)value;
    return GB_OK;
}

static void get_bench(const void *obj, const void *ctx, void *out)
{
    (void)obj;
    *(bool *)out = row_ctx(ctx)->entry->bench;
}

static int set_bench(void *obj, void *ctx, void *value, const char *path, gb_err *err)
{
    (void)obj, (void)path, (void)err;
    ((gb_json_row_ctx *)ctx)->entry->bench = *(bool *)value;
    return GB_OK;
}

/* The baseline's and the trials' rows carry their shape's figures too. */
static const gb_shape_result *shape_of(const void *ctx)
{
    return row_ctx(ctx)->entry->result;
}

static void get_shape(const void *obj, const void *ctx, void *out)
{
    (void)obj;
    *(gb_fields *)out = shape_of(ctx)->shape; /* borrowed */
}

static void get_flops(const void *obj, const void *ctx, void *out)
{
    (void)obj;
    *(double *)out = shape_of(ctx)->flops;
}

static void get_bytes(const void *obj, const void *ctx, void *out)
{
    (void)obj;
    *(double *)out = shape_of(ctx)->bytes;
}

/* amount per second of a median in ms, in units; NaN (null) when either is unknown. */
static double rate(double amount, bool timed, double median_ms, double unit)
{
    double s = timed ? median_ms * 1e-3 : 0;
    return amount > 0 && s > 0 ? amount / s / unit : NAN;
}

/* ---- the best -------------------------------------------------------------- */

static const gb_shape_result *best_of(const void *obj)
{
    return obj;
}

static bool best_timed(const void *obj)
{
    return best_of(obj)->has_best;
}

static void get_role_best(const void *obj, const void *ctx, void *out)
{
    (void)obj, (void)ctx;
    *(const char **)out = "best";
}

static void get_status(const void *obj, const void *ctx, void *out)
{
    (void)obj;
    *(const char **)out = row_ctx(ctx)->status;
}

static void get_reason(const void *obj, const void *ctx, void *out)
{
    (void)obj;
    *(const char **)out = row_ctx(ctx)->reason;
}

static void get_best_tflops(const void *obj, const void *ctx, void *out)
{
    (void)ctx;
    const gb_shape_result *s = best_of(obj);
    *(double *)out = rate(s->flops, s->has_best, s->best.median, 1e12);
}

static void get_best_gbps(const void *obj, const void *ctx, void *out)
{
    (void)ctx;
    const gb_shape_result *s = best_of(obj);
    *(double *)out = rate(s->bytes, s->has_best, s->best.median, 1e9);
}

/* Achieved over the roof the entry sits under (theoretical peaks), in percent. */
static void get_pct_of_peak(const void *obj, const void *ctx, void *out)
{
    (void)obj;
    double fraction = gb_entry_fraction(row_ctx(ctx)->entry, row_ctx(ctx)->roofs, false);
    *(double *)out = fraction > 0 ? 100 * fraction : NAN;
}

static void get_speedup(const void *obj, const void *ctx, void *out)
{
    (void)ctx;
    const gb_shape_result *s = best_of(obj);
    bool known = s->has_best && s->has_baseline && s->best.median > 0;
    *(double *)out = known ? s->baseline.stats.median / s->best.median : NAN;
}

/* ---- the baseline and the trials -------------------------------------------- */

static void get_role_baseline(const void *obj, const void *ctx, void *out)
{
    (void)obj, (void)ctx;
    *(const char **)out = "baseline";
}

static void get_ok(const void *obj, const void *ctx, void *out)
{
    (void)obj, (void)ctx;
    *(const char **)out = "ok";
}

static void get_empty(const void *obj, const void *ctx, void *out)
{
    (void)obj, (void)ctx;
    *(const char **)out = "";
}

static void get_baseline_tflops(const void *obj, const void *ctx, void *out)
{
    (void)ctx;
    const gb_shape_result *s = best_of(obj);
    *(double *)out = rate(s->flops, true, s->baseline.stats.median, 1e12);
}

static void get_baseline_gbps(const void *obj, const void *ctx, void *out)
{
    (void)ctx;
    const gb_shape_result *s = best_of(obj);
    *(double *)out = rate(s->bytes, true, s->baseline.stats.median, 1e9);
}

static const gb_trial_note *trial_of(const void *obj)
{
    return obj;
}

static bool trial_timed(const void *obj)
{
    return trial_of(obj)->status == GB_TRIAL_OK;
}

static void get_role_trial(const void *obj, const void *ctx, void *out)
{
    (void)obj, (void)ctx;
    *(const char **)out = "trial";
}

static void get_trial_reason(const void *obj, const void *ctx, void *out)
{
    (void)ctx;
    const char *reason = trial_of(obj)->reason;
    *(const char **)out = reason ? reason : "";
}

static int set_trial_reason(void *obj, void *ctx, void *value, const char *path, gb_err *err)
{
    (void)ctx, (void)path, (void)err;
    gb_trial_note *t = obj;
    free(t->reason);
    t->reason = *(char **)value;
    return GB_OK;
}

static void get_trial_tflops(const void *obj, const void *ctx, void *out)
{
    const gb_trial_note *t = trial_of(obj);
    *(double *)out = rate(shape_of(ctx)->flops, trial_timed(t), t->measurement.stats.median, 1e12);
}

static void get_trial_gbps(const void *obj, const void *ctx, void *out)
{
    const gb_trial_note *t = trial_of(obj);
    *(double *)out = rate(shape_of(ctx)->bytes, trial_timed(t), t->measurement.stats.median, 1e9);
}

/* ---- reading back ------------------------------------------------------------ */

/* What the JSON does not keep of a measurement: room for the per-sample clocks
 * and throttle flags (unknown: 0 and false), the statistics as the row gave
 * them (a baseline from the cache has no samples to compute them from). */
static int measurement_read_back(gb_measurement *m, const gb_stats *stats, const char *path,
                                 gb_err *err)
{
    size_t n = (size_t)m->n_samples;
    if (n && (!(m->clock_mhz = calloc(n, sizeof *m->clock_mhz)) ||
              !(m->throttled = calloc(n, sizeof *m->throttled))))
        return gb_err_set(err, GB_ENOMEM, "%s: out of memory", path);
    m->stats = *stats;
    m->all_throttled = m->n_throttled > 0 && m->n_throttled == m->n_samples;
    return GB_OK;
}

static int best_finish(void *obj, const char *path, gb_err *err)
{
    gb_shape_result *s = obj;
    s->best_measurement.contended = s->contended;
    s->n_skipped = s->n_status[GB_TRIAL_SKIPPED];
    return measurement_read_back(&s->best_measurement, &s->best, path, err);
}

static int baseline_finish(void *obj, const char *path, gb_err *err)
{
    gb_shape_result *s = obj;
    return measurement_read_back(&s->baseline, &s->baseline.stats, path, err);
}

static int trial_finish(void *obj, const char *path, gb_err *err)
{
    gb_trial_note *t = obj;
    int rc = measurement_read_back(&t->measurement, &t->measurement.stats, path, err);
    if (rc) return rc;
    gb_strbuf text = GB_STRBUF_INIT;
    gb_fields_append_canonical(&text, &t->config, NULL, 0);
    t->config_text = gb_sb_status(&text) ? NULL : strdup(gb_sb_str(&text));
    gb_sb_free(&text);
    return t->config_text ? GB_OK : gb_err_set(err, GB_ENOMEM, "%s: out of memory", path);
}

/* ---- the views ----------------------------------------------------------------- */

/* The measurement every row shows: member M (a gb_measurement), its statistics
 * STATS, whether it was CONTENDED, and TIMED, which says whether it has a time
 * (without, the figures of one are null). */
#define ROW_MEASUREMENT(X, M, STATS, CONTENDED, TIMED)                                             \
    X(STATS, STRUCT, "statistics", .type = &gb_wire_stats, .null_unless = TIMED)                   \
    X(M.samples_ms, DOUBLE, "samples_ms", .arity = GB_WIRE_OWNED,                                  \
      .count = offsetof(GB_WIRE_T, M.n_samples), .max_items = GB_MEASURE_MAX_SAMPLES,              \
      .flags = GB_WIRE_NULL_NAN, .expect = "a list of numbers")                                    \
    X(M.clock_mhz_median, DOUBLE, "clock_mhz", .flags = GB_WIRE_NULL_ZERO, .null_unless = TIMED)   \
    X(M.mode, ENUM, "mode", .enumeration = &gb_wire_enum_mode, .null_unless = TIMED)               \
    X(M.timer, ENUM, "timer", .enumeration = &timer_enum, .null_unless = TIMED,                    \
      .flags = GB_WIRE_OPTIONAL, .dflt = GB_TIMER_EVENTS)                                          \
    X(M.switch_ms, DOUBLE, "switch_ms", .flags = GB_WIRE_NULL_ZERO | GB_WIRE_OPTIONAL,             \
      .null_unless = TIMED)                                                                        \
    X(M.n_switch, INT, "switch_launches", GB_WIRE_RANGE(0, INT_MAX), .flags = GB_WIRE_OPTIONAL)    \
    X(M.capped, BOOL, "capped")                                                                    \
    X(CONTENDED, BOOL, "contended")                                                                \
    X(M.n_throttled, INT, "throttled_samples", GB_WIRE_RANGE(0, INT_MAX))

#define COUNT       GB_WIRE_RANGE(0, INT_MAX)
#define SEARCH(...) .group = "search", __VA_ARGS__
#define COUNTS(...) .group = "counts", COUNT, __VA_ARGS__

#define BEST_ROW(X, V)                                                                             \
    V(STRING, "kernel", .get = get_kernel, .set = set_kernel)                                      \
    V(STRING, "role", .get = get_role_best)                                                        \
    X(shape, FIELDS, "shape")                                                                      \
    X(best_config, FIELDS, "config", .flags = GB_WIRE_NULLABLE,                                    \
      .present = offsetof(gb_shape_result, has_best))                                              \
    V(STRING, "status", .get = get_status)                                                         \
    V(STRING, "reason", .get = get_reason)                                                         \
    ROW_MEASUREMENT(X, best_measurement, best, contended, best_timed)                              \
    X(flops, DOUBLE, "flops", .flags = GB_WIRE_NULL_ZERO)                                          \
    X(bytes, DOUBLE, "bytes", .flags = GB_WIRE_NULL_ZERO)                                          \
    V(DOUBLE, "tflops", .get = get_best_tflops)                                                    \
    V(DOUBLE, "gbps", .get = get_best_gbps)                                                        \
    V(ENUM, "math", .enumeration = &gb_wire_enum_math, .get = get_math, .set = set_math)           \
    X(failure, STRING, "failure", .flags = GB_WIRE_NULL_ZERO)                                      \
    X(race_failure, STRING, "race_failure", .flags = GB_WIRE_NULL_ZERO)                            \
    X(interrupted, BOOL, "interrupted")                                                            \
    X(compile_only, BOOL, "compile_only")                                                          \
    V(DOUBLE, "pct_of_peak", .get = get_pct_of_peak)                                               \
    V(DOUBLE, "speedup", .get = get_speedup)                                                       \
    X(n_leaders, INT, "leaders", COUNT)                                                            \
    X(tie, STRING, "tie", .arity = GB_WIRE_OWNED, .count = offsetof(gb_shape_result, n_tie),       \
      .max_items = INT_MAX)                                                                        \
    X(cached, BOOL, "cached")                                                                      \
    V(BOOL, "bench", .get = get_bench, .set = set_bench)                                           \
    X(strategy, CHARS, "strategy", SEARCH(.flags = GB_WIRE_NULL_ZERO))                             \
    X(seed, UINT64, "seed", SEARCH(.flags = GB_WIRE_U64_TEXT))                                     \
    X(budget_evals, INT64, "budget_evals", SEARCH(GB_WIRE_RANGE(0, INT64_MAX)))                    \
    X(budget_seconds, DOUBLE, "budget_seconds", SEARCH())                                          \
    X(ended_by, ENUM, "ended_by", SEARCH(.enumeration = &end_enum, .flags = GB_WIRE_NULL_ZERO))    \
    X(n_evals, INT, "n_evals", SEARCH(COUNT))                                                      \
    X(n_recorded, INT, "n_recorded", SEARCH(COUNT))                                                \
    X(n_configs, UINT64, "n_configs", SEARCH(.flags = GB_WIRE_U64_TEXT))                           \
    X(n_rejected, UINT64, "n_rejected", SEARCH(.flags = GB_WIRE_U64_TEXT))                         \
    X(n_checked, UINT64, "n_checked", SEARCH(.flags = GB_WIRE_U64_TEXT))                           \
    X(check_s, DOUBLE, "check_s", SEARCH())                                                        \
    X(complete, BOOL, "complete", SEARCH())                                                        \
    X(n_status, INT, "counts", .arity = GB_WIRE_FIXED, .keys = &gb_wire_enum_trial_status,         \
      COUNTS())                                                                                    \
    X(n_timed, INT, "timed", COUNTS())                                                             \
    X(n_resumed, INT, "resumed", COUNTS())                                                         \
    X(n_compiled, INT, "compiled", COUNTS())                                                       \
    X(n_contended, INT, "contended", COUNTS())

/* The baseline's shape and figures are the best row's: written, not read. */
#define BASELINE_ROW(X, V)                                                                         \
    V(STRING, "kernel", .get = get_kernel)                                                         \
    V(STRING, "role", .get = get_role_baseline)                                                    \
    X(shape, FIELDS, "shape", .flags = GB_WIRE_WRITE_ONLY)                                         \
    V(STRING, "status", .get = get_ok)                                                             \
    V(STRING, "reason", .get = get_empty)                                                          \
    ROW_MEASUREMENT(X, baseline, baseline.stats, baseline.contended, NULL)                         \
    X(flops, DOUBLE, "flops", .flags = GB_WIRE_NULL_ZERO | GB_WIRE_WRITE_ONLY)                     \
    X(bytes, DOUBLE, "bytes", .flags = GB_WIRE_NULL_ZERO | GB_WIRE_WRITE_ONLY)                     \
    V(DOUBLE, "tflops", .get = get_baseline_tflops)                                                \
    V(DOUBLE, "gbps", .get = get_baseline_gbps)                                                    \
    V(ENUM, "math", .enumeration = &gb_wire_enum_math, .get = get_math)

#define TRIAL_ROW(X, V)                                                                            \
    V(STRING, "kernel", .get = get_kernel)                                                         \
    V(STRING, "role", .get = get_role_trial)                                                       \
    V(FIELDS, "shape", .get = get_shape)                                                           \
    X(config, FIELDS, "config")                                                                    \
    X(status, ENUM, "status", .enumeration = &gb_wire_enum_trial_status)                           \
    V(STRING, "reason", .get = get_trial_reason, .set = set_trial_reason)                          \
    ROW_MEASUREMENT(X, measurement, measurement.stats, measurement.contended, trial_timed)         \
    V(DOUBLE, "flops", .get = get_flops, .flags = GB_WIRE_NULL_ZERO)                               \
    V(DOUBLE, "bytes", .get = get_bytes, .flags = GB_WIRE_NULL_ZERO)                               \
    V(DOUBLE, "tflops", .get = get_trial_tflops)                                                   \
    V(DOUBLE, "gbps", .get = get_trial_gbps)                                                       \
    V(ENUM, "math", .enumeration = &gb_wire_enum_math, .get = get_math)                            \
    X(resumed, BOOL, "resumed")

#define GB_WIRE_T gb_shape_result
GB_WIRE_VIEW_TABLE(gb_wire_best_row, "best", BEST_ROW, best_finish)
GB_WIRE_VIEW_TABLE(gb_wire_baseline_row, "baseline", BASELINE_ROW, baseline_finish)
#undef GB_WIRE_T
#define GB_WIRE_T gb_trial_note
GB_WIRE_VIEW_TABLE(gb_wire_trial_row, "trial", TRIAL_ROW, trial_finish)
#undef GB_WIRE_T
