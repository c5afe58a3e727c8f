/*
 * embed_sandbox.c — tide in the sandbox of a game's mod scripts: a state with only the base,
 * table, string, math and package libraries (no io, os, debug). tide loads and trains there;
 * the functions that read or write files refuse with a tide: error. Built as
 * build/test_embed_sandbox by examples/embed/embed.mk (TIDE_LUA_DIR: tide's Lua files).
 */
#include "tide_lua.h"

#include <lauxlib.h>
#include <lualib.h>
#include <stdio.h>
#include <string.h>

#include "test_util.h"

/* runs chunk in L; returns its one result as a string ("ERROR: msg" on failure) */
static const char *run(lua_State *L, const char *name, const char *chunk) {
    lua_settop(L, 0);
    int st = luaL_loadbuffer(L, chunk, strlen(chunk), name);
    if (st == LUA_OK)
        st = lua_pcall(L, 0, 1, 0);
    if (st != LUA_OK) {
        lua_pushfstring(L, "ERROR: %s", lua_tostring(L, -1));
        return lua_tostring(L, -1);
    }
    return luaL_tolstring(L, -1, NULL);
}

static void check_result(lua_State *L, const char *name, const char *chunk, const char *want) {
    const char *got = run(L, name, chunk);
    if (strstr(got, want)) {
        tu_pass++;
    } else {
        tu_fail++;
        fprintf(stderr, "%s: expected \"%s\" in:\n    %s\n", name, want, got);
    }
}

int main(void) {
    lua_State            *L = luaL_newstate();
    static const luaL_Reg libs[] = {
        {LUA_GNAME, luaopen_base},          {LUA_TABLIBNAME, luaopen_table},
        {LUA_STRLIBNAME, luaopen_string},   {LUA_MATHLIBNAME, luaopen_math},
        {LUA_LOADLIBNAME, luaopen_package}, {NULL, NULL}};
    for (const luaL_Reg *l = libs; l->name; l++) {
        luaL_requiref(L, l->name, l->func, 1);
        lua_pop(L, 1);
    }
    tide_lua_preload(L);
    check_result(L, "=boot",
                 "package.path = '" TIDE_LUA_DIR "/?.lua;" TIDE_LUA_DIR "/?/init.lua'\n"
                 "tide = require 'tide'\n"
                 "return tostring(io == nil and os == nil and debug == nil)",
                 "true");
    /* autograd, a layer, an optimizer step */
    check_result(
        L, "=train",
        "local x = tide.tensor({{1.5, 2}, {3, 4}}, {requires_grad = true})\n"
        "local y = (x * x):sum()\n"
        "y:backward()\n"
        "assert((x.grad - x:detach() * 2):abs():sum():item() == 0, 'grad of sum(x^2) is 2x')\n"
        "tide.manual_seed(1)\n"
        "local lin = tide.nn.Linear(2, 3)\n"
        "local opt = tide.optim.SGD(lin:parameters(), {lr = 0.1})\n"
        "local before = lin.weight:detach():clone()\n"
        "local loss = lin(x:detach()):pow(2):mean()\n"
        "loss:backward()\n"
        "opt:step()\n"
        "local moved = (lin.weight:detach() - before):abs():sum():item()\n"
        "return string.format('trained %s', moved > 0)",
        "trained true");
    /* errors still name the user's line (autograd finds it without the debug library) */
    check_result(L, "@mod.lua",
                 "\n\nlocal ok, err = pcall(tide.optim.SGD, {}, {lr = 0.1, momentum = -1})\n"
                 "return err",
                 "mod.lua:3: tide: SGD:");
    /* the file functions refuse */
    check_result(L, "=save",
                 "local ok, err = pcall(tide.save, 'x.safetensors', {w = tide.ones(2)})\n"
                 "return err",
                 "tide: save: the io library is not available in this Lua state");
    check_result(L, "=load", "local ok, err = pcall(tide.load, 'x.safetensors')\nreturn err",
                 "tide: load: the io library is not available in this Lua state");
    check_result(L, "=mnist", "local ok, err = pcall(tide.data.fashion_mnist, '/tmp')\nreturn err",
                 "tide: fashion_mnist: the io library is not available in this Lua state");
    lua_close(L);
    return tu_finish();
}
