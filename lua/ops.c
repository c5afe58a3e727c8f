/*
 * ops.c — the tensor methods: the op families generated from include/tide_ops.def (with their
 * in-place `_` twins), shape and view ops, indexing, transfers, and the nn kernels.
 *
 * Every method: check arguments, push the result userdata, call the core (TL_CALL raises), tell
 * the collector about new bytes, and let autograd record when an argument requires grad.
 */
#include "binding.h"
#include <limits.h>
#include <math.h>
#include <string.h>

/* gc hint + autograd record for a new result at the top of the stack */
static int done(lua_State *L, tide_lua_state *S, const char *name, int nargs) {
    ltensor *r = lua_touserdata(L, -1);
    tl_gc_hint(L, S, tide_tensor_nbytes(r->t));
    if (name && S->grad_enabled)
        tl_record(L, S, name, nargs, -1, 0);
    return 1;
}

/* a view result: no new bytes */
static int done_view(lua_State *L, tide_lua_state *S, const char *name, int nargs) {
    if (S->grad_enabled)
        tl_record(L, S, name, nargs, -1, 0);
    return 1;
}

static double opt_number(lua_State *L, int idx, double def, const char *op, const char *what) {
    if (lua_isnoneornil(L, idx))
        return def;
    if (lua_type(L, idx) != LUA_TNUMBER)
        tl_error(L, "tide: %s: %s must be a number, got %s", op, what, tl_typename(L, idx));
    return lua_tonumber(L, idx);
}

static lua_Integer check_int(lua_State *L, int idx, const char *op, const char *what) {
    int         isint;
    lua_Integer v = lua_tointegerx(L, idx, &isint);
    if (!isint || lua_type(L, idx) != LUA_TNUMBER)
        tl_error(L, "tide: %s: %s must be an integer, got %s", op, what,
                 lua_type(L, idx) == LUA_TNUMBER ? lua_tostring(L, idx) : luaL_typename(L, idx));
    return v;
}

/* ---- op families -------------------------------------------------------------------------- */

static int binary_inplace(lua_State *L, tide_op op, const char *name) {
    tide_lua_state *S = TL_STATE(L);
    if (lua_gettop(L) >= 3 && !lua_isnil(L, 3)) {
        if (op == TIDE_OP_ADD || op == TIDE_OP_SUB)
            return tl_binary_alpha(L, op, 1);
        return tl_no_extra_operand(L, name);
    }
    ltensor     *a = tl_check(L, S, 1, name), *b = tl_test(L, S, 2);
    tide_tensor *dst = a->t;
    int          rec = tl_check_inplace(L, S, a, name);
    if (b) {
        if (!b->t)
            return tl_error(L, "tide: %s: attempt to use a freed tensor", name);
        TL_CALL_AS(L, S, tide_binary(S->ctx, op, a->t, b->t, &dst), tide_op_name(op), name);
    } else {
        opt_number(L, 2, NAN, name, "the other operand");
        if (lua_isnoneornil(L, 2))
            return tl_error(L, "tide: %s: expected a tensor or a number as the other operand",
                            name);
        TL_CALL_AS(L, S, tide_binary_scalar_x(S->ctx, op, a->t, tl_scalar(L, 2), 0, &dst),
                   tide_op_name(op), name);
    }
    tl_inplace_done(L, S, name, rec);
    lua_settop(L, 1);
    return 1;
}

/* clamp's bound at idx: nil is none (-inf or inf); a Lua integer stays exact */
static tide_scalar bound(lua_State *L, int idx, double none, const char *name, const char *what) {
    opt_number(L, idx, none, name, what);
    return lua_isnoneornil(L, idx) ? tide_scalar_f(none) : tl_scalar(L, idx);
}

/* t:op() for the UNARY family; clamp takes (min, max) */
static tide_status unary_call(lua_State *L, tide_lua_state *S, tide_op op, const char *name,
                              const tide_tensor *a, tide_tensor **out) {
    if (op != TIDE_OP_CLAMP)
        return tide_unary(S->ctx, op, a, NULL, out);
    tide_scalar lo = bound(L, 2, -INFINITY, name, "min"), hi = bound(L, 3, INFINITY, name, "max");
    return tide_clamp(S->ctx, a, lo, hi, out);
}

/* a unary op other than clamp given an argument: refused, not ignored (t:exp(2)) */
static void no_argument(lua_State *L, tide_op op, const char *name) {
    if (op != TIDE_OP_CLAMP && lua_gettop(L) >= 2 && !lua_isnil(L, 2))
        tl_error(L, "tide: %s: takes no argument, got argument #2 (%s)", name, tl_typename(L, 2));
}

static int unary(lua_State *L, tide_op op) {
    tide_lua_state *S = TL_STATE(L);
    const char     *name = tide_op_name(op);
    int             nargs = lua_gettop(L);
    ltensor        *a = tl_check(L, S, 1, name);
    no_argument(L, op, name);
    if (op == TIDE_OP_CLAMP && nargs < 3)
        lua_settop(L, 3); /* the bounds stay at 2 and 3, below the result */
    ltensor *r = tl_push_like(L, 1);
    TL_CALL(L, S, unary_call(L, S, op, name, a->t, &r->t));
    return done(L, S, a->requires_grad ? name : NULL, nargs);
}

static int unary_inplace(lua_State *L, tide_op op, const char *name) {
    tide_lua_state *S = TL_STATE(L);
    ltensor        *a = tl_check(L, S, 1, name);
    tide_tensor    *dst = a->t;
    no_argument(L, op, name);
    int rec = tl_check_inplace(L, S, a, name);
    TL_CALL_AS(L, S, unary_call(L, S, op, name, a->t, &dst), tide_op_name(op), name);
    tl_inplace_done(L, S, name, rec);
    lua_settop(L, 1);
    return 1;
}

