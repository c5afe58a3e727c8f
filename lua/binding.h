/*
 * binding.h — what the files of the Lua binding (tide.core) share: the per-state struct, the
 * tensor userdata, and the helpers that check arguments and turn a tide_status into an error.
 */
#ifndef TIDE_LUA_BINDING_H
#define TIDE_LUA_BINDING_H

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
    int          gc_gen;      /* the collector was generational at the last full collection */
    int          gc_passes;   /* minor collections wait for the end of a backward pass (gc.c) */
    int          gc_aged;     /* a collection ran since the last pass ended (gc.c) */
    size_t       gc_dropped;  /* tensor bytes autograd let go of in the pass under way (gc.c) */
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

/* The tensor userdata; t == NULL means freed. User value 1: the autograd table, lazily. */
typedef struct ltensor {
    const void  *tag; /* tensor.c's tag: the type test */
    tide_tensor *t;
    int          requires_grad;
} ltensor;

#define TL_STATE(L) ((tide_lua_state *)lua_touserdata(L, lua_upvalueindex(1)))
#define TL_TENSOR   "tide.Tensor"
/* the names users may write, for messages that list them */
#define TL_DTYPE_NAMES                                                                             \
    "\"float32\", \"float64\", \"float16\", \"bfloat16\", \"int32\", \"int64\", \"uint8\" or "     \
    "\"bool\""
#define TL_DEVICE_NAMES "\"cpu\", \"cpu:N\", \"cuda\" or \"cuda:N\""

/* ---- state.c ---- */
tide_lua_state *tl_state(lua_State *L); /* from the registry (for code without upvalues) */
void            tl_push_state(lua_State *L);
void            tl_register(lua_State *L, int tidx, const luaL_Reg *l);         /* upvalue: state */
void            tl_register_internal(lua_State *L, int mod, const luaL_Reg *l); /* mod._internal */
int             tl_raise(lua_State *L);                                         /* tide_errmsg() */
int             tl_error(lua_State *L, const char *fmt, ...); /* luaL_error, the user's line */
int             tl_raise_as(lua_State *L, const char *from, const char *to);
void            tl_reclaim(lua_State *L, tide_lua_state *S); /* before a retry */

/* ---- gc.c ---- */
void tl_gc_hint(lua_State *L, tide_lua_state *S, size_t bytes); /* after each new tensor */
void tl_gc_pass_begin(lua_State *L, tide_lua_state *S);         /* the start of a backward pass */
void tl_gc_pass_end(lua_State *L, tide_lua_state *S);           /* the end of a backward pass */
/* autograd dropped nbytes it had saved: true when a minor collection is due (tl_gc_young) */
int  tl_gc_dropped(tide_lua_state *S, size_t nbytes);
void tl_gc_young(lua_State *L, tide_lua_state *S);
void tl_full_collect(lua_State *L, tide_lua_state *S); /* and reset the pacing */

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

/* ---- trace.c ---- */
void tl_trace_init(tide_lua_state *S);                   /* once S->ctx exists */
void tl_note_transfers(lua_State *L, tide_lua_state *S); /* the log line, the traced copies */
int  tl_raise_guard(lua_State *L, tide_lua_state *S);    /* TIDE_EGUARD, named as the user */
void tl_push_lines(lua_State *L, tide_lua_state *S);     /* transfer_stats().lines */
void tl_reset_lines(lua_State *L, tide_lua_state *S);    /* with reset_transfer_stats */
void tl_open_trace(lua_State *L, int mod);
int  tl_is_lib_source(const tide_lua_state *S, const char *source); /* one of tide's Lua files */

/* ---- runtime.c ---- */
/* raises when L's runtime is not the one tide.core's Lua calls are bound to (luaL_checkversion
 * otherwise); called before anything else touches L. -1: refused without raising (L untouched) */
int tl_check_runtime(lua_State *L);

/* ---- device.c ---- */
void         tl_push_device(lua_State *L, tide_device *dev);
tide_device *tl_check_device(lua_State *L, int idx, const char *op);
tide_device *tl_default_device(tide_lua_state *S);
int          tl_is_device_name(const char *s); /* "cpu", "cuda:1", ...: not "float128" */
void         tl_open_device(lua_State *L, int mod);

/* ---- tensor.c ---- */
ltensor *tl_push_empty(lua_State *L);         /* t == NULL, metatable set */
ltensor *tl_push_like(lua_State *L, int idx); /* the same, given a tensor at idx (faster) */
ltensor *tl_test(lua_State *L, int idx);      /* NULL when not a tensor */
ltensor *tl_check(lua_State *L, int idx, const char *op); /* live tensor */
int      tl_dim(lua_State *L, const tide_tensor *t, lua_Integer d, const char *op, int extra);
/* before an in-place op: refuses a leaf that requires grad; returns the arguments to record
 * after it (0: none), for tl_inplace_done */
