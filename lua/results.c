/*
 * The results table gb.tune and gb.bench return (docs/lua-api.md, "Results"), as
 * a wire view (base/wire.h) of the result model, pushed by lua/wire.c: one table
 * per shape, with the best in its own table, the counts and the search in theirs.
 * The layout is the Lua contract, older than the JSON report's, so it is a view of
 * its own rather than the report's rows (report/outputs/json_rows.c): a result
 * field a script should see is one line here.
 */
#include "engine/wire_types.h"
#include "lua/internal.h"
#include "lua/wire.h"

#include <limits.h>
#include <stddef.h>

static const gb_shape_result *result_of(const void *obj)
{
    return obj;
}

/* ---- when a field is there ------------------------------------------------ */

static bool has_best(const void *obj)
{
    return result_of(obj)->has_best;
}

static bool best_has_flops(const void *obj)
{
    return has_best(obj) && result_of(obj)->flops > 0;
}

static bool best_has_bytes(const void *obj)
{
    return has_best(obj) && result_of(obj)->bytes > 0;
}

/* A tie is listed only when leaders tied: one name is no tie. */
static bool best_tied(const void *obj)
{
    return has_best(obj) && result_of(obj)->n_tie > 1;
}

static bool has_baseline(const void *obj)
{
    return result_of(obj)->has_baseline;
}

static bool has_speedup(const void *obj)
{
    return has_best(obj) && has_baseline(obj);
}

/* ---- what a script sees that the struct does not hold ---------------------- */

static void get_key(const void *obj, const void *ctx, void *out)
{
    (void)ctx;
    const char *key = result_of(obj)->key_text;
    *(const char **)out = key ? key : "";
}

static double best_seconds(const gb_shape_result *r)
{
    return r->best.median * 1e-3;
}

static void get_tflops(const void *obj, const void *ctx, void *out)
{
    (void)ctx;
    const gb_shape_result *r = result_of(obj);
    *(double *)out = r->flops / best_seconds(r) / 1e12;
}

static void get_gbps(const void *obj, const void *ctx, void *out)
{
    (void)ctx;
    const gb_shape_result *r = result_of(obj);
    *(double *)out = r->bytes / best_seconds(r) / 1e9;
}

static void get_speedup(const void *obj, const void *ctx, void *out)
{
    (void)ctx;
    const gb_shape_result *r = result_of(obj);
    *(double *)out = r->baseline.stats.median / r->best.median;
}

/* No name (nil: the field is absent) for a shape that was no search. */
static const char *end_name(int v)
{
    return v == GB_END_NONE ? NULL : gb_search_end_name((gb_search_end)v);
}

static const gb_wire_enum end_enum = {GB_END_INTERRUPT + 1, end_name};

/* ---- the view ----------------------------------------------------------------- */

#define BEST(...)   .group = "best", .when = has_best, __VA_ARGS__
#define COUNTS(...) .group = "counts", __VA_ARGS__
#define SEARCH(...) .group = "search", __VA_ARGS__
#define BUDGET      .group = "search.budget", .flags = GB_WIRE_LUA_OMIT_ZERO

#define LUA_RESULT(X, V)                                                                           \
    X(shape, FIELDS, "shape")                                                                      \
    V(STRING, "key", .get = get_key)                                                               \
    X(cached, BOOL, "cached")                                                                      \
    X(best_config, FIELDS, "config", BEST())                                                       \
    X(best.median, DOUBLE, "ms", BEST())                                                           \
    V(DOUBLE, "tflops", .get = get_tflops, .group = "best", .when = best_has_flops)                \
    V(DOUBLE, "gbps", .get = get_gbps, .group = "best", .when = best_has_bytes)                    \
    X(best_measurement, STRUCT, "measurement", .type = &gb_wire_measurement,                       \
      BEST(.flags = GB_WIRE_INLINE_STRUCT))                                                        \
    X(best, STRUCT, "stats", .type = &gb_wire_stats, BEST())                                       \
    X(tie, STRING, "tie", .arity = GB_WIRE_OWNED, .count = offsetof(gb_shape_result, n_tie),       \
      .max_items = INT_MAX, .group = "best", .when = best_tied)                                    \
    X(baseline.stats, STRUCT, "baseline", .type = &gb_wire_stats, .when = has_baseline)            \
    V(DOUBLE, "speedup", .get = get_speedup, .when = has_speedup)                                  \
    X(n_configs, UINT64, "configs", COUNTS())                                                      \
    X(n_rejected, UINT64, "rejected", COUNTS())                                                    \
    X(n_compiled, INT, "compiled", COUNTS())                                                       \
    X(n_timed, INT, "timed", COUNTS())                                                             \
    X(n_status, INT, "by_status", .arity = GB_WIRE_FIXED, .keys = &gb_wire_enum_trial_status,      \
      COUNTS())                                                                                    \
    X(n_leaders, INT, "leaders")                                                                   \
    X(strategy, CHARS, "strategy", SEARCH())                                                       \
    X(seed, UINT64, "seed", SEARCH())                                                              \
    X(budget_evals, INT64, "evals", BUDGET)                                                        \
    X(budget_seconds, DOUBLE, "seconds", BUDGET)                                                   \
    X(ended_by, ENUM, "ended_by", SEARCH(.enumeration = &end_enum))                                \
    X(n_evals, INT, "evals", SEARCH())                                                             \
    X(n_recorded, INT, "recorded", SEARCH())                                                       \
    X(complete, BOOL, "complete", SEARCH())                                                        \
    X(race_failure, STRING, "race_failure")                                                        \
    X(failure, STRING, "failure")

#define GB_WIRE_T gb_shape_result
GB_WIRE_VIEW_TABLE(gb_lua_result_wire, "result", LUA_RESULT, NULL)
#undef GB_WIRE_T

void gb_lua_push_results(lua_State *L, const gb_tune_result *result)
{
    lua_createtable(L, result->n_shapes, 0);
    for (int i = 0; i < result->n_shapes; i++) {
        gb_lua_push_wire(L, &gb_lua_result_wire, &result->shapes[i]);
        lua_rawseti(L, -2, i + 1);
    }
}