/* 0-based int64 indices -> 1-based, in place */
static void one_based(lua_State *L, tide_lua_state *S, ltensor *idx) {
    tide_tensor *dst = idx->t;
    TL_CALL(L, S, tide_binary_scalar(S->ctx, TIDE_OP_ADD, idx->t, 1, 0, &dst));
}

/* t:sum([dim[, keepdim]]) and friends; max/min over a dim return values, 1-based indices */
static int reduce(lua_State *L, tide_op op) {
    tide_lua_state *S = TL_STATE(L);
    const char     *name = tide_op_name(op);
    int             nargs = lua_gettop(L);
    ltensor        *a = tl_check(L, S, 1, name);
    int             dim = TIDE_ALL_DIMS;
    if (!lua_isnoneornil(L, 2))
        dim = tl_dim(L, a->t, check_int(L, 2, name, "dim"), name, 0);
    int keepdim = lua_toboolean(L, 3);
    int is_arg = op == TIDE_OP_ARGMAX || op == TIDE_OP_ARGMIN;
    int with_idx = (op == TIDE_OP_MAX || op == TIDE_OP_MIN) && dim != TIDE_ALL_DIMS;
    lua_settop(L, nargs < 3 ? 3 : nargs);
    ltensor *r = tl_push_empty(L);
    if (with_idx) {
        ltensor *ix = tl_push_empty(L);
        TL_CALL(L, S, tide_reduce(S->ctx, op, a->t, dim, keepdim, &r->t, &ix->t));
        one_based(L, S, ix);
        tl_gc_hint(L, S, tide_tensor_nbytes(r->t) + tide_tensor_nbytes(ix->t));
        if (a->requires_grad && S->grad_enabled)
            tl_record(L, S, name, nargs, -2, -1);
        return 2;
    }
    TL_CALL(L, S, tide_reduce(S->ctx, op, a->t, dim, keepdim, &r->t, NULL));
    if (is_arg) {
        one_based(L, S, r);
        return done(L, S, NULL, nargs);
    }
    return done(L, S, a->requires_grad ? name : NULL, nargs);
}

#define GEN_BINARY(e, name)                                                                        \
    static int o_##e(lua_State *L) {                                                               \
        return tl_binary(L, TIDE_OP_##e);                                                          \
    }                                                                                              \
    static int o_##e##_(lua_State *L) {                                                            \
        return binary_inplace(L, TIDE_OP_##e, name "_");                                           \
    }
#define GEN_COMPARE(e, name)                                                                       \
    static int o_##e(lua_State *L) {                                                               \
        return tl_binary(L, TIDE_OP_##e);                                                          \
    }
#define GEN_UNARY(e, name)                                                                         \
    static int o_##e(lua_State *L) {                                                               \
        return unary(L, TIDE_OP_##e);                                                              \
    }                                                                                              \
    static int o_##e##_(lua_State *L) {                                                            \
        return unary_inplace(L, TIDE_OP_##e, name "_");                                            \
    }
#define GEN_REDUCE(e, name)                                                                        \
    static int o_##e(lua_State *L) {                                                               \
        return reduce(L, TIDE_OP_##e);                                                             \
    }
#define X(e, family, name) GEN_##family(e, name)
#include "tide_ops.def"
#undef X

/* ---- matmul, views, shapes ---------------------------------------------------------------- */

static int o_matmul(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    ltensor        *a = tl_check(L, S, 1, "matmul"), *b = tl_check(L, S, 2, "matmul");
    lua_settop(L, 2);
    ltensor *r = tl_push_like(L, 1);
    TL_CALL(L, S, tide_matmul(S->ctx, a->t, b->t, &r->t));
    return done(L, S, a->requires_grad || b->requires_grad ? "matmul" : NULL, 2);
}

static int transpose_impl(lua_State *L, const char *name, int d0, int d1, int nargs) {
    tide_lua_state *S = TL_STATE(L);
    ltensor        *a = lua_touserdata(L, 1);
    ltensor        *r = tl_push_empty(L);
    TL_CALL(L, S, tide_tensor_transpose(a->t, d0, d1, &r->t));
    return a->requires_grad ? done_view(L, S, name, nargs) : 1;
}

static int o_t(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    ltensor        *a = tl_check(L, S, 1, "t");
    int             n = tide_tensor_ndim(a->t);
    lua_settop(L, 1);
    if (n > 2)
        return tl_error(L,
                        "tide: t: expects a tensor with at most 2 dims, got %d; use "
                        "transpose(d0, d1)",
                        n);
    if (n < 2)
        return 1; /* as PyTorch: a 0-d or 1-d tensor is its own transpose */
    return transpose_impl(L, "t", 0, 1, 1);
}

static int o_transpose(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    ltensor        *a = tl_check(L, S, 1, "transpose");
    int             d0 = tl_dim(L, a->t, check_int(L, 2, "transpose", "dim0"), "transpose", 0);
    int             d1 = tl_dim(L, a->t, check_int(L, 3, "transpose", "dim1"), "transpose", 0);
    lua_settop(L, 3);
    return transpose_impl(L, "transpose", d0, d1, 3);
}

