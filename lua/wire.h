/*
 * Wire types as Lua tables: the results tables a script sees for statistics,
 * measurements and devices come from the same field tables as the worker protocol
 * and the cache records (base/wire.h), so their fields cannot drift. A field's Lua
 * name is its .lua when set, else its JSON name; GB_WIRE_NO_LUA leaves it out and
 * GB_WIRE_LUA_OMIT_ZERO leaves it out when it is zero, false or empty.
 *
 * Views are pushed as they are written to JSON: a field's .group is a sub-table
 * ("search.budget" one further down), made where its first field is met unless
 * .when leaves that field out; a FIXED array with .keys is one field per key; a
 * virtual field is what its .get computes, with no context (a Lua view computes
 * from the struct alone: lua/results.c).
 */
#ifndef GB_LUA_WIRE_H
#define GB_LUA_WIRE_H

#include "base/wire.h"

#include <lua.h>

/* Pushes a new table with obj's fields. */
void gb_lua_push_wire(lua_State *L, const gb_wire_type *t, const void *obj);

/* Sets obj's fields into the table on top of the stack (for tables that combine
 * a struct with fields of their own). */
void gb_lua_set_wire(lua_State *L, const gb_wire_type *t, const void *obj);

#endif
