/*
 * trace.c — transfers a user can trace to a line of their code: transfer_guard("log") lines
 * that name what the user called and where, and trace_transfers(true), which counts each
 * direction's copies per source line (transfer_stats().lines).
 *
 * The core counts every copy in its context and, in "log" mode, hands each implicit one's
 * line to the context's log function; it knows nothing of Lua. The binding notes both after
 * the core call returns (TL_CALL), on the calling thread: the copies counted since the last
 * note belong to the user's line of that moment, the first stack frame that is neither a C
 * function nor one of tide's own Lua files. lua_getstack/lua_getinfo are the C API, there in
 * a sandbox without the debug library. With tracing off and no log line waiting, a core call
 * costs one test of S->watch.
 */
#include "state.h"
#include <stdio.h>
#include <string.h>

static const char lines_key = 'l'; /* registry: "file:line" -> {6 counters}, see note() */
static const char lib_key = 'b';   /* registry: the source prefix of tide's Lua files */

/* tide's own Lua files: sources that start with the directory of the file core._mark_lib saw;
 * errors (tl_error) and traced copies both look past their frames for the user's line */
int tl_is_lib_source(const tide_lua_state *S, const char *source) {
    return S->lib_len && strncmp(source, S->lib_src, S->lib_len) == 0;
}

/* Fills ar with the user's frame (source and current line) and returns 1, or returns 0 when
 * every frame is tide's or C. *called: the name the user's code called (print, tostring, item,
 * a tide function), NULL when Lua cannot tell (a tail call, a function called by pcall). */
static int user_frame(lua_State *L, const tide_lua_state *S, lua_Debug *ar, const char **called) {
    *called = NULL;
    for (int level = 0; lua_getstack(L, level, ar); level++) {
        lua_getinfo(L, "Sl", ar);
        /* "tail": 5.1's mark of a frame a tail call replaced, which has no line */
        if (strcmp(ar->what, "C") == 0 || strcmp(ar->what, "tail") == 0 ||
            tl_is_lib_source(S, ar->source))
            continue;
        lua_Debug callee;
        if (level > 0 && lua_getstack(L, level - 1, &callee) && lua_getinfo(L, "n", &callee))
            *called = callee.name;
        if (*called && (strcmp(*called, "pcall") == 0 || strcmp(*called, "xpcall") == 0))
            *called = NULL; /* pcall(print, x): not what asked for the copy, which has no name */
        return 1;
    }
    return 0;
}

/* "file:line: tide: <called>: rest" from the core's "tide: <op>: rest" */
static void user_message(lua_State *L, const tide_lua_state *S, const char *msg, char *buf,
                         size_t size) {
    lua_Debug   ar;
    const char *called, *rest = msg;
    char        where[LUA_IDSIZE + 24] = "";
    if (user_frame(L, S, &ar, &called) && ar.currentline > 0)
        snprintf(where, sizeof where, "%s:%d: ", ar.short_src, ar.currentline);
    if (called && strncmp(msg, "tide: ", 6) == 0 && (rest = strchr(msg + 6, ':')) != NULL)
        snprintf(buf, size, "%stide: %s%s", where, called, rest);
    else
        snprintf(buf, size, "%s%s", where, msg);
}

/* the binding's log function for its context: keeps the line until the core call returns */
static void log_sink(void *ud, const char *msg) {
    tide_lua_state *S = ud;
    snprintf(S->log_msg, sizeof S->log_msg, "%s", msg);
    S->watch |= TL_WATCH_LOG;
}

void tl_trace_init(tide_lua_state *S) {
    S->watch = 0;
    S->log_msg[0] = '\0';
    S->lib_src = NULL;
    S->lib_len = 0;
    memset(&S->traced, 0, sizeof S->traced);
    tide_ctx_set_log(S->ctx, log_sink, S);
}

