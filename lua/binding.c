#include "lua/binding.h"

#include "cache/ceilings.h"
#include "cache/record.h"
#include "lua/collective.h"
#include "lua/internal.h"
#include "lua/wire.h"
#include "tuner/variant.h"

#include <lauxlib.h>
#include <lualib.h>
#include <stdlib.h>
#include <string.h>

#ifndef GB_VERSION
#define GB_VERSION "0.0.0"
#endif

extern const char gb_prelude_source[];
extern const unsigned long gb_prelude_source_len;

/* ---- core functions ----------------------------------------------------- */

static int to_shapes(lua_State *L, int idx, gb_fields **out, int *out_n, gb_err *err)
{
    int n = (int)luaL_len(L, idx), rc = GB_OK;
    gb_fields *shapes = calloc((size_t)(n ? n : 1), sizeof *shapes);
    if (!shapes) return gb_err_set(err, GB_ENOMEM, "out of memory");
    for (int i = 0; i < n && rc == GB_OK; i++) {
        lua_rawgeti(L, idx, i + 1);
        rc = gb_lua_to_fields(L, -1, &shapes[i], err);
        lua_pop(L, 1);
    }
    *out = shapes;
    *out_n = n;
    return rc;
}

static void free_shapes(gb_fields *shapes, int n)
{
    for (int i = 0; shapes && i < n; i++)
        gb_fields_free(&shapes[i]);
    free(shapes);
}

static gb_tune_request read_request(lua_State *L, int idx)
{
    gb_tune_request req = {0};
    lua_getfield(L, idx, "evals");
    req.max_evals = lua_tointeger(L, -1);
    lua_getfield(L, idx, "seconds");
    req.max_seconds = lua_tonumber(L, -1);
    lua_getfield(L, idx, "baseline");
    req.baseline = lua_toboolean(L, -1);
    lua_pop(L, 3);
    return req;
}

/* The kernel's measurement method: the run's (defaults and command-line flags),
 * with the kernel's own measure table over it, except what the command line set. */
static void resolve_measure(lua_State *L, int idx, const gb_lua_host *host, gb_kernel_def *def)
{
    gb_measure_opts m = host->session.tuner.measure, cli = host->session.tuner.measure;
    unsigned set = host->measure_set;
    lua_getfield(L, idx, "measure");
    if (lua_istable(L, -1)) {
        lua_getfield(L, -1, "mode");
        if (lua_isstring(L, -1)) gb_measure_mode_parse(lua_tostring(L, -1), &m.mode);
        lua_getfield(L, -2, "noise");
        if (lua_isnumber(L, -1)) m.noise = lua_tonumber(L, -1);
        lua_getfield(L, -3, "max_ms");
        if (lua_isnumber(L, -1)) m.max_ms = lua_tonumber(L, -1);
        lua_getfield(L, -4, "min_samples");
        if (lua_isinteger(L, -1)) m.min_samples = (int)lua_tointeger(L, -1);
        lua_getfield(L, -5, "warmup_ms");
        if (lua_isnumber(L, -1)) m.warmup_ms = lua_tonumber(L, -1);
        lua_pop(L, 5);
        def->has_measure = true;
    }
    lua_pop(L, 1);
    if (set & GB_MEASURE_SET_MODE) m.mode = cli.mode;
    if (set & GB_MEASURE_SET_NOISE) m.noise = cli.noise;
    if (set & GB_MEASURE_SET_MAX_MS) m.max_ms = cli.max_ms;
    if (set & GB_MEASURE_SET_SAMPLES)
        m.min_samples = cli.min_samples, m.max_samples = cli.max_samples;
    if (m.max_samples < m.min_samples) m.max_samples = m.min_samples;
    if (m.warmup_max_ms < m.warmup_ms) m.warmup_max_ms = m.warmup_ms;
    def->measure = m;
}

/* Tunes or (with a fixed configuration) benchmarks the kernel at index 1 over the
 * shapes at index 2; pushes the results. Errors come back in err, not raised, so
 * callers free what they own first. */
static int run_kernel(lua_State *L, gb_tune_request *req, gb_err *err)
{
    gb_lua_host *host = gb_lua_host_of(L);
    host->n_calls++;
    gb_kernel_def *def = NULL;
    gb_fields *shapes = NULL;
    gb_tune_result result = {0};
    int n_shapes = 0;
    int rc = gb_lua_kernel_def(L, 1, &def, err);
    if (rc == GB_OK) resolve_measure(L, 1, host, def);
    if (rc == GB_OK) rc = to_shapes(L, 2, &shapes, &n_shapes, err);
    req->shapes = shapes;
    req->n_shapes = n_shapes;
    if (rc == GB_OK) rc = gb_session_tune(&host->session, def, req, &result, err);
    if (rc == GB_OK) gb_lua_push_results(L, &result);
    gb_tune_result_free(&result);
    free_shapes(shapes, n_shapes);
    gb_lua_kernel_free(def);
    return rc;
}

