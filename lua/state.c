/* state.c — the per-lua_State record of tide.core (context, grad mode, default device, hook),
 * the registration of C functions with it as upvalue, and errors raised at the user's line. */
#include "state.h"
#include "tide_lua.h"
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char state_key = 's'; /* registry key (its address) */

static int state_gc(lua_State *L) {
    tide_lua_state *S = lua_touserdata(L, 1);
    if (S->ctx) {
        tide_ctx_set_log(S->ctx, NULL, NULL); /* its log function points at S */
        tide_ctx_release(S->ctx);             /* tensors still alive keep their context */
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
    S->autocast_ref = LUA_NOREF;
    S->gc_debt = 0;
    S->gc_since = 0;
    S->gc_live = 0;
    S->gc_made = 0;
    S->gc_gen = 0;
    S->gc_passes = 0;
    S->gc_aged = 0;
    S->gc_dropped = 0;
    S->gc_pinned = 0;
    lua_createtable(L, 0, 1);
    lua_pushcfunction(L, state_gc);
    lua_setfield(L, -2, "__gc");
    lua_setmetatable(L, -2);
    /* luaL_error, not tl_raise: tl_raise finds the user's line through this state, which
     * does not exist yet (it would come back here, fail the same way, without end) */
    if (tide_init() != TIDE_OK || tide_ctx_new(&S->ctx) != TIDE_OK)
        luaL_error(L, "%s", tide_errmsg()); /* does not return */
    tl_trace_init(S);
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

/* The kernels the Lua library calls and users do not (im2col, the fused backward passes, ...)
 * go into one table, core._internal, so the public namespace is the documented API. */
void tl_push_internal(lua_State *L, int mod) {
    mod = lua_absindex(L, mod);
    if (lua_getfield(L, mod, "_internal") != LUA_TTABLE) {
        lua_pop(L, 1);
        lua_newtable(L);
        lua_pushvalue(L, -1);
        lua_setfield(L, mod, "_internal");
    }
}

void tl_register_internal(lua_State *L, int mod, const luaL_Reg *l) {
    tl_push_internal(L, mod);
    tl_register(L, -1, l);
    lua_pop(L, 1);
}

/* true when the frame runs one of tide's own Lua files (core._mark_lib, trace.c) */
static int in_library(lua_State *L, const lua_Debug *ar) {
    return tl_is_lib_source(tl_state(L), ar->source);
}

#if TL_NO_INTEGERS
/* lua_pushvfstring of 5.1 and LuaJIT knows no %I (LuaJIT prints "?", 5.1 takes the next
 * argument for it): the message is pushed piece by piece, %I through snprintf, the rest
 * through lua_pushfstring (whose %f is the same "%.14g" in every Lua) */
static void push_vfstring(lua_State *L, const char *fmt, va_list ap) {
    int n = 0;
    luaL_checkstack(L, 24, "tide: message");
    while (*fmt) {
        const char *pct = strchr(fmt, '%');
        if (pct == NULL || pct[1] == '\0') {
            lua_pushstring(L, fmt);
            n++;
            break;
        }
        if (pct > fmt) {
            lua_pushlstring(L, fmt, (size_t)(pct - fmt));
            n++;
        }
        char buf[32];
        switch (pct[1]) {
        case 's': {
            const char *s = va_arg(ap, const char *);
            lua_pushstring(L, s ? s : "(null)");
            break;
        }
        case 'd':
            lua_pushfstring(L, "%d", va_arg(ap, int));
            break;
        case 'c':
            lua_pushfstring(L, "%c", va_arg(ap, int));
            break;
        case 'f':
            lua_pushfstring(L, "%f", va_arg(ap, lua_Number));
            break;
        case 'p':
            lua_pushfstring(L, "%p", va_arg(ap, void *));
            break;
        case 'I':
            snprintf(buf, sizeof buf, "%lld", (long long)va_arg(ap, lua_Integer));
            lua_pushstring(L, buf);
            break;
        default: /* "%%" and anything else: the character itself */
            lua_pushlstring(L, pct + 1, 1);
            break;
        }
        n++;
        fmt = pct + 2;
        if (n >= 16) {
            lua_concat(L, n);
            n = 1;
        }
    }
    if (n == 0)
        lua_pushliteral(L, "");
    else
        lua_concat(L, n);
}
#else
#define push_vfstring lua_pushvfstring
#endif

/* Like luaL_error, but the position is that of the user's line: the nearest Lua frame outside
 * tide's own Lua files (a core error met inside nn or autograd names the user's call, never
 * functional.lua:178); C functions in between (tostring(t), pcall(f)) are skipped. Without such
 * a frame, the nearest Lua caller. */
int tl_error(lua_State *L, const char *fmt, ...) {
    lua_Debug ar;
    int       level = 1, nearest = 0;
    for (int l = 1; lua_getstack(L, l, &ar); l++) {
        lua_getinfo(L, "Sl", &ar);
        if (ar.currentline <= 0)
            continue;
        if (!nearest)
            nearest = l;
        if (!in_library(L, &ar)) {
            level = l;
            break;
        }
    }
    if (level == 1 && nearest)
        level = nearest;
    va_list ap;
    va_start(ap, fmt);
    luaL_where(L, level);
    push_vfstring(L, fmt, ap);
    va_end(ap);
    lua_concat(L, 2);
    return lua_error(L);
}

/* PyTorch's UserWarning: "tide: warning: msg" with the user's line, once per key and Lua state
 * (tide._warn.once, which Lua code calls too) */
void tl_warn_once(lua_State *L, const char *key, const char *msg) {
    lua_getglobal(L, "require");
    lua_pushliteral(L, "tide._warn");
    lua_call(L, 1, 1);
    lua_getfield(L, -1, "once");
    lua_pushstring(L, key);
    lua_pushstring(L, msg);
    lua_call(L, 2, 0);
    lua_pop(L, 1);
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
    for (int t = 1; t < tide_device_type_count(); t++)
        if (tide_backend_is_loaded((tide_device_type)t)) /* never loads one nobody asked for */
            for (int i = 0; i < tide_device_count((tide_device_type)t); i++)
                if (tide_device_get_index((tide_device_type)t, i, &dev) == TIDE_OK)
                    tide_device_empty_cache(dev);
    tl_full_collect(L, S);
    for (int i = 0; i < tide_device_count(TIDE_DEVICE_CPU); i++)
        if (tide_device_get_index(TIDE_DEVICE_CPU, i, &dev) == TIDE_OK)
            tide_device_empty_cache(dev);
}

tide_ctx *tide_lua_ctx(lua_State *L) {
    tide_ctx *ctx = NULL;
    if (lua_rawgetp(L, LUA_REGISTRYINDEX, &state_key) == LUA_TUSERDATA)
        ctx = ((tide_lua_state *)lua_touserdata(L, -1))->ctx;
    lua_pop(L, 1);
    return ctx;
}
