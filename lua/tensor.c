/*
 * tensor.c — the tide.Tensor type: its metatable (lifetime, properties, t[i], the arithmetic
 * metamethods, whose tl_binary the BINARY rows of op_families.c share), the methods every tensor
 * has (dim, size, requires_grad_, set_, detach), and the collector's hooks for autograd's engine.
 * The userdata itself is userdata.c's; the autograd record, record.c's.
 */
#include "tensor.h"
#include <math.h>
#include <string.h>

/* ---- lifetime ---------------------------------------------------------------------------- */

/* one idempotent release for __gc (t_gc), __close and :free() */
static int t_free(lua_State *L) {
    /* the tag test first: luaL_checkudata's registry lookup by name cost a third of this
     * finalizer, run once per dropped tensor; it stays for its error message */
    ltensor *u = tl_test(L, 1);
    if (!u)
        u = luaL_checkudata(L, 1, TL_TENSOR);
    tide_tensor_release(u->t);
    u->t = NULL;
    return 0;
}

/* the finalizer: the view links go first (view_links.c) */
static int t_gc(lua_State *L) {
    ltensor *u = tl_test(L, 1);
    if (u && u->link)
        tl_unlink_views(u);
    return t_free(L);
}

/* t:free(): the method, which takes no argument (__close passes an error value to t_free) */
static int t_free_method(lua_State *L) {
    tl_max_args(L, 1, "free");
    return t_free(L);
}

/* ---- the collector's hooks (gc.c) --------------------------------------------------------- */

/* core._gc_pass_begin(): autograd's engine at the start of a backward pass (gc.c) */
static int l_gc_pass_begin(lua_State *L) {
    tl_gc_pass_begin(L, TL_STATE(L));
    return 0;
}

/* core._gc_dropped(...): autograd's engine let go of these (non-tensors skipped); true when a
 * minor collection is due (gc.c) */
static int l_gc_dropped(lua_State *L) {
    size_t bytes = 0;
    for (int i = 1, n = lua_gettop(L); i <= n; i++) {
        ltensor *u = tl_test(L, i);
        if (u && u->t)
            bytes += tide_tensor_nbytes(u->t);
    }
    lua_pushboolean(L, tl_gc_dropped(TL_STATE(L), bytes));
    return 1;
}

/* core._gc_young(): the minor collection _gc_dropped asked for (gc.c) */
static int l_gc_young(lua_State *L) {
    tl_gc_young(L, TL_STATE(L));
    return 0;
}

/* core._gc_pass_end(): autograd's engine at the end of a backward pass (gc.c) */
static int l_gc_pass_end(lua_State *L) {
    tl_gc_pass_end(L, TL_STATE(L));
    return 0;
}

/* ---- arithmetic --------------------------------------------------------------------------- */

/* alpha at 3 as a number in its place: PyTorch's keyword form {alpha = 2} (1 when the table
 * has none) and a 0-d tensor (PyTorch's Number arguments take one) give their value; anything
 * else stays for the caller's check */
static void alpha_value(lua_State *L, tide_lua_state *S, const char *name) {
    static const char *const known[] = {"alpha", NULL};
    if (lua_type(L, 3) == LUA_TTABLE) {
        tl_check_options(L, 3, name, known, NULL);
        lua_getfield(L, 3, "alpha");
        if (lua_isnil(L, -1)) {
            lua_pop(L, 1);
            lua_pushinteger(L, 1);
        }
        lua_replace(L, 3);
    }
    ltensor *t = tl_test(L, 3);
    if (t && t->t && tide_tensor_ndim(t->t) == 0) {
        tide_scalar v;
        TL_CALL_AS(L, S, tide_tensor_item_x(S->ctx, t->t, &v), "item", name);
        if (v.is_int)
            tl_push_int64(L, v.i, name);
        else
            lua_pushnumber(L, v.d);
        lua_replace(L, 3);
    }
}

/* t:add(u, alpha) / t:sub(u, alpha): t +- alpha * u, recorded with alpha as args[3]; with
 * inplace, t:add_(u, alpha) / t:sub_(u, alpha) write the result into t. alpha may also be
 * given as {alpha = a} or a 0-d tensor (alpha_value) */
int tl_binary_alpha(lua_State *L, tide_op op, int inplace) {
    tide_lua_state *S = TL_STATE(L);
    const char     *oname = tide_op_name(op);
    const char     *name = inplace ? (op == TIDE_OP_ADD ? "add_" : "sub_") : oname;
    if (lua_gettop(L) == 3 && lua_type(L, 2) == LUA_TNUMBER && tl_test(L, 3)) {
        /* PyTorch 1.13's deprecated overload add_(Number alpha, Tensor other), which old
         * optimizers write (p.data.add_(-lr, p.grad)), and Torch7's x:add(value, y): the same
         * x + alpha * other, with PyTorch's warning once */
        const char *key = lua_pushfstring(L, "legacy_alpha.%s", name);
        const char *msg = lua_pushfstring(
            L,
            "This overload of %s is deprecated: %s(Number alpha, Tensor other). Consider using "
            "one of the following signatures instead: %s(Tensor other, *, Number alpha) (tide: "
            "t:%s(other, alpha))",
            name, name, name, name);
        tl_warn_once(L, key, msg);
        lua_pop(L, 2);
        lua_insert(L, 2); /* (t, alpha, other) -> (t, other, alpha) */
    }
    ltensor *a = tl_check(L, 1, name), *b = tl_test(L, 2);
    alpha_value(L, S, name);
    if (lua_type(L, 3) != LUA_TNUMBER)
        return tl_error(L,
                        "tide: %s: alpha (argument #3) must be a number, got %s; the scale comes "
                        "after the other operand: t:%s(u, alpha) is t %c alpha * u",
                        name, tl_typename(L, 3), name, op == TIDE_OP_ADD ? '+' : '-');
    if (b && !b->t)
        return tl_error(L, "tide: %s: attempt to use a freed tensor", name);
    if (!b && lua_type(L, 2) != LUA_TNUMBER)
        return tl_error(L, "tide: %s: expected a tensor or a number, got %s", name,
                        tl_typename(L, 2));
    tl_max_args(L, 3, name);
    int           rec = inplace ? tl_check_inplace(L, S, a, name) : 0;
    tide_scalar   alpha = tl_scalar(L, 3);
    ltensor      *r = inplace ? NULL : tl_push_like(L, 1);
    tide_tensor  *dst = a->t;
    tide_tensor **out = inplace ? &dst : &r->t; /* the result's userdata owns it at once */
    if (b) {
        ltensor *tmp = tl_push_like(L, 1);
        TL_CALL(L, S, tide_binary_scalar_x(S->ctx, TIDE_OP_MUL, b->t, alpha, 0, &tmp->t));
        TL_CALL_AS(L, S, tide_binary(S->ctx, op, a->t, tmp->t, out), oname, name);
        lua_pop(L, 1);
    } else {
        /* alpha * s: exact for two integers whose product fits in 64 bits */
        tide_scalar s = tl_scalar(L, 2);
        int64_t     p;
        s = s.is_int && alpha.is_int && !__builtin_mul_overflow(s.i, alpha.i, &p)
                ? tide_scalar_i(p)
                : tide_scalar_f(alpha.d * s.d);
        TL_CALL_AS(L, S, tide_binary_scalar_x(S->ctx, op, a->t, s, 0, out), oname, name);
    }
    if (inplace) {
        tl_inplace_done(L, S, name, rec);
        lua_settop(L, 1);
        return 1;
    }
    tl_gc_hint(L, S, tide_tensor_nbytes(r->t));
    if (S->grad_enabled && (a->requires_grad || (b && b->requires_grad)))
        tl_record(L, S, name, 3, 4, 0);
    return 1;
}

