/* A script's own search strategy, behind the same seam as the built-in ones
 * (tuner/strategy.h). Two forms:
 *
 *   strategy = { ask = function(n, history) ... end, tell = function(results) ... end }
 *   strategy = function(n, history) ... coroutine.yield(configs) ... end
 *   strategy = coroutine.create(function(n, history) ... end)   (serves one shape)
 *
 * ask returns (a function yields) a list of up to n configurations, each a table
 * of parameter values; an empty list (or nil, or the function returning) ends the
 * search. history is the shape's results so far, results the ones just ended:
 * lists of { config = {...}, status = "ok" | "compile_error" | ..., ms = median or
 * nil, recorded = true for an earlier run's trial }. A function runs as a fresh
 * coroutine for each shape. Configurations already tried, or that the
 * constraints reject, are skipped; one outside the space is an error. Errors
 * raised in the script's functions stop the run with the script's file:line. */
#include "lua/internal.h"

#include <lauxlib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct lua_strategy {
    gb_strategy base;
    lua_State *L;
    int spec;    /* the script's table or function, in the registry */
    int thread;  /* the coroutine running the function, in the registry (LUA_NOREF) */
    int history; /* the shape's results so far, in the registry */
    bool done;
    const char *name;
} lua_strategy;

static void unref(lua_State *L, int *ref)
{
    luaL_unref(L, LUA_REGISTRYINDEX, *ref);
    *ref = LUA_NOREF;
}

/* ---- asking ------------------------------------------------------------------ */

/* Runs the coroutine to its next yield; its list, or nothing when it returned,
 * is left on L's stack. */
static int resume(lua_strategy *ls, int n, gb_err *err)
{
    lua_State *L = ls->L;
    lua_rawgeti(L, LUA_REGISTRYINDEX, ls->thread);
    lua_State *co = lua_tothread(L, -1);
    lua_pop(L, 1);
    if (lua_status(co) == LUA_OK && lua_gettop(co) == 0) { /* ended */
        ls->done = true;
        lua_pushnil(L);
        return GB_OK;
    }
    lua_pushinteger(co, n);
    lua_rawgeti(co, LUA_REGISTRYINDEX, ls->history);
    int n_results = 0, status = lua_resume(co, L, 2, &n_results);
    if (status == LUA_YIELD || status == LUA_OK) {
        if (status == LUA_OK) ls->done = true;
        if (n_results > 0) {
            lua_xmove(co, L, 1);
            lua_pop(co, n_results - 1);
        } else {
            lua_pushnil(L);
        }
        return GB_OK;
    }
    luaL_traceback(L, co, lua_tostring(co, -1), 0);
    gb_err_set(err, GB_ESCRIPT, "strategy %s: %s", ls->name, lua_tostring(L, -1));
    lua_pop(L, 1);
    lua_settop(co, 0);
    ls->done = true;
    return GB_ESCRIPT;
}

/* Calls the table's ask(n, history); its list is left on the stack. */
static int call_ask(lua_strategy *ls, int n, gb_err *err)
{
    lua_State *L = ls->L;
    lua_rawgeti(L, LUA_REGISTRYINDEX, ls->spec);
    lua_getfield(L, -1, "ask");
    lua_remove(L, -2);
    lua_pushinteger(L, n);
    lua_rawgeti(L, LUA_REGISTRYINDEX, ls->history);
    int rc = gb_lua_pcall(L, 2, 1, err);
    if (rc) gb_err_prefix(err, "strategy %s: ask", ls->name);
    return rc;
}

/* Turns the proposal at idx into a configuration of the space; *out_new says it
 * is valid and was not tried yet. */
static int proposal(lua_strategy *ls, int idx, gb_config *out, bool *out_new, gb_err *err)
{
    lua_State *L = ls->L;
    gb_fields fields;
    *out_new = false;
    if (!lua_istable(L, idx))
        return gb_err_set(err, GB_ESCRIPT,
                          "strategy %s: ask must return a list of configurations (tables of "
                          "parameter values), got a %s in it",
                          ls->name, luaL_typename(L, idx));
    int rc = gb_lua_to_fields(L, idx, &fields, err);
    if (rc) return gb_err_prefix(err, "strategy %s: a configuration from ask", ls->name);
    if (gb_config_from_fields(ls->base.search->space, &fields, out) != GB_OK) {
        gb_strbuf text = GB_STRBUF_INIT;
        gb_fields_append_canonical(&text, &fields, NULL, 0);
        rc = gb_err_set(err, GB_ESCRIPT,
                        "strategy %s: ask returned %s, which is not a configuration of the "
                        "kernel's space (every parameter once, each with one of its values)",
                        ls->name, gb_sb_str(&text));
        gb_sb_free(&text);
    }
    gb_fields_free(&fields);
    return rc ? rc : gb_search_claim(ls->base.search, out->ordinal, out_new, err);
}

