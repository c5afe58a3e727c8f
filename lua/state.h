/*
 * state.h — the bottom of the Lua binding (tide.core): the per-state record, errors at the
 * user's line, the transfer trace, the collector's pacing, the runtime check.
 *
 *   runtime.c  gc.c  trace.c   use nothing else of lua/
 *   state.c                    uses gc.c and trace.c
 *
 * The layers above: args.h (the tensor userdata, arguments, the autograd record), tensor.h (the
 * Tensor and Device types), modules.h (one file a concern), module.c (luaopen_tide_core).
 * A file calls into its own layer's lower files and the layers below, never up.
 */
#ifndef TIDE_LUA_STATE_H
#define TIDE_LUA_STATE_H

#include "compat.h" /* lua.h and lauxlib.h, the same API on 5.4, 5.3, 5.1 and LuaJIT */
#include "tide.h"

/* One per lua_State: a full userdata in the registry and upvalue 1 of every C function. */
typedef struct tide_lua_state {
    tide_ctx    *ctx;
    int          grad_enabled;
    tide_device *default_dev; /* NULL: cpu */
    int          hook_ref;    /* autograd hook, LUA_NOREF when none */
    size_t       gc_debt;     /* bytes allocated since the last GC step */
    size_t       gc_since;    /* tensor bytes allocated since the last full collection (gc.c) */
    size_t       gc_live;     /* tensor bytes alive after the last full collection (gc.c) */
    size_t       gc_heap;     /* the Lua heap's bytes after the last full collection (gc.c) */
    size_t       gc_made;     /* tensors made since the last collector step (gc.c) */
    int          gc_gen;      /* the collector was generational at the last full collection */
    int          gc_passes;   /* minor collections wait for the end of a backward pass (gc.c) */
    int          gc_aged;     /* a collection ran since the last pass ended (gc.c) */
    size_t       gc_dropped;  /* tensor bytes autograd let go of in the pass under way (gc.c) */
    size_t       gc_pinned;   /* tensor bytes a full collection aged as they were made (gc.c) */
    /* tide.amp's caster while an autocast region is on, else LUA_NOREF (autocast.c) */
    int autocast_ref;
    /* trace.c: what to note after a core call (TL_WATCH_*), the stats when last noted, the
     * core's "log" line waiting for its Lua position, the source prefix of tide's Lua files */
    int                 watch;
    tide_transfer_stats traced;
    char                log_msg[256];
    const char         *lib_src;
    size_t              lib_len;
} tide_lua_state;

#define TL_WATCH_TRACE 1 /* trace_transfers(true) */
#define TL_WATCH_LOG   2 /* a "log" line from the core waits in log_msg */

#define TL_STATE(L) ((tide_lua_state *)lua_touserdata(L, lua_upvalueindex(1)))

/* ---- runtime.c ---- */
/* raises when L's runtime is not the one tide.core's Lua calls are bound to (luaL_checkversion
 * otherwise); called before anything else touches L. -1: refused without raising (L untouched) */
int tl_check_runtime(lua_State *L);

/* ---- gc.c ---- */
void tl_gc_hint(lua_State *L, tide_lua_state *S, size_t bytes); /* after each new tensor */
void tl_gc_pass_begin(lua_State *L, tide_lua_state *S);         /* the start of a backward pass */
void tl_gc_pass_end(lua_State *L, tide_lua_state *S);           /* the end of a backward pass */
/* autograd dropped nbytes it had saved: true when a minor collection is due (tl_gc_young) */
int  tl_gc_dropped(tide_lua_state *S, size_t nbytes);
void tl_gc_young(lua_State *L, tide_lua_state *S);
void tl_full_collect(lua_State *L, tide_lua_state *S); /* and reset the pacing */

/* ---- trace.c ---- */
void tl_trace_init(tide_lua_state *S);                      /* once S->ctx exists */
void tl_note_transfers(lua_State *L, tide_lua_state *S);    /* the log line, the traced copies */
int  tl_raise_guard(lua_State *L, tide_lua_state *S);       /* TIDE_EGUARD, named as the user */
void tl_trace_set(lua_State *L, tide_lua_state *S, int on); /* trace_transfers(on) */
void tl_push_lines(lua_State *L, tide_lua_state *S);        /* transfer_stats().lines */
void tl_reset_lines(lua_State *L, tide_lua_state *S);       /* with reset_transfer_stats */
/* the Lua files in the directory of the function at idx (and below) are tide's own */
void tl_mark_lib(lua_State *L, tide_lua_state *S, int idx);
int  tl_is_lib_source(const tide_lua_state *S, const char *source); /* one of tide's Lua files */

/* ---- state.c ---- */
tide_lua_state *tl_state(lua_State *L); /* from the registry (for code without upvalues) */
void            tl_push_state(lua_State *L);
void            tl_register(lua_State *L, int tidx, const luaL_Reg *l); /* upvalue: state */
void            tl_push_internal(lua_State *L, int mod); /* mod._internal, made on first use */
void            tl_register_internal(lua_State *L, int mod, const luaL_Reg *l); /* mod._internal */
int             tl_raise(lua_State *L);                                         /* tide_errmsg() */
int             tl_error(lua_State *L, const char *fmt, ...); /* luaL_error, the user's line */
void            tl_warn_once(lua_State *L, const char *key, const char *msg);
int             tl_raise_as(lua_State *L, const char *from, const char *to);
void            tl_reclaim(lua_State *L, tide_lua_state *S); /* before a retry */

/* Calls expr; on ENOMEM/ELIMIT flushes caches, collects garbage and retries once; notes the
 * transfers it made when watched (trace.c); raises. */
#define TL_CALL(L, S, expr) TL_CALL_AS(L, S, expr, NULL, NULL)
/* the same, naming the op `to` where the core says `from` (in-place twins) */
#define TL_CALL_AS(L, S, expr, from, to)                                                           \
    do {                                                                                           \
        tide_status st_ = (expr);                                                                  \
        if (st_ == TIDE_ENOMEM || st_ == TIDE_ELIMIT) {                                            \
            tl_reclaim(L, S);                                                                      \
            st_ = (expr);                                                                          \
        }                                                                                          \
        if ((S)->watch)                                                                            \
            tl_note_transfers(L, S);                                                               \
        if (st_ != TIDE_OK)                                                                        \
            st_ == TIDE_EGUARD ? tl_raise_guard(L, S)                                              \
            : (from)           ? tl_raise_as(L, (from), (to))                                      \
                               : tl_raise(L);                                                                \
    } while (0)

#endif /* TIDE_LUA_STATE_H */
