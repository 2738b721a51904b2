#include "lua/wire.h"

#include "lua/internal.h"

#include <stdint.h>
#include <string.h>

static void push_item(lua_State *L, const gb_wire_field *f, const void *p)
{
    switch (f->kind) {
    case GB_WIRE_INT:
        lua_pushinteger(L, *(const int *)p);
        break;
    case GB_WIRE_INT64: {
        const int64_t *v = p;
        lua_pushinteger(L, (lua_Integer)*v);
        break;
    }
    case GB_WIRE_UINT32: {
        const uint32_t *v = p;
        lua_pushinteger(L, (lua_Integer)*v);
        break;
    }
    case GB_WIRE_UINT64: {
        int64_t bits; /* Lua's integers are 64-bit and wrap: the same bits */
        memcpy(&bits, p, sizeof bits);
        lua_pushinteger(L, (lua_Integer)bits);
        break;
    }
    case GB_WIRE_DOUBLE:
        lua_pushnumber(L, *(const double *)p);
        break;
    case GB_WIRE_BOOL:
        lua_pushboolean(L, *(const bool *)p);
        break;
    case GB_WIRE_ENUM: {
        int v = *(const int *)p;
        const char *name = v >= 0 && v < f->enumeration->count ? f->enumeration->name(v) : NULL;
        if (name)
            lua_pushstring(L, name);
        else
            lua_pushnil(L);
        break;
    }
    case GB_WIRE_CHARS:
        lua_pushlstring(L, p, strnlen(p, f->size));
        break;
    case GB_WIRE_STRING:
        lua_pushstring(L, *(const char *const *)p); /* NULL pushes nil */
        break;
    case GB_WIRE_FIELDS:
        gb_lua_push_fields(L, p);
        break;
    case GB_WIRE_STRUCT:
        gb_lua_push_wire(L, f->type, p);
        break;
    }
}

/* True when the value at p means "unknown": zero, false, "", NULL. */
static bool is_zero(const gb_wire_field *f, const void *p)
{
    switch (f->kind) {
    case GB_WIRE_DOUBLE:
        return *(const double *)p == 0;
    case GB_WIRE_BOOL:
        return !*(const bool *)p;
    case GB_WIRE_CHARS:
        return !*(const char *)p;
    case GB_WIRE_STRING:
        return !*(const char *const *)p;
    case GB_WIRE_INT:
    case GB_WIRE_ENUM:
        return *(const int *)p == 0;
    case GB_WIRE_INT64:
    case GB_WIRE_UINT64:
        return *(const int64_t *)p == 0;
    case GB_WIRE_UINT32:
        return *(const uint32_t *)p == 0;
    default:
        return false;
    }
}

/* GB_WIRE_LUA_OMIT_ZERO: an array is left out when empty, a value when zero. */
static bool omitted(const gb_wire_field *f, const void *obj)
{
    if (!(f->flags & GB_WIRE_LUA_OMIT_ZERO)) return false;
    if (f->arity != GB_WIRE_ONE) return gb_wire_items(f, obj) == 0;
    return is_zero(f, gb_wire_item(f, obj, 0));
}

/* Pushes the table f is set in: the one on top, or its group in it, made where
 * the group's first field is met (so a group whose fields are all left out as
 * zero is there, empty). */
static void push_target(lua_State *L, const gb_wire_field *f)
{
    char part[GB_WIRE_GROUP_PART];
    lua_pushvalue(L, -1);
    for (const char *g = f->group; gb_wire_group_next(&g, part);) {
        if (lua_getfield(L, -1, part) != LUA_TTABLE) {
            lua_pop(L, 1);
            lua_newtable(L);
            lua_pushvalue(L, -1);
            lua_setfield(L, -3, part);
        }
        lua_remove(L, -2);
    }
}

static const char *lua_name(const gb_wire_field *f)
{
    return f->lua ? f->lua : f->name;
}

/* A virtual field: what .get computes from the struct alone (no context). */
static void set_virtual(lua_State *L, const gb_wire_field *f, const void *obj)
{
    gb_wire_value value;
    memset(&value, 0, sizeof value);
    f->get(obj, NULL, &value);
    if (f->flags & GB_WIRE_LUA_OMIT_ZERO && is_zero(f, &value)) return;
    push_item(L, f, &value);
    lua_setfield(L, -2, lua_name(f));
}

static void set_member(lua_State *L, const gb_wire_field *f, const void *obj)
{
    int n = gb_wire_items(f, obj);
    if (f->flags & GB_WIRE_INLINE_STRUCT) {
        gb_lua_set_wire(L, f->type, gb_wire_item(f, obj, 0));
    } else if (f->keys) { /* one field per key, as in JSON */
        for (int i = 0; i < n; i++) {
            if (!f->keys->name(i)) continue;
            push_item(L, f, gb_wire_item(f, obj, i));
            lua_setfield(L, -2, f->keys->name(i));
        }
    } else if (f->arity == GB_WIRE_ONE) {
        push_item(L, f, gb_wire_item(f, obj, 0));
        lua_setfield(L, -2, lua_name(f));
    } else {
        lua_createtable(L, n, 0);
        for (int i = 0; i < n; i++) {
            push_item(L, f, gb_wire_item(f, obj, i));
            lua_rawseti(L, -2, i + 1);
        }
        lua_setfield(L, -2, lua_name(f));
    }
}

static void set_field(lua_State *L, const gb_wire_field *f, const void *obj)
{
    if (f->flags & GB_WIRE_NO_LUA || (f->when && !f->when(obj))) return;
    if (f->flags & GB_WIRE_NULLABLE && !*(const bool *)((const char *)obj + f->present)) return;
    push_target(L, f);
    if (f->get)
        set_virtual(L, f, obj);
    else if (!omitted(f, obj))
        set_member(L, f, obj);
    lua_pop(L, 1);
}

void gb_lua_set_wire(lua_State *L, const gb_wire_type *t, const void *obj)
{
    for (int i = 0; i < t->n_fields; i++)
        set_field(L, &t->fields[i], obj);
}

void gb_lua_push_wire(lua_State *L, const gb_wire_type *t, const void *obj)
{
    lua_createtable(L, 0, t->n_fields);
    gb_lua_set_wire(L, t, obj);
}