/* a binary op other than add/sub given a third argument: refused, not ignored */
int tl_no_extra_operand(lua_State *L, const char *name) {
    return tl_error(L,
                    "tide: %s: takes one other operand, got an extra argument #3 (%s); only add "
                    "and sub take a scale (alpha)",
                    name, tl_typename(L, 3));
}

/* a dense tensor op a tensor of a Lua class (lua/tide/complex/tensor.lua, a complex one; or
 * lua/tide/sparse/coo.lua, a sparse one, for add and sub (a dense sum, PyTorch's dense +
 * sparse) and mul (a sparse product)): the class's metamethod computes it, as Lua would have called
 * it had that operand come first (is_class_operand tells which) */
static int class_operand(lua_State *L, tide_op op, int other) {
    static const struct {
        tide_op     op;
        const char *event;
    } events[] = {{TIDE_OP_ADD, "__add"},
                  {TIDE_OP_SUB, "__sub"},
                  {TIDE_OP_MUL, "__mul"},
                  {TIDE_OP_DIV, "__div"},
                  {TIDE_OP_POW, "__pow"}};
    for (size_t i = 0; i < sizeof events / sizeof events[0]; i++) {
        if (events[i].op == op && luaL_getmetafield(L, other, events[i].event) != LUA_TNIL) {
            lua_insert(L, 1);
            lua_call(L, 2, 1);
            return 1;
        }
    }
    return tl_error(L, "tide: %s: complex tensors do not support it; use z.real and z.imag",
                    tide_op_name(op));
}

/* whether class_operand computes op with the operand at idx */
static int is_class_operand(lua_State *L, tide_op op, int idx) {
    return tl_is_class_table(L, idx, TL_COMPLEX_CLASS) ||
           ((op == TIDE_OP_ADD || op == TIDE_OP_SUB || op == TIDE_OP_MUL) &&
            tl_is_class_table(L, idx, TL_SPARSE_CLASS));
}

/* a op b for tensors and numbers in either order; `+` and t:add(u) are this one function. */
int tl_binary(lua_State *L, tide_op op) {
    tide_lua_state *S = TL_STATE(L);
    if (S->autocast_ref != LUA_NOREF && (tide_op_flags(op) & TIDE_OPF_AUTOCAST_FP32)) /* pow */
        tl_autocast(L, S, TL_AUTOCAST_FP32, 1, 2);
    ltensor *a = tl_test(L, 1), *b = tl_test(L, 2), *r;
    int      rg, nargs = 2;
    if (lua_gettop(L) >= 3 && !lua_isnil(L, 3)) {
        if (op == TIDE_OP_ADD || op == TIDE_OP_SUB)
            return tl_binary_alpha(L, op, 0);
        return tl_no_extra_operand(L, tide_op_name(op));
    }
    tl_max_args(L, 2, tide_op_name(op));
    if (tide_op_flags(op) & TIDE_OPF_NOT_DIFFERENTIABLE) /* no formula: refused, not detached */
        tl_not_differentiable(L, S, tide_op_name(op), 2);
    if (a && b) {
        if (!a->t || !b->t)
            return tl_error(L, "tide: %s: attempt to use a freed tensor", tide_op_name(op));
        r = tl_push_like(L, 1);
        TL_CALL(L, S, tide_binary(S->ctx, op, a->t, b->t, &r->t));
        rg = a->requires_grad || b->requires_grad;
    } else if (a || b) {
        ltensor *u = a ? a : b;
        int      other = a ? 2 : 1;
        if (lua_type(L, other) != LUA_TNUMBER) {
            if (is_class_operand(L, op, other)) /* off the number path */
                return class_operand(L, op, other);
            return tl_error(L,
                            "tide: %s: expected a tensor or a number, got %s; convert it with "
                            "tonumber() or tide.tensor()",
                            tide_op_name(op), tl_typename(L, other));
        }
        if (!u->t)
            return tl_error(L, "tide: %s: attempt to use a freed tensor", tide_op_name(op));
        r = tl_push_like(L, a ? 1 : 2);
        TL_CALL(L, S,
                tide_binary_scalar_x(S->ctx, op, u->t, tl_scalar(L, other), a == NULL, &r->t));
        rg = u->requires_grad;
    } else if (tl_is_class_table(L, 1, TL_COMPLEX_CLASS) ||
               tl_is_class_table(L, 2, TL_COMPLEX_CLASS)) {
        return class_operand(L, op, tl_is_class_table(L, 1, TL_COMPLEX_CLASS) ? 1 : 2);
    } else {
        return tl_error(L, "tide: %s: expected a tensor, got %s and %s", tide_op_name(op),
                        luaL_typename(L, 1), luaL_typename(L, 2));
    }
    tl_gc_hint(L, S, tide_tensor_nbytes(r->t));
    if (rg && S->grad_enabled && !(tide_op_flags(op) & TIDE_OPF_NO_GRAD))
        tl_record(L, S, tide_op_name(op), nargs, 3, 0);
    return 1;
}

static int m_add(lua_State *L) {
    return tl_binary(L, TIDE_OP_ADD);
}
static int m_sub(lua_State *L) {
    return tl_binary(L, TIDE_OP_SUB);
}
static int m_mul(lua_State *L) {
    return tl_binary(L, TIDE_OP_MUL);
}
static int m_div(lua_State *L) {
    return tl_binary(L, TIDE_OP_DIV);
}
static int m_mod(lua_State *L) {
    return tl_binary(L, TIDE_OP_REMAINDER);
}
static int m_pow(lua_State *L) {
    return tl_binary(L, TIDE_OP_POW);
}
static int m_idiv(lua_State *L) {
    return tl_binary(L, TIDE_OP_FLOORDIV);
}

