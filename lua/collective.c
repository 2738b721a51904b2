/* The C side of gb.collective (lua/collective.lua): the chunk, embedded, and
 * native.run, which turns the checked options into a request, runs it (engine/
 * collective.h) and pushes the rows. */
#include "lua/collective.h"

#include "exec/collective_run.h"
#include "engine/nccl.h"
#include "lua/internal.h"
#include "lua/wire.h"

#include <lauxlib.h>
#include <string.h>

extern const char gb_collective_source[];
extern const unsigned long gb_collective_source_len;

/* ---- the options -------------------------------------------------------- */

/* A list field of at most max items (more: the count alone is kept, and the
 * request's check refuses it); each item through read(L, -1, &out[i]). */
static int read_list(lua_State *L, int idx, const char *field, int max,
                     void (*read)(lua_State *, void *, int), void *out)
{
    lua_getfield(L, idx, field);
    int n = lua_istable(L, -1) ? (int)luaL_len(L, -1) : -1;
    for (int i = 0; i < n && i < max; i++) {
        lua_rawgeti(L, -1, i + 1);
        read(L, out, i);
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    return n;
}

static void read_size(lua_State *L, void *out, int i)
{
    ((int64_t *)out)[i] = (int64_t)lua_tointeger(L, -1);
}

static void read_dtype(lua_State *L, void *out, int i)
{
    gb_dtype *dtypes = out;
    const char *name = lua_tostring(L, -1);
    if (!name || gb_dtype_parse(name, &dtypes[i])) dtypes[i] = GB_DT_COUNT; /* refused later */
}

static void read_gpu(lua_State *L, void *out, int i)
{
    ((int *)out)[i] = (int)lua_tointeger(L, -1);
}

static double number(lua_State *L, int idx, const char *field, double dflt)
{
    lua_getfield(L, idx, field);
    double v = lua_isnumber(L, -1) ? lua_tonumber(L, -1) : dflt;
    lua_pop(L, 1);
    return v;
}

/* measure = { noise=, max_ms=, min_samples=, warmup_ms= } over the defaults, as a
 * kernel's measure table is (lua/binding.c). */
static void read_measure(lua_State *L, int idx, gb_measure_opts *m)
{
    lua_getfield(L, idx, "measure");
    if (lua_istable(L, -1)) {
        int t = lua_gettop(L);
        m->noise = number(L, t, "noise", m->noise);
        m->max_ms = number(L, t, "max_ms", m->max_ms);
        m->min_samples = (int)number(L, t, "min_samples", m->min_samples);
        m->warmup_ms = number(L, t, "warmup_ms", m->warmup_ms);
    }
    lua_pop(L, 1);
    if (m->max_samples < m->min_samples) m->max_samples = m->min_samples;
    if (m->warmup_max_ms < m->warmup_ms) m->warmup_max_ms = m->warmup_ms;
}

/* The request of op with the options at idx; absent lists keep the defaults. */
static void read_request(lua_State *L, gb_collective_op op, int idx, gb_collective_request *req)
{
    gb_collective_request_defaults(op, req);
    int n = read_list(L, idx, "sizes", GB_COLLECTIVE_MAX_SIZES, read_size, req->sizes);
    if (n >= 0) req->n_sizes = n;
    n = read_list(L, idx, "dtypes", GB_COLLECTIVE_MAX_DTYPES, read_dtype, req->dtypes);
    if (n >= 0) req->n_dtypes = n;
    n = read_list(L, idx, "gpus", GB_COLLECTIVE_MAX_GPUS, read_gpu, req->gpus);
    if (n >= 0) req->n_gpus = n;
    lua_getfield(L, idx, "nvls");
    req->nvls = lua_toboolean(L, -1);
    lua_pop(L, 1);
    read_measure(L, idx, &req->measure);
}

/* ---- the results -------------------------------------------------------- */

/* The rows, with the run's GPUs and NCCL version on the list itself. */
static void push_rows(lua_State *L, const gb_collective_result *r)
{
    lua_createtable(L, r->n_rows, 2);
    for (int i = 0; i < r->n_rows; i++) {
        gb_lua_push_wire(L, &gb_wire_collective_row, &r->rows[i]);
        lua_rawseti(L, -2, i + 1);
    }
    lua_createtable(L, r->n_gpus, 0);
    for (int i = 0; i < r->n_gpus; i++) {
        lua_pushinteger(L, r->gpus[i]);
        lua_rawseti(L, -2, i + 1);
    }
    lua_setfield(L, -2, "gpus");
    if (r->nccl_version) {
        char version[32];
        gb_nccl_version_text(r->nccl_version, version, sizeof version);
        lua_pushstring(L, version);
        lua_setfield(L, -2, "nccl_version");
    }
}

/* native.run(op, options) -> rows, or rows, code, message when the run failed part
 * way (the rows that finished). A request that does not check is a script error,
 * raised at the script's line before anything starts. */
static int native_run(lua_State *L)
{
    gb_collective_op op;
    if (gb_collective_op_parse(luaL_checkstring(L, 1), &op))
        return luaL_error(L, "gb.collective: unknown collective %s", lua_tostring(L, 1));
    luaL_checktype(L, 2, LUA_TTABLE);
    gb_lua_host_of(L)->n_calls++;
    gb_collective_request req;
    gb_collective_opts opts = {.step_timeout_s = number(L, 2, "timeout", 60),
                               .setup_timeout_s = number(L, 2, "setup_timeout", 120)};
    gb_err err = {0}, script = {0};
    read_request(L, op, 2, &req);
    if (gb_collective_check(&req, &err)) {
        gb_err_set(&script, GB_ESCRIPT, "gb.collective: %s", err.msg);
        return gb_lua_raise(L, &script);
    }
    gb_collective_result result;
    int rc = gb_collective_run(&opts, &req, &result, &err);
    push_rows(L, &result);
    gb_collective_result_free(&result);
    if (rc == GB_OK) return 1;
    lua_pushinteger(L, rc);
    lua_pushstring(L, err.msg);
    return 3;
}

/* require "gpubench.collective": the chunk, under the prelude's chunk name so
 * that its errors are placed at the script's line, given the C functions. */
int gb_lua_open_collective(lua_State *L)
{
    if (luaL_loadbufferx(L, gb_collective_source, gb_collective_source_len, "=gpubench", "t"))
        return lua_error(L);
    static const luaL_Reg fns[] = {{"run", native_run}, {NULL, NULL}};
    luaL_newlib(L, fns);
    lua_call(L, 1, 1);
    return 1;
}
