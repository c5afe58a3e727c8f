/*
 * tide_lua.h — the Lua binding's C API, for hosts that embed Lua and tide together.
 *
 * A host that has its own lua_State calls tide_lua_preload(L) and then runs `require "tide"`
 * with tide's Lua files on package.path; tensors cross between C and Lua with the functions
 * below.
 */
#ifndef TIDE_LUA_H
#define TIDE_LUA_H

#include <lua.h>
#include "tide.h"

TIDE_API_BEGIN

/* the module loader of `tide.core` (pushes the module table) */
int luaopen_tide_core(lua_State *L);

/* registers luaopen_tide_core as package.preload["tide.core"] */
void tide_lua_preload(lua_State *L);

/* Pushes t as a tide.Tensor. Lua takes its own reference (t is retained): the caller still
 * releases the reference it holds. Needs tide.core loaded in L; raises otherwise. */
void tide_lua_push_tensor(lua_State *L, tide_tensor *t);

/* The tensor at idx, borrowed (valid while the Lua value lives). check raises a tide: error
 * for a non-tensor or a freed tensor; to returns NULL instead. */
tide_tensor *tide_lua_check_tensor(lua_State *L, int idx);
tide_tensor *tide_lua_to_tensor(lua_State *L, int idx);

/* the tide_ctx of this lua_State (NULL before tide.core is loaded); borrowed */
tide_ctx *tide_lua_ctx(lua_State *L);

TIDE_API_END
#endif /* TIDE_LUA_H */
