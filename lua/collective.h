/*
 * gb.collective in scripts: the chunk lua/collective.lua (embedded), which checks
 * a script's options at its line, and the C function it calls, which runs the
 * benchmark through engine/collective.h and returns the rows as Lua tables.
 * lua/binding.c preloads it as "gpubench.collective"; the prelude installs it.
 */
#ifndef GB_LUA_COLLECTIVE_H
#define GB_LUA_COLLECTIVE_H

#include <lua.h>

/* The preloader of "gpubench.collective": returns the chunk's installer,
 * function(gb, helpers). */
int gb_lua_open_collective(lua_State *L);

#endif