#if LUA_VERSION_NUM >= 503
/* Lua 5.3's integer operators & | ~ << >> and unary ~: PyTorch's, on integer and bool tensors */
static int m_band(lua_State *L) {
    return tl_binary(L, TIDE_OP_BITWISE_AND);
}
static int m_bor(lua_State *L) {
    return tl_binary(L, TIDE_OP_BITWISE_OR);
}
static int m_bxor(lua_State *L) {
    return tl_binary(L, TIDE_OP_BITWISE_XOR);
}
static int m_shl(lua_State *L) {
    return tl_binary(L, TIDE_OP_BITWISE_LEFT_SHIFT);
}
static int m_shr(lua_State *L) {
    return tl_binary(L, TIDE_OP_BITWISE_RIGHT_SHIFT);
}
static int m_bnot(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    ltensor        *a = tl_check(L, 1, "bitwise_not");
    lua_settop(L, 1); /* Lua passes the operand twice */
    ltensor *r = tl_push_like(L, 1);
    TL_CALL(L, S, tide_unary(S->ctx, TIDE_OP_BITWISE_NOT, a->t, NULL, &r->t));
    tl_gc_hint(L, S, tide_tensor_nbytes(r->t)); /* no record: integer tensors need no grad */
    return 1;
}
#endif

static int m_unm(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    ltensor        *a = tl_check(L, 1, "neg");
    lua_settop(L, 1); /* Lua passes the operand twice */
    ltensor *r = tl_push_like(L, 1);
    TL_CALL(L, S, tide_unary(S->ctx, TIDE_OP_NEG, a->t, NULL, &r->t));
    tl_gc_hint(L, S, tide_tensor_nbytes(r->t));
    if (a->requires_grad && S->grad_enabled)
        tl_record(L, S, "neg", 1, 2, 0);
    return 1;
}

/* ---- select and t[i] ---------------------------------------------------------------------- */

/* the view t:select(dim, i) of the tensor at idx 1; i is 1-based, negative from the end */
int tl_select(lua_State *L, tide_lua_state *S, lua_Integer d, lua_Integer i, const char *op) {
    ltensor *a = tl_check(L, 1, op);
    int      dim = tl_dim(L, a->t, d, op, 0);
    int64_t  size = tide_tensor_shape(a->t)[dim];
    int64_t  i0 = i >= 1 ? i - 1 : size + i;
    if (i == 0 || i0 < 0 || i0 >= size) {
        /* t[n + 1]: where ipairs(t) ends (5.3 and 5.4 index a userdata through __index) */
        const char *hint = strcmp(op, "index") == 0 && i == size + 1 && d == 1
                               ? "; to loop over the rows: for i, row in ipairs(t:unbind())"
                               : "";
        return tl_error(L,
                        "tide: %s: index %I is out of range for dim %d of size %I; use "
                        "1..%I (or -%I..-1)%s",
                        op, (lua_Integer)i, dim + 1, (lua_Integer)size, (lua_Integer)size,
                        (lua_Integer)size, hint);
    }
    ltensor *r = tl_push_empty(L);
    TL_CALL(L, S, tide_tensor_select(a->t, dim, i0, &r->t));
    return 1;
}

/* ---- properties --------------------------------------------------------------------------- */

/* PyTorch's attributes too: is_cuda / is_cpu (where the tensor lives), data (t:detach()), T (the
 * dims reversed) and mT (the last two swapped), views recorded as permute and transpose */
enum {
    P_DEVICE = 1,
    P_DTYPE,
    P_SHAPE,
    P_REQUIRES_GRAD,
    P_GRAD,
    P_GRAD_FN,
    P_IS_LEAF,
    P_NDIM,
    P_IS_CUDA,
    P_IS_CPU,
    P_DATA,
    P_T,
    P_MT,
    P_H,
    P_MH,
    P_NBYTES,
    P_ITEMSIZE,
    P_RETAINS_GRAD,
    P_IS_META,
    P_IS_SPARSE,
    P_IS_QUANTIZED,
    P_LAYOUT,
    P_REAL,
    P_IMAG
};
static const char *const prop_names[] = {
    NULL,        "device",       "dtype",    "shape",        "requires_grad",
    "grad",      "grad_fn",      "is_leaf",  "ndim",         "is_cuda",
    "is_cpu",    "data",         "T",        "mT",           "H",
    "mH",        "nbytes",       "itemsize", "retains_grad", "is_meta",
    "is_sparse", "is_quantized", "layout",   "real",         "imag"};

static int t_detach(lua_State *L);

/* t:<method>(args...) for a view property: the method of core.Tensor (the __index closure's
 * upvalue 3), so autograd records it as the call */
static int call_view_method(lua_State *L, const char *method, int nargs_after) {
    lua_getfield(L, lua_upvalueindex(3), method);
    lua_insert(L, -(nargs_after + 1));
    lua_pushvalue(L, 1);
    lua_insert(L, -(nargs_after + 1));
    lua_call(L, nargs_after + 1, 1);
    return 1;
}

/* pushes field k of the autograd table (nil when none) */
static void ag_field(lua_State *L, int idx, const char *k) {
    if (lua_getiuservalue(L, idx, 1) == LUA_TTABLE) {
        lua_getfield(L, -1, k);
        lua_remove(L, -2);
    }
}

/* ---- t.shape and t:size(): a fresh list of the sizes with PyTorch's torch.Size behaviour,
 * one metatable (an upvalue of __index and of size: no lookup per call) that only adds what a
 * plain list lacks ---- */
#define INDEX_SIZE_MT lua_upvalueindex(4) /* the tensor's __index */
#define SIZE_SIZE_MT  lua_upvalueindex(2) /* t:size() */

/* shape[-k] is the k-th size from the end (nil past the first, as a positive index past the
 * last); every other missing key is nil as in a plain table */
static int size_index(lua_State *L) {
    int         isint = 0; /* an integral float (-1.0) too, as on every Lua host */
    lua_Integer k = lua_type(L, 2) == LUA_TNUMBER ? lua_tointegerx(L, 2, &isint) : 0;
    if (isint) {
        lua_Integer n = (lua_Integer)lua_rawlen(L, 1);
        if (k < 0 && k >= -n) {
            lua_rawgeti(L, 1, n + 1 + k);
            return 1;
        }
    }
    lua_pushnil(L);
    return 1;
}

/* tide.Size({2, 3}): PyTorch's print of a torch.Size, in tide's spelling */
static int size_tostring(lua_State *L) {
    lua_Integer n = (lua_Integer)lua_rawlen(L, 1);
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    luaL_addstring(&b, "tide.Size({");
    for (lua_Integer i = 1; i <= n; i++) {
        if (i > 1)
            luaL_addstring(&b, ", ");
        lua_rawgeti(L, 1, i);
        luaL_tolstring(L, -1, NULL); /* (the user may have put anything in their copy) */
        lua_remove(L, -2);
        luaL_addvalue(&b);
    }
    luaL_addstring(&b, "})");
    luaL_pushresult(&b);
    return 1;
}

