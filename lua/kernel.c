/* A script's kernel as the tuner sees it: the fields the prelude checked, turned
 * into a gb_kernel_def, and hooks that call the script's functions. */
#include "engine/tensormap.h"
#include "lua/internal.h"
#include "tuner/space.h"

#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>

typedef struct lua_kernel {
    gb_kernel_def def; /* first, so a def pointer is a lua_kernel pointer */
    lua_State *L;
    int ref; /* the Kernel table, in the registry */
} lua_kernel;

static void push_kernel_field(lua_kernel *k, const char *field)
{
    lua_rawgeti(k->L, LUA_REGISTRYINDEX, k->ref);
    lua_getfield(k->L, -1, field);
    lua_remove(k->L, -2);
}

void gb_lua_push_config(lua_State *L, const gb_config *config)
{
    const gb_space *s = config->space;
    lua_createtable(L, 0, s->n_params);
    for (int i = 0; i < s->n_params; i++) {
        gb_lua_push_value(L, &s->params[i].values[config->index[i]]);
        lua_setfield(L, -2, s->params[i].name);
    }
}

/* "file.lua:12" for the function on top of the stack (left in place). */
static void function_place(lua_State *L, char *out, size_t n)
{
    lua_Debug ar;
    lua_pushvalue(L, -1);
    if (lua_getinfo(L, ">S", &ar))
        snprintf(out, n, "%s:%d", ar.short_src, ar.linedefined);
    else
        snprintf(out, n, "?");
}

/* ---- hooks -------------------------------------------------------------- */

static int hook_accept(void *ctx, const gb_config *config, bool *ok, gb_err *err)
{
    lua_kernel *k = ctx;
    lua_State *L = k->L;
    *ok = true;
    push_kernel_field(k, "constraints");
    int n = (int)luaL_len(L, -1), rc = GB_OK;
    gb_lua_push_config(L, config);
    for (int i = 1; i <= n && *ok && rc == GB_OK; i++) {
        lua_rawgeti(L, -2, i);
        lua_pushvalue(L, -2);
        if ((rc = gb_lua_pcall(L, 1, 1, err)) == GB_OK) {
            *ok = lua_toboolean(L, -1);
            lua_pop(L, 1);
        }
    }
    lua_pop(L, 2);
    return rc;
}

static int bad_arg(lua_State *L, const char *where, int i, const char *what, gb_err *err)
{
    return gb_err_set(err, GB_ESCRIPT, "%s: args: element %d %s", where, i, what);
}

/* The { index, kind } pairs gpubench.lua sorted into the tensor's "planted" list. */
static void planted_arg(lua_State *L, int idx, gb_arg *a)
{
    static const char *const kinds[GB_SPECIAL_COUNT] = {"nan", "inf", "ninf"};
    lua_getfield(L, idx, "planted");
    int n = lua_istable(L, -1) ? (int)luaL_len(L, -1) : 0;
    for (int i = 1; i <= n; i++) {
        lua_rawgeti(L, -1, i);
        lua_rawgeti(L, -1, 1);
        lua_rawgeti(L, -2, 2);
        const char *kind = lua_tostring(L, -1);
        for (int k = 0; kind && k < GB_SPECIAL_COUNT; k++)
            if (strcmp(kind, kinds[k]) == 0 && a->n_planted[k] < GB_MAX_PLANTED)
                a->planted[k][a->n_planted[k]++] = lua_tointeger(L, -2);
        lua_pop(L, 3);
    }
    lua_pop(L, 1);
}

static int tensor_arg(lua_State *L, int idx, gb_arg *a)
{
    lua_getfield(L, idx, "dtype");
    int rc = gb_dtype_parse(lua_tostring(L, -1), &a->dtype);
    lua_getfield(L, idx, "dims");
    a->kind = GB_ARG_TENSOR;
    a->n_dims = (int)luaL_len(L, -1);
    for (int d = 0; d < a->n_dims && d < GB_MAX_DIMS; d++) {
        lua_rawgeti(L, -1, d + 1);
        a->dims[d] = lua_tointeger(L, -1);
        lua_pop(L, 1);
    }
    lua_getfield(L, idx, "init");
    if (lua_type(L, -1) == LUA_TNUMBER) {
        a->init = GB_INIT_VALUE;
        a->init_value = lua_tonumber(L, -1);
    } else if (gb_init_parse(lua_tostring(L, -1), &a->init) != GB_OK) {
        rc = GB_EINVAL;
    }
    lua_getfield(L, idx, "inout");
    a->inout = lua_toboolean(L, -1);
    lua_pop(L, 4);
    planted_arg(L, idx, a);
    return rc;
}

