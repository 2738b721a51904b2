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

/* True when the field holds what means "unknown": zero, false, "", NULL, empty. */
static bool is_zero(const gb_wire_field *f, const void *obj)
{
    if (f->arity != GB_WIRE_ONE) return gb_wire_items(f, obj) == 0;
    const void *p = gb_wire_item(f, obj, 0);
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

static void set_field(lua_State *L, const gb_wire_field *f, const void *obj)
{
    if (f->get) return; /* a view's virtual field: its value needs the view's context */
    if (f->flags & GB_WIRE_NO_LUA || (f->flags & GB_WIRE_LUA_OMIT_ZERO && is_zero(f, obj))) return;
    if (f->when && !f->when(obj)) return;
    if (f->flags & GB_WIRE_NULLABLE && !*(const bool *)((const char *)obj + f->present)) return;
    if (f->flags & GB_WIRE_INLINE_STRUCT) {
        gb_lua_set_wire(L, f->type, gb_wire_item(f, obj, 0));
        return;
    }
    if (f->arity == GB_WIRE_ONE) {
        push_item(L, f, gb_wire_item(f, obj, 0));
    } else {
        int n = gb_wire_items(f, obj);
        lua_createtable(L, n, 0);
        for (int i = 0; i < n; i++) {
            push_item(L, f, gb_wire_item(f, obj, i));
            lua_rawseti(L, -2, i + 1);
        }
    }
    lua_setfield(L, -2, f->lua ? f->lua : f->name);
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