/* view / reshape / expand / sum_to take sizes as integers or one table */
static int shaped(lua_State *L, int kind) {
    static const char *const names[] = {"view", "reshape", "expand", "sum_to"};
    const char              *name = names[kind];
    tide_lua_state          *S = TL_STATE(L);
    int                      nargs = lua_gettop(L);
    ltensor                 *a = tl_check(L, S, 1, name);
    int64_t                  shape[TIDE_MAX_DIMS];
    int                      ndim;
    tl_shape(L, 2, shape, &ndim, name, kind != 3);
    if (kind == 2) { /* expand: -1 keeps the size of that dim (aligned from the right) */
        int n = tide_tensor_ndim(a->t);
        for (int i = 0; i < ndim; i++) {
            int j = i - (ndim - n);
            if (shape[i] == -1) {
                if (j < 0)
                    return tl_error(L,
                                    "tide: expand: size -1 at position %d has no matching dim "
                                    "in a tensor with %d dims",
                                    i + 1, n);
                shape[i] = tide_tensor_shape(a->t)[j];
            }
        }
    }
    lua_settop(L, nargs);
    ltensor *r = tl_push_empty(L);
    switch (kind) {
    case 0:
        TL_CALL(L, S, tide_tensor_view(a->t, ndim, shape, &r->t));
        break;
    case 1:
        TL_CALL(L, S, tide_tensor_reshape(S->ctx, a->t, ndim, shape, &r->t));
        break;
    case 2:
        TL_CALL(L, S, tide_tensor_expand(a->t, ndim, shape, &r->t));
        break;
    default:
        TL_CALL(L, S, tide_sum_to(S->ctx, a->t, ndim, shape, &r->t));
        return done(L, S, a->requires_grad ? name : NULL, nargs);
    }
    if (kind == 1 && !tide_tensor_same_storage(a->t, r->t))
        tl_gc_hint(L, S, tide_tensor_nbytes(r->t));
    return a->requires_grad ? done_view(L, S, name, nargs) : 1;
}

static int o_view(lua_State *L) {
    return shaped(L, 0);
}
static int o_reshape(lua_State *L) {
    return shaped(L, 1);
}
static int o_expand(lua_State *L) {
    return shaped(L, 2);
}
static int o_sum_to(lua_State *L) {
    return shaped(L, 3);
}

static int o_permute(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    int             nargs = lua_gettop(L);
    ltensor        *a = tl_check(L, S, 1, "permute");
    int             n = tide_tensor_ndim(a->t), perm[TIDE_MAX_DIMS], seen[TIDE_MAX_DIMS] = {0};
    int             istable = lua_type(L, 2) == LUA_TTABLE;
    int             given = istable ? (int)lua_rawlen(L, 2) : nargs - 1;
    if (given != n)
        return tl_error(L,
                        "tide: permute: %d dims given for a tensor with %d dims; name every "
                        "dim once",
                        given, n);
    for (int i = 0; i < n; i++) {
        if (istable)
            lua_rawgeti(L, 2, i + 1);
        else
            lua_pushvalue(L, 2 + i);
        perm[i] = tl_dim(L, a->t, check_int(L, -1, "permute", "a dim"), "permute", 0);
        lua_pop(L, 1);
        if (seen[perm[i]]++)
            return tl_error(L, "tide: permute: dim %d appears twice; name every dim once",
                            perm[i] + 1);
    }
    ltensor *r = tl_push_empty(L);
    TL_CALL(L, S, tide_tensor_permute(a->t, perm, &r->t));
    return a->requires_grad ? done_view(L, S, "permute", nargs) : 1;
}

static int o_contiguous(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    ltensor        *a = tl_check(L, S, 1, "contiguous");
    lua_settop(L, 1);
    if (tide_tensor_is_contiguous(a->t))
        return 1; /* the same object, as PyTorch */
    ltensor *r = tl_push_empty(L);
    TL_CALL(L, S, tide_tensor_contiguous(S->ctx, a->t, &r->t));
    return done(L, S, a->requires_grad ? "contiguous" : NULL, 1);
}

static int o_narrow(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    ltensor        *a = tl_check(L, S, 1, "narrow");
    int             dim = tl_dim(L, a->t, check_int(L, 2, "narrow", "dim"), "narrow", 0);
    lua_Integer     start = check_int(L, 3, "narrow", "start");
    lua_Integer     len = check_int(L, 4, "narrow", "length");
    int64_t         size = tide_tensor_shape(a->t)[dim];
    int64_t         s0 = start >= 1 ? start - 1 : size + start;
    if (start == 0 || s0 < 0 || len < 0 || s0 > size || len > size - s0) /* no overflow */
        return tl_error(L,
                        "tide: narrow: start %I and length %I do not fit dim %d of size "
                        "%I; start is 1-based and start + length - 1 must be <= %I",
                        (lua_Integer)start, (lua_Integer)len, dim + 1, (lua_Integer)size,
                        (lua_Integer)size);
    lua_settop(L, 4);
    ltensor *r = tl_push_empty(L);
    TL_CALL(L, S, tide_tensor_narrow(a->t, dim, s0, len, &r->t));
    return a->requires_grad ? done_view(L, S, "narrow", 4) : 1;
}

static int o_select(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    lua_settop(L, 3);
    tl_select(L, S, check_int(L, 2, "select", "dim"), check_int(L, 3, "select", "index"), "select");
    ltensor *a = lua_touserdata(L, 1);
    return a->requires_grad ? done_view(L, S, "select", 3) : 1;
}

static int o_unsqueeze(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    ltensor        *a = tl_check(L, S, 1, "unsqueeze");
    int             d = tl_dim(L, a->t, check_int(L, 2, "unsqueeze", "dim"), "unsqueeze", 1);
    lua_settop(L, 2);
    ltensor *r = tl_push_empty(L);
    TL_CALL(L, S, tide_tensor_unsqueeze(a->t, d, &r->t));
    return a->requires_grad ? done_view(L, S, "unsqueeze", 2) : 1;
}

static int o_squeeze(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    int             nargs = lua_gettop(L);
    ltensor        *a = tl_check(L, S, 1, "squeeze");
    int             d = -1;
    if (!lua_isnoneornil(L, 2))
        d = tl_dim(L, a->t, check_int(L, 2, "squeeze", "dim"), "squeeze", 0);
    ltensor *r = tl_push_empty(L);
    TL_CALL(L, S, tide_tensor_squeeze(a->t, d, &r->t));
    return a->requires_grad ? done_view(L, S, "squeeze", nargs) : 1;
}

