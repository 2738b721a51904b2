/* The Lua binding's plumbing (lua/internal.h): the host a state belongs to,
 * errors across the line between Lua and C (tracebacks, engine errors as
 * objects, script positions), and values both ways. */
#include "lua/internal.h"

#include "exec/interrupt.h"

#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>

static const char HOST_KEY[] = "gpubench.host";
static const char ERROR_MT[] = "gpubench.error";

gb_lua_host *gb_lua_host_of(lua_State *L)
{
    lua_getfield(L, LUA_REGISTRYINDEX, HOST_KEY);
    gb_lua_host *host = lua_touserdata(L, -1);
    lua_pop(L, 1);
    return host;
}

/* ---- errors ------------------------------------------------------------- */

/* True when the error was raised by the prelude itself: a contract error whose
 * message already names the script's line, so a traceback adds only noise. */
static bool raised_by_prelude(lua_State *L)
{
    lua_Debug ar;
    for (int level = 1; lua_getstack(L, level, &ar); level++) {
        if (!lua_getinfo(L, "S", &ar)) return false;
        if (strcmp(ar.what, "C") != 0) return strcmp(ar.source, "=gpubench") == 0;
    }
    return false;
}

static int traceback(lua_State *L)
{
    if (luaL_testudata(L, 1, ERROR_MT) || lua_istable(L, 1)) return 1; /* engine errors */
    const char *msg = lua_tostring(L, 1);
    if (!msg) msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
    if (strstr(msg, "\nstack traceback:") || raised_by_prelude(L)) return 1;
    luaL_traceback(L, L, msg, 1);
    return 1;
}

int gb_lua_pcall(lua_State *L, int nargs, int nresults, gb_err *err)
{
    int base = lua_gettop(L) - nargs;
    lua_pushcfunction(L, traceback);
    lua_insert(L, base);
    int status = lua_pcall(L, nargs, nresults, base);
    lua_remove(L, base);
    if (status == LUA_OK) return GB_OK;
    const char *msg = lua_tostring(L, -1);
    /* Ctrl-C stops a script's function with an error: that is an interrupt. */
    int code = gb_interrupted() ? GB_EINTR : GB_ESCRIPT;
    gb_err_set(err, code, "%s", msg ? msg : "(error object is not a string)");
    lua_pop(L, 1);
    return code;
}

/* "file:line: " of the innermost frame that is the script's, not the prelude's. */
static void script_where(lua_State *L, luaL_Buffer *b)
{
    lua_Debug ar;
    for (int level = 1; lua_getstack(L, level, &ar); level++) {
        if (!lua_getinfo(L, "Sl", &ar) || ar.currentline <= 0) continue;
        if (strcmp(ar.source, "=gpubench") == 0) continue;
        lua_pushfstring(L, "%s:%d: ", ar.short_src, ar.currentline);
        luaL_addvalue(b);
        return;
    }
}

int gb_lua_raise(lua_State *L, const gb_err *err)
{
    if (err->code == GB_ESCRIPT) {
        /* A script error without a position is placed at the script's call. */
        luaL_Buffer b;
        luaL_buffinit(L, &b);
        if (!gb_err_position_length(err->msg)) script_where(L, &b);
        luaL_addstring(&b, err->msg);
        luaL_pushresult(&b);
        return lua_error(L);
    }
    lua_createtable(L, 0, 2);
    lua_pushinteger(L, err->code);
    lua_setfield(L, -2, "code");
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    script_where(L, &b);
    luaL_addstring(&b, err->msg);
    luaL_pushresult(&b);
    lua_setfield(L, -2, "message");
    luaL_setmetatable(L, ERROR_MT);
    return lua_error(L);
}

static int error_tostring(lua_State *L)
{
    lua_getfield(L, 1, "message");
    return 1;
}

/* ---- values ------------------------------------------------------------- */

void gb_lua_push_value(lua_State *L, const gb_value *v)
{
    switch (v->kind) {
    case GB_VAL_INT:
        lua_pushinteger(L, v->i);
        break;
    case GB_VAL_NUM:
        lua_pushnumber(L, v->num);
        break;
    case GB_VAL_STR:
        lua_pushstring(L, v->str);
        break;
    default:
        lua_pushboolean(L, v->b);
        break;
    }
}

int gb_lua_to_value(lua_State *L, int idx, gb_value *out)
{
    switch (lua_type(L, idx)) {
    case LUA_TNUMBER:
        *out = lua_isinteger(L, idx) ? gb_value_int(lua_tointeger(L, idx))
                                     : gb_value_num(lua_tonumber(L, idx));
        return GB_OK;
    case LUA_TBOOLEAN:
        *out = gb_value_bool(lua_toboolean(L, idx));
        return GB_OK;
    case LUA_TSTRING:
        return gb_value_str(lua_tostring(L, idx), out);
    default:
        return GB_EINVAL;
    }
}

void gb_lua_push_fields(lua_State *L, const gb_fields *f)
{
    lua_createtable(L, 0, f->n);
    for (int i = 0; i < f->n; i++) {
        gb_lua_push_value(L, &f->values[i]);
        lua_setfield(L, -2, f->names[i]);
    }
}

int gb_lua_to_fields(lua_State *L, int idx, gb_fields *out, gb_err *err)
{
    idx = lua_absindex(L, idx);
    *out = (gb_fields){0};
    int rc = GB_OK;
    lua_pushnil(L);
    while (rc == GB_OK && lua_next(L, idx)) {
        gb_value v;
        if (lua_type(L, -2) != LUA_TSTRING || gb_lua_to_value(L, -1, &v) != GB_OK)
            rc =
                gb_err_set(err, GB_EINVAL, "fields must map names to numbers, strings or booleans");
        else if ((rc = gb_fields_set(out, lua_tostring(L, -2), &v)))
            gb_err_set(err, rc, "out of memory");
        if (rc == GB_OK) gb_value_free(&v);
        lua_pop(L, rc == GB_OK ? 1 : 2);
    }
    if (rc) gb_fields_free(out);
    return rc;
}

/* Turns the error value on top of the stack into err and pops it. */
int gb_lua_take_error(lua_State *L, gb_err *err)
{
    int code = GB_ESCRIPT;
    if (luaL_testudata(L, -1, ERROR_MT) || lua_istable(L, -1)) {
        lua_getfield(L, -1, "code");
        if (lua_isinteger(L, -1) && lua_tointeger(L, -1) != GB_OK) /* never success */
            code = (int)lua_tointeger(L, -1);
        lua_getfield(L, -2, "message");
        gb_err_set(err, code, "%s", lua_isstring(L, -1) ? lua_tostring(L, -1) : "error");
        lua_pop(L, 3);
        return code;
    }
    const char *msg = lua_tostring(L, -1);
    gb_err_set(err, code, "%s", msg ? msg : "(error object is not a string)");
    lua_pop(L, 1);
    return code;
}

int gb_lua_protected_call(lua_State *L, int nargs, gb_err *err)
{
    int base = lua_gettop(L) - nargs;
    lua_pushcfunction(L, traceback);
    lua_insert(L, base);
    int status = lua_pcall(L, nargs, 0, base);
    lua_remove(L, base);
    return status == LUA_OK ? GB_OK : gb_lua_take_error(L, err);
}

void gb_lua_attach(lua_State *L, gb_lua_host *host)
{
    lua_pushlightuserdata(L, host);
    lua_setfield(L, LUA_REGISTRYINDEX, HOST_KEY);
    luaL_newmetatable(L, ERROR_MT);
    lua_pushcfunction(L, error_tostring);
    lua_setfield(L, -2, "__tostring");
    lua_pop(L, 1);
}
