/*
 * embed_lua.c — the Lua host API (include/tide_lua.h) as a game or tool would use it: host
 * buffers handed to scripts without copies, their lifetime across Lua's collector, per-state
 * memory limits, script errors caught by the host, several states in several threads.
 *
 * Built as build/test_embed_lua by examples/embed/embed.mk (it links Lua and the binding, which
 * the generic spec/c/test_*.c rule does not), so this file is not named test_*.c.
 */
#include "tide_dlpack.h"
#include "tide_lua.h"
#include "test_embed.h"

#include <lauxlib.h>
#include <lualib.h>
#include <pthread.h>
#include <stdlib.h>

#ifndef TIDE_LUA_DIR
#define TIDE_LUA_DIR "lua"
#endif

/* a state with the standard libraries and tide loaded as the global `tide` */
static lua_State *new_state(void) {
    lua_State *L = luaL_newstate();
    if (!L)
        return NULL;
    luaL_openlibs(L);
    tide_lua_preload(L);
    const char *boot = "local dir = ...\n"
                       "package.path = dir .. '/?.lua;' .. dir .. '/?/init.lua;' .. package.path\n"
                       "tide = require 'tide'\n";
    if (luaL_loadbuffer(L, boot, strlen(boot), "=boot") != LUA_OK ||
        (lua_pushstring(L, TIDE_LUA_DIR), lua_pcall(L, 1, 0, 0)) != LUA_OK) {
        fprintf(stderr, "new_state: %s\n", lua_tostring(L, -1));
        lua_close(L);
        return NULL;
    }
    return L;
}

/* runs chunk (named "=name" for messages) with nres results; on error leaves the message on
 * the stack and returns its status */
static int run(lua_State *L, const char *name, const char *chunk, int nres) {
    int st = luaL_loadbuffer(L, chunk, strlen(chunk), name);
    if (st == LUA_OK)
        st = lua_pcall(L, 0, nres, 0);
    return st;
}

/* the number a chunk returns, NAN on error (printed) */
static double run_number(lua_State *L, const char *chunk) {
    if (run(L, "=chunk", chunk, 1) != LUA_OK) {
        fprintf(stderr, "run_number: %s\n", lua_tostring(L, -1));
        lua_pop(L, 1);
        return NAN;
    }
    double v = lua_isnumber(L, -1) ? lua_tonumber(L, -1) : NAN;
    lua_pop(L, 1);
    return v;
}

static tide_device *cpu(void) {
    tide_device *d = NULL;
    tide_device_get("cpu", &d);
    return d;
}

/* wraps buf as a float32 tensor of shape and stores it in global `name`; the host keeps no
 * reference, so Lua alone decides its lifetime */
static void give_blob(lua_State *L, const char *name, float *buf, int ndim, const int64_t *shape,
                      atomic_int *calls) {
    tide_tensor *t = NULL;
    CHECK_OK(tide_tensor_from_blob(tide_lua_ctx(L), buf, TIDE_DTYPE_F32, ndim, shape, NULL, cpu(),
                                   calls ? count_deleter : NULL, calls, &t));
    if (!t)
        return;
    tide_lua_push_tensor(L, t);
    tide_tensor_release(t);
    lua_setglobal(L, name);
}

/* ---- host memory as tensors --------------------------------------------------------------- */

static void test_blob_values_both_ways(void) {
    lua_State *L = new_state();
    CHECK(L != NULL);
    if (!L)
        return;
    float   buf[6] = {0, 1, 2, 3, 4, 5};
    int64_t shape[2] = {2, 3};
    give_blob(L, "x", buf, 2, shape, NULL);
    CHECK(run_number(L, "return x:sum():item()") == 15.0);
    CHECK(run_number(L, "return x[2][3]:item()") == 5.0); /* 1-based in Lua */
    buf[4] = 40.0f;                                       /* host writes, Lua reads */
    CHECK(run_number(L, "return x[2][2]:item()") == 40.0);
    CHECK(run(L, "=w", "x[1] = 9; x[2]:mul_(2)", 0) == LUA_OK); /* Lua writes, host reads */
    CHECK(buf[0] == 9.0f && buf[2] == 9.0f && buf[3] == 6.0f && buf[4] == 80.0f);
    /* a script's result written into the host's buffer (how an agent reports back) */
    CHECK(run(L, "=c", "x[2]:copy_(tide.tensor({7, 8, 9}))", 0) == LUA_OK); /* int64 source */
    CHECK(buf[3] == 7.0f && buf[4] == 8.0f && buf[5] == 9.0f && buf[0] == 9.0f);
    /* float32 source of the same geometry as the destination (different memory) */
    CHECK(run(L, "=c", "x[1]:copy_(tide.tensor({1.5, 2.5, 3.5}))", 0) == LUA_OK);
    CHECK(buf[0] == 1.5f && buf[1] == 2.5f && buf[2] == 3.5f && buf[3] == 7.0f);
    CHECK(run_number(L, "return rawequal(x:to('cpu'), x) and 1 or 0") == 1.0);
    CHECK(run_number(L, "return x.shape[1] * 10 + x.shape[2]") == 23.0);
    CHECK(run_number(L, "return x:t():contiguous()[3][1]:item()") == 3.5);
    lua_close(L);
}