/* pushes the metatable of the lists t.shape and t:size() return */
static void push_size_metatable(lua_State *L) {
    lua_createtable(L, 0, 2);
    lua_pushcfunction(L, size_index);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, size_tostring);
    lua_setfield(L, -2, "__tostring");
}

static int push_shape(lua_State *L, const tide_tensor *t, int size_mt) {
    int            n = tide_tensor_ndim(t);
    const int64_t *sizes = tide_tensor_shape(t);
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) {
        lua_pushinteger(L, (lua_Integer)sizes[i]);
        lua_rawseti(L, -2, i + 1);
    }
    lua_pushvalue(L, size_mt);
    lua_setmetatable(L, -2);
    return 1;
}

static int property(lua_State *L, int p) {
    ltensor *u = lua_touserdata(L, 1);
    switch (p) {
    case P_REQUIRES_GRAD:
        lua_pushboolean(L, u->requires_grad);
        return 1;
    case P_GRAD:
        ag_field(L, 1, "grad");
        return 1;
    case P_GRAD_FN:
        if (u->follows)
            tl_follow_root(L, 1, u);
        ag_field(L, 1, "grad_fn");
        return 1;
    case P_IS_LEAF:
        if (u->follows)
            tl_follow_root(L, 1, u);
        ag_field(L, 1, "grad_fn");
        lua_pushboolean(L, lua_isnil(L, -1));
        return 1;
    case P_RETAINS_GRAD: /* t:retain_grad() on a non-leaf: its node keeps t as where g goes */
        if (u->follows)
            tl_follow_root(L, 1, u);
        ag_field(L, 1, "grad_fn");
        if (lua_istable(L, -1)) {
            lua_getfield(L, -1, "retain");
            lua_getfield(L, -2, "out");
            lua_pushboolean(L, lua_toboolean(L, -2) && lua_rawequal(L, -1, 1));
            return 1;
        }
        lua_pushboolean(L, 0);
        return 1;
    default:
        break;
    }
    tl_check(L, 1, prop_names[p]);
    switch (p) {
    case P_DEVICE:
        tl_push_device(L, tide_tensor_device(u->t));
        return 1;
    case P_DTYPE:
        lua_pushstring(L, tide_dtype_name(tide_tensor_dtype(u->t)));
        return 1;
    case P_SHAPE:
        return push_shape(L, u->t, INDEX_SIZE_MT);
    case P_NDIM:
        lua_pushinteger(L, tide_tensor_ndim(u->t));
        return 1;
    case P_IS_CUDA:
    case P_IS_CPU:
        lua_pushboolean(L, tide_device_type_of(tide_tensor_device(u->t)) ==
                               (p == P_IS_CUDA ? TIDE_DEVICE_CUDA : TIDE_DEVICE_CPU));
        return 1;
    case P_DATA:
        lua_settop(L, 1);
        return t_detach(L);
    case P_T: { /* PyTorch 1.13's: every dim reversed (a 0-d or 1-d tensor: the same view) */
        int n = tide_tensor_ndim(u->t);
        lua_settop(L, 1);
        for (int d = n; d >= 1; d--)
            lua_pushinteger(L, d);
        if (n == 0) {
            lua_pushvalue(L, 1);
            return 1;
        }
        return call_view_method(L, "permute", n);
    }
    case P_H: { /* the conjugate transpose of a matrix: real dtypes have nothing to conjugate */
        int n = tide_tensor_ndim(u->t);
        if (n != 2)
            return tl_error(L,
                            "tide: H: tensor has %d dim%s, expected 2 (H transposes a matrix, as "
                            "PyTorch's); use mH for a batch of matrices",
                            n, n == 1 ? "" : "s");
        lua_settop(L, 1);
        lua_pushinteger(L, 1);
        lua_pushinteger(L, 2);
        return call_view_method(L, "transpose", 2);
    }
    case P_NBYTES:
        lua_pushinteger(L, (lua_Integer)tide_tensor_nbytes(u->t));
        return 1;
    case P_ITEMSIZE:
        lua_pushinteger(L, (lua_Integer)tide_dtype_size(tide_tensor_dtype(u->t)));
        return 1;
    case P_IS_META: /* tide has dense strided tensors only: PyTorch's other kinds are false */
    case P_IS_SPARSE:
    case P_IS_QUANTIZED:
        lua_pushboolean(L, 0);
        return 1;
    case P_LAYOUT: /* PyTorch's torch.strided, as a name (tide's dtypes are names too) */
        lua_pushliteral(L, "strided");
        return 1;
    case P_REAL: /* a real tensor's real part is itself, as PyTorch's x.real */
        lua_settop(L, 1);
        return 1;
    case P_IMAG:
        return tl_error(L, "tide: imag: imag is not implemented for tensors with non-complex "
                           "dtypes (as PyTorch's); a real tensor's imaginary part is "
                           "tide.zeros_like(t)");
    case P_MT:
    case P_MH: {
        int n = tide_tensor_ndim(u->t);
        if (n < 2)
            return tl_error(L,
                            "tide: %s: tensor has %d dim%s, expected at least 2 (%s swaps the "
                            "last two); use T for a 1-d tensor",
                            prop_names[p], n, n == 1 ? "" : "s", prop_names[p]);
        lua_settop(L, 1);
        lua_pushinteger(L, n - 1);
        lua_pushinteger(L, n);
        return call_view_method(L, "transpose", 2);
    }
    default:
        return 0;
    }
}

/* registry: tide.subscripts' get and set, the handlers of a tensor or a table key */
static const char subscripts_key = 's';

/* t[key] = v (setting) or t[key] for a key that is neither an integer nor a name: a tensor or
 * a table goes to tide.subscripts (Lua, loaded at the first such key: masks, index tensors,
 * Torch7's per-dim tables); any other key raises, where Lua would return nil and the script
 * fail later, far from here */