/* core.tune(kernel, shapes, {evals=, seconds=, baseline=, strategy=, seed=}) -> results */
static int core_tune(lua_State *L)
{
    gb_tune_request req = read_request(L, 3);
    gb_strategy_factory *custom = NULL;
    gb_err err = {0};
    int rc = GB_OK;
    lua_getfield(L, 3, "strategy");
    if (lua_type(L, -1) == LUA_TSTRING)
        req.strategy = lua_tostring(L, -1); /* the options table keeps it alive */
    else if (!lua_isnil(L, -1) && (rc = gb_lua_strategy_factory(L, -1, &custom, &err)) == GB_OK)
        req.custom = custom;
    lua_getfield(L, 3, "seed");
    if (lua_isinteger(L, -1)) {
        req.has_seed = true;
        req.seed = (uint64_t)lua_tointeger(L, -1);
    }
    lua_pop(L, 2);
    if (rc == GB_OK) rc = run_kernel(L, &req, &err);
    gb_lua_strategy_factory_free(L, custom);
    return rc ? gb_lua_raise(L, &err) : 1;
}

/* core.strategies() -> the built-in strategies' names, in order */
static int core_strategies(lua_State *L)
{
    lua_createtable(L, gb_strategy_n_kinds, 0);
    for (int i = 0; i < gb_strategy_n_kinds; i++) {
        lua_pushstring(L, gb_strategy_kinds[i].name);
        lua_rawseti(L, -2, i + 1);
    }
    return 1;
}

/* core.bench(kernel, shapes, config | "best", {baseline=}) -> results */
static int core_bench(lua_State *L)
{
    gb_tune_request req = read_request(L, 4);
    gb_fields config = {0};
    gb_err err = {0};
    int rc = GB_OK;
    if (lua_type(L, 3) == LUA_TSTRING)
        req.fixed_best = true;
    else if ((rc = gb_lua_to_fields(L, 3, &config, &err)) == GB_OK)
        req.fixed_config = &config;
    if (rc == GB_OK) rc = run_kernel(L, &req, &err);
    gb_fields_free(&config);
    return rc ? gb_lua_raise(L, &err) : 1;
}

/* The device's wire fields, and the forms scripts have used from the start: cc
 * as "9.0" and the peak clocks in MHz. */
static void push_device(lua_State *L, const gb_device_info *d)
{
    gb_lua_push_wire(L, &gb_wire_device_info, d);
    lua_pushfstring(L, "%d.%d", d->cc_major, d->cc_minor);
    lua_setfield(L, -2, "cc");
    lua_pushinteger(L, d->sm_clock_khz / 1000);
    lua_setfield(L, -2, "sm_clock_mhz");
    lua_pushinteger(L, d->mem_clock_khz / 1000);
    lua_setfield(L, -2, "mem_clock_mhz");
}

/* core.device() -> table, or nil and the reason when there is no GPU */
static int core_device(lua_State *L)
{
    gb_lua_host *host = gb_lua_host_of(L);
    gb_device_info info;
    gb_err err = {0};
    gb_session *s = &host->session;
    int rc = gb_session_gpu(s, &info, &err);
    if (rc == GB_ENOGPU && (s->gpu_missing || s->tuner.compile_only)) {
        lua_pushnil(L);
        lua_pushstring(L, s->gpu_missing ? s->gpu_missing_err.msg : "--compile-only");
        return 2;
    }
    if (rc) return gb_lua_raise(L, &err);
    push_device(L, &info);
    if (s->has_ceilings) {
        gb_lua_push_wire(L, &gb_wire_ceilings, &s->ceilings);
        lua_setfield(L, -2, "ceilings");
    }
    return 1;
}

static int read_best(gb_lua_host *host, const gb_kernel_def *def, gb_fields *shape,
                     gb_best_record *out, gb_err *err)
{
    gb_device_info info;
    gb_record_id id = {.kernel = def->name, .shape = *shape};
    char fp[33], device[320];
    gb_key key;
    json_t *json = NULL;
    int rc = gb_session_gpu(&host->session, &info, err);
    if (rc == GB_OK) rc = gb_tune_kernel_fingerprint(def, fp, err);
    if (rc) return rc;
    gb_device_fingerprint(&info, device, sizeof device);
    id.kernel_fp = fp;
    id.device = device;
    if (gb_record_best_key(&id, &key)) return gb_err_set(err, GB_ENOMEM, "out of memory");
    gb_cache *cache = host->session.tuner.cache;
    if (!cache) return GB_ENOTFOUND;
    rc = gb_cache_get_json(cache, GB_DB_BEST, &key, &json, err);
    if (rc == GB_OK) rc = gb_best_record_from_json(json, out, err);
    json_decref(json);
    return rc;
}

