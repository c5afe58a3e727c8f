/* state.c — the per-lua_State record of tide.core: context, grad mode, default device, hook. */
#include "binding.h"
#include "tide_lua.h"
#include <stdarg.h>
#include <string.h>

static const char state_key = 's'; /* registry key (its address) */

static int state_gc(lua_State *L) {
    tide_lua_state *S = lua_touserdata(L, 1);
    if (S->ctx) {
        tide_ctx_release(S->ctx); /* tensors still alive keep their context */
        S->ctx = NULL;
    }
    return 0;
}

/* Pushes the state of L, creating it on first use. */
static tide_lua_state *state_push(lua_State *L) {
    if (lua_rawgetp(L, LUA_REGISTRYINDEX, &state_key) == LUA_TUSERDATA)
        return lua_touserdata(L, -1);
    lua_pop(L, 1);
    tide_lua_state *S = lua_newuserdatauv(L, sizeof *S, 0);
    S->ctx = NULL;
    S->grad_enabled = 1;
    S->default_dev = NULL;
    S->hook_ref = LUA_NOREF;
    S->gc_debt = 0;
    S->tensor_mt = NULL;
    lua_createtable(L, 0, 1);
    lua_pushcfunction(L, state_gc);
    lua_setfield(L, -2, "__gc");
    lua_setmetatable(L, -2);
    if (tide_init() != TIDE_OK || tide_ctx_new(&S->ctx) != TIDE_OK)
        tl_raise(L);
    lua_pushvalue(L, -1);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &state_key);
    return S;
}

tide_lua_state *tl_state(lua_State *L) {
    tide_lua_state *S = state_push(L);
    lua_pop(L, 1);
    return S;
}

void tl_push_state(lua_State *L) {
    state_push(L);
}

void tl_register(lua_State *L, int tidx, const luaL_Reg *l) {
    tidx = lua_absindex(L, tidx);
    lua_pushvalue(L, tidx);
    state_push(L);
    luaL_setfuncs(L, l, 1);
    lua_pop(L, 1);
}

/* Like luaL_error, but the position is that of the nearest Lua caller: tostring(t), pcall(f)
 * and other C functions in between would otherwise leave the message without one. */
int tl_error(lua_State *L, const char *fmt, ...) {
    lua_Debug ar;
    int       level = 1;
    for (int l = 1; l <= 3 && lua_getstack(L, l, &ar); l++) {
        lua_getinfo(L, "Sl", &ar);
        if (ar.currentline > 0) {
            level = l;
            break;
        }
    }
    va_list ap;
    va_start(ap, fmt);
    luaL_where(L, level);
    lua_pushvfstring(L, fmt, ap);
    va_end(ap);
    lua_concat(L, 2);
    return lua_error(L);
}

int tl_raise(lua_State *L) {
    return tl_error(L, "%s", tide_errmsg());
}

/* Raises the core's message with its op name `from` renamed `to` (the core names add_ "add"). */
int tl_raise_as(lua_State *L, const char *from, const char *to) {
    const char *msg = tide_errmsg();
    size_t      n = strlen(from);
    if (strncmp(msg, "tide: ", 6) == 0 && strncmp(msg + 6, from, n) == 0 && msg[6 + n] == ':')
        return tl_error(L, "tide: %s%s", to, msg + 6 + n);
    return tl_error(L, "%s", msg);
}

/* Frees what can be freed before retrying a failed allocation: cached blocks of every loaded
 * device, then every unreachable tensor. */
void tl_reclaim(lua_State *L, tide_lua_state *S) {
    tide_device *dev;
    for (int i = 0; i < tide_device_count(TIDE_DEVICE_CPU); i++)
        if (tide_device_get_index(TIDE_DEVICE_CPU, i, &dev) == TIDE_OK)
            tide_device_empty_cache(dev);
    if (tide_cuda_is_loaded()) /* never loads CUDA for a host that did not ask for it */
        for (int i = 0; i < tide_device_count(TIDE_DEVICE_CUDA); i++)
            if (tide_device_get_index(TIDE_DEVICE_CUDA, i, &dev) == TIDE_OK)
                tide_device_empty_cache(dev);
    lua_gc(L, LUA_GCCOLLECT, 0);
    for (int i = 0; i < tide_device_count(TIDE_DEVICE_CPU); i++)
        if (tide_device_get_index(TIDE_DEVICE_CPU, i, &dev) == TIDE_OK)
            tide_device_empty_cache(dev);
    S->gc_debt = 0;
}

#ifndef GC_STEP_BYTES
#define GC_STEP_BYTES ((size_t)1 << 18)
#endif
/* what a tensor holds outside Lua besides its data: the core's tensor + storage header (one
 * malloc'd block of about 240 bytes) and the allocator's rounding of a small buffer */
#define TENSOR_HOST_BYTES 256

/* Lua sees only the small userdata; tell its collector about the tensor bytes so dropped
 * tensors are collected in proportion to what they hold. Counting the data alone let tiny
 * tensors pile up as garbage by the ten thousand (a 1-element add: ~12,000 dead tensors, 4 MB
 * of headers and blocks out of cache). Never called from a finalizer. */
void tl_gc_hint(lua_State *L, tide_lua_state *S, size_t bytes) {
    S->gc_debt += bytes + TENSOR_HOST_BYTES;
    if (S->gc_debt < GC_STEP_BYTES)
        return;
    int kb = (int)(S->gc_debt >> 10 > 0x7fffffff ? 0x7fffffff : S->gc_debt >> 10);
    S->gc_debt = 0;
#if LUA_VERSION_NUM <= 504
    lua_gc(L, LUA_GCSTEP, kb); /* 5.1-5.4: the step as if kb KiB had been allocated */
#else
    (void)kb;
    lua_gc(L, LUA_GCSTEP, 0); /* 5.5 changed the argument's meaning: one basic step */
#endif
}

tide_ctx *tide_lua_ctx(lua_State *L) {
    tide_ctx *ctx = NULL;
    if (lua_rawgetp(L, LUA_REGISTRYINDEX, &state_key) == LUA_TUSERDATA)
        ctx = ((tide_lua_state *)lua_touserdata(L, -1))->ctx;
    lua_pop(L, 1);
    return ctx;
}

void tide_lua_preload(lua_State *L) {
    if (tl_check_runtime(L) != 0)
        return;
    luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
    lua_pushcfunction(L, luaopen_tide_core);
    lua_setfield(L, -2, "tide.core");
    lua_pop(L, 1);
}