static int subscript(lua_State *L, int setting) {
    const char *op = setting ? "setindex" : "index";
    int         kt = lua_type(L, 2);
    if (kt == LUA_TTABLE || (kt == LUA_TUSERDATA && tl_test(L, 2))) {
        if (lua_rawgetp(L, LUA_REGISTRYINDEX, &subscripts_key) != LUA_TTABLE) {
            lua_pop(L, 1); /* loaded on first use: require registers the handlers */
            lua_getglobal(L, "require");
            lua_pushliteral(L, "tide.subscripts");
            lua_call(L, 1, 0);
            if (lua_rawgetp(L, LUA_REGISTRYINDEX, &subscripts_key) != LUA_TTABLE)
                return tl_error(L, "tide: %s: tide.subscripts did not load", op);
        }
        lua_rawgeti(L, -1, setting ? 2 : 1);
        lua_pushvalue(L, 1);
        lua_pushvalue(L, 2);
        lua_pushvalue(L, 3);
        lua_call(L, 3, 1);
        return setting ? 0 : 1;
    }
    return tl_error(L,
                    "tide: %s: a tensor is indexed by an integer, a bool mask, an index tensor "
                    "or a table of per-dim indices, got %s",
                    op, kt == LUA_TNUMBER ? lua_tostring(L, 2) : luaL_typename(L, 2));
}

/* core._internal.set_subscripts(get, set): tide.subscripts' handlers */
static int set_subscripts(lua_State *L) {
    luaL_checktype(L, 1, LUA_TFUNCTION);
    luaL_checktype(L, 2, LUA_TFUNCTION);
    lua_createtable(L, 2, 0);
    lua_pushvalue(L, 1);
    lua_rawseti(L, -2, 1);
    lua_pushvalue(L, 2);
    lua_rawseti(L, -2, 2);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &subscripts_key);
    return 0;
}

/* a field a script set on the tensor at 1 (PyTorch's setattr: p._optim = {...}, kept in its
 * autograd table's __attrs) for the name at 2: pushed and 1, or 0 with the stack as it was */
static int user_field(lua_State *L) {
    int top = lua_gettop(L);
    if (lua_getiuservalue(L, 1, 1) == LUA_TTABLE && lua_getfield(L, -1, "__attrs") == LUA_TTABLE) {
        lua_pushvalue(L, 2);
        if (lua_rawget(L, -2) != LUA_TNIL)
            return 1;
    }
    lua_settop(L, top);
    return 0;
}

/* __index: properties first, then core.Tensor, then t[i], then tide.subscripts */
static int t_index(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    if (lua_type(L, 2) == LUA_TSTRING) {
        lua_pushvalue(L, 2);
        if (lua_rawget(L, lua_upvalueindex(2)) == LUA_TNUMBER)
            return property(L, (int)lua_tointeger(L, -1));
        lua_pop(L, 1);
        lua_pushvalue(L, 2);
        if (lua_rawget(L, lua_upvalueindex(3)) == LUA_TNIL) {
            if (user_field(L)) /* p._no_weight_decay = true, set by the script */
                return 1;
            /* x:max(2).indices, linalg.lstsq(A, B).solution: the fields of PyTorch's named
             * tuples, read off a tensor; a nil there fails far from the cause */
            static const char *const NAMED[] = {"values",      "indices",
                                                "solution",    "residuals",
                                                "rank",        "singular_values",
                                                "eigenvalues", "eigenvectors",
                                                "logabsdet",   "mantissa",
                                                "exponent",    "LU",
                                                "pivots",      "info",
                                                "Q",           "R",
                                                "L",           "U",
                                                "S",           "Vh",
                                                "P",           "counts",
                                                NULL};
            const char              *k = lua_tostring(L, 2);
            for (int n = 0; NAMED[n]; n++)
                if (strcmp(k, NAMED[n]) == 0)
                    return tl_error(L,
                                    "tide: a tensor has no field '%s': an op of several results "
                                    "returns them as Lua results, not PyTorch's named tuple "
                                    "(local values, indices = x:max(2)), and an op of one "
                                    "result returns the tensor itself (linalg.lstsq(A, B) is "
                                    "the solution)",
                                    k);
        }
        return 1;
    }
    int         isint;
    lua_Integer i = lua_tointegerx(L, 2, &isint);
    if (isint && lua_type(L, 2) == LUA_TNUMBER) {
        lua_settop(L, 1);
        if (tide_tensor_ndim(((ltensor *)lua_touserdata(L, 1))->t) == 0) /* PyTorch's x[0] too */
            return tl_error(L,
                            "tide: index: a 0-d tensor has no dim to index with %I; its value "
                            "is t:item()",
                            i);
        tl_select(L, S, 1, i, "index");
        ltensor *a = lua_touserdata(L, 1);
        if (a->requires_grad && S->grad_enabled) { /* recorded as t:select(1, i) */
            lua_pushinteger(L, 1);
            lua_pushinteger(L, i);
            lua_rotate(L, 2, -1); /* t, 1, i, out */
            tl_record(L, S, "select", 3, 4, 0);
            lua_settop(L, 4);
        } else {
            tl_done_view(L, S, a, "select", 2); /* links the view to its root */
        }
        return 1;
    }
    lua_settop(L, 2);
    return subscript(L, 0);
}

/* t.k = v for a name that is none of the assignable ones: PyTorch's setattr on a tensor (a
 * script's own mark, p._no_weight_decay = true), kept in the autograd table's __attrs and read
 * by __index. A method's or a property's name raises (a field would hide it), and so does a name
 * two edits from grad, requires_grad or data (t.require_grad = false: a typo, not a mark). */
static int set_user_field(lua_State *L, const char *k) {
    static const char *const ASSIGNABLE[] = {"grad", "requires_grad", "data", NULL};
    const char              *near = tl_closest(k, ASSIGNABLE);
    if (near)
        return tl_error(L, "tide: cannot set field '%s' of a tensor (did you mean '%s'?)", k, near);
    for (int up = 2; up <= 3; up++) { /* __newindex's upvalues: the properties, the methods */
        if (lua_type(L, lua_upvalueindex(up)) != LUA_TTABLE)
            continue;
        lua_pushvalue(L, 2);
        int taken = lua_rawget(L, lua_upvalueindex(up)) != LUA_TNIL;
        lua_pop(L, 1);
        if (taken)
            return tl_error(L,
                            "tide: cannot set field '%s' of a tensor: it is the tensor's %s; keep "
                            "your value elsewhere (a table keyed by the tensor)",
                            k, up == 2 ? "property" : "method");
    }
    if (lua_getiuservalue(L, 1, 1) != LUA_TTABLE) {
        lua_pop(L, 1);
        lua_newtable(L);
        lua_pushvalue(L, -1);
        lua_setiuservalue(L, 1, 1);
    }
    if (lua_getfield(L, -1, "__attrs") != LUA_TTABLE) {
        lua_pop(L, 1);
        lua_newtable(L);
        lua_pushvalue(L, -1);
        lua_setfield(L, -3, "__attrs");
    }
    lua_pushvalue(L, 2);
    lua_pushvalue(L, 3);
    lua_rawset(L, -3);
    return 0;
}