/* deleter: not while any Lua value (views included) can reach the memory; once after */
static void test_blob_lifetime(void) {
    lua_State *L = new_state();
    CHECK(L != NULL);
    if (!L)
        return;
    float      buf[6] = {0, 1, 2, 3, 4, 5};
    int64_t    shape[2] = {2, 3};
    atomic_int calls = 0;
    give_blob(L, "x", buf, 2, shape, &calls);
    CHECK(run(L, "=v", "y = x:narrow(2, 2, 2); x = nil; collectgarbage(); collectgarbage()", 0) ==
          LUA_OK);
    CHECK(atomic_load(&calls) == 0);
    CHECK(run_number(L, "return y[2][2]:item()") == 5.0);
    CHECK(run(L, "=v", "y = nil; collectgarbage(); collectgarbage()", 0) == LUA_OK);
    CHECK(atomic_load(&calls) == 1);

    /* :free() releases at once; __gc later does nothing more */
    atomic_int calls2 = 0;
    give_blob(L, "z", buf, 2, shape, &calls2);
    CHECK(run(L, "=f", "z:free()", 0) == LUA_OK);
    CHECK(atomic_load(&calls2) == 1);
    CHECK(run(L, "=f", "return z:sum()", 0) != LUA_OK);
    CHECK_HAS(lua_tostring(L, -1), "freed");
    lua_pop(L, 1);
    CHECK(run(L, "=f", "z = nil; collectgarbage()", 0) == LUA_OK);
    CHECK(atomic_load(&calls2) == 1);

    /* closing the state releases what scripts still hold */
    atomic_int calls3 = 0;
    give_blob(L, "w", buf, 2, shape, &calls3);
    CHECK(run(L, "=v", "keep = {w, w:view(6), w[1]}", 0) == LUA_OK);
    lua_close(L);
    CHECK(atomic_load(&calls3) == 1);
}

/* tensors made by a script, read by the host; check/to on other values */
static void test_script_tensor_to_host(void) {
    lua_State *L = new_state();
    CHECK(L != NULL);
    if (!L)
        return;
    CHECK(run(L, "=mk", "return tide.tensor({{1.5, 2.5}, {3.5, 4.5}}):t()", 1) == LUA_OK);
    tide_tensor *t = tide_lua_to_tensor(L, -1);
    CHECK(t != NULL && tide_tensor_ndim(t) == 2 && tide_tensor_dtype(t) == TIDE_DTYPE_F32);
    int64_t idx[2] = {0, 1};
    double  v = 0;
    CHECK(t && tide_tensor_get(t, idx, &v) == TIDE_OK && v == 3.5);
    CHECK(tide_lua_check_tensor(L, -1) == t);
    /* the host keeps it past the Lua value's life with its own reference */
    tide_tensor_retain(t);
    lua_pop(L, 1);
    lua_gc(L, LUA_GCCOLLECT, 0);
    CHECK(t && tide_tensor_get(t, idx, &v) == TIDE_OK && v == 3.5);
    tide_tensor_release(t);

    lua_pushnumber(L, 3);
    CHECK(tide_lua_to_tensor(L, -1) == NULL);
    lua_pop(L, 1);
    CHECK(run(L, "=c", "return tide.zeros(2)", 1) == LUA_OK);
    CHECK(tide_lua_check_tensor(L, -1) != NULL);
    lua_pop(L, 1);
    lua_close(L);
}

static int call_check(lua_State *L) {
    tide_lua_check_tensor(L, 1);
    return 0;
}

static void test_check_tensor_raises(void) {
    lua_State *L = new_state();
    CHECK(L != NULL);
    if (!L)
        return;
    lua_pushcfunction(L, call_check);
    lua_pushstring(L, "not a tensor");
    CHECK(lua_pcall(L, 1, 0, 0) == LUA_ERRRUN);
    CHECK(lua_gettop(L) == 1);
    lua_pop(L, 1);
    lua_close(L);
}

