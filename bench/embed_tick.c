/*
 * embed_tick.c — the per-tick cost of handing a host buffer (16 floats) to a script as a
 * tensor, as a game does every frame: wrapped anew each tick (tide_tensor_from_blob + push +
 * release, the collector finalizing the old ones), or wrapped once and kept in the registry;
 * with a script that does nothing with it, and with one that reads one element and writes
 * another. Beside them, the same call with a number instead of a tensor: the price of the Lua
 * call itself. Each figure is the median of 5 runs, in ns per tick of process CPU time.
 *
 *   bench_embed_tick [ticks]     (built by examples/embed/embed.mk; bench/run.sh runs it)
 */
#include "tide.h"
#include "tide_lua.h"

#include <lauxlib.h>
#include <lualib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef TIDE_LUA_DIR
#define TIDE_LUA_DIR "lua"
#endif

#define N    16
#define RUNS 5

static float        buf[N];
static tide_device *cpu;
static int          kept = LUA_NOREF; /* registry reference to the tensor wrapped once */

static double cpu_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void die(lua_State *L, const char *what) {
    fprintf(stderr, "embed_tick: %s: %s\n", what, L ? lua_tostring(L, -1) : tide_errmsg());
    exit(1);
}

typedef enum { ARG_NUMBER, ARG_WRAP, ARG_KEPT } arg_kind;

/* ns per tick of `ticks` calls of the global function fn with the given argument */
static double run(lua_State *L, const char *fn, arg_kind kind, long ticks) {
    lua_getglobal(L, fn);
    int    f = lua_gettop(L);
    double t0 = cpu_now();
    for (long i = 0; i < ticks; i++) {
        lua_pushvalue(L, f);
        if (kind == ARG_NUMBER) {
            lua_pushnumber(L, 1.0);
        } else if (kind == ARG_KEPT) {
            lua_rawgeti(L, LUA_REGISTRYINDEX, kept);
        } else {
            int64_t      n = N;
            tide_tensor *t;
            if (tide_tensor_from_blob(tide_lua_ctx(L), buf, TIDE_DTYPE_F32, 1, &n, NULL, cpu, NULL,
                                      NULL, &t) != TIDE_OK)
                die(NULL, "from_blob");
            tide_lua_push_tensor(L, t);
            tide_tensor_release(t);
        }
        if (lua_pcall(L, 1, 0, 0) != LUA_OK)
            die(L, fn);
    }
    double ns = (cpu_now() - t0) * 1e9 / (double)ticks;
    lua_settop(L, f - 1);
    return ns;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median_run(lua_State *L, const char *fn, arg_kind kind, long ticks) {
    double v[RUNS];
    for (int r = 0; r < RUNS; r++)
        v[r] = run(L, fn, kind, ticks);
    qsort(v, RUNS, sizeof v[0], cmp);
    return v[RUNS / 2];
}

int main(int argc, char **argv) {
    long ticks = argc > 1 ? atol(argv[1]) : 200000;
    if (ticks <= 0 || tide_init() != TIDE_OK || tide_device_get("cpu", &cpu) != TIDE_OK)
        die(NULL, "setup");
    lua_State *L = luaL_newstate();
    luaL_openlibs(L);
    tide_lua_preload(L);
    const char *boot = "package.path = '" TIDE_LUA_DIR "/?.lua;" TIDE_LUA_DIR "/?/init.lua'\n"
                       "tide = require 'tide'\n"
                       "function noop(x) end\n"
                       "function read_write(x) local v = x[1]; x[2] = v end\n"
                       "function read_write_number(x) local v = x + 1 end\n";
    if (luaL_dostring(L, boot) != LUA_OK)
        die(L, "boot");
    int64_t      n = N;
    tide_tensor *t;
    if (tide_tensor_from_blob(tide_lua_ctx(L), buf, TIDE_DTYPE_F32, 1, &n, NULL, cpu, NULL, NULL,
                              &t) != TIDE_OK)
        die(NULL, "from_blob");
    tide_lua_push_tensor(L, t);
    tide_tensor_release(t);
    kept = luaL_ref(L, LUA_REGISTRYINDEX);

    run(L, "noop", ARG_WRAP, ticks / 10); /* warm-up */
    double call = median_run(L, "noop", ARG_NUMBER, ticks);
    double wrap = median_run(L, "noop", ARG_WRAP, ticks);
    double reuse = median_run(L, "noop", ARG_KEPT, ticks);
    double call_rw = median_run(L, "read_write_number", ARG_NUMBER, ticks);
    double wrap_rw = median_run(L, "read_write", ARG_WRAP, ticks);
    double reuse_rw = median_run(L, "read_write", ARG_KEPT, ticks);
    printf("embed tick: a host buffer of %d floats handed to a script, ns per tick (CPU time, "
           "median of %d x %ld ticks)\n",
           N, RUNS, ticks);
    printf("  %-44s %8s %12s\n", "", "nothing", "1 read+write");
    printf("  %-44s %8.0f %12.0f\n", "a number instead (the Lua call alone)", call, call_rw);
    printf("  %-44s %8.0f %12.0f\n", "wrap every tick (from_blob + push + release)", wrap, wrap_rw);
    printf("  %-44s %8.0f %12.0f\n", "wrap once, keep it in the registry", reuse, reuse_rw);
    printf("  wrapping costs %.0f ns a tick over reuse; the read and write %.0f ns\n", wrap - reuse,
           reuse_rw - reuse);
    lua_close(L);
    return 0;
}