static int scalar_arg(lua_State *L, int idx, gb_arg *a)
{
    lua_getfield(L, idx, "dtype");
    int rc = gb_dtype_parse(lua_tostring(L, -1), &a->dtype);
    lua_getfield(L, idx, "value");
    a->kind = GB_ARG_SCALAR;
    if (lua_isinteger(L, -1)) a->int_value = lua_tointeger(L, -1);
    a->float_value = lua_tonumber(L, -1);
    lua_pop(L, 2);
    return rc;
}

/* Reads list field `name` of the table at idx into out[0..max) (n set to its length). */
static void int_list(lua_State *L, int idx, const char *name, int64_t *out, int max, int *n)
{
    lua_getfield(L, idx, name);
    *n = lua_istable(L, -1) ? (int)luaL_len(L, -1) : 0;
    if (*n > max) *n = max;
    for (int i = 0; i < *n; i++) {
        lua_rawgeti(L, -1, i + 1);
        out[i] = lua_tointeger(L, -1);
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
}

/* A gb.tensormap (the prelude checked each field; its tensor is checked once
 * every argument is known). */
static int tensormap_arg(lua_State *L, int idx, gb_arg *a)
{
    int64_t v[GB_TENSORMAP_MAX_RANK];
    a->kind = GB_ARG_TENSORMAP;
    lua_getfield(L, idx, "tensor");
    a->tensor = (int)lua_tointeger(L, -1) - 1;
    lua_getfield(L, idx, "swizzle");
    int rc = gb_swizzle_parse(lua_tostring(L, -1), &a->swizzle);
    lua_getfield(L, idx, "l2_promotion");
    if (rc == GB_OK) rc = gb_l2_promotion_parse(lua_tostring(L, -1), &a->l2_promotion);
    lua_getfield(L, idx, "oob_fill");
    if (rc == GB_OK) rc = gb_oob_fill_parse(lua_tostring(L, -1), &a->oob_fill);
    lua_pop(L, 4);
    int_list(L, idx, "box", v, GB_TENSORMAP_MAX_RANK, &a->n_box);
    for (int i = 0; i < a->n_box; i++)
        a->box[i] = (uint32_t)v[i];
    int_list(L, idx, "dims", a->dims, GB_TENSORMAP_MAX_RANK, &a->n_dims);
    int_list(L, idx, "strides", a->strides, GB_TENSORMAP_MAX_RANK, &a->n_strides);
    return rc;
}

/* Checks each tensormap against the tensor it names and gives it the tensor's
 * dtype; the message says where the gb.tensormap was made. */
static int check_tensormaps(lua_State *L, int list, const char *where, gb_arg *args, int n,
                            gb_err *err)
{
    for (int i = 0; i < n; i++) {
        if (args[i].kind != GB_ARG_TENSORMAP) continue;
        int rc = gb_tensormap_check(args, n, i, NULL, err);
        if (rc == GB_OK) {
            args[i].dtype = args[args[i].tensor].dtype;
            continue;
        }
        lua_rawgeti(L, list, i + 1);
        lua_getfield(L, -1, "at");
        const char *at = lua_tostring(L, -1);
        gb_err_prefix(err, "%sgb.tensormap (argument %d of args at %s)", at ? at : "", i + 1,
                      where);
        lua_pop(L, 2);
        if (err) err->code = GB_ESCRIPT;
        return GB_ESCRIPT;
    }
    return GB_OK;
}

enum { ARG_OTHER, ARG_TENSOR, ARG_SCALAR, ARG_TENSORMAP };

/* Which of the argument kinds the value on top is, by its metatable; the kinds'
 * metatables sit at first, first + 1 and first + 2. */
static int arg_kind(lua_State *L, int first)
{
    if (!lua_getmetatable(L, -1)) return ARG_OTHER;
    int kind = ARG_OTHER;
    for (int i = 0; i < 3 && kind == ARG_OTHER; i++)
        if (lua_rawequal(L, -1, first + i)) kind = ARG_TENSOR + i;
    lua_pop(L, 1);
    return kind;
}

/* Converts the list of arguments on top of the stack. */
static int convert_args(lua_State *L, const char *where, gb_arg *out, int *out_n, gb_err *err)
{
    if (!lua_istable(L, -1))
        return gb_err_set(err, GB_ESCRIPT, "%s: args must return a list of arguments", where);
    int list = lua_gettop(L), n = (int)luaL_len(L, list);
    if (n > GB_MAX_ARGS)
        return gb_err_set(err, GB_ESCRIPT, "%s: args returned %d arguments (at most %d)", where, n,
                          GB_MAX_ARGS);
    lua_getfield(L, LUA_REGISTRYINDEX, "gpubench.Tensor");
    lua_getfield(L, LUA_REGISTRYINDEX, "gpubench.Scalar");
    lua_getfield(L, LUA_REGISTRYINDEX, "gpubench.TensorMap");
    int rc = GB_OK;
    for (int i = 1; i <= n && rc == GB_OK; i++) {
        memset(&out[i - 1], 0, sizeof *out);
        lua_rawgeti(L, list, i);
        int kind = arg_kind(L, list + 1);
        if (kind == ARG_TENSOR)
            rc = tensor_arg(L, lua_gettop(L), &out[i - 1]);
        else if (kind == ARG_SCALAR)
            rc = scalar_arg(L, lua_gettop(L), &out[i - 1]);
        else if (kind == ARG_TENSORMAP)
            rc = tensormap_arg(L, lua_gettop(L), &out[i - 1]);
        else
            rc = bad_arg(L, where, i,
                         "is not a gb.tensor, a scalar (gb.i32, gb.f32, ...) or a gb.tensormap",
                         err);
        if (rc == GB_EINVAL) rc = bad_arg(L, where, i, "is malformed", err);
        lua_pop(L, 1);
    }
    lua_pop(L, 3);
    *out_n = n;
    if (rc == GB_OK) rc = check_tensormaps(L, list, where, out, n, err);
    return rc;
}

static int hook_args(void *ctx, const gb_fields *shape, gb_arg *out, int *out_n, gb_err *err)
{
    lua_kernel *k = ctx;
    lua_State *L = k->L;
    char where[512];
    push_kernel_field(k, "args");
    function_place(L, where, sizeof where);
    gb_lua_push_fields(L, shape);
    int rc = gb_lua_pcall(L, 1, 1, err);
    if (rc) return rc;
    rc = convert_args(L, where, out, out_n, err);
    lua_pop(L, 1);
    return rc;
}

/* grid/block: a positive integer or a list of 1 to 3 of them, on top of the stack. */
static int to_dims(lua_State *L, const char *what, const char *where, uint32_t out[3], gb_err *err)
{
    out[0] = out[1] = out[2] = 1;
    int n = lua_istable(L, -1) ? (int)luaL_len(L, -1) : 1;
    if (n < 1 || n > 3)
        return gb_err_set(err, GB_ESCRIPT, "%s: %s must give 1 to 3 sizes, got %d", where, what, n);
    for (int i = 0; i < n; i++) {
        if (lua_istable(L, -1))
            lua_rawgeti(L, -1, i + 1);
        else
            lua_pushvalue(L, -1);
        int is_int = 0;
        lua_Integer v = lua_tointegerx(L, -1, &is_int);
        if (!is_int || v < 1 || v > 0x7FFFFFFF) {
            const char *got = luaL_tolstring(L, -1, NULL);
            int rc = gb_err_set(err, GB_ESCRIPT, "%s: %s[%d] must be a positive integer, got %s",
                                where, what, i + 1, got);
            lua_pop(L, 2);
            return rc;
        }
        lua_pop(L, 1);
        out[i] = (uint32_t)v;
    }
    return GB_OK;
}

/* Calls kernel.<field>(c, s) and leaves the result on the stack. */
static int call_cs(lua_kernel *k, const char *field, const gb_config *c, const gb_fields *s,
                   char *where, size_t where_bytes, gb_err *err)
{
    push_kernel_field(k, field);
    function_place(k->L, where, where_bytes);
    gb_lua_push_config(k->L, c);
    gb_lua_push_fields(k->L, s);
    return gb_lua_pcall(k->L, 2, 1, err);
}

/* Whether the kernel's table has field (not nil, not false). */
static bool has_field(lua_kernel *k, const char *field)
{
    push_kernel_field(k, field);
    bool has = lua_toboolean(k->L, -1);
    lua_pop(k->L, 1);
    return has;
}

static int launch_of(void *ctx, const gb_config *c, const gb_fields *s, gb_launch *out, gb_err *err)
{
    lua_kernel *k = ctx;
    char where[512];
    int rc = call_cs(k, "grid", c, s, where, sizeof where, err);
    if (rc == GB_OK) rc = to_dims(k->L, "grid", where, out->grid, err), lua_pop(k->L, 1);
    if (rc == GB_OK) rc = call_cs(k, "block", c, s, where, sizeof where, err);
    if (rc == GB_OK) rc = to_dims(k->L, "block", where, out->block, err), lua_pop(k->L, 1);
    if (rc == GB_OK && has_field(k, "cluster")) {
        rc = call_cs(k, "cluster", c, s, where, sizeof where, err);
        if (rc == GB_OK) rc = to_dims(k->L, "cluster", where, out->cluster, err), lua_pop(k->L, 1);
    }
    if (rc == GB_OK) rc = call_cs(k, "smem", c, s, where, sizeof where, err);
    if (rc) return rc;
    int is_int = 0;
    lua_Integer smem = lua_tointegerx(k->L, -1, &is_int);
    lua_pop(k->L, 1);
    if (!is_int || smem < 0 || smem > 0x7FFFFFFF)
        return gb_err_set(err, GB_ESCRIPT, "%s: smem must be a non-negative integer", where);
    out->smem_bytes = (uint32_t)smem;
    return GB_OK;
}

/* A hook's bad value is named with the configuration and shape it came from. */
static int with_config_and_shape(int rc, const gb_config *c, const gb_fields *s, gb_err *err)
{
    if (rc != GB_ESCRIPT) return rc;
    gb_strbuf sb = GB_STRBUF_INIT;
    gb_fields config = {0};
    gb_sb_printf(&sb, "%s (configuration ", err->msg);
    if (gb_config_to_fields(c, &config) == GB_OK) gb_fields_append_canonical(&sb, &config, NULL, 0);
    gb_fields_free(&config);
    gb_sb_puts(&sb, ", shape ");
    gb_fields_append_canonical(&sb, s, NULL, 0);
    gb_sb_puts(&sb, ")");
    if (gb_sb_status(&sb) == GB_OK) gb_err_set(err, rc, "%s", gb_sb_str(&sb));
    gb_sb_free(&sb);
    return rc;
}

static int hook_launch(void *ctx, const gb_config *c, const gb_fields *s, gb_launch *out,
                       gb_err *err)
{
    int rc = launch_of(ctx, c, s, out, err);
    return with_config_and_shape(rc, c, s, err);
}

static int hook_defines(void *ctx, const gb_config *c, const gb_fields *s, gb_fields *out,
                        gb_err *err)
{
    lua_kernel *k = ctx;
    char where[512];
    int rc = call_cs(k, "defines", c, s, where, sizeof where, err);
    if (rc) return rc;
    if (!lua_istable(k->L, -1))
        rc = GB_EINVAL;
    else
        rc = gb_lua_to_fields(k->L, -1, out, err);
    lua_pop(k->L, 1);
    if (rc)
        return gb_err_set(err, GB_ESCRIPT, "%s: defines must return a table of NAME = value",
                          where);
    return GB_OK;
}

static int call_number(lua_kernel *k, const char *field, const gb_fields *s, double *out,
                       gb_err *err)
{
    char where[512];
    *out = 0.0;
    push_kernel_field(k, field);
    if (lua_isnil(k->L, -1)) {
        lua_pop(k->L, 1);
        return GB_OK;
    }
    function_place(k->L, where, sizeof where);
    gb_lua_push_fields(k->L, s);
    int rc = gb_lua_pcall(k->L, 1, 1, err);
    if (rc) return rc;
    int is_num = 0;
    *out = lua_tonumberx(k->L, -1, &is_num);
    lua_pop(k->L, 1);
    if (!is_num || !(*out >= 0))
        return gb_err_set(err, GB_ESCRIPT, "%s: %s must return a non-negative number", where,
                          field);
    return GB_OK;
}

static int hook_work(void *ctx, const gb_fields *s, double *flops, double *bytes, gb_err *err)
{
    int rc = call_number(ctx, "flops", s, flops, err);
    return rc ? rc : call_number(ctx, "bytes", s, bytes, err);
}

/* A library reference (gb.cublas.gemm): its GEMM on the shape, from the object's
 * gemm function, which names the call's line in its own errors. */
static int hook_gemm(void *ctx, const gb_fields *s, gb_gemm *out, gb_err *err)
{
    lua_kernel *k = ctx;
    push_kernel_field(k, "defined_at");
    char where[512];
    snprintf(where, sizeof where, "%s", lua_isstring(k->L, -1) ? lua_tostring(k->L, -1) : "");
    lua_pop(k->L, 1);
    push_kernel_field(k, "gemm");
    gb_lua_push_fields(k->L, s);
    int rc = gb_lua_pcall(k->L, 1, 1, err);
    if (rc) return rc;
    rc = gb_lua_to_gemm(k->L, -1, where, out, err);
    lua_pop(k->L, 1);
    return rc;
}

/* ---- conversion --------------------------------------------------------- */

static char *field_string(lua_State *L, int idx, const char *field)
{
    lua_getfield(L, idx, field);
    const char *s = lua_tostring(L, -1);
    char *copy = s ? strdup(s) : NULL;
    lua_pop(L, 1);
    return copy;
}

static int string_list(lua_State *L, int idx, const char *field, char ***out, int *out_n)
{
    lua_getfield(L, idx, field);
    int n = lua_istable(L, -1) ? (int)luaL_len(L, -1) : 0, rc = GB_OK;
    *out = calloc((size_t)n + 1, sizeof **out);
    *out_n = 0;
    if (!*out) rc = GB_ENOMEM;
    for (int i = 1; rc == GB_OK && i <= n; i++) {
        lua_rawgeti(L, -1, i);
        if (!((*out)[i - 1] = strdup(lua_tostring(L, -1))))
            rc = GB_ENOMEM;
        else
            (*out_n)++;
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    return rc;
}

static int read_params(lua_State *L, int idx, gb_space *space, gb_err *err)
{
    lua_getfield(L, idx, "params");
    int rc = GB_OK;
    lua_pushnil(L);
    while (rc == GB_OK && lua_next(L, -2)) {
        int n = (int)luaL_len(L, -1);
        gb_value *values = calloc((size_t)n, sizeof *values);
        for (int i = 0; values && rc == GB_OK && i < n; i++) {
            lua_rawgeti(L, -1, i + 1);
            rc = gb_lua_to_value(L, -1, &values[i]);
            lua_pop(L, 1);
        }
        if (!values)
            rc = gb_err_set(err, GB_ENOMEM, "out of memory");
        else if (rc == GB_OK)
            rc = gb_space_add(space, lua_tostring(L, -2), values, n, err);
        for (int i = 0; values && i < n; i++)
            gb_value_free(&values[i]);
        free(values);
        lua_pop(L, 1);
    }
    if (rc) lua_pop(L, 1); /* the key lua_next left */
    lua_pop(L, 1);
    return rc;
}

static void read_check(lua_State *L, int idx, gb_check_spec *check)
{
    lua_getfield(L, idx, "check");
    lua_getfield(L, -1, "outputs");
    check->n_outputs = lua_istable(L, -1) ? (int)luaL_len(L, -1) : 0;
    if (check->n_outputs > GB_MAX_ARGS) check->n_outputs = GB_MAX_ARGS;
    for (int i = 0; i < check->n_outputs; i++) {
        lua_rawgeti(L, -1, i + 1);
        check->outputs[i] = (int)lua_tointeger(L, -1) - 1;
        lua_pop(L, 1);
    }
    lua_getfield(L, -2, "rtol");
    check->rtol = lua_isnumber(L, -1) ? lua_tonumber(L, -1) : -1.0; /* -1: by dtype */
    lua_getfield(L, -3, "atol");
    check->atol = lua_isnumber(L, -1) ? lua_tonumber(L, -1) : -1.0;
    lua_getfield(L, -4, "norm");
    check->norm = lua_toboolean(L, -1);
    lua_pop(L, 5);
}

static int read_lists(lua_State *L, int idx, gb_kernel_def *d)
{
    int rc = string_list(L, idx, "include_dirs", &d->include_dirs, &d->n_include_dirs);
    if (rc == GB_OK) rc = string_list(L, idx, "options", &d->options, &d->n_options);
    lua_getfield(L, idx, "key");
    bool has_key = lua_istable(L, -1);
    lua_pop(L, 1);
    if (rc == GB_OK && has_key) rc = string_list(L, idx, "key", &d->key_fields, &d->n_key_fields);
    return rc;
}

/* The `reject` list (checked by the prelude) as GB_REJECT_* bits. */
static unsigned read_reject(lua_State *L, int idx)
{
    unsigned bits = 0;
    lua_getfield(L, idx, "reject");
    if (lua_istable(L, -1)) {
        for (lua_Integer i = 1; lua_geti(L, -1, i) == LUA_TSTRING; i++) {
            const char *name = lua_tostring(L, -1);
            bits |= strcmp(name, "spills") == 0 ? GB_REJECT_SPILLS : GB_REJECT_SERIALIZED_WGMMA;
            lua_pop(L, 1);
        }
        lua_pop(L, 1); /* the nil that ended the list */
    }
    lua_pop(L, 1);
    return bits;
}

static void set_hooks(lua_State *L, int idx, lua_kernel *k)
{
    k->def.hooks = (gb_kernel_hooks){
        .accept = hook_accept, .args = hook_args, .launch = hook_launch, .work = hook_work};
    lua_getfield(L, idx, "defines");
    if (!lua_isnil(L, -1)) k->def.hooks.defines = hook_defines;
    lua_getfield(L, idx, "gemm"); /* a gb.cublas.gemm object */
    if (lua_isfunction(L, -1)) k->def.hooks.gemm = hook_gemm;
    lua_pop(L, 2);
    k->def.hooks_ctx = k;
}

int gb_lua_kernel_def(lua_State *L, int idx, gb_kernel_def **out, gb_err *err)
{
    idx = lua_absindex(L, idx);
    lua_kernel *k = calloc(1, sizeof *k);
    if (!k) return gb_err_set(err, GB_ENOMEM, "out of memory");
    k->L = L;
    lua_pushvalue(L, idx);
    k->ref = luaL_ref(L, LUA_REGISTRYINDEX);
    gb_kernel_def *d = &k->def;
    d->name = field_string(L, idx, "name");
    d->source = field_string(L, idx, "source_text");
    d->source_name = field_string(L, idx, "source_name");
    d->entry = field_string(L, idx, "entry");
    lua_getfield(L, idx, "macros");
    d->macros = lua_toboolean(L, -1);
    lua_getfield(L, idx, "math"); /* checked by the prelude */
    if (gb_math_parse(lua_tostring(L, -1), &d->math) != GB_OK) d->math = GB_MATH_FP32;
    lua_pop(L, 2);
    d->reject = read_reject(L, idx);
    read_check(L, idx, &d->check);
    set_hooks(L, idx, k);
    lua_getfield(L, idx, "args");
    if (lua_isfunction(L, -1)) {
        char where[512];
        function_place(L, where, sizeof where);
        d->args_where = strdup(where);
    }
    lua_getfield(L, idx, "defined_at");
    if (lua_isstring(L, -1) && lua_rawlen(L, -1) > 0) d->defined_at = strdup(lua_tostring(L, -1));
    lua_pop(L, 2);
    int rc = d->name && d->source && d->source_name && d->entry ? read_lists(L, idx, d) : GB_ENOMEM;
    if (rc) rc = gb_err_set(err, rc, "out of memory");
    if (rc == GB_OK) rc = read_params(L, idx, &d->space, err);
    lua_getfield(L, idx, "reference");
    if (rc == GB_OK && !lua_isnil(L, -1)) rc = gb_lua_kernel_def(L, -1, &d->reference, err);
    lua_pop(L, 1);
    if (rc) {
        gb_lua_kernel_free(d);
        return gb_err_prefix(err, "kernel");
    }
    *out = d;
    return GB_OK;
}

void gb_lua_kernel_free(gb_kernel_def *def)
{
    if (!def) return;
    lua_kernel *k = (lua_kernel *)def;
    gb_lua_kernel_free(def->reference);
    def->reference = NULL;
    luaL_unref(k->L, LUA_REGISTRYINDEX, k->ref);
    gb_kernel_def_free(def);
    free(k);
}