static int o_clone(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    ltensor        *a = tl_check(L, S, 1, "clone");
    lua_settop(L, 1);
    ltensor *r = tl_push_empty(L);
    TL_CALL(L, S, tide_tensor_clone(S->ctx, a->t, &r->t));
    return done(L, S, a->requires_grad ? "clone" : NULL, 1);
}

static int softmax_impl(lua_State *L, int log) {
    tide_lua_state *S = TL_STATE(L);
    const char     *name = log ? "log_softmax" : "softmax";
    int             nargs = lua_gettop(L);
    ltensor        *a = tl_check(L, S, 1, name);
    int dim = tl_dim(L, a->t, lua_isnoneornil(L, 2) ? -1 : check_int(L, 2, name, "dim"), name, 0);
    ltensor *r = tl_push_empty(L);
    TL_CALL(L, S, tide_softmax(S->ctx, a->t, dim, log, &r->t));
    return done(L, S, a->requires_grad ? name : NULL, nargs);
}
static int o_softmax(lua_State *L) {
    return softmax_impl(L, 0);
}
static int o_log_softmax(lua_State *L) {
    return softmax_impl(L, 1);
}

/* ---- indexing ----------------------------------------------------------------------------- */

/* Pushes the 0-based int64 form of the 1-based index at idx (an integer tensor or a table),
 * on a's device for a table, checked against size where the values are readable here. */
static ltensor *push_index0(lua_State *L, tide_lua_state *S, const tide_tensor *a, int dim, int idx,
                            const char *op) {
    int64_t size = tide_tensor_shape(a)[dim];
    if (lua_type(L, idx) == LUA_TTABLE) {
        int64_t      n = (int64_t)lua_rawlen(L, idx);
        tide_device *dev = tide_tensor_device(a), *wdev = dev;
        if (tide_device_type_of(dev) != TIDE_DEVICE_CPU)
            tide_device_get_index(TIDE_DEVICE_CPU, 0, &wdev);
        ltensor *w = tl_push_empty(L);
        TL_CALL(L, S, tide_tensor_empty(S->ctx, wdev, TIDE_DTYPE_I64, 1, &n, &w->t));
        int64_t *p = tide_tensor_data(w->t);
        for (int64_t i = 0; i < n; i++) {
            lua_rawgeti(L, idx, (lua_Integer)i + 1);
            lua_Integer v = check_int(L, -1, op, "an index");
            lua_pop(L, 1);
            if (v < 1 || v > size)
                tl_error(L,
                         "tide: %s: index %I is out of range for dim %d of size %I; "
                         "indices are 1-based: use 1..%I",
                         op, (lua_Integer)v, dim + 1, (lua_Integer)size, (lua_Integer)size);
            p[i] = v - 1;
        }
        if (wdev == dev)
            return w;
        ltensor *r = tl_push_empty(L);
        TL_CALL(L, S, tide_tensor_to(S->ctx, w->t, dev, TIDE_DTYPE_I64, 0, &r->t));
        return r;
    }
    ltensor   *ix = tl_check(L, S, idx, op);
    tide_dtype dt = tide_tensor_dtype(ix->t);
    if (dt != TIDE_DTYPE_I64 && dt != TIDE_DTYPE_I32)
        tl_error(L,
                 "tide: %s: indices must be an int64 tensor or a table, got %s; convert "
                 "with :long()",
                 op, tide_dtype_name(dt));
    if (tide_tensor_ndim(ix->t) != 1)
        tl_error(L, "tide: %s: indices must be 1-D, got %d dims; flatten with :view(-1)", op,
                 tide_tensor_ndim(ix->t));
    if (tide_device_type_of(tide_tensor_device(ix->t)) == TIDE_DEVICE_CPU) {
        int64_t n = tide_tensor_shape(ix->t)[0], st = tide_tensor_strides(ix->t)[0];
        for (int64_t i = 0; i < n; i++) {
            int64_t v = dt == TIDE_DTYPE_I64 ? ((int64_t *)tide_tensor_data(ix->t))[i * st]
                                             : ((int32_t *)tide_tensor_data(ix->t))[i * st];
            if (v < 1 || v > size)
                tl_error(L,
                         "tide: %s: index %I is out of range for dim %d of size %I; "
                         "indices are 1-based: use 1..%I",
                         op, (lua_Integer)v, dim + 1, (lua_Integer)size, (lua_Integer)size);
        }
    }
    ltensor *r = tl_push_empty(L);
    TL_CALL(L, S, tide_binary_scalar(S->ctx, TIDE_OP_SUB, ix->t, 1, 0, &r->t));
    return r;
}

static int o_index_select(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    ltensor        *a = tl_check(L, S, 1, "index_select");
    int dim = tl_dim(L, a->t, check_int(L, 2, "index_select", "dim"), "index_select", 0);
    lua_settop(L, 3);
    ltensor *ix = push_index0(L, S, a->t, dim, 3, "index_select");
    ltensor *r = tl_push_empty(L);
    TL_CALL(L, S, tide_index_select(S->ctx, a->t, dim, ix->t, &r->t));
    return done(L, S, a->requires_grad ? "index_select" : NULL, 3);
}

static int o_index_add_(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    ltensor        *a = tl_check(L, S, 1, "index_add_");
    int             dim = tl_dim(L, a->t, check_int(L, 2, "index_add_", "dim"), "index_add_", 0);
    ltensor        *src = tl_check(L, S, 4, "index_add_");
    lua_settop(L, 4);
    int      rec = tl_check_inplace(L, S, a, "index_add_");
    ltensor *ix = push_index0(L, S, a->t, dim, 3, "index_add_");
    TL_CALL(L, S, tide_index_add_(S->ctx, a->t, dim, ix->t, src->t));
    tl_inplace_done(L, S, "index_add_", rec);
    lua_settop(L, 1);
    return 1;
}