/* a tensor's shape as "{2, 3}" (tide's shape notation) */
static void shape_text(char *buf, size_t size, const tide_tensor *t) {
    const int64_t *sh = tide_tensor_shape(t);
    size_t         used = (size_t)snprintf(buf, size, "{");
    for (int i = 0; i < tide_tensor_ndim(t) && used < size; i++)
        used +=
            (size_t)snprintf(buf + used, size - used, "%s%lld", i ? ", " : "", (long long)sh[i]);
    if (used < size)
        snprintf(buf + used, size - used, "}");
}

/* t.grad = g: g of t's shape, dtype and device, as PyTorch's assigned grad (a gradient that
 * fits none of them would fail later in an optimizer's step, or broadcast into it) */
static int grad_fits(lua_State *L, const tide_tensor *t, const tide_tensor *g) {
    int            n = tide_tensor_ndim(t);
    const int64_t *ts = tide_tensor_shape(t), *gs = tide_tensor_shape(g);
    int            same = n == tide_tensor_ndim(g);
    for (int i = 0; same && i < n; i++)
        same = ts[i] == gs[i];
    if (!same) {
        char want[160], got[160];
        shape_text(want, sizeof want, t);
        shape_text(got, sizeof got, g);
        return tl_error(L,
                        "tide: t.grad = g: g has shape %s, the tensor %s (as PyTorch's: "
                        "assigned grad has data of a different size)",
                        got, want);
    }
    if (tide_tensor_dtype(g) != tide_tensor_dtype(t))
        return tl_error(L,
                        "tide: t.grad = g: g is %s, the tensor %s (as PyTorch's: assigned grad has "
                        "data of a different type); convert it with :to(\"%s\")",
                        tide_dtype_name(tide_tensor_dtype(g)),
                        tide_dtype_name(tide_tensor_dtype(t)),
                        tide_dtype_name(tide_tensor_dtype(t)));
    if (tide_tensor_device(g) != tide_tensor_device(t))
        return tl_error(L,
                        "tide: t.grad = g: g is on %s, the tensor on %s (as PyTorch's: assigned "
                        "grad has data located on a different device); move it with :to(\"%s\")",
                        tide_device_name(tide_tensor_device(g)),
                        tide_device_name(tide_tensor_device(t)),
                        tide_device_name(tide_tensor_device(t)));
    return 0;
}

/* t.grad = g, t.requires_grad = b, t.data = u, t[i] = number or tensor */
static int t_newindex(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    ltensor        *a = luaL_checkudata(L, 1, TL_TENSOR);
    if (lua_type(L, 2) == LUA_TSTRING) {
        const char *k = lua_tostring(L, 2);
        if (strcmp(k, "grad") == 0) {
            if (!lua_isnil(L, 3) && !tl_test(L, 3))
                return tl_error(L, "tide: t.grad = v: v must be a tensor or nil, got %s",
                                luaL_typename(L, 3));
            if (!lua_isnil(L, 3)) {
                ltensor *g = tl_check(L, 3, "grad"); /* a freed tensor raises as any op's */
                grad_fits(L, tl_check(L, 1, "grad")->t, g->t);
            }
            if (lua_getiuservalue(L, 1, 1) != LUA_TTABLE) {
                if (lua_isnil(L, 3))
                    return 0;
                lua_pop(L, 1);
                lua_newtable(L);
                lua_pushvalue(L, -1);
                lua_setiuservalue(L, 1, 1);
            }
            lua_pushvalue(L, 3);
            lua_setfield(L, -2, "grad");
            return 0;
        }
        if (strcmp(k, "requires_grad") == 0 || strcmp(k, "data") == 0) {
            /* t.data = u is PyTorch's p.data = q: t takes u's values (t:set_(u)), keeping its
             * identity, grad and requires_grad */
            if (k[0] == 'd' && !tl_test(L, 3))
                return tl_error(L, "tide: t.data = v: v must be a tensor, got %s",
                                luaL_typename(L, 3));
            lua_getfield(L, 1, k[0] == 'd' ? "set_" : "requires_grad_");
            lua_pushvalue(L, 1);
            lua_pushvalue(L, 3);
            lua_call(L, 2, 0);
            return 0;
        }
        return set_user_field(L, k);
    }
    int         isint;
    lua_Integer i = lua_tointegerx(L, 2, &isint);
    if (!isint || lua_type(L, 2) != LUA_TNUMBER) {
        tl_check(L, 1, "setindex");
        lua_settop(L, 3);
        return subscript(L, 1);
    }
    tl_check(L, 1, "setindex");
    ltensor *v = tl_test(L, 3);
    if (!v && lua_type(L, 3) != LUA_TNUMBER && !lua_isboolean(L, 3))
        return tl_error(L, "tide: setindex: value must be a number or a tensor, got %s",
                        luaL_typename(L, 3));
    if (v && !v->t)
        return tl_error(L, "tide: setindex: attempt to use a freed tensor");
    lua_settop(L, 3);
    if (v && tide_tensor_ndim(v->t) > 0 && tide_tensor_shape(v->t)[0] == 1) {
        /* PyTorch's setitem drops a value's leading size-1 dims (a[0] = ones(1, 2)): squeezed
         * in Lua (tide.subscripts.strip_leading_ones), recorded, so v's gradient keeps its
         * shape */
        lua_getglobal(L, "require");
        lua_pushliteral(L, "tide.subscripts");
        lua_call(L, 1, 1);
        lua_getfield(L, -1, "strip_leading_ones");
        lua_pushvalue(L, 3);
        lua_call(L, 1, 1);
        lua_replace(L, 3);
        lua_settop(L, 3);
        v = tl_test(L, 3);
    }
    int rec = tl_check_inplace(L, S, a, "t[i] = v");
    tl_select(L, S, 1, i, "setindex");
    ltensor *view = lua_touserdata(L, -1);
    if (v) {
        TL_CALL_AS(L, S, tide_tensor_copy_(S->ctx, view->t, v->t), "copy_", "setindex");
    } else {
        TL_CALL(L, S, tide_fill_x_(S->ctx, view->t, tl_scalar(L, 3)));
    }
    tl_inplace_done(L, S, "t[i] = v", rec);
    return 0;
}

/* a < b and a <= b with a one-element tensor on either side (Python's `if loss < best:`, where
 * the 0-d result becomes a bool): the values compared, exactly when both are integers. A tensor
 * of more elements has no single truth value. */
static tide_scalar compared(lua_State *L, tide_lua_state *S, int idx, const char *op) {
    ltensor *t = tl_test(L, idx);
    if (!t) {
        if (lua_type(L, idx) != LUA_TNUMBER)
            tl_error(L, "tide: %s: cannot compare a tensor with a %s", op, luaL_typename(L, idx));
        return tl_scalar(L, idx);
    }
    if (!t->t)
        tl_error(L, "tide: %s: attempt to use a freed tensor", op);
    int64_t n = tide_tensor_numel(t->t);
    if (n != 1)
        tl_error(L,
                 "tide: %s: a tensor of %I elements has no single truth value; compare "
                 "elementwise with t:lt(u) or t:le(u) (a bool tensor)",
                 op, (lua_Integer)n);
    tide_scalar v;
    TL_CALL_AS(L, S, tide_tensor_item_x(S->ctx, t->t, &v), "item", op);
    return v;
}

