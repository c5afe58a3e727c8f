/*
 * embed_roundtrip.c — what a host pays per frame to run a script over its own data:
 * a buffer of 1,000 floats -> a Lua tensor -> a small op (x * 2) -> the result read by the
 * host. Beside it, the same work done by copying through a Lua table (the way without tide's
 * host API), measured in the same run. Target: <= 2 us per frame for the zero-copy path.
 * Both wall time and process CPU time are reported: on a loaded machine the CPU time is the
 * steadier of the two (it also counts any helper threads, so it is not flattering).
 *
 *   bench_embed_roundtrip [frames [lua_dir]]     (built by `make embed-bench`)
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

#define N 1000

static float        buf[N];
static tide_device *host_cpu;
static double       sink; /* what the host read, so nothing is optimised away */

static double now(clockid_t clk) {
    struct timespec ts;
    clock_gettime(clk, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void die(lua_State *L, const char *what) {
    fprintf(stderr, "embed_roundtrip: %s: %s\n", what, L ? lua_tostring(L, -1) : tide_errmsg());
    exit(1);
}

/* the host reads the result tensor at the top of the stack */
static void read_result(lua_State *L) {
    tide_tensor *r = tide_lua_to_tensor(L, -1);
    if (!r || tide_tensor_numel(r) != N || !tide_tensor_is_contiguous(r))
        die(NULL, "result");
    const float *p = tide_tensor_data(r);
    sink += p[0] + p[N - 1];
    lua_pop(L, 1);
}

/* zero-copy: wrap the buffer (from_blob) and push it, every frame */
static void frame_blob(lua_State *L) {
    int64_t      n = N;
    tide_tensor *t = NULL;
    if (tide_tensor_from_blob(tide_lua_ctx(L), buf, TIDE_DTYPE_F32, 1, &n, NULL, host_cpu, NULL,
                              NULL, &t) != TIDE_OK)
        die(NULL, "from_blob");
    lua_getglobal(L, "step");
    tide_lua_push_tensor(L, t);
    tide_tensor_release(t);
    if (lua_pcall(L, 1, 1, 0) != LUA_OK)
        die(L, "step");
    read_result(L);
}

/* zero-copy, the tensor over the buffer made once (global `x`) */
static void frame_kept(lua_State *L) {
    lua_getglobal(L, "step");
    lua_getglobal(L, "x");
    if (lua_pcall(L, 1, 1, 0) != LUA_OK)
        die(L, "step");
    read_result(L);
}

/* the host copies its buffer into a Lua table; the script makes a tensor of it, computes, and
 * returns a table; the host copies the values back out */
static void frame_table_tensor(lua_State *L) {
    lua_getglobal(L, "step_table_tensor");
    lua_createtable(L, N, 0);
    for (int i = 0; i < N; i++) {
        lua_pushnumber(L, buf[i]);
        lua_rawseti(L, -2, i + 1);
    }
    if (lua_pcall(L, 1, 1, 0) != LUA_OK)
        die(L, "step_table_tensor");
    float out[N];
    for (int i = 0; i < N; i++) {
        lua_rawgeti(L, -1, i + 1);
        out[i] = (float)lua_tonumber(L, -1);
        lua_pop(L, 1);
    }
    sink += out[0] + out[N - 1];
    lua_pop(L, 1);
}

/* the same through a table, the op as a Lua loop (no tide at all) */
static void frame_table_loop(lua_State *L) {
    lua_getglobal(L, "step_table_loop");
    lua_createtable(L, N, 0);
    for (int i = 0; i < N; i++) {
        lua_pushnumber(L, buf[i]);
        lua_rawseti(L, -2, i + 1);
    }
    if (lua_pcall(L, 1, 1, 0) != LUA_OK)
        die(L, "step_table_loop");
    float out[N];
    for (int i = 0; i < N; i++) {
        lua_rawgeti(L, -1, i + 1);
        out[i] = (float)lua_tonumber(L, -1);
        lua_pop(L, 1);
    }
    sink += out[0] + out[N - 1];
    lua_pop(L, 1);
}

typedef struct timing {
    double wall, cpu; /* best of 5 runs, microseconds per frame */
} timing;

static timing time_frames(lua_State *L, void (*frame)(lua_State *), int frames) {
    timing best = {1e30, 1e30};
    for (int w = 0; w < frames / 10; w++)
        frame(L);
    for (int rep = 0; rep < 5; rep++) {
        double w0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_PROCESS_CPUTIME_ID);
        for (int f = 0; f < frames; f++)
            frame(L);
        double wall = (now(CLOCK_MONOTONIC) - w0) * 1e6 / frames;
        double cpu = (now(CLOCK_PROCESS_CPUTIME_ID) - c0) * 1e6 / frames;
        best.wall = wall < best.wall ? wall : best.wall;
        best.cpu = cpu < best.cpu ? cpu : best.cpu;
    }
    return best;
}

static void report(const char *what, timing t, timing ref) {
    printf("  %-44s %8.2f %8.2f", what, t.wall, t.cpu);
    if (t.wall != ref.wall)
        printf("   %5.1fx", t.wall / ref.wall);
    printf("\n");
}

int main(int argc, char **argv) {
    int frames = argc > 1 ? atoi(argv[1]) : 20000;
    if (frames < 10)
        frames = 10;
    if (tide_init() != TIDE_OK || tide_device_get("cpu", &host_cpu) != TIDE_OK)
        die(NULL, "init");
    for (int i = 0; i < N; i++)
        buf[i] = (float)i;

    lua_State *L = luaL_newstate();
    luaL_openlibs(L);
    tide_lua_preload(L);
    const char *boot = "local dir = ...\n"
                       "package.path = dir .. '/?.lua;' .. dir .. '/?/init.lua;' .. package.path\n"
                       "tide = require 'tide'\n"
                       "function step(x) return x * 2 end\n"
                       "function step_table_tensor(t) return (tide.tensor(t) * 2):totable() end\n"
                       "function step_table_loop(t)\n"
                       "  local r = {}\n"
                       "  for i = 1, #t do r[i] = t[i] * 2 end\n"
                       "  return r\n"
                       "end\n";
    if (luaL_loadbuffer(L, boot, strlen(boot), "=bench") != LUA_OK ||
        (lua_pushstring(L, argc > 2 ? argv[2] : TIDE_LUA_DIR), lua_pcall(L, 1, 0, 0)) != LUA_OK)
        die(L, "boot");
    {
        int64_t      n = N;
        tide_tensor *t = NULL;
        if (tide_tensor_from_blob(tide_lua_ctx(L), buf, TIDE_DTYPE_F32, 1, &n, NULL, host_cpu, NULL,
                                  NULL, &t) != TIDE_OK)
            die(NULL, "from_blob");
        tide_lua_push_tensor(L, t);
        tide_tensor_release(t);
        lua_setglobal(L, "x");
    }

    /* every path gives the same numbers */
    frame_blob(L);
    double check = sink;
    frame_table_tensor(L);
    frame_table_loop(L);
    if (check != 0.0 + 1998.0 || sink != 3 * check) {
        fprintf(stderr, "embed_roundtrip: wrong result (%g, %g)\n", check, sink);
        return 1;
    }

    timing blob = time_frames(L, frame_blob, frames);
    timing kept = time_frames(L, frame_kept, frames);
    timing tbl = time_frames(L, frame_table_tensor, frames / 10);
    timing loop = time_frames(L, frame_table_loop, frames / 10);
    printf("embed round trip: host buffer of %d float32 -> Lua tensor -> x * 2 -> host reads it\n",
           N);
    printf("  %-44s %8s %8s   %s\n", "per frame (best of 5)", "wall us", "cpu us", "vs first");
    report("zero-copy: from_blob + push every frame", blob, blob);
    report("zero-copy: tensor over the buffer made once", kept, blob);
    report("copy via Lua table: tide.tensor / totable", tbl, blob);
    report("copy via Lua table: op as a Lua loop", loop, blob);
    printf("  target <= 2 us per frame (from_blob + push every frame): %s (wall), %s (cpu)\n",
           blob.wall <= 2.0 ? "met" : "NOT met", blob.cpu <= 2.0 ? "met" : "NOT met");
    lua_close(L);
    return 0;
}