/* core.best(kernel, shape) -> config table or nil */
static int core_best(lua_State *L)
{
    gb_lua_host *host = gb_lua_host_of(L);
    gb_kernel_def *def = NULL;
    gb_fields shape = {0}, key = {0};
    gb_best_record rec = {0};
    gb_err err = {0};
    int rc = gb_lua_kernel_def(L, 1, &def, &err);
    if (rc == GB_OK) rc = gb_lua_to_fields(L, 2, &shape, &err);
    if (rc == GB_OK) rc = gb_tune_key_fields(def, &shape, &key, &err);
    if (rc == GB_OK) rc = read_best(host, def, &key, &rec, &err);
    if (rc == GB_OK)
        gb_lua_push_fields(L, &rec.config);
    else
        lua_pushnil(L);
    gb_best_record_free(&rec);
    gb_fields_free(&shape);
    gb_fields_free(&key);
    gb_lua_kernel_free(def);
    if (rc && rc != GB_ENOTFOUND && rc != GB_ENOGPU) return gb_lua_raise(L, &err);
    return 1;
}

static int core_template_path(lua_State *L)
{
    gb_lua_host *host = gb_lua_host_of(L);
    lua_createtable(L, host->n_template_path, 0);
    for (int i = 0; i < host->n_template_path; i++) {
        lua_pushstring(L, host->template_path[i]);
        lua_rawseti(L, -2, i + 1);
    }
    return 1;
}

static int open_core(lua_State *L)
{
    static const luaL_Reg fns[] = {
        {"tune", core_tune},
        {"strategies", core_strategies},
        {"bench", core_bench},
        {"device", core_device},
        {"best", core_best},
        {"template_path", core_template_path},
        {"gemm_check", gb_lua_core_gemm_check},
        {NULL, NULL},
    };
    luaL_newlib(L, fns);
    lua_pushstring(L, GB_VERSION);
    lua_setfield(L, -2, "version");
    return 1;
}

/* require "gpubench": runs the embedded prelude and keeps its type tables. */
static int open_gpubench(lua_State *L)
{
    if (luaL_loadbufferx(L, gb_prelude_source, gb_prelude_source_len, "=gpubench", "t"))
        return lua_error(L);
    lua_call(L, 0, 1);
    lua_getfield(L, -1, "_Tensor");
    lua_setfield(L, LUA_REGISTRYINDEX, "gpubench.Tensor");
    lua_getfield(L, -1, "_Scalar");
    lua_setfield(L, LUA_REGISTRYINDEX, "gpubench.Scalar");
    lua_getfield(L, -1, "_TensorMap");
    lua_setfield(L, LUA_REGISTRYINDEX, "gpubench.TensorMap");
    return 1;
}

int gb_lua_new(gb_lua_host *host, lua_State **out, gb_err *err)
{
    lua_State *L = luaL_newstate();
    if (!L) return gb_err_set(err, GB_ENOMEM, "cannot create a Lua state");
    luaL_openlibs(L);
    gb_lua_attach(L, host);
    luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
    lua_pushcfunction(L, open_core);
    lua_setfield(L, -2, "gpubench.core");
    lua_pushcfunction(L, open_gpubench);
    lua_setfield(L, -2, "gpubench");
    lua_pushcfunction(L, gb_lua_open_cublas);
    lua_setfield(L, -2, "gpubench.cublas");
    lua_pushcfunction(L, gb_lua_open_collective);
    lua_setfield(L, -2, "gpubench.collective");
    lua_pop(L, 1);
    *out = L;
    return GB_OK;
}

int gb_lua_run(lua_State *L, const char *path, int argc, char **argv, gb_err *err)
{
    lua_createtable(L, argc, 1);
    lua_pushstring(L, path);
    lua_rawseti(L, -2, 0);
    for (int i = 0; i < argc; i++) {
        lua_pushstring(L, argv[i]);
        lua_rawseti(L, -2, i + 1);
    }
    lua_setglobal(L, "arg");
    if (luaL_loadfile(L, path) != LUA_OK) return gb_lua_take_error(L, err);
    int rc = gb_lua_protected_call(L, 0, err);
    if (rc) return rc;
    lua_getglobal(L, "require");
    lua_pushstring(L, "gpubench");
    if ((rc = gb_lua_protected_call(L, 1, err))) return rc;
    /* require left nothing (nresults 0); fetch the module from package.loaded. */
    luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
    lua_getfield(L, -1, "gpubench");
    lua_getfield(L, -1, "_run_declared");
    lua_remove(L, -2);
    lua_remove(L, -2);
    return gb_lua_protected_call(L, 0, err);
}

void gb_lua_close(lua_State *L, gb_lua_host *host)
{
    if (L) lua_close(L);
    if (host) gb_session_close(&host->session); /* the workers, then the GPU's lease */
}
