/*
 * compat.h — one binding source for Lua 5.4, 5.3, 5.1 and LuaJIT 2.1.
 *
 * 5.1 and LuaJIT get the 5.3 C API from lua-compat-5.3 (Debian lua-compat53-dev: lua_rawgetp,
 * luaL_setfuncs, lua_isinteger, lua_geti, ...); what it leaves out is here: user values (5.4),
 * the preload table, integer arguments that refuse 2.5 as 5.3+ do, and %I in messages (tl_error
 * formats it itself, state.c). Every file of the binding includes this through binding.h.
 */
#ifndef TIDE_LUA_COMPAT_H
#define TIDE_LUA_COMPAT_H

#include <lauxlib.h>
#include <lua.h>

#if LUA_VERSION_NUM == 501 && defined(LUA_LJDIR) /* LuaJIT's luaconf.h */
#define TL_LUAJIT 1
#include <luajit.h>
#endif
#if LUA_VERSION_NUM < 503
#include <compat-5.3.h> /* the Makefile adds its directory (/usr/include/lua5.1) last */
#endif

#ifdef TL_LUAJIT
#define TL_HOST_NAME "LuaJIT"
#else
#define TL_HOST_NAME LUA_VERSION
#endif

/* no integer subtype (5.1, LuaJIT): numbers are doubles, integral ones stand for integers */
#define TL_NO_INTEGERS (LUA_VERSION_NUM < 503)

#if LUA_VERSION_NUM < 503
#include <stdint.h>
#define LUA_MAXINTEGER   PTRDIFF_MAX /* lua_Integer is ptrdiff_t there */
#define LUA_MININTEGER   PTRDIFF_MIN
#define LUA_LOADED_TABLE "_LOADED"
#endif

#if LUA_VERSION_NUM < 504
/* User values: tensors use one (the autograd table), other userdata none. 5.3 has one per
 * userdata. 5.1 and LuaJIT have an environment table per userdata, but a new one gets its
 * creator's (shared by every tensor): tl_uv_init gives each tensor its metatable as a marker
 * of "none", and tl_getuv sees that marker as nil, so each tensor's table is its own. */
#define lua_newuserdatauv(L, size, nuv) ((void)(nuv), lua_newuserdata((L), (size)))
#if LUA_VERSION_NUM == 503
#define tl_uv_init(L, idx)           ((void)(L), (void)(idx))
#define lua_getiuservalue(L, idx, n) ((void)(n), lua_getuservalue((L), (idx)))
static inline int tl_setuv(lua_State *L, int idx) {
    lua_setuservalue(L, idx);
    return 1;
}
#define lua_setiuservalue(L, idx, n) ((void)(n), tl_setuv((L), (idx)))
#else
/* after lua_setmetatable on the new userdata at idx */
static inline void tl_uv_init(lua_State *L, int idx) {
    idx = lua_absindex(L, idx);
    lua_getmetatable(L, idx);
    lua_setfenv(L, idx);
}
static inline int tl_getuv(lua_State *L, int idx) {
    idx = lua_absindex(L, idx);
    lua_getfenv(L, idx);
    if (lua_getmetatable(L, idx)) {
        int none = lua_rawequal(L, -1, -2);
        lua_pop(L, 1 + none);
        if (none) {
            lua_pushnil(L);
            return LUA_TNIL;
        }
    }
    return lua_type(L, -1);
}
/* pops the value, a table (the only user value tide stores) */
static inline int tl_setuv(lua_State *L, int idx) {
    return lua_setfenv(L, idx);
}
#define lua_getiuservalue(L, idx, n) ((void)(n), tl_getuv((L), (idx)))
#define lua_setiuservalue(L, idx, n) ((void)(n), tl_setuv((L), (idx)))
#endif
#else
#define tl_uv_init(L, idx) ((void)(L), (void)(idx))
#endif

#if TL_NO_INTEGERS
/* 5.3+ refuse 2.5 where an integer is expected; 5.1 truncates it. Shapes, dims and indices
 * behave as on 5.4: an integral number passes, another raises 5.4's message. */
static inline lua_Integer tl_checkinteger(lua_State *L, int arg) {
    int         isnum = 0;
    lua_Integer n = lua_tointegerx(L, arg, &isnum);
    if (!isnum) {
        if (lua_type(L, arg) == LUA_TNUMBER)
            luaL_argerror(L, arg, "number has no integer representation");
        else
            luaL_typerror(L, arg, "number");
    }
    return n;
}
#undef luaL_checkinteger
#undef luaL_optinteger
#define luaL_checkinteger(L, arg) tl_checkinteger((L), (arg))
#define luaL_optinteger(L, arg, def)                                                               \
    (lua_isnoneornil((L), (arg)) ? (def) : tl_checkinteger((L), (arg)))
#endif

/* pushes package.preload (LUA_PRELOAD_TABLE in the registry from 5.3; LuaJIT keeps it there
 * too; 5.1 only as package.preload) */
static inline void tl_push_preload(lua_State *L) {
#if LUA_VERSION_NUM >= 503
    luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
#else
    if (lua_getfield(L, LUA_REGISTRYINDEX, "_PRELOAD") == LUA_TTABLE) /* LuaJIT */
        return;
    lua_pop(L, 1);
    luaL_getsubtable(L, LUA_REGISTRYINDEX, "_LOADED");
    if (lua_getfield(L, -1, "package") == LUA_TTABLE) {
        luaL_getsubtable(L, -1, "preload");
        lua_replace(L, -3);
        lua_pop(L, 1);
        return;
    }
    lua_pop(L, 2); /* no package library: a registry table require would not see anyway */
    luaL_getsubtable(L, LUA_REGISTRYINDEX, "_PRELOAD");
#endif
}

#endif /* TIDE_LUA_COMPAT_H */
