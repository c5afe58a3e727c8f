/*
 * embed_interpose.c — a host that exports functions of its own under names tide uses
 * internally, as any host built with -Wl,-E (to load C modules) does with its globals. It loads
 * tide.core as a Lua module from the build tree (not preloaded) and runs a script: tide must
 * call its own cpu_alloc, not the host's. Built as build/test_embed_interpose by
 * examples/embed/embed.mk, which sets TIDE_LUA_DIR (tide's Lua files) and TIDE_CORE_DIR (the
 * build's lua/ directory, holding tide/core.so).
 */
#include <dlfcn.h>
#include <lauxlib.h>
#include <lualib.h>
#include <stdio.h>
#include <stdlib.h>

#include "test_util.h"

/* the host's own functions, exported (-Wl,-E); tide must never reach them */
#define HOST_FN(name)                                                                              \
    void name(void);                                                                               \
    void name(void) {                                                                              \
        fprintf(stderr, "host's " #name " was called by tide\n");                                  \
        abort();                                                                                   \
    }
HOST_FN(cpu_alloc)
HOST_FN(cpu_free)
HOST_FN(cpu_copy)
HOST_FN(cpu_fill)
HOST_FN(tl_error)
HOST_FN(tl_state)
HOST_FN(tl_push_empty)

static const char *script = "local lua_dir, core_dir = ...\n"
                            "package.path = lua_dir .. '/?.lua;' .. lua_dir .. '/?/init.lua'\n"
                            "package.cpath = core_dir .. '/?.so'\n"
                            "local tide = require 'tide'\n"
                            "local x = tide.zeros(3):add(2)\n"
                            "local w = tide.ones(3, 2)\n"
                            "return x:view(1, 3):matmul(w):sum():item()\n";

int main(void) {
    lua_State *L = luaL_newstate();
    luaL_openlibs(L);
    int st = luaL_loadstring(L, script);
    if (st == LUA_OK) {
        lua_pushstring(L, TIDE_LUA_DIR);
        lua_pushstring(L, TIDE_CORE_DIR);
        st = lua_pcall(L, 2, 1, 0);
    }
    if (st != LUA_OK)
        fprintf(stderr, "require tide with the host's symbols exported: %s\n", lua_tostring(L, -1));
    CHECK(st == LUA_OK);
    if (st == LUA_OK)
        CHECK(lua_tonumber(L, -1) == 12.0);
    /* lua_close dlcloses core.so; tide's process-wide caches (the CPU allocator's blocks) live
     * as long as the library, so the host keeps it loaded, as hosts that reopen states do */
    void *keep = dlopen(TIDE_CORE_DIR "/tide/core.so", RTLD_NOW | RTLD_NOLOAD);
    CHECK(keep != NULL);
    lua_close(L);
    return tu_finish();
}
