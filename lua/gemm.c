/* The C side of gb.cublas (lua/cublas.lua): the chunk itself, embedded; the
 * description of a library GEMM read from the table the chunk makes; and
 * core.gemm_check, so that the rules of which types go together live in one place
 * (engine/gemm.c) and a script hears of a broken combination at its own line. */
#include "lua/internal.h"

#include <lauxlib.h>
#include <string.h>

extern const char gb_cublas_source[];
extern const unsigned long gb_cublas_source_len;

/* The 0-based position in field (1-based in the table; absent: -1). */
static int position(lua_State *L, int idx, const char *field)
{
    lua_getfield(L, idx, field);
    int is_int = 0;
    lua_Integer v = lua_tointegerx(L, -1, &is_int);
    lua_pop(L, 1);
    return is_int && v >= 1 && v <= GB_MAX_ARGS ? (int)v - 1 : -1;
}

/* A size (absent: 1, for a check made before there is a shape; not an
 * integer: 0, which the check refuses). */
static int64_t size(lua_State *L, int idx, const char *field)
{
    lua_getfield(L, idx, field);
    int is_int = 0;
    lua_Integer v = lua_isnil(L, -1) ? 1 : lua_tointegerx(L, -1, &is_int);
    if (!lua_isnil(L, -1) && !is_int) v = 0;
    lua_pop(L, 1);
    return (int64_t)v;
}

/* A leading dimension (absent: 0, packed rows; not an integer: -1, which the check
 * refuses). */
static int64_t leading(lua_State *L, int idx, const char *field)
{
    lua_getfield(L, idx, field);
    int is_int = 0;
    lua_Integer v = lua_isnil(L, -1) ? 0 : lua_tointegerx(L, -1, &is_int);
    if (!lua_isnil(L, -1) && !is_int) v = -1;
    lua_pop(L, 1);
    return (int64_t)v;
}

static int dtype(lua_State *L, int idx, const char *field, gb_dtype *out)
{
    lua_getfield(L, idx, field);
    const char *name = lua_tostring(L, -1);
    int rc = name ? gb_dtype_parse(name, out) : GB_EINVAL;
    lua_pop(L, 1);
    return rc;
}

static double number(lua_State *L, int idx, const char *field, double dflt)
{
    lua_getfield(L, idx, field);
    double v = lua_isnumber(L, -1) ? lua_tonumber(L, -1) : dflt;
    lua_pop(L, 1);
    return v;
}

static bool boolean(lua_State *L, int idx, const char *field)
{
    lua_getfield(L, idx, field);
    bool v = lua_toboolean(L, -1);
    lua_pop(L, 1);
    return v;
}

/* Reads the fields the chunk's tables have ({a, b, c, d, m, n, k, batch, lda, ldb,
 * ldc, dtype, dtype_b, out, compute, trans_a, trans_b, alpha, beta}); GB_EINVAL naming a field that
 * does not read. Sizes and combinations are left to gb_gemm_check. */
static int read_gemm(lua_State *L, int idx, gb_gemm *out, gb_err *err)
{
    idx = lua_absindex(L, idx);
    *out = (gb_gemm){.a = position(L, idx, "a"),
                     .b = position(L, idx, "b"),
                     .c = position(L, idx, "c"),
                     .d = position(L, idx, "d"),
                     .m = size(L, idx, "m"),
                     .n = size(L, idx, "n"),
                     .k = size(L, idx, "k"),
                     .batch = size(L, idx, "batch"),
                     .trans_a = boolean(L, idx, "trans_a"),
                     .trans_b = boolean(L, idx, "trans_b"),
                     .lda = leading(L, idx, "lda"),
                     .ldb = leading(L, idx, "ldb"),
                     .ldc = leading(L, idx, "ldc"),
                     .alpha = number(L, idx, "alpha", 1.0),
                     .beta = number(L, idx, "beta", 0.0)};
    if (dtype(L, idx, "dtype", &out->a_dtype) || dtype(L, idx, "dtype_b", &out->b_dtype) ||
        dtype(L, idx, "out", &out->c_dtype))
        return gb_err_set(err, GB_EINVAL, "dtype, dtype_b and out must name element types");
    lua_getfield(L, idx, "compute");
    int rc = gb_gemm_compute_parse(lua_tostring(L, -1), &out->compute);
    lua_pop(L, 1);
    if (rc) return gb_err_set(err, GB_EINVAL, "compute must be fp32, tf32 or fp16");
    if (out->a < 0 || out->b < 0 || out->c < 0)
        return gb_err_set(err, GB_EINVAL, "a, b and c must be argument positions 1 to %d",
                          GB_MAX_ARGS);
    return GB_OK;
}

int gb_lua_to_gemm(lua_State *L, int idx, const char *where, gb_gemm *out, gb_err *err)
{
    gb_err e = {0};
    if (!lua_istable(L, idx) || read_gemm(L, idx, out, &e) || gb_gemm_check(out, &e))
        return gb_err_set(err, GB_ESCRIPT, "%sgb.cublas.gemm: %s", where,
                          e.code ? e.msg : "expected the GEMM's table");
    return GB_OK;
}

/* core.gemm_check(t) -> nil, or why the call's types or positions do not go
 * together (sizes not known yet count as 1). */
int gb_lua_core_gemm_check(lua_State *L)
{
    gb_gemm g;
    gb_err e = {0};
    luaL_checktype(L, 1, LUA_TTABLE);
    if (read_gemm(L, 1, &g, &e) == GB_OK && gb_gemm_check(&g, &e) == GB_OK) return 0;
    lua_pushstring(L, e.msg);
    return 1;
}

/* require "gpubench.cublas": the chunk, under the prelude's chunk name so that
 * its errors are placed at the script's line (lua/calls.c, traceback). */
int gb_lua_open_cublas(lua_State *L)
{
    if (luaL_loadbufferx(L, gb_cublas_source, gb_cublas_source_len, "=gpubench", "t"))
        return lua_error(L);
    lua_call(L, 0, 1);
    return 1;
}