int  tl_check_inplace(lua_State *L, tide_lua_state *S, ltensor *self, const char *op);
void tl_inplace_done(lua_State *L, tide_lua_state *S, const char *op, int nargs);
/* raises `<op>: not differentiable` when grad mode is on and one of args 1..nargs requires grad */
void tl_not_differentiable(lua_State *L, tide_lua_state *S, const char *op, int nargs);
/* after a differentiable op: hook(name, out, args) when grad mode is on and an arg needs it */
void tl_record(lua_State *L, tide_lua_state *S, const char *name, int nargs, int out_idx,
               int extra_idx);
int  tl_binary(lua_State *L, tide_op op);
/* t:add(u, alpha) / t:sub(u, alpha), and add_ / sub_ with inplace */
int tl_binary_alpha(lua_State *L, tide_op op, int inplace);
/* raises: a binary op without a scale was given a third argument */
int tl_no_extra_operand(lua_State *L, const char *name);
/* "a tensor" for a tide tensor at idx, else luaL_typename (for argument errors) */
const char *tl_typename(lua_State *L, int idx);
int  tl_select(lua_State *L, tide_lua_state *S, lua_Integer d, lua_Integer i, const char *op);
int  tl_needs_record(lua_State *L, tide_lua_state *S, int nargs);
void tl_open_tensor(lua_State *L, int mod);
/* reads a shape given as integers or one table starting at idx; returns the number of args used */
int tl_shape(lua_State *L, int idx, int64_t *shape, int *ndim, const char *op, int allow_neg1);
/* the number or boolean at idx (already checked) as a tide_scalar: a Lua integer stays exact */
tide_scalar tl_scalar(lua_State *L, int idx);

/* ---- creation.c ---- */
void tl_open_creation(lua_State *L, int mod);
/* a 0-d tensor of value on dev (for numbers mixed with tensors) */
ltensor *tl_push_scalar(lua_State *L, tide_lua_state *S, tide_scalar v, tide_dtype dt,
                        tide_device *dev);

/* ---- options.c ---- */
/* raises `tide: <op>: unknown option "x" (did you mean "y"?)` for a key of the table at idx
 * outside known, "not supported yet" for one in unsupported; both lists end with NULL */
void tl_check_options(lua_State *L, int idx, const char *op, const char *const *known,
                      const char *const *unsupported);
void tl_open_options(lua_State *L, int mod);

/* ---- op_table.c ---- */
void tl_open_op_table(lua_State *L, int mod); /* tide.core._ops */
void tl_open_kernels(lua_State *L, int mod);  /* _internal.<row>, _kernels (kernels.c) */

/* ---- dist.c ---- */
void tl_open_dist(lua_State *L, int mod); /* core._dist, for tide.distributed */
void tl_open_text(lua_State *L, int mod); /* core._text, for tide.text (text.c) */

/* ---- ops.c: what the tensor-method files share ---- */
/* after a new result at the top of the stack: gc hint, and autograd records it as name (NULL:
 * no record) with args 1..nargs; returns 1 */
int tl_done(lua_State *L, tide_lua_state *S, const char *name, int nargs);
/* the same for a view result (no new bytes) */
int         tl_done_view(lua_State *L, tide_lua_state *S, const char *name, int nargs);
double      tl_opt_number(lua_State *L, int idx, double def, const char *op, const char *what);
lua_Integer tl_check_int(lua_State *L, int idx, const char *op, const char *what);
double      tl_check_number(lua_State *L, int idx, const char *op, const char *what);
const char *tl_check_string(lua_State *L, int idx, const char *op, const char *what);
void        tl_open_ops(lua_State *L, int mod, int methods); /* every file below */
/* one per concern; mod: the tide.core table, methods: tide.Tensor's */
void tl_open_op_families(lua_State *L, int mod, int methods); /* op_families.c */
void tl_open_linalg(lua_State *L, int mod, int methods);      /* linalg.c */
void tl_open_views(lua_State *L, int mod, int methods);       /* views.c */
void tl_open_indexing(lua_State *L, int mod, int methods);    /* indexing.c */
void tl_open_join(lua_State *L, int mod);                     /* join.c */
void tl_open_fills(lua_State *L, int methods);                /* fills.c */
void tl_open_transfers(lua_State *L, int methods);            /* transfers.c */
void tl_open_nn_kernels(lua_State *L, int mod, int methods);  /* nn_kernels.c */
void tl_open_rnn_cell(lua_State *L, int mod);                 /* rnn_cell.c */
void tl_open_ordering(lua_State *L, int mod, int methods);    /* ordering.c */
void tl_open_count_ops(lua_State *L, int mod, int methods);   /* count_ops.c */

/* ---- optim.c ---- */
void tl_open_optim(lua_State *L, int mod);

/* ---- format.c ---- */
int tl_tostring(lua_State *L);
/* pushes a userdata owning a host (cpu:0) tensor with t's values, readable by tl_read */
const tide_tensor *tl_host_copy(lua_State *L, tide_lua_state *S, const tide_tensor *t,
                                int implicit);
int                tl_totable(lua_State *L);
/* pushes v; where Lua has no integers (5.1, LuaJIT) raises for |v| > 2^53 instead of rounding */
void tl_push_int64(lua_State *L, int64_t v, const char *op);

#endif /* TIDE_LUA_BINDING_H */
