/*
 * op_families.c — the tensor methods generated from include/tide_ops.def: each row becomes
 * t:name() and tide.name(), with an in-place `name_` twin for the BINARY, UNARY and BOUNDED
 * families. A result is recorded for autograd when an input requires grad, unless the row says
 * NO_GRAD (comparisons, isnan, logical_*, argmax: their results never require grad); a row that
 * says NOT_DIFFERENTIABLE (no formula) raises instead.
 */
#include "binding.h"
#include <math.h>

/* a row without a gradient formula (NOT_DIFFERENTIABLE) given an input that requires grad:
 * refused before it runs, rather than returning a detached result */
static void not_differentiable(lua_State *L, tide_lua_state *S, tide_op op, const char *name,
                               int nargs) {
    if (tide_op_flags(op) & TIDE_OPF_NOT_DIFFERENTIABLE)
        tl_not_differentiable(L, S, name, nargs);
}

static int binary_inplace(lua_State *L, tide_op op, const char *name) {
    tide_lua_state *S = TL_STATE(L);
    if (lua_gettop(L) >= 3 && !lua_isnil(L, 3)) {
        if (op == TIDE_OP_ADD || op == TIDE_OP_SUB)
            return tl_binary_alpha(L, op, 1);
        return tl_no_extra_operand(L, name);
    }
    tl_max_args(L, 2, name);
    ltensor     *a = tl_check(L, 1, name), *b = tl_test(L, 2);
    tide_tensor *dst = a->t;
    not_differentiable(L, S, op, name, 2);
    int rec = tl_check_inplace(L, S, a, name);
    if (b) {
        if (!b->t)
            return tl_error(L, "tide: %s: attempt to use a freed tensor", name);
        TL_CALL_AS(L, S, tide_binary(S->ctx, op, a->t, b->t, &dst), tide_op_name(op), name);
    } else {
        tl_opt_number(L, 2, NAN, name, "the other operand");
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
    tl_opt_number(L, idx, none, name, what);
    return lua_isnoneornil(L, idx) ? tide_scalar_f(none) : tl_scalar(L, idx);
}

/* the name autograd records the result of op as, when a requires grad */
static const char *record_as(tide_op op, const ltensor *a) {
    return a->requires_grad && !(tide_op_flags(op) & TIDE_OPF_NO_GRAD) ? tide_op_name(op) : NULL;
}

static int is_bounded(tide_op op) {
    return tide_op_family_of(op) == TIDE_FAMILY_BOUNDED;
}

/* t:op() for the one-input families; BOUNDED (clamp) takes (min, max) */
static tide_status unary_call(lua_State *L, tide_lua_state *S, tide_op op, const char *name,
                              const tide_tensor *a, tide_tensor **out) {
    if (!is_bounded(op))
        return tide_unary(S->ctx, op, a, NULL, out);
    tide_scalar lo = bound(L, 2, -INFINITY, name, "min"), hi = bound(L, 3, INFINITY, name, "max");
    return tide_clamp(S->ctx, a, lo, hi, out);
}

/* a one-input op other than clamp given an argument: refused, not ignored (t:exp(2)) */
static void no_argument(lua_State *L, tide_op op, const char *name) {
    if (!is_bounded(op) && lua_gettop(L) >= 2 && !lua_isnil(L, 2))
        tl_error(L, "tide: %s: takes no argument, got argument #2 (%s)", name, tl_typename(L, 2));
    tl_max_args(L, is_bounded(op) ? 3 : 1, name); /* clamp(min, max) */
}

/* the op's inputs first..last cast as autocast's float32 list says, in a region */
static void autocast_fp32(lua_State *L, tide_lua_state *S, tide_op op, int first, int last) {
    if (S->autocast_ref != LUA_NOREF && (tide_op_flags(op) & TIDE_OPF_AUTOCAST_FP32))
        tl_autocast(L, S, TL_AUTOCAST_FP32, first, last);
}

/* clamp given a tensor bound: PyTorch's tensor form, written in Lua (tide.pointwise) */
static int tensor_bounds(lua_State *L, tide_op op) {
    return is_bounded(op) && (tl_test(L, 2) || tl_test(L, 3));
}

static int is_complex_input(lua_State *L) { /* (a tensor is userdata: one type check) */
    return tl_is_class_table(L, 1, TL_COMPLEX_CLASS);
}

static int unary(lua_State *L, tide_op op) {
    tide_lua_state *S = TL_STATE(L);
    const char     *name = tide_op_name(op);
    if (is_complex_input(L))
        return tl_complex_method(L, name);
    if (tensor_bounds(L, op))
        return tl_call_lua(L, "tide.pointwise", "clamp_tensor_bounds");
    autocast_fp32(L, S, op, 1, 1);
    ltensor *a = tl_check(L, 1, name);
    no_argument(L, op, name); /* the bounds stay at 2 and 3, below the result */
    not_differentiable(L, S, op, name, 1);
    int      nargs = lua_gettop(L);
    ltensor *r = tl_push_like(L, 1);
    TL_CALL(L, S, unary_call(L, S, op, name, a->t, &r->t));
    return tl_done(L, S, record_as(op, a), nargs);
}

static int unary_inplace(lua_State *L, tide_op op, const char *name) {
    tide_lua_state *S = TL_STATE(L);
    if (tensor_bounds(L, op))
        return tl_call_lua(L, "tide.pointwise", "clamp_tensor_bounds_");
    ltensor     *a = tl_check(L, 1, name);
    tide_tensor *dst = a->t;
    no_argument(L, op, name);
    not_differentiable(L, S, op, name, 1);
    int rec = tl_check_inplace(L, S, a, name);
    TL_CALL_AS(L, S, unary_call(L, S, op, name, a->t, &dst), tide_op_name(op), name);
    tl_inplace_done(L, S, name, rec);
    lua_settop(L, 1);
    return 1;
}

/* t:sum([dim[, keepdim]]) and friends; max/min over a dim return values, 1-based indices */
static int reduce(lua_State *L, tide_op op) {
    /* PyTorch's max(a, b) / min(a, b) with a tensor b: maximum / minimum, elementwise */
    if ((op == TIDE_OP_MAX || op == TIDE_OP_MIN) && tl_test(L, 2))
        return tl_binary(L, op == TIDE_OP_MAX ? TIDE_OP_MAXIMUM : TIDE_OP_MINIMUM);
    tide_lua_state *S = TL_STATE(L);
    const char     *name = tide_op_name(op);
    if (is_complex_input(L))
        return tl_complex_method(L, name);
    autocast_fp32(L, S, op, 1, 1);
    ltensor *a = tl_check(L, 1, name);
    int      dim = TIDE_ALL_DIMS, nargs = 3;
    tl_max_args(L, 3, name);
    if (!lua_isnoneornil(L, 2)) {
        int n = tide_tensor_ndim(a->t) == 0 ? tl_scalar_dim(L, name) : -1;
        if (n >= 0)
            return n;
        dim = tl_dim(L, a->t, tl_check_int(L, 2, name, "dim"), name, 0);
    }
    if (!lua_isnil(L, 3) && !lua_isboolean(L, 3))
        return tl_error(L, "tide: %s: keepdim must be a boolean, got %s", name, tl_typename(L, 3));
    int      keepdim = lua_toboolean(L, 3);
    int      is_arg = op == TIDE_OP_ARGMAX || op == TIDE_OP_ARGMIN; /* 1-based indices */
    int      with_idx = (op == TIDE_OP_MAX || op == TIDE_OP_MIN) && dim != TIDE_ALL_DIMS;
    ltensor *r = tl_push_empty(L);
    if (with_idx) {
        ltensor *ix = tl_push_empty(L);
        TL_CALL(L, S, tide_reduce(S->ctx, op, a->t, dim, keepdim, &r->t, &ix->t));
        tl_one_based(L, S, ix);
        tl_gc_hint(L, S, tide_tensor_nbytes(r->t) + tide_tensor_nbytes(ix->t));
        if (a->requires_grad && S->grad_enabled)
            tl_record(L, S, name, nargs, -2, -1);
        return 2;
    }
    TL_CALL(L, S, tide_reduce(S->ctx, op, a->t, dim, keepdim, &r->t, NULL));
    if (is_arg)
        tl_one_based(L, S, r);
    return tl_done(L, S, record_as(op, a), nargs);
}

/* ---- out= straight into out ------------------------------------------------------------------
 * tide.add(a, b, {out = o}) computes into o, as a:add_(b) computes into a, when the result
 * would have exactly o's dtype and shape and nothing takes part in autograd: the trampoline of
 * the tide.X function (keywords.c) calls these. Any other call (a cast or a resize of out, an
 * input or out that requires grad, a complex operand, autocast, an extra argument) is declined
 * with the stack as it was, and takes the general path (lua/tide/tensor_keywords/out.lua),
 * which computes the result and copies it into out. The dtype rules below are the core's for
 * the cases they accept (src/ops.c: same-dtype operands, a float tensor and a number, an
 * integer tensor and an integer): where they could differ, they decline. */

/* the tensor at idx when it is a live one that needs no gradient, else NULL */
static ltensor *plain_tensor(lua_State *L, int idx) {
    ltensor *u = tl_test(L, idx);
    return u && u->t && !u->requires_grad && !u->follows ? u : NULL;
}

/* out at out_idx: writable here without autograd's bookkeeping (a view made under no_grad is
 * refused with grad on, which the general path's copy_ reports) */
static ltensor *plain_out(lua_State *L, tide_lua_state *S, int out_idx) {
    ltensor *o = plain_tensor(L, out_idx);
    if (!o || (o->no_grad_view && S->grad_enabled) || S->autocast_ref != LUA_NOREF)
        return NULL;
    return o;
}

/* whether t is on out's device (out= moves no values: the general path's message says so) */
static int on_device_of(const tide_tensor *out, const tide_tensor *t) {
    return tide_tensor_device(out) == tide_tensor_device(t);
}

/* whether out's shape is the broadcast of a's and b's (b NULL: a's own) */
static int out_has_shape(const tide_tensor *out, const tide_tensor *a, const tide_tensor *b) {
    int            n = tide_tensor_ndim(out), na = tide_tensor_ndim(a);
    int            nb = b ? tide_tensor_ndim(b) : 0;
    const int64_t *so = tide_tensor_shape(out), *sa = tide_tensor_shape(a);
    const int64_t *sb = b ? tide_tensor_shape(b) : NULL;
    if (n != (na > nb ? na : nb))
        return 0;
    for (int i = 1; i <= n; i++) { /* from the last dim */
        int64_t x = i <= na ? sa[na - i] : 1, y = i <= nb ? sb[nb - i] : 1;
        if (x != y && x != 1 && y != 1)
            return 0;
        if (so[n - i] != (x == 1 ? y : x))
            return 0;
    }
    return 1;
}

/* the dtype of op's result on operands of dtype dt (a same-dtype pair, or dt and a number that
 * promotes nothing), or -1 where this path leaves the rule to the core */
static int same_dtype_result(tide_op op, tide_dtype dt) {
    tide_op_family fam = tide_op_family_of(op);
    if (fam == TIDE_FAMILY_COMPARE || fam == TIDE_FAMILY_PREDICATE)
        return TIDE_DTYPE_BOOL;
    if (dt == TIDE_DTYPE_BOOL ||
        ((tide_op_flags(op) & TIDE_OPF_FLOAT_ONLY) && !tide_dtype_is_float(dt)))
        return -1;
    return (int)dt;
}

static int into_done(lua_State *L, int out_idx) {
    lua_pushvalue(L, out_idx);
    return 1;
}

static int into_binary(lua_State *L, tide_op op, int nargs, int out_idx) {
    tide_lua_state *S = TL_STATE(L);
    ltensor        *o = plain_out(L, S, out_idx);
    if (!o || nargs != 2)
        return 0;
    ltensor     *a = plain_tensor(L, 1), *b = plain_tensor(L, 2);
    tide_tensor *dst = o->t;
    if (a && b) {
        tide_dtype dt = tide_tensor_dtype(a->t);
        if (!on_device_of(dst, a->t) || !on_device_of(dst, b->t) || tide_tensor_dtype(b->t) != dt ||
            same_dtype_result(op, dt) != (int)tide_tensor_dtype(dst) ||
            !out_has_shape(dst, a->t, b->t))
            return 0;
        TL_CALL(L, S, tide_binary(S->ctx, op, a->t, b->t, &dst));
        return into_done(L, out_idx);
    }
    ltensor *u = a ? a : b;
    int      other = a ? 2 : 1;
    if (!u || tl_test(L, other) || lua_type(L, other) != LUA_TNUMBER)
        return 0;
    tide_dtype dt = tide_tensor_dtype(u->t);
    double     v = lua_tonumber(L, other); /* an integer tensor keeps its dtype for an integer */
    if (!tide_dtype_is_float(dt) && !(v == floor(v) && isfinite(v)))
        return 0;
    if (!on_device_of(dst, u->t) || same_dtype_result(op, dt) != (int)tide_tensor_dtype(dst) ||
        !out_has_shape(dst, u->t, NULL))
        return 0;
    TL_CALL(L, S, tide_binary_scalar_x(S->ctx, op, u->t, tl_scalar(L, other), a == NULL, &dst));
    return into_done(L, out_idx);
}

/* the one-input families; clamp's bounds are numbers or nil (a tensor bound declines) */
static int into_unary(lua_State *L, tide_op op, int nargs, int out_idx) {
    tide_lua_state *S = TL_STATE(L);
    ltensor        *o = plain_out(L, S, out_idx), *a = plain_tensor(L, 1);
    if (!o || !a || nargs > (is_bounded(op) ? 3 : 1))
        return 0;
    tide_dtype dt = tide_tensor_dtype(a->t);
    for (int i = 2; i <= nargs; i++) { /* clamp's bounds: an integer tensor's are integral */
        if (lua_isnil(L, i))
            continue;
        if (lua_type(L, i) != LUA_TNUMBER)
            return 0;
        double v = lua_tonumber(L, i);
        if (!tide_dtype_is_float(dt) && v != floor(v)) /* (infinities: no bound) */
            return 0;
    }
    tide_tensor *dst = o->t;
    if (!on_device_of(dst, a->t) || same_dtype_result(op, dt) != (int)tide_tensor_dtype(dst) ||
        !out_has_shape(dst, a->t, NULL))
        return 0;
    if (is_bounded(op)) { /* out sits above the bounds: read them where they are */
        tide_scalar lo =
            nargs >= 2 && !lua_isnil(L, 2) ? tl_scalar(L, 2) : tide_scalar_f(-INFINITY);
        tide_scalar hi = nargs >= 3 && !lua_isnil(L, 3) ? tl_scalar(L, 3) : tide_scalar_f(INFINITY);
        TL_CALL(L, S, tide_clamp(S->ctx, a->t, lo, hi, &dst));
    } else {
        TL_CALL(L, S, tide_unary(S->ctx, op, a->t, NULL, &dst));
    }
    return into_done(L, out_idx);
}

/* _internal.max_values(x, dim, keepdim) and min_values: the values of max / min over one dim
 * (1-based), without x:max(dim)'s indices, which cost eight times the values (amax, amin,
 * logsumexp and norm(inf) reduce with these). No autograd: their callers record their own. */
static int values_only(lua_State *L, tide_op op, const char *name) {
    tide_lua_state *S = TL_STATE(L);
    ltensor        *a = tl_check(L, 1, name);
    int             dim = tl_dim(L, a->t, tl_check_int(L, 2, name, "dim"), name, 0);
    int             keepdim = lua_toboolean(L, 3);
    ltensor        *r = tl_push_empty(L);
    TL_CALL(L, S, tide_reduce(S->ctx, op, a->t, dim, keepdim, &r->t, NULL));
    tl_gc_hint(L, S, tide_tensor_nbytes(r->t));
    return 1;
}

static int max_values(lua_State *L) {
    return values_only(L, TIDE_OP_MAX, "amax");
}

static int min_values(lua_State *L) {
    return values_only(L, TIDE_OP_MIN, "amin");
}

#define GEN_INTO(e, how)                                                                           \
    static int into_##e(lua_State *L, int nargs, int out_idx) {                                    \
        return how(L, TIDE_OP_##e, nargs, out_idx);                                                \
    }
#define GEN_BINARY(e, name)                                                                        \
    GEN_INTO(e, into_binary)                                                                       \
    static int o_##e(lua_State *L) {                                                               \
        return tl_binary(L, TIDE_OP_##e);                                                          \
    }                                                                                              \
    static int o_##e##_(lua_State *L) {                                                            \
        return binary_inplace(L, TIDE_OP_##e, name "_");                                           \
    }
#define GEN_COMPARE(e, name)                                                                       \
    GEN_INTO(e, into_binary)                                                                       \
    static int o_##e(lua_State *L) {                                                               \
        return tl_binary(L, TIDE_OP_##e);                                                          \
    }
#define GEN_UNARY(e, name)                                                                         \
    GEN_INTO(e, into_unary)                                                                        \
    static int o_##e(lua_State *L) {                                                               \
        return unary(L, TIDE_OP_##e);                                                              \
    }                                                                                              \
    static int o_##e##_(lua_State *L) {                                                            \
        return unary_inplace(L, TIDE_OP_##e, name "_");                                            \
    }
#define GEN_PREDICATE(e, name)                                                                     \
    GEN_INTO(e, into_unary)                                                                        \
    static int o_##e(lua_State *L) {                                                               \
        return unary(L, TIDE_OP_##e);                                                              \
    }
#define GEN_BOUNDED GEN_UNARY
#define GEN_REDUCE(e, name)                                                                        \
    static int o_##e(lua_State *L) {                                                               \
        return reduce(L, TIDE_OP_##e);                                                             \
    }
#define X(e, family, name, ...) GEN_##family(e, name)
#include "tide_ops.def"
#undef X

#define REG_BINARY(e, name)  {name, o_##e}, {name "_", o_##e##_},
#define REG_COMPARE(e, name) {name, o_##e},
#define REG_UNARY(e, name)   {name, o_##e}, {name "_", o_##e##_},
#define REG_REDUCE(e, name)  {name, o_##e},
#define REG_PREDICATE        REG_COMPARE
#define REG_BOUNDED          REG_UNARY

#define INTO_BINARY(e, name)    {name, into_##e},
#define INTO_COMPARE(e, name)   {name, into_##e},
#define INTO_UNARY(e, name)     {name, into_##e},
#define INTO_PREDICATE(e, name) {name, into_##e},
#define INTO_BOUNDED(e, name)   {name, into_##e},
#define INTO_REDUCE(e, name)

#define FN_BINARY(e, name)  {name, o_##e},
#define FN_COMPARE(e, name) {name, o_##e},
#define FN_UNARY(e, name)   {name, o_##e},
#define FN_REDUCE(e, name)  {name, o_##e},
#define FN_PREDICATE        FN_UNARY
#define FN_BOUNDED          FN_UNARY

void tl_open_op_families(lua_State *L, int mod, int methods) {
    static const luaL_Reg meths[] = {
#define X(e, family, name, ...) REG_##family(e, name)
#include "tide_ops.def"
#undef X
        {NULL, NULL}};
    tl_register(L, methods, meths);
    static const luaL_Reg funcs[] = {
#define X(e, family, name, ...) FN_##family(e, name)
#include "tide_ops.def"
#undef X
        {NULL, NULL}};
    tl_register(L, mod, funcs);
    /* core._out_into: each function above that takes out= straight -> its tl_out_into_fn, as a
     * light userdata for its trampoline (tide.tensor_keywords' install, keywords.c) */
    static const struct {
        const char    *name;
        tl_out_into_fn into;
    } into[] = {
#define X(e, family, name, ...) INTO_##family(e, name)
#include "tide_ops.def"
#undef X
    };
    static const luaL_Reg internal[] = {
        {"max_values", max_values}, {"min_values", min_values}, {NULL, NULL}};
    tl_register_internal(L, mod, internal);
    int mod_idx = lua_absindex(L, mod);
    lua_createtable(L, 0, (int)(sizeof into / sizeof into[0]));
    for (size_t i = 0; i < sizeof into / sizeof into[0]; i++) {
        lua_getfield(L, mod_idx, into[i].name);
        lua_pushlightuserdata(L, (void *)(uintptr_t)into[i].into);
        lua_rawset(L, -3);
    }
    lua_setfield(L, mod_idx, "_out_into");
}
