/* context.c — the functions of tide.core that read or set the state's context: transfer stats
 * (per line with trace_transfers), the transfer guard, the memory limit; is_tensor; and the
 * helpers tide's Lua library finds the user's line with (_mark_lib, _frame_info, _forward). */
#include "binding.h"
#include <stdint.h>
#include <string.h>

static void stat_pair(lua_State *L, const char *dir, uint64_t bytes, uint64_t count) {
    char key[16];
    lua_createtable(L, 0, 2);
    lua_pushinteger(L, (lua_Integer)bytes);
    lua_setfield(L, -2, "bytes");
    lua_pushinteger(L, (lua_Integer)count);
    lua_setfield(L, -2, "count");
    lua_setfield(L, -2, dir);
    snprintf(key, sizeof key, "%s_bytes", dir);
    lua_pushinteger(L, (lua_Integer)bytes);
    lua_setfield(L, -2, key);
    snprintf(key, sizeof key, "%s_count", dir);
    lua_pushinteger(L, (lua_Integer)count);
    lua_setfield(L, -2, key);
}

static int l_transfer_stats(lua_State *L) {
    tide_transfer_stats st;
    tide_ctx_transfer_stats(TL_STATE(L)->ctx, &st);
    lua_createtable(L, 0, 10);
    stat_pair(L, "h2d", st.h2d_bytes, st.h2d_count);
    stat_pair(L, "d2h", st.d2h_bytes, st.d2h_count);
    stat_pair(L, "d2d", st.d2d_bytes, st.d2d_count);
    tl_push_lines(L, TL_STATE(L));
    lua_setfield(L, -2, "lines");
    return 1;
}

static int l_reset_transfer_stats(lua_State *L) {
    tide_ctx_reset_transfer_stats(TL_STATE(L)->ctx);
    tl_reset_lines(L, TL_STATE(L));
    return 0;
}

/* transfer_guard([mode]) sets the mode when given; returns the previous one */
static int l_transfer_guard(lua_State *L) {
    static const char *const modes[] = {"allow", "log", "disallow", NULL};
    tide_ctx                *ctx = TL_STATE(L)->ctx;
    tide_guard               prev = tide_ctx_guard(ctx);
    if (!lua_isnoneornil(L, 1)) {
        const char *m = lua_tostring(L, 1);
        int         i = 0;
        while (modes[i] && (!m || lua_type(L, 1) != LUA_TSTRING || strcmp(modes[i], m) != 0))
            i++;
        if (!modes[i])
            return tl_error(L,
                            "tide: transfer_guard: unknown mode %s; use \"allow\", \"log\" or "
                            "\"disallow\"",
                            luaL_tolstring(L, 1, NULL));
        tide_ctx_set_guard(ctx, (tide_guard)i);
    }
    lua_pushstring(L, modes[prev]);
    return 1;
}

static int l_set_memory_limit(lua_State *L) {
    lua_Integer n = tl_check_int(L, 1, "set_memory_limit", "the limit in bytes");
    if (n < 0)
        return tl_error(L, "tide: set_memory_limit: %I bytes is invalid; use 0 for no limit",
                        (lua_Integer)n);
    tide_ctx_set_memory_limit(TL_STATE(L)->ctx, (size_t)n);
    return 0;
}

static int l_memory_limit(lua_State *L) {
    lua_pushinteger(L, (lua_Integer)tide_ctx_memory_limit(TL_STATE(L)->ctx));
    return 1;
}

static int l_memory_in_use(lua_State *L) {
    lua_pushinteger(L, (lua_Integer)tide_ctx_memory_in_use(TL_STATE(L)->ctx));
    return 1;
}

/* core._memory_allocated() -> bytes of every storage made so far (tide.profiler's memory) */
static int l_memory_allocated(lua_State *L) {
    lua_pushinteger(L, (lua_Integer)tide_ctx_memory_allocated(TL_STATE(L)->ctx));
    return 1;
}

/* core._memory_budget() -> bytes: what a call may build from a number the user gave (a list
 * of views, an index table, an output) before it raises instead (tide_ctx_memory_budget) */
static int l_memory_budget(lua_State *L) {
    size_t budget = tide_ctx_memory_budget(TL_STATE(L)->ctx);
    lua_pushinteger(L, (lua_Integer)(budget > (size_t)INT64_MAX ? (size_t)INT64_MAX : budget));
    return 1;
}