static int ask(gb_strategy *s, int n, gb_config *out, int *out_n, gb_err *err)
{
    lua_strategy *ls = (lua_strategy *)s;
    lua_State *L = ls->L;
    if (ls->done) return GB_OK;
    int top = lua_gettop(L);
    int rc = ls->thread != LUA_NOREF ? resume(ls, n, err) : call_ask(ls, n, err);
    if (rc == GB_OK && lua_isnil(L, -1)) ls->done = true;
    if (rc == GB_OK && !lua_isnil(L, -1) && !lua_istable(L, -1))
        rc = gb_err_set(err, GB_ESCRIPT, "strategy %s: ask must return a list, got a %s", ls->name,
                        luaL_typename(L, -1));
    int len = rc == GB_OK && lua_istable(L, -1) ? (int)luaL_len(L, -1) : 0;
    if (rc == GB_OK && len == 0) ls->done = true;
    for (int i = 1; rc == GB_OK && i <= len && *out_n < n; i++) {
        bool fresh;
        lua_rawgeti(L, -1, i);
        rc = proposal(ls, -1, &out[*out_n], &fresh, err);
        lua_pop(L, 1);
        if (rc == GB_OK && fresh) (*out_n)++;
    }
    lua_settop(L, top);
    return rc;
}

/* ---- telling ------------------------------------------------------------------ */

static void push_observation(lua_State *L, const gb_observation *o)
{
    lua_createtable(L, 0, 4);
    gb_lua_push_config(L, &o->config);
    lua_setfield(L, -2, "config");
    lua_pushstring(L, gb_trial_status_name(o->status));
    lua_setfield(L, -2, "status");
    if (o->status == GB_TRIAL_OK && isfinite(o->ms)) {
        lua_pushnumber(L, o->ms);
        lua_setfield(L, -2, "ms");
    }
    lua_pushboolean(L, o->recorded);
    lua_setfield(L, -2, "recorded");
}

static int tell(gb_strategy *s, const gb_observation *obs, int n, gb_err *err)
{
    lua_strategy *ls = (lua_strategy *)s;
    lua_State *L = ls->L;
    int top = lua_gettop(L);
    lua_rawgeti(L, LUA_REGISTRYINDEX, ls->history);
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) {
        push_observation(L, &obs[i]);
        lua_pushvalue(L, -1);
        lua_rawseti(L, -3, i + 1);                            /* results[i] */
        lua_rawseti(L, -3, (lua_Integer)luaL_len(L, -3) + 1); /* history[#history + 1] */
    }
    int rc = GB_OK;
    if (ls->thread == LUA_NOREF) {
        lua_rawgeti(L, LUA_REGISTRYINDEX, ls->spec);
        lua_getfield(L, -1, "tell");
        lua_remove(L, -2);
        if (lua_isfunction(L, -1)) {
            lua_insert(L, -2); /* tell, results */
            rc = gb_lua_pcall(L, 1, 0, err);
            if (rc) gb_err_prefix(err, "strategy %s: tell", ls->name);
        }
    }
    lua_settop(L, top);
    return rc;
}

static void destroy(gb_strategy *s)
{
    lua_strategy *ls = (lua_strategy *)s;
    unref(ls->L, &ls->thread);
    unref(ls->L, &ls->history);
    unref(ls->L, &ls->spec);
    free(ls);
}

static const gb_strategy_ops OPS = {ask, tell, destroy};

/* ---- the factory ---------------------------------------------------------------- */

typedef struct lua_factory {
    gb_strategy_factory factory;
    lua_State *L;
    int spec;
    char name[32]; /* the table's name field, or "lua" */
} lua_factory;

static int create(void *ctx, gb_search *search, gb_strategy **out, gb_err *err)
{
    lua_factory *f = ctx;
    lua_State *L = f->L;
    lua_strategy *ls = calloc(1, sizeof *ls);
    if (!ls) return gb_err_set(err, GB_ENOMEM, "out of memory");
    *ls = (lua_strategy){
        .base = {&OPS, search}, .L = L, .thread = LUA_NOREF, .name = f->factory.name};
    lua_rawgeti(L, LUA_REGISTRYINDEX, f->spec);
    if (lua_isfunction(L, -1)) {
        lua_State *co = lua_newthread(L);
        lua_pushvalue(L, -2);
        lua_xmove(L, co, 1); /* the body, waiting for its first resume */
        ls->thread = luaL_ref(L, LUA_REGISTRYINDEX);
    } else if (lua_isthread(L, -1)) { /* a coroutine the script made: one shape's worth */
        lua_pushvalue(L, -1);
        ls->thread = luaL_ref(L, LUA_REGISTRYINDEX);
    }
    ls->spec = luaL_ref(L, LUA_REGISTRYINDEX);
    lua_newtable(L);
    ls->history = luaL_ref(L, LUA_REGISTRYINDEX);
    *out = &ls->base;
    return GB_OK;
}

int gb_lua_strategy_factory(lua_State *L, int idx, gb_strategy_factory **out, gb_err *err)
{
    lua_factory *f = calloc(1, sizeof *f);
    if (!f) return gb_err_set(err, GB_ENOMEM, "out of memory");
    f->L = L;
    lua_pushvalue(L, idx);
    f->spec = luaL_ref(L, LUA_REGISTRYINDEX);
    f->factory = (gb_strategy_factory){.name = f->name, .create = create, .ctx = f};
    gb_strlcpy(f->name, "lua", sizeof f->name);
    if (lua_istable(L, idx)) {
        if (lua_getfield(L, idx, "name") == LUA_TSTRING)
            gb_strlcpy(f->name, lua_tostring(L, -1), sizeof f->name);
        lua_pop(L, 1);
    }
    *out = &f->factory;
    return GB_OK;
}

void gb_lua_strategy_factory_free(lua_State *L, gb_strategy_factory *factory)
{
    if (!factory) return;
    lua_factory *f = factory->ctx;
    unref(L, &f->spec);
    free(f);
}