/* ---- limits and errors ---------------------------------------------------------------------- */

/* a mod script that goes past its state's limit gets a tide: error; the host carries on, the
 * same state still runs, another state has no limit */
static void test_memory_limit(void) {
    lua_State *L = new_state(), *other = new_state();
    CHECK(L && other);
    if (!L || !other)
        return;
    int top = lua_gettop(L);
    int st = run(L, "=mod.lua",
                 "tide.set_memory_limit(1000000)\n"
                 "local keep = tide.zeros(1000)\n"
                 "local big = tide.zeros(1000000)\n",
                 0);
    CHECK(st == LUA_ERRRUN);
    const char *msg = lua_tostring(L, -1);
    CHECK(msg != NULL);
    if (msg) {
        CHECK_PREFIX(msg, "mod.lua:3: tide: ");
        CHECK_HAS(msg, "limit");
    }
    lua_pop(L, 1);
    CHECK(lua_gettop(L) == top);
    CHECK(tide_ctx_memory_limit(tide_lua_ctx(L)) == 1000000);
    CHECK(tide_ctx_memory_limit(tide_lua_ctx(other)) == 0);
    CHECK(run_number(L, "return tide.ones(10):sum():item()") == 10.0);
    CHECK(run_number(other, "return tide.ones(1000000):sum():item()") == 1000000.0);
    /* pcall inside the script works the same */
    CHECK(run_number(L, "local ok, e = pcall(tide.zeros, 1000000)\n"
                        "return (not ok and e:find('tide:', 1, true)) and 1 or 0") == 1.0);
    lua_close(other);
    lua_close(L);
}

/* one frame's script fails (shape error); the host's buffer, the state and the next frame are
 * fine */
static void test_script_error_in_frame(void) {
    lua_State *L = new_state();
    CHECK(L != NULL);
    if (!L)
        return;
    CHECK(run(L, "=agent.lua",
              "W = tide.ones(5, 2)\n"
              "function frame(s) return s:matmul(W):sum():item() end\n",
              0) == LUA_OK);
    float      good[5] = {1, 2, 3, 4, 5}, bad[4] = {1, 2, 3, 4};
    atomic_int calls = 0;
    int64_t    n5 = 5, n4 = 4;
    for (int f = 0; f < 3; f++) {
        int          is_bad = f == 1;
        tide_tensor *t = NULL;
        int          top = lua_gettop(L);
        CHECK_OK(tide_tensor_from_blob(tide_lua_ctx(L), is_bad ? bad : good, TIDE_DTYPE_F32, 1,
                                       is_bad ? &n4 : &n5, NULL, cpu(), count_deleter, &calls, &t));
        lua_getglobal(L, "frame");
        tide_lua_push_tensor(L, t);
        tide_tensor_release(t);
        int st = lua_pcall(L, 1, 1, 0);
        if (is_bad) {
            CHECK(st == LUA_ERRRUN);
            CHECK_PREFIX(lua_tostring(L, -1), "agent.lua:2: tide: matmul");
        } else {
            CHECK(st == LUA_OK && lua_tonumber(L, -1) == 30.0);
        }
        lua_pop(L, 1);
        CHECK(lua_gettop(L) == top);
    }
    lua_gc(L, LUA_GCCOLLECT, 0);
    CHECK(atomic_load(&calls) == 3);
    CHECK(good[4] == 5.0f && bad[3] == 4.0f);
    lua_close(L);
}

/* whatever a script asks of a host buffer, it cannot reach past it (ASan watches the rest) */
static void test_script_bounds(void) {
    lua_State *L = new_state();
    CHECK(L != NULL);
    if (!L)
        return;
    float   buf[8] = {0, 1, 2, 3, 4, 5, -7, -7}; /* the tensor sees the first 6 */
    int64_t shape[2] = {2, 3};
    give_blob(L, "x", buf, 2, shape, NULL);
    static const char *const bad[] = {
        "return x[3]",
        "return x[0]",
        "return x[1][4]",
        "return x:narrow(2, 2, 5)",
        "return x:narrow(1, 0, 1)",
        "return x:view(8)",
        "return x:select(2, 4)",
        "x[3] = 1",
        "x[1][-4] = 1",
        "return x:index_select(2, tide.tensor({1, 4}))",
        "x:view(6):narrow(1, 5, 3):fill_(9)",
        "return x:reshape(4, 2)",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int st = run(L, "=mod.lua", bad[i], 0);
        CHECK(st == LUA_ERRRUN);
        if (st != LUA_OK) {
            const char *msg = lua_tostring(L, -1);
            if (!msg || !strstr(msg, "tide:"))
                fprintf(stderr, "  %s -> %s\n", bad[i], msg ? msg : "(no message)");
            CHECK(msg && strstr(msg, "tide:") != NULL);
            lua_pop(L, 1);
        }
    }
    CHECK(buf[5] == 5.0f && buf[6] == -7.0f && buf[7] == -7.0f && buf[0] == 0.0f);
    /* negative indices count from the end, inside the buffer */
    CHECK(run_number(L, "return x[-1][-1]:item()") == 5.0);
    lua_close(L);
}