/* adds the copies counted since the last note to lines[key] */
static void note(lua_State *L, tide_lua_state *S) {
    tide_transfer_stats now;
    tide_ctx_transfer_stats(S->ctx, &now);
    uint64_t d[6] = {now.h2d_count - S->traced.h2d_count, now.h2d_bytes - S->traced.h2d_bytes,
                     now.d2h_count - S->traced.d2h_count, now.d2h_bytes - S->traced.d2h_bytes,
                     now.d2d_count - S->traced.d2d_count, now.d2d_bytes - S->traced.d2d_bytes};
    S->traced = now;
    if (!(d[0] | d[2] | d[4]))
        return;
    lua_Debug   ar;
    const char *called;
    if (user_frame(L, S, &ar, &called) && ar.currentline > 0)
        lua_pushfstring(L, "%s:%d", ar.short_src, ar.currentline);
    else
        lua_pushliteral(L, "?");
    lua_rawgetp(L, LUA_REGISTRYINDEX, &lines_key);
    if (!lua_istable(L, -1)) {
        lua_pop(L, 1);
        lua_newtable(L);
        lua_pushvalue(L, -1);
        lua_rawsetp(L, LUA_REGISTRYINDEX, &lines_key);
    }
    lua_pushvalue(L, -2);
    if (lua_rawget(L, -2) != LUA_TTABLE) {
        lua_pop(L, 1);
        lua_createtable(L, 6, 0);
        for (int i = 1; i <= 6; i++) {
            lua_pushinteger(L, 0);
            lua_rawseti(L, -2, i);
        }
        lua_pushvalue(L, -3);
        lua_pushvalue(L, -2);
        lua_rawset(L, -4);
    }
    for (int i = 0; i < 6; i++) {
        lua_rawgeti(L, -1, i + 1);
        lua_Integer v = lua_tointeger(L, -1) + (lua_Integer)d[i];
        lua_pop(L, 1);
        lua_pushinteger(L, v);
        lua_rawseti(L, -2, i + 1);
    }
    lua_pop(L, 3);
}

void tl_note_transfers(lua_State *L, tide_lua_state *S) {
    if (S->watch & TL_WATCH_LOG) {
        char line[sizeof S->log_msg + LUA_IDSIZE + 64];
        S->watch &= ~TL_WATCH_LOG;
        user_message(L, S, S->log_msg, line, sizeof line);
        fprintf(stderr, "%s\n", line);
        fflush(stderr);
    }
    if (S->watch & TL_WATCH_TRACE)
        note(L, S);
}

/* a refused implicit copy: the core names its op (item, to); the user reads what they called */
int tl_raise_guard(lua_State *L, tide_lua_state *S) {
    char msg[768];
    user_message(L, S, tide_errmsg(), msg, sizeof msg);
    lua_pushstring(L, msg);
    return lua_error(L);
}

/* core._mark_lib(fn): the Lua files in the directory of the function at idx (and below) are
 * tide's own, never the user's line. lua_getinfo(">S") reads a function's source without the
 * debug library. */
void tl_mark_lib(lua_State *L, tide_lua_state *S, int idx) {
    lua_Debug ar;
    lua_pushvalue(L, idx);
    lua_getinfo(L, ">S", &ar);
    const char *src = ar.source, *slash = NULL;
    for (const char *p = src; *p; p++)
        if (*p == '/' || *p == '\\')
            slash = p;
    if (src[0] != '@' || !slash)
        return; /* not loaded from a file: every Lua frame counts as the user's */
    lua_pushlstring(L, src, (size_t)(slash - src + 1));
    S->lib_src = lua_tostring(L, -1);
    S->lib_len = lua_rawlen(L, -1);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &lib_key); /* keeps lib_src alive */
}

/* trace_transfers(on): count copies per line of user code from now on, or stop */
void tl_trace_set(lua_State *L, tide_lua_state *S, int on) {
    int was = (S->watch & TL_WATCH_TRACE) != 0;
    if (on && !was)
        tide_ctx_transfer_stats(S->ctx, &S->traced); /* earlier copies belong to no line */
    else if (!on && was)
        note(L, S);
    S->watch = on ? S->watch | TL_WATCH_TRACE : S->watch & ~TL_WATCH_TRACE;
}

static void push_pair(lua_State *L, lua_Integer count, lua_Integer bytes, const char *dir) {
    lua_createtable(L, 0, 2);
    lua_pushinteger(L, count);
    lua_setfield(L, -2, "count");
    lua_pushinteger(L, bytes);
    lua_setfield(L, -2, "bytes");
    lua_setfield(L, -2, dir);
}

void tl_push_lines(lua_State *L, tide_lua_state *S) {
    if (S->watch & TL_WATCH_TRACE)
        note(L, S);
    lua_newtable(L);
    if (lua_rawgetp(L, LUA_REGISTRYINDEX, &lines_key) != LUA_TTABLE) {
        lua_pop(L, 1);
        return;
    }
    for (lua_pushnil(L); lua_next(L, -2); lua_pop(L, 1)) {
        lua_Integer v[6];
        for (int i = 0; i < 6; i++) {
            lua_rawgeti(L, -1, i + 1);
            v[i] = lua_tointeger(L, -1);
            lua_pop(L, 1);
        }
        lua_pushvalue(L, -2);
        lua_createtable(L, 0, 3);
        push_pair(L, v[0], v[1], "h2d");
        push_pair(L, v[2], v[3], "d2h");
        push_pair(L, v[4], v[5], "d2d");
        lua_rawset(L, -6);
    }
    lua_pop(L, 1);
}

void tl_reset_lines(lua_State *L, tide_lua_state *S) {
    tide_ctx_transfer_stats(S->ctx, &S->traced);
    lua_pushnil(L);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &lines_key);
}