static int compare(lua_State *L, int or_equal) {
    tide_lua_state *S = TL_STATE(L);
    const char     *op = or_equal ? "<=" : "<";
    tide_scalar     a = compared(L, S, 1, op), b = compared(L, S, 2, op);
    int             r;
    if (a.is_int && b.is_int)
        r = or_equal ? a.i <= b.i : a.i < b.i;
    else
        r = or_equal ? a.d <= b.d : a.d < b.d;
    lua_pushboolean(L, r);
    return 1;
}

static int m_lt(lua_State *L) {
    return compare(L, 0);
}

static int m_le(lua_State *L) {
    return compare(L, 1);
}

static int t_len(lua_State *L) {
    ltensor *a = tl_check(L, 1, "len");
    if (tide_tensor_ndim(a->t) == 0)
        return tl_error(L, "tide: len: a 0-dim tensor has no length; use t:item()");
    lua_pushinteger(L, (lua_Integer)tide_tensor_shape(a->t)[0]);
    return 1;
}

/* ---- small methods ------------------------------------------------------------------------ */

static int t_dim(lua_State *L) {
    tl_max_args(L, 1, "dim");
    lua_pushinteger(L, tide_tensor_ndim(tl_check(L, 1, "dim")->t));
    return 1;
}

static int t_numel(lua_State *L) {
    tl_max_args(L, 1, "numel");
    lua_pushinteger(L, (lua_Integer)tide_tensor_numel(tl_check(L, 1, "numel")->t));
    return 1;
}

static int t_size(lua_State *L) {
    ltensor *a = tl_check(L, 1, "size");
    tl_max_args(L, 2, "size");
    if (lua_isnoneornil(L, 2))
        return push_shape(L, a->t, SIZE_SIZE_MT);
    int d = tl_dim(L, a->t, tl_check_int(L, 2, "size", "dim"), "size", 0);
    lua_pushinteger(L, (lua_Integer)tide_tensor_shape(a->t)[d]);
    return 1;
}

/* stride([dim]): the strides in elements (a list, or one dim's), as PyTorch's */
static int t_stride(lua_State *L) {
    ltensor *a = tl_check(L, 1, "stride");
    tl_max_args(L, 2, "stride");
    int n = tide_tensor_ndim(a->t);
    if (!lua_isnoneornil(L, 2)) {
        int d = tl_dim(L, a->t, tl_check_int(L, 2, "stride", "dim"), "stride", 0);
        lua_pushinteger(L, (lua_Integer)tide_tensor_strides(a->t)[d]);
        return 1;
    }
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) {
        lua_pushinteger(L, (lua_Integer)tide_tensor_strides(a->t)[i]);
        lua_rawseti(L, -2, i + 1);
    }
    return 1;
}

/* storage_offset(): the first element's offset into the storage, in elements (0-based, a count
 * rather than an index, as PyTorch's) */
static int t_storage_offset(lua_State *L) {
    tl_max_args(L, 1, "storage_offset");
    lua_pushinteger(L, (lua_Integer)tide_tensor_offset(tl_check(L, 1, "storage_offset")->t));
    return 1;
}

static int t_element_size(lua_State *L) {
    tl_max_args(L, 1, "element_size");
    lua_pushinteger(
        L, (lua_Integer)tide_dtype_size(tide_tensor_dtype(tl_check(L, 1, "element_size")->t)));
    return 1;
}

static int t_is_floating_point(lua_State *L) {
    tl_max_args(L, 1, "is_floating_point");
    lua_pushboolean(L,
                    tide_dtype_is_float(tide_tensor_dtype(tl_check(L, 1, "is_floating_point")->t)));
    return 1;
}

/* tide has no complex dtypes: false, for scripts that branch on it */
static int t_is_complex(lua_State *L) {
    tl_check(L, 1, "is_complex");
    tl_max_args(L, 1, "is_complex");
    lua_pushboolean(L, 0);
    return 1;
}

/* data_ptr(): the first element's address as an integer (device memory off the host), 0 for a
 * tensor of no elements, as PyTorch's; for comparing storages and handing to C, not to read */
static int t_data_ptr(lua_State *L) {
    ltensor *a = tl_check(L, 1, "data_ptr");
    tl_max_args(L, 1, "data_ptr");
    void *p = tide_tensor_numel(a->t) > 0 ? tide_tensor_data(a->t) : NULL;
    lua_pushinteger(L, (lua_Integer)(intptr_t)p);
    return 1;
}

static int t_is_contiguous(lua_State *L) {
    tl_max_args(L, 1, "is_contiguous");
    lua_pushboolean(L, tide_tensor_is_contiguous(tl_check(L, 1, "is_contiguous")->t));
    return 1;
}

static int t_ag(lua_State *L) {
    luaL_checkudata(L, 1, TL_TENSOR);
    if (lua_getiuservalue(L, 1, 1) != LUA_TTABLE) {
        lua_pop(L, 1);
        lua_newtable(L);
        lua_pushvalue(L, -1);
        lua_setiuservalue(L, 1, 1);
    }
    return 1;
}

static int t_set_rg_internal(lua_State *L) {
    ltensor *a = luaL_checkudata(L, 1, TL_TENSOR);
    a->requires_grad = lua_isnone(L, 2) ? 1 : lua_toboolean(L, 2);
    lua_settop(L, 1);
    return 1;
}

static int t_requires_grad_(lua_State *L) {
    ltensor *a = tl_check(L, 1, "requires_grad_");
    int      b = lua_isnone(L, 2) ? 1 : lua_toboolean(L, 2);
    if (!lua_isnoneornil(L, 2) && !lua_isboolean(L, 2))
        return tl_error(L, "tide: requires_grad_: requires_grad must be a boolean, got %s",
                        tl_typename(L, 2));
    tl_max_args(L, 2, "requires_grad_");
    if (!b) { /* a result of recorded ops: its history would be cut silently (PyTorch raises) */
        if (a->follows)
            tl_follow_root(L, 1, a);
        ag_field(L, 1, "grad_fn");
        int nonleaf = !lua_isnil(L, -1);
        lua_pop(L, 1);
        if (nonleaf)
            return tl_error(L, "tide: requires_grad_: can only change requires_grad of leaf "
                               "tensors; use y:detach() to get a tensor without history");
    }
    if (b && !tide_dtype_is_float(tide_tensor_dtype(a->t)))
        return tl_error(L,
                        "tide: requires_grad_: only floating-point tensors can require "
                        "gradients, this one is %s; convert it with :float() first",
                        tide_dtype_name(tide_tensor_dtype(a->t)));
    a->requires_grad = b;
    lua_settop(L, 1);
    return 1;
}