/* a tensor made in Lua, exported through DLPack, outlives the Lua state */
static void test_dlpack_from_lua(void) {
    lua_State *L = new_state();
    CHECK(L != NULL);
    if (!L)
        return;
    CHECK(run(L, "=d", "return tide.arange(0, 6):view(2, 3):double()", 1) == LUA_OK);
    DLManagedTensor *m = NULL;
    tide_tensor     *t = tide_lua_to_tensor(L, -1);
    CHECK(t && tide_tensor_to_dlpack(t, &m) == TIDE_OK);
    lua_close(L);
    CHECK(m && m->dl_tensor.dtype.code == kDLFloat && m->dl_tensor.dtype.bits == 64);
    CHECK(m && ((double *)m->dl_tensor.data)[5] == 5.0);
    if (m)
        m->deleter(m);
}

/* ---- threads ------------------------------------------------------------------------------- */

#define FRAMES 200

typedef struct thread_job {
    int        id, bad;
    atomic_int deleted;      /* blob deleters run (by the collector, any time after the frame) */
    float      buf[2][1000]; /* one game buffer per state */
} thread_job;

/* each thread: two states used in turn, a host buffer per state, a script op per frame */
static void *thread_main(void *arg) {
    thread_job *job = arg;
    lua_State  *L[2] = {new_state(), new_state()};
    if (!L[0] || !L[1]) {
        job->bad++;
        goto out;
    }
    for (int s = 0; s < 2; s++) {
        tide_ctx_set_memory_limit(tide_lua_ctx(L[s]), 1 << 20);
        if (run(L[s], "=th", "function frame(x, k) return ((x * k + 1):sum()):item() end", 0))
            job->bad++;
    }
    int64_t n = 1000;
    for (int f = 0; f < FRAMES; f++) {
        int    s = f & 1;
        float *buf = job->buf[s];
        for (int i = 0; i < 1000; i++)
            buf[i] = (float)(job->id + s);
        tide_tensor *t = NULL;
        if (tide_tensor_from_blob(tide_lua_ctx(L[s]), buf, TIDE_DTYPE_F32, 1, &n, NULL, cpu(),
                                  count_deleter, &job->deleted, &t) != TIDE_OK) {
            job->bad++;
            continue;
        }
        lua_getglobal(L[s], "frame");
        tide_lua_push_tensor(L[s], t);
        tide_tensor_release(t);
        lua_pushinteger(L[s], f);
        double want = 1000.0 * ((job->id + s) * f + 1);
        if (lua_pcall(L[s], 2, 1, 0) != LUA_OK || lua_tonumber(L[s], -1) != want)
            job->bad++;
        lua_pop(L[s], 1);
        if (f % 50 == 49)
            lua_gc(L[s], LUA_GCCOLLECT, 0);
    }
out:
    for (int s = 0; s < 2; s++)
        if (L[s])
            lua_close(L[s]);
    if (atomic_load(&job->deleted) != FRAMES)
        job->bad++;
    return NULL;
}

static void test_threads_states(void) {
    static thread_job jobs[2];
    pthread_t         th[2];
    for (int i = 0; i < 2; i++) {
        jobs[i].id = i + 1;
        jobs[i].bad = 0;
        atomic_init(&jobs[i].deleted, 0);
        CHECK(pthread_create(&th[i], NULL, thread_main, &jobs[i]) == 0);
    }
    for (int i = 0; i < 2; i++) {
        pthread_join(th[i], NULL);
        CHECK(jobs[i].bad == 0);
    }
}

int main(void) {
    CHECK_OK(tide_init());
    RUN(test_blob_values_both_ways);
    RUN(test_blob_lifetime);
    RUN(test_script_tensor_to_host);
    RUN(test_check_tensor_raises);
    RUN(test_memory_limit);
    RUN(test_script_error_in_frame);
    RUN(test_script_bounds);
    RUN(test_dlpack_from_lua);
    RUN(test_threads_states);
    return checks_report();
}