/* where(cond, a, b); numbers become 0-d tensors on cond's device. t:where(cond, b) is
 * where(cond, t, b) and is recorded with the arguments in that order. */
static int where_impl(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    ltensor        *c = tl_check(L, S, 1, "where");
    ltensor        *ab[2];
    lua_settop(L, 3);
    for (int k = 0; k < 2; k++)
        ab[k] = tl_test(L, S, 2 + k);
    for (int k = 0; k < 2; k++) {
        if (ab[k]) {
            if (!ab[k]->t)
                return tl_error(L, "tide: where: attempt to use a freed tensor");
            continue;
        }
        if (lua_type(L, 2 + k) != LUA_TNUMBER)
            return tl_error(L, "tide: where: argument #%d must be a tensor or a number, got %s",
                            2 + k, luaL_typename(L, 2 + k));
        ltensor   *o = ab[1 - k];
        tide_dtype dt = o && o->t ? tide_tensor_dtype(o->t)
                        : lua_isinteger(L, 2 + k) && ab[1 - k] == NULL && lua_isinteger(L, 3 - k)
                            ? TIDE_DTYPE_I64
                            : TIDE_DTYPE_F32;
        ab[k] = tl_push_scalar(L, S, tl_scalar(L, 2 + k), dt, tide_tensor_device(c->t));
    }
    ltensor *r = tl_push_empty(L);
    TL_CALL(L, S, tide_where(S->ctx, c->t, ab[0]->t, ab[1]->t, &r->t));
    tl_gc_hint(L, S, tide_tensor_nbytes(r->t));
    int rg = (ab[0]->requires_grad || ab[1]->requires_grad);
    if (rg && S->grad_enabled)
        tl_record(L, S, "where", 3, -1, 0);
    return 1;
}

static int l_where(lua_State *L) {
    return where_impl(L);
}

static int o_where(lua_State *L) {
    lua_settop(L, 3);
    lua_pushvalue(L, 1); /* t, cond, b -> cond, t, b */
    lua_pushvalue(L, 2);
    lua_replace(L, 1);
    lua_replace(L, 2);
    return where_impl(L);
}

static int l_cat(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    int             nargs = lua_gettop(L);
    lua_settop(L, 2);
    if (lua_type(L, 1) != LUA_TTABLE)
        return tl_error(L, "tide: cat: expected a table of tensors, got %s", luaL_typename(L, 1));
    int n = (int)lua_rawlen(L, 1);
    if (n == 0)
        return tl_error(L, "tide: cat: expected at least one tensor, got an empty table");
    const tide_tensor **ts = lua_newuserdatauv(L, (size_t)n * sizeof *ts, 0);
    int                 rg = 0;
    for (int i = 0; i < n; i++) {
        lua_rawgeti(L, 1, i + 1);
        ltensor *u = tl_test(L, S, -1);
        if (!u || !u->t)
            return tl_error(L, "tide: cat: element %d of the table is %s; expected a tensor", i + 1,
                            u ? "a freed tensor" : luaL_typename(L, -1));
        ts[i] = u->t;
        rg |= u->requires_grad;
        lua_pop(L, 1);
    }
    int dim = tl_dim(L, ts[0], lua_isnoneornil(L, 2) ? 1 : check_int(L, 2, "cat", "dim"), "cat", 0);
    ltensor *r = tl_push_empty(L);
    TL_CALL(L, S, tide_cat(S->ctx, n, ts, dim, &r->t));
    return done(L, S, rg ? "cat" : NULL, nargs);
}

/* tide.stack(tensors[, dim]): the core checks the shapes as given, unsqueezes and cats */
static int l_stack(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    int             nargs = lua_gettop(L);
    lua_settop(L, 2);
    if (lua_type(L, 1) != LUA_TTABLE || lua_rawlen(L, 1) == 0)
        return tl_error(L, "tide: stack: expected a non-empty table of tensors, got %s",
                        lua_type(L, 1) == LUA_TTABLE ? "an empty table" : luaL_typename(L, 1));
    int                 n = (int)lua_rawlen(L, 1), rg = 0, dim = 0;
    const tide_tensor **ts = lua_newuserdatauv(L, (size_t)n * sizeof *ts, 0);
    for (int i = 0; i < n; i++) {
        lua_rawgeti(L, 1, i + 1);
        ltensor *u = tl_test(L, S, -1);
        if (!u || !u->t)
            return tl_error(L, "tide: stack: element %d of the table is %s; expected a tensor",
                            i + 1, u ? "a freed tensor" : luaL_typename(L, -1));
        lua_pop(L, 1);
        if (i == 0)
            dim = tl_dim(L, u->t, lua_isnoneornil(L, 2) ? 1 : check_int(L, 2, "stack", "dim"),
                         "stack", 1);
        rg |= u->requires_grad;
        ts[i] = u->t;
    }
    ltensor *r = tl_push_empty(L);
    TL_CALL(L, S, tide_stack(S->ctx, n, ts, dim, &r->t));
    return done(L, S, rg ? "stack" : NULL, nargs);
}

/* ---- in-place fills ----------------------------------------------------------------------- */

static int o_fill_(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    ltensor        *a = tl_check(L, S, 1, "fill_");
    if (!lua_isboolean(L, 2) && lua_type(L, 2) != LUA_TNUMBER)
        return tl_error(L, "tide: fill_: value must be a number, got %s", tl_typename(L, 2));
    int rec = tl_check_inplace(L, S, a, "fill_");
    TL_CALL(L, S, tide_fill_x_(S->ctx, a->t, tl_scalar(L, 2)));
    tl_inplace_done(L, S, "fill_", rec);
    lua_settop(L, 1);
    return 1;
}