/* t:set_(u): t's userdata takes u's core tensor (model:to moves parameters in place). A metadata
 * swap, like PyTorch's `p.data = q`: allowed under grad mode. t:set_() with no argument takes an
 * empty storage: size {0}, as PyTorch's. */
static int t_set_(lua_State *L) {
    ltensor *a = tl_check(L, 1, "set_");
    if (lua_isnoneornil(L, 2)) {
        tide_lua_state *S = TL_STATE(L);
        int64_t         zero = 0;
        tl_max_args(L, 1, "set_");
        lua_settop(L, 1);
        ltensor *e = tl_push_empty(L);
        TL_CALL(L, S,
                tide_tensor_empty(S->ctx, tide_tensor_device(a->t), tide_tensor_dtype(a->t), 1,
                                  &zero, &e->t));
    }
    ltensor *b = tl_check(L, 2, "set_");
    tl_max_args(L, 2, "set_");
    uint64_t was = tide_tensor_version(a->t);
    tide_tensor_retain(b->t);
    tide_tensor_release(a->t);
    a->t = b->t;
    /* t now reads other values: a count past the one autograd may have seen for t */
    tide_tensor_bump_version(a->t, was);
    lua_settop(L, 1);
    return 1;
}

/* t:_version(): in-place writes to t's storage so far (autograd's check) */
static int t_version(lua_State *L) {
    ltensor *a = tl_check(L, 1, "_version");
    lua_pushinteger(L, (lua_Integer)tide_tensor_version(a->t));
    return 1;
}

/* t:_shares_storage(u): true when t and u are views of one storage (autograd's in-place rule for
 * views: a reshape that copied is not one) */
static int t_shares_storage(lua_State *L) {
    ltensor *a = tl_check(L, 1, "_shares_storage"), *b = tl_check(L, 2, "_shares_storage");
    lua_pushboolean(L, tide_tensor_same_storage(a->t, b->t));
    return 1;
}

/* t:_sole_owner(): true when nothing else (no view, no other tensor) holds t's memory, so an
 * op may write into it (autograd's engine, for a gradient it holds alone) */
static int t_sole_owner(lua_State *L) {
    ltensor *a = tl_check(L, 1, "_sole_owner");
    lua_pushboolean(L, tide_tensor_is_sole_owner(a->t));
    return 1;
}

static int t_detach(lua_State *L) {
    ltensor *a = tl_check(L, 1, "detach");
    tl_max_args(L, 1, "detach");
    ltensor *r = tl_push_empty(L);
    tide_tensor_retain(a->t);
    r->t = a->t;
    return 1;
}

/* ---- registration ------------------------------------------------------------------------- */

void tl_open_tensor(lua_State *L, int mod) {
    mod = lua_absindex(L, mod);

    lua_newtable(L); /* methods: core.Tensor */
    int                   methods = lua_gettop(L);
    static const luaL_Reg meths[] = {{"dim", t_dim},
                                     {"numel", t_numel},
                                     {"nelement", t_numel},
                                     {"is_contiguous", t_is_contiguous},
                                     {"stride", t_stride},
                                     {"storage_offset", t_storage_offset},
                                     {"data_ptr", t_data_ptr},
                                     {"element_size", t_element_size},
                                     {"is_floating_point", t_is_floating_point},
                                     {"is_complex", t_is_complex},
                                     {"free", t_free_method},
                                     {"_ag", t_ag},
                                     {"_set_requires_grad_internal", t_set_rg_internal},
                                     {"requires_grad_", t_requires_grad_},
                                     {"set_", t_set_},
                                     {"_version", t_version},
                                     {"_shares_storage", t_shares_storage},
                                     {"_sole_owner", t_sole_owner},
                                     {"detach", t_detach},
                                     {NULL, NULL}};
    tl_register(L, methods, meths);
    push_size_metatable(L);
    int size_mt = lua_gettop(L);
    tl_push_state(L); /* size's upvalues: state, the metatable of its lists */
    lua_pushvalue(L, size_mt);
    lua_pushcclosure(L, t_size, 2);
    lua_setfield(L, methods, "size");
    static const luaL_Reg modfuncs[] = {{"_gc_pass_begin", l_gc_pass_begin},
                                        {"_gc_dropped", l_gc_dropped},
                                        {"_gc_young", l_gc_young},
                                        {"_gc_pass_end", l_gc_pass_end},
                                        {NULL, NULL}};
    tl_register(L, mod, modfuncs);
    static const luaL_Reg internal[] = {{"set_subscripts", set_subscripts}, {NULL, NULL}};
    tl_register_internal(L, mod, internal);

    int                   mt = tl_new_tensor_metatable(L);
    static const luaL_Reg metas[] = {
        {"__add", m_add},
        {"__sub", m_sub},
        {"__mul", m_mul},
        {"__div", m_div},
        {"__mod", m_mod},
        {"__pow", m_pow},
        {"__idiv", m_idiv},
        {"__unm", m_unm},
#if LUA_VERSION_NUM >= 503
        {"__band", m_band},
        {"__bor", m_bor},
        {"__bxor", m_bxor},
        {"__shl", m_shl},
        {"__shr", m_shr},
        {"__bnot", m_bnot},
#endif
        {"__lt", m_lt},
        {"__le", m_le},
        {"__len", t_len},
        {"__gc", t_gc},
#if LUA_VERSION_NUM >= 504
        {"__close", t_free},
#endif
        {"__tostring", tl_tostring},
        {NULL, NULL}
    };
    tl_register(L, mt, metas);

    tl_push_state(L); /* __index upvalues: state, property ids, methods, the shapes' metatable */
    lua_newtable(L);
    for (int p = P_DEVICE; p <= P_IMAG; p++) {
        lua_pushinteger(L, p);
        lua_setfield(L, -2, prop_names[p]);
    }
    lua_pushvalue(L, methods);
    lua_pushvalue(L, size_mt);
    /* __newindex's upvalues: the state, the property ids and the methods (the names a field
     * would hide) */
    lua_pushvalue(L, -4);
    lua_pushvalue(L, -4);
    lua_pushvalue(L, -4);
    lua_pushcclosure(L, t_newindex, 3);
    lua_setfield(L, mt, "__newindex");
    lua_pushcclosure(L, t_index, 4);
    lua_setfield(L, mt, "__index");
    lua_pop(L, 2); /* mt, the shapes' metatable */
    lua_setfield(L, mod, "Tensor");
}