static int l_is_tensor(lua_State *L) {
    lua_pushboolean(L, tl_test(L, 1) != NULL);
    return 1;
}

/* core._frame_info(level) -> {source =, what =} of the function at that level of the caller's
 * stack (as debug.getinfo(level, "S"): 1 is the caller), or nil. tide's Lua files find the
 * user's line with it, so they need no debug library (a sandbox rarely opens it). */
static int l_frame_info(lua_State *L) {
    lua_Debug ar;
    if (!lua_getstack(L, (int)luaL_checkinteger(L, 1), &ar) || !lua_getinfo(L, "S", &ar))
        return 0;
    lua_createtable(L, 0, 2);
    lua_pushstring(L, ar.source);
    lua_setfield(L, -2, "source");
    lua_pushstring(L, ar.what);
    lua_setfield(L, -2, "what");
    return 1;
}

/* require(mod)[fname](...) with the arguments on the stack. Lua drops the frame of a Lua
 * function called in tail position, so a Lua forwarder could lose the user's line; a C function
 * keeps its caller's frame, and its errors are raised again at the nearest Lua line. */
int tl_call_lua(lua_State *L, const char *mod, const char *fname) {
    int n = lua_gettop(L);
    lua_getglobal(L, "require");
    lua_pushstring(L, mod);
    lua_call(L, 1, 1);
    lua_getfield(L, -1, fname);
    lua_remove(L, -2);
    lua_insert(L, 1);
    if (lua_pcall(L, n, LUA_MULTRET, 0) == LUA_OK)
        return lua_gettop(L);
    const char *msg = lua_tostring(L, -1), *p = msg ? strstr(msg, ": tide: ") : NULL;
    if (!msg)
        return lua_error(L);
    return tl_error(L, "%s", p ? p + 2 : msg);
}

/* the closure core._forward makes: tl_call_lua on its upvalues' module and name */
static int forward_call(lua_State *L) {
    return tl_call_lua(L, lua_tostring(L, lua_upvalueindex(2)),
                       lua_tostring(L, lua_upvalueindex(3)));
}

/* core._forward(modname, fname) -> a C function forwarding to require(modname)[fname] */
static int l_forward(lua_State *L) {
    luaL_checkstring(L, 1);
    luaL_checkstring(L, 2);
    tl_push_state(L);
    lua_pushvalue(L, 1);
    lua_pushvalue(L, 2);
    lua_pushcclosure(L, forward_call, 3);
    return 1;
}

/* trace_transfers([on]) -> the previous setting; on: count copies per line of user code */
static int l_trace_transfers(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    int             was = (S->watch & TL_WATCH_TRACE) != 0;
    if (!lua_isnone(L, 1)) {
        if (!lua_isboolean(L, 1))
            return tl_error(L, "tide: trace_transfers: expected true or false, got %s",
                            luaL_typename(L, 1));
        tl_trace_set(L, S, lua_toboolean(L, 1));
    }
    lua_pushboolean(L, was);
    return 1;
}

/* core._mark_lib(fn): the Lua files in fn's directory (and below) are tide's own, never the
 * user's line (trace.c) */
static int l_mark_lib(lua_State *L) {
    luaL_checktype(L, 1, LUA_TFUNCTION);
    tl_mark_lib(L, TL_STATE(L), 1);
    return 0;
}

void tl_open_context(lua_State *L, int mod) {
    static const luaL_Reg trace[] = {
        {"trace_transfers", l_trace_transfers}, {"_mark_lib", l_mark_lib}, {NULL, NULL}};
    static const luaL_Reg funcs[] = {
        {"transfer_stats", l_transfer_stats}, {"reset_transfer_stats", l_reset_transfer_stats},
        {"transfer_guard", l_transfer_guard}, {"set_memory_limit", l_set_memory_limit},
        {"memory_limit", l_memory_limit},     {"memory_in_use", l_memory_in_use},
        {"_memory_budget", l_memory_budget},  {"_memory_allocated", l_memory_allocated},
        {"is_tensor", l_is_tensor},           {"_forward", l_forward},
        {"_frame_info", l_frame_info},        {NULL, NULL}};
    tl_register(L, mod, trace);
    tl_register(L, mod, funcs);
}