static int o_zero_(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    ltensor        *a = tl_check(L, S, 1, "zero_");
    if (lua_gettop(L) >= 2 && !lua_isnil(L, 2))
        return tl_error(L,
                        "tide: zero_: takes no argument, got argument #2 (%s); fill_(v) fills "
                        "with a value",
                        tl_typename(L, 2));
    int rec = tl_check_inplace(L, S, a, "zero_");
    TL_CALL(L, S, tide_fill_(S->ctx, a->t, 0));
    tl_inplace_done(L, S, "zero_", rec);
    lua_settop(L, 1);
    return 1;
}

static int o_copy_(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    ltensor        *a = tl_check(L, S, 1, "copy_"), *b = tl_check(L, S, 2, "copy_");
    int             rec = tl_check_inplace(L, S, a, "copy_");
    TL_CALL(L, S, tide_tensor_copy_(S->ctx, a->t, b->t));
    tl_inplace_done(L, S, "copy_", rec);
    lua_settop(L, 1);
    return 1;
}

static int random_(lua_State *L, tide_random_kind kind, const char *name) {
    tide_lua_state *S = TL_STATE(L);
    ltensor        *a = tl_check(L, S, 1, name);
    double          lo = opt_number(L, 2, kind == TIDE_RANDOM_UNIFORM ? 0 : 0, name,
                           kind == TIDE_RANDOM_UNIFORM ? "from" : "mean");
    double          hi = opt_number(L, 3, 1, name, kind == TIDE_RANDOM_UNIFORM ? "to" : "std");
    int             rec = tl_check_inplace(L, S, a, name);
    TL_CALL(L, S, tide_random_(S->ctx, a->t, kind, lo, hi));
    tl_inplace_done(L, S, name, rec);
    lua_settop(L, 1);
    return 1;
}
static int o_uniform_(lua_State *L) {
    return random_(L, TIDE_RANDOM_UNIFORM, "uniform_");
}
static int o_normal_(lua_State *L) {
    return random_(L, TIDE_RANDOM_NORMAL, "normal_");
}

/* ---- transfers and casts ------------------------------------------------------------------ */

static int to_impl(lua_State *L, const char *name, tide_device *dev, int has_dt, tide_dtype dt,
                   int copy, int nb, int nargs) {
    tide_lua_state *S = TL_STATE(L);
    ltensor        *a = lua_touserdata(L, 1);
    if (!dev)
        dev = tide_tensor_device(a->t);
    if (!has_dt)
        dt = tide_tensor_dtype(a->t);
    if (!copy && dev == tide_tensor_device(a->t) && dt == tide_tensor_dtype(a->t)) {
        lua_pushvalue(L, 1); /* rule 3: the same object, no copy */
        return 1;
    }
    lua_settop(L, nargs);
    ltensor *r = tl_push_empty(L);
    TL_CALL(L, S, tide_tensor_to(S->ctx, a->t, dev, dt, nb ? TIDE_TO_NON_BLOCKING : 0, &r->t));
    return done(L, S, a->requires_grad ? name : NULL, nargs);
}

static int dtype_arg(lua_State *L, int idx, tide_dtype *dt) {
    return lua_type(L, idx) == LUA_TSTRING &&
           tide_dtype_from_name(lua_tostring(L, idx), dt) == TIDE_OK;
}

/* t:to(dev | dtype | tensor [, opts]) or t:to(opts); opts = {device, dtype, copy, non_blocking} */
static int o_to(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    int             nargs = lua_gettop(L);
    tl_check(L, S, 1, "to");
    tide_device *dev = NULL;
    tide_dtype   dt = TIDE_DTYPE_F32;
    int          has_dt = 0, copy = 0, nb = 0;
    for (int i = 2; i <= nargs; i++) {
        ltensor *u;
        if (lua_isnil(L, i))
            continue;
        if (lua_type(L, i) == LUA_TTABLE) {
            static const char *const known[] = {"device", "dtype", "copy", "non_blocking", NULL};
            tl_check_options(L, i, "to", known, NULL);
            if (lua_getfield(L, i, "device") != LUA_TNIL)
                dev = tl_check_device(L, -1, "to");
            if (lua_getfield(L, i, "dtype") != LUA_TNIL) {
                if (!dtype_arg(L, -1, &dt))
                    return tl_error(L, "tide: to: unknown dtype %s; use " TL_DTYPE_NAMES,
                                    luaL_tolstring(L, -1, 0));
                has_dt = 1;
            }
            lua_getfield(L, i, "copy");
            copy = lua_toboolean(L, -1);
            lua_getfield(L, i, "non_blocking");
            nb = lua_toboolean(L, -1);
            lua_pop(L, 4);
        } else if ((u = tl_test(L, S, i)) != NULL) {
            tl_check(L, S, i, "to");
            dev = tide_tensor_device(u->t);
            dt = tide_tensor_dtype(u->t);
            has_dt = 1;
        } else if (dtype_arg(L, i, &dt)) {
            has_dt = 1;
        } else if (lua_type(L, i) == LUA_TSTRING && !tl_is_device_name(lua_tostring(L, i))) {
            return tl_error(
                L,
                "tide: to: \"%s\" is neither a device nor a dtype; devices are " TL_DEVICE_NAMES
                ", dtypes " TL_DTYPE_NAMES,
                lua_tostring(L, i));
        } else {
            dev = tl_check_device(L, i, "to");
        }
    }
    return to_impl(L, "to", dev, has_dt, dt, copy, nb, nargs);
}

