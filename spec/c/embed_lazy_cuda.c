/*
 * embed_lazy_cuda.c — what a host pays for CUDA it does not use: nothing mapped until asked.
 *   - a memory-limit error (whose retry frees cached blocks) does not load the CUDA plug-in;
 *   - tide.cuda.is_available() loads the plug-in but not cuBLAS;
 *   - the first matmul on the GPU loads cuBLAS.
 * Each step reads /proc/self/maps. Run by the test suite on the emulated GPU
 * (TIDE_CUDA_LIB=build/cuda-emu/libtide_cuda.so, whose cuBLAS is libcublas_emu.so beside it);
 * built as build/embed_lazy_cuda by examples/embed/embed.mk.
 */
#include "tide_lua.h"

#include <lauxlib.h>
#include <lualib.h>
#include <stdio.h>
#include <string.h>

#include "test_util.h"

static int mapped(const char *name) {
    FILE *f = fopen("/proc/self/maps", "r");
    char  line[4096];
    int   found = 0;
    while (f && !found && fgets(line, sizeof line, f))
        found = strstr(line, name) != NULL;
    if (f)
        fclose(f);
    return found;
}

/* runs chunk; its one result as a string, or "ERROR: msg" */
static const char *run(lua_State *L, const char *chunk) {
    lua_settop(L, 0);
    if (luaL_dostring(L, chunk) != LUA_OK)
        lua_pushfstring(L, "ERROR: %s", lua_tostring(L, -1));
    return luaL_tolstring(L, -1, NULL);
}

int main(void) {
    lua_State *L = luaL_newstate();
    luaL_openlibs(L);
    tide_lua_preload(L);
    const char *r = run(L, "package.path = '" TIDE_LUA_DIR "/?.lua;" TIDE_LUA_DIR "/?/init.lua'\n"
                           "tide = require 'tide'\n"
                           "tide.set_memory_limit(1 << 20)\n"
                           "local keep = tide.zeros(128, 1024)\n"
                           "local ok, err = pcall(tide.zeros, 1024, 1024)\n"
                           "tide.set_memory_limit(0)\n"
                           "return err");
    printf("over the limit: %s\n", r);
    CHECK(strstr(r, "tide: zeros:") != NULL);
    CHECK(!mapped("libtide_cuda"));
    CHECK(!mapped("libcublas"));

    r = run(L, "return tostring(tide.cuda.is_available())");
    if (strcmp(r, "true") != 0) {
        printf("no CUDA device (run with TIDE_CUDA_LIB=build/cuda-emu/libtide_cuda.so): %s\n",
               run(L, "return tide.cuda.unavailable_reason()"));
        printf("%d passed, %d failed, 1 pending\n", tu_pass, tu_fail);
        return tu_fail != 0;
    }
    CHECK(mapped("libtide_cuda"));
    CHECK(!mapped("libcublas")); /* asking whether a GPU exists loads no cuBLAS */

    r = run(L, "local a = tide.ones(2, 3, {device = 'cuda'})\n"
               "return a:matmul(a:t()):sum():item()");
    CHECK_STR(r, "12.0");
    CHECK(mapped("libcublas"));
    lua_close(L);
    return tu_finish();
}