static int o_cpu(lua_State *L) {
    tl_check(L, TL_STATE(L), 1, "cpu");
    tide_device *dev;
    tide_device_get_index(TIDE_DEVICE_CPU, 0, &dev);
    lua_settop(L, 1);
    return to_impl(L, "cpu", dev, 0, TIDE_DTYPE_F32, 0, 0, 1);
}

static int o_cuda(lua_State *L) {
    tl_check(L, TL_STATE(L), 1, "cuda");
    int          nargs = lua_gettop(L);
    tide_device *dev;
    if (lua_isnoneornil(L, 2)) {
        if (tide_device_get("cuda", &dev) != TIDE_OK)
            return tl_raise(L);
    } else {
        lua_Integer n = check_int(L, 2, "cuda", "the device ordinal");
        if (n < 0 || n > 1 << 20 ||
            tide_device_get_index(TIDE_DEVICE_CUDA, (int)n, &dev) != TIDE_OK)
            return n < 0 || n > 1 << 20
                       ? tl_error(L, "tide: cuda: device ordinal %I is invalid", (lua_Integer)n)
                       : tl_raise(L);
    }
    return to_impl(L, "cuda", dev, 0, TIDE_DTYPE_F32, 0, 0, nargs);
}

#define CAST(fname, DT)                                                                            \
    static int o_##fname(lua_State *L) {                                                           \
        tl_check(L, TL_STATE(L), 1, #fname);                                                       \
        lua_settop(L, 1);                                                                          \
        return to_impl(L, #fname, NULL, 1, TIDE_DTYPE_##DT, 0, 0, 1);                              \
    }
CAST(float, F32)
CAST(double, F64)
CAST(half, F16)
CAST(bfloat16, BF16)
CAST(long, I64)
CAST(int, I32)
CAST(byte, U8)
CAST(bool, BOOL)

static int o_type_as(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    tl_check(L, S, 1, "type_as");
    ltensor *u = tl_check(L, S, 2, "type_as");
    lua_settop(L, 2);
    return to_impl(L, "type_as", NULL, 1, tide_tensor_dtype(u->t), 0, 0, 2);
}

static int o_pin_memory(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    ltensor        *a = tl_check(L, S, 1, "pin_memory");
    lua_settop(L, 1);
    if (tide_tensor_is_pinned(a->t))
        return 1;
    ltensor *r = tl_push_empty(L);
    TL_CALL(L, S, tide_tensor_pin_memory(S->ctx, a->t, &r->t));
    return done(L, S, a->requires_grad ? "pin_memory" : NULL, 1); /* the gradient passes through */
}

static int o_is_pinned(lua_State *L) {
    lua_pushboolean(L, tide_tensor_is_pinned(tl_check(L, TL_STATE(L), 1, "is_pinned")->t));
    return 1;
}

static int o_item(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    ltensor        *a = tl_check(L, S, 1, "item");
    tide_scalar     v;
    int64_t         n = tide_tensor_numel(a->t);
    if (n != 1)
        return tl_error(L, "tide: item: the tensor has %I elements; item() needs exactly one",
                        (lua_Integer)n);
    TL_CALL(L, S, tide_tensor_item_x(S->ctx, a->t, &v));
    tide_dtype dt = tide_tensor_dtype(a->t);
    if (dt == TIDE_DTYPE_BOOL)
        lua_pushboolean(L, v.i != 0);
    else if (v.is_int) /* exact for int64 */
        lua_pushinteger(L, (lua_Integer)v.i);
    else
        lua_pushnumber(L, v.d);
    return 1;
}

/* ---- nn kernels --------------------------------------------------------------------------- */

static tide_conv_geom geom(lua_State *L, int idx, const char *op) {
    static const char *const w[] = {"kh", "kw", "sh", "sw", "ph", "pw"};
    lua_Integer              v[6];
    for (int i = 0; i < 6; i++) {
        v[i] = check_int(L, idx + i, op, w[i]);
        if (v[i] < INT_MIN || v[i] > INT_MAX) /* the core's tide_conv_geom holds ints */
            tl_error(L, "tide: %s: %s = %I does not fit in 32 bits; use a value in %d..%d", op,
                     w[i], v[i], INT_MIN, INT_MAX);
    }
    tide_conv_geom g = {(int)v[0], (int)v[1], (int)v[2], (int)v[3], (int)v[4], (int)v[5]};
    return g;
}

static int l_im2col(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    ltensor        *x = tl_check(L, S, 1, "im2col");
    tide_conv_geom  g = geom(L, 2, "im2col");
    lua_settop(L, 7);
    ltensor *r = tl_push_empty(L);
    TL_CALL(L, S, tide_im2col(S->ctx, x->t, g, &r->t));
    return done(L, S, x->requires_grad ? "im2col" : NULL, 7);
}

static int l_col2im(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    ltensor        *c = tl_check(L, S, 1, "col2im");
    lua_Integer     C = check_int(L, 2, "col2im", "C"), H = check_int(L, 3, "col2im", "H"),
                W = check_int(L, 4, "col2im", "W");
    tide_conv_geom g = geom(L, 5, "col2im");
    lua_settop(L, 10);
    tl_not_differentiable(L, S, "col2im", 10); /* a gradient's helper: backward runs it */
    ltensor *r = tl_push_empty(L);
    TL_CALL(L, S, tide_col2im(S->ctx, c->t, C, H, W, g, &r->t));
    return done(L, S, NULL, 10);
}

/* the batch-folded layout [C*kh*kw, N, L] (tide_im2col_folded): for conv2d's one-gemm path,
 * which records its own node, so these record nothing */
static int l_im2col_folded(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    ltensor        *x = tl_check(L, S, 1, "im2col_folded");
    tide_conv_geom  g = geom(L, 2, "im2col_folded");
    lua_settop(L, 7);
    ltensor *r = tl_push_empty(L);
    TL_CALL(L, S, tide_im2col_folded(S->ctx, x->t, g, &r->t));
    return done(L, S, NULL, 7);
}

static int l_col2im_folded(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    ltensor        *c = tl_check(L, S, 1, "col2im_folded");
    lua_Integer     C = check_int(L, 2, "col2im_folded", "C"),
                H = check_int(L, 3, "col2im_folded", "H"),
                W = check_int(L, 4, "col2im_folded", "W");
    tide_conv_geom g = geom(L, 5, "col2im_folded");
    lua_settop(L, 10);
    ltensor *r = tl_push_empty(L);
    TL_CALL(L, S, tide_col2im_folded(S->ctx, c->t, C, H, W, g, &r->t));
    return done(L, S, NULL, 10);
}

/* relu's gradient in one pass (autograd's BW.relu); records nothing */
static int l_relu_backward(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    ltensor        *g = tl_check(L, S, 1, "relu_backward"), *x = tl_check(L, S, 2, "relu_backward");
    lua_settop(L, 2);
    ltensor *r = tl_push_empty(L);
    TL_CALL(L, S, tide_relu_backward(S->ctx, g->t, x->t, &r->t));
    return done(L, S, NULL, 2);
}

static int l_maxpool2d(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    ltensor        *x = tl_check(L, S, 1, "maxpool2d");
    tide_conv_geom  g = geom(L, 2, "maxpool2d");
    lua_settop(L, 7);
    ltensor *r = tl_push_empty(L), *ix = tl_push_empty(L);
    TL_CALL(L, S, tide_maxpool2d(S->ctx, x->t, g, &r->t, &ix->t));
    tl_gc_hint(L, S, tide_tensor_nbytes(r->t) + tide_tensor_nbytes(ix->t));
    if (x->requires_grad && S->grad_enabled)
        tl_record(L, S, "maxpool2d", 7, -2, -1);
    return 2;
}

static int l_maxpool2d_backward(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    ltensor        *go = tl_check(L, S, 1, "maxpool2d_backward");
    ltensor        *ix = tl_check(L, S, 2, "maxpool2d_backward");
    lua_Integer     H = check_int(L, 3, "maxpool2d_backward", "H");
    lua_Integer     W = check_int(L, 4, "maxpool2d_backward", "W");
    lua_settop(L, 4);
    tl_not_differentiable(L, S, "maxpool2d_backward", 4);
    ltensor *r = tl_push_empty(L);
    TL_CALL(L, S, tide_maxpool2d_backward(S->ctx, go->t, ix->t, H, W, &r->t));
    return done(L, S, NULL, 4);
}

/* ---- registration ------------------------------------------------------------------------- */

#define REG_BINARY(e, name)  {name, o_##e}, {name "_", o_##e##_},
#define REG_COMPARE(e, name) {name, o_##e},
#define REG_UNARY(e, name)   {name, o_##e}, {name "_", o_##e##_},
#define REG_REDUCE(e, name)  {name, o_##e},

#define FN_BINARY(e, name)  {name, o_##e},
#define FN_COMPARE(e, name) {name, o_##e},
#define FN_UNARY(e, name)   {name, o_##e},
#define FN_REDUCE(e, name)  {name, o_##e},

void tl_open_ops(lua_State *L, int mod, int methods) {
    static const luaL_Reg meths[] = {
#define X(e, family, name) REG_##family(e, name)
#include "tide_ops.def"
#undef X
        {"matmul", o_matmul},
        {"t", o_t},
        {"transpose", o_transpose},
        {"view", o_view},
        {"reshape", o_reshape},
        {"expand", o_expand},
        {"sum_to", o_sum_to},
        {"permute", o_permute},
        {"contiguous", o_contiguous},
        {"narrow", o_narrow},
        {"select", o_select},
        {"unsqueeze", o_unsqueeze},
        {"squeeze", o_squeeze},
        {"clone", o_clone},
        {"softmax", o_softmax},
        {"log_softmax", o_log_softmax},
        {"index_select", o_index_select},
        {"index_add_", o_index_add_},
        {"where", o_where},
        {"fill_", o_fill_},
        {"zero_", o_zero_},
        {"copy_", o_copy_},
        {"uniform_", o_uniform_},
        {"normal_", o_normal_},
        {"to", o_to},
        {"cpu", o_cpu},
        {"cuda", o_cuda},
        {"float", o_float},
        {"double", o_double},
        {"half", o_half},
        {"bfloat16", o_bfloat16},
        {"long", o_long},
        {"int", o_int},
        {"byte", o_byte},
        {"bool", o_bool},
        {"type_as", o_type_as},
        {"pin_memory", o_pin_memory},
        {"is_pinned", o_is_pinned},
        {"item", o_item},
        {"totable", tl_totable},
        {NULL, NULL}};
    tl_register(L, methods, meths);

    static const luaL_Reg funcs[] = {
#define X(e, family, name) FN_##family(e, name)
#include "tide_ops.def"
#undef X
        {"matmul", o_matmul},
        {"transpose", o_transpose},
        {"reshape", o_reshape},
        {"permute", o_permute},
        {"narrow", o_narrow},
        {"select", o_select},
        {"unsqueeze", o_unsqueeze},
        {"squeeze", o_squeeze},
        {"clone", o_clone},
        {"softmax", o_softmax},
        {"log_softmax", o_log_softmax},
        {"index_select", o_index_select},
        {"where", l_where},
        {"cat", l_cat},
        {"stack", l_stack},
        {"im2col", l_im2col},
        {"col2im", l_col2im},
        {"im2col_folded", l_im2col_folded},
        {"relu_backward", l_relu_backward},
        {"col2im_folded", l_col2im_folded},
        {"maxpool2d", l_maxpool2d},
        {"maxpool2d_backward", l_maxpool2d_backward},
        {NULL, NULL}};
    tl_register(L, mod, funcs);
}
