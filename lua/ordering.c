/* ordering.c — gather, scatter(_), scatter_add(_), sort, argsort, topk, masked_fill(_),
 * masked_select, tril, triu, flip and roll (1-based dims and indices). */
#include "binding.h"

#include <string.h>

/* the 0-based form of the 1-based integer index tensor at idx; an expanded one (stride 0 over
 * several elements: t[{rows}] = src scatters the rows' positions expanded over each row) is
 * converted once a position and expanded again, so the core checks and the kernels read each
 * position once (the subtraction wrote the whole expanded index) */
static ltensor *push_index0(lua_State *L, tide_lua_state *S, int idx, const char *op) {
    ltensor *ix = tl_test(L, idx);
    if (!ix)
        tl_error(L, "tide: %s: index must be an int64 tensor of 1-based indices, got %s", op,
                 tl_typename(L, idx));
    ix = tl_check(L, idx, op);
    tide_dtype dt = tide_tensor_dtype(ix->t);
    if (dt != TIDE_DTYPE_I64 && dt != TIDE_DTYPE_I32)
        tl_error(L,
                 "tide: %s: index must be an int64 or int32 tensor, got %s; convert with :long()",
                 op, tide_dtype_name(dt));
    int            nd = tide_tensor_ndim(ix->t);
    const int64_t *shape = tide_tensor_shape(ix->t), *strides = tide_tensor_strides(ix->t);
    ltensor       *base = NULL;
    for (int d = 0; d < nd; d++) {
        if (strides[d] != 0 || shape[d] <= 1)
            continue;
        ltensor *next = tl_push_empty(L);
        TL_CALL(L, S, tide_tensor_narrow(base ? base->t : ix->t, d, 0, 1, &next->t));
        if (base) {
            tl_free_temporary(base);
            lua_remove(L, -2);
        }
        base = next;
    }
    if (!base)
        return tl_push_index_base(L, S, ix->t, 0);
    ltensor *b0 = tl_push_index_base(L, S, base->t, 0), *r = tl_push_empty(L);
    TL_CALL(L, S, tide_tensor_expand(b0->t, nd, shape, &r->t));
    tl_free_temporary(base);
    tl_free_temporary(b0);
    lua_replace(L, -3); /* r where base was */
    lua_pop(L, 1);
    return r;
}

static int o_gather(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    if (tl_is_class_table(L, 1, TL_COMPLEX_CLASS)) /* tide.gather(z, dim, index) */
        return tl_complex_method(L, "gather");
    ltensor *a = tl_check(L, 1, "gather");
    int      dim = tl_dim(L, a->t, tl_check_int(L, 2, "gather", "dim"), "gather", 0);
    tl_max_args(L, 3, "gather");
    ltensor *ix = push_index0(L, S, 3, "gather");
    ltensor *r = tl_push_empty(L);
    TL_CALL(L, S, tide_gather(S->ctx, a->t, dim, ix->t, &r->t));
    tl_free_temporary(ix);
    return tl_done(L, S, a->requires_grad ? "gather" : NULL, 3);
}

/* src at 4: a tensor, or a number written as self's dtype */
static ltensor *check_src(lua_State *L, tide_lua_state *S, ltensor *self, const char *op) {
    if (lua_type(L, 4) == LUA_TNUMBER || lua_type(L, 4) == LUA_TBOOLEAN)
        return tl_push_scalar(L, S, tl_scalar(L, 4), tide_tensor_dtype(self->t),
                              tide_tensor_device(self->t), op);
    if (!tl_test(L, 4))
        tl_error(L, "tide: %s: src must be a tensor or a number, got %s", op, tl_typename(L, 4));
    return tl_check(L, 4, op);
}

/* self:scatter[_add](dim, index, src) and the in-place twins; the out-of-place one scatters
 * into a copy of self */
static int scatter(lua_State *L, int accumulate, int inplace) {
    static const char *const names[2][4] = {
        {"scatter", "scatter_add", "scatter_reduce", "scatter_reduce"},
        {"scatter_", "scatter_add_", "scatter_reduce_", "scatter_reduce_"}};
    const char     *op = names[inplace][accumulate];
    tide_lua_state *S = TL_STATE(L);
    ltensor        *a = tl_check(L, 1, op);
    int             dim = tl_dim(L, a->t, tl_check_int(L, 2, op, "dim"), op, 0);
    tl_max_args(L, 4, op);
    ltensor *src = check_src(L, S, a, op);
    ltensor *ix = push_index0(L, S, 3, op);
    if (inplace && accumulate >= TIDE_SCATTER_AMAX) { /* tide.indexing's kernels: no formula */
        tl_not_differentiable(L, S, op, 4);
        TL_CALL(L, S, tide_scatter_(S->ctx, a->t, dim, ix->t, src->t, accumulate));
        tl_free_temporary(ix);
        lua_settop(L, 1);
        return 1;
    }
    if (inplace) {
        int rec = tl_check_inplace(L, S, a, op);
        TL_CALL(L, S, tide_scatter_(S->ctx, a->t, dim, ix->t, src->t, accumulate));
        tl_free_temporary(ix);
        tl_inplace_done(L, S, op, rec);
        lua_settop(L, 1);
        return 1;
    }
    ltensor *r = tl_push_empty(L);
    TL_CALL(L, S, tide_tensor_clone(S->ctx, a->t, &r->t));
    TL_CALL_AS(L, S, tide_scatter_(S->ctx, r->t, dim, ix->t, src->t, accumulate),
               names[1][accumulate], op);
    tl_free_temporary(ix);
    return tl_done(L, S, op, 4);
}

static int o_scatter_(lua_State *L) {
    return scatter(L, 0, 1);
}
static int o_scatter_add_(lua_State *L) {
    return scatter(L, 1, 1);
}
static int o_scatter(lua_State *L) {
    return scatter(L, 0, 0);
}
static int o_scatter_add(lua_State *L) {
    return scatter(L, 1, 0);
}
/* self:_scatter_amax_(dim, index, src) and _scatter_amin_: tide.indexing's scatter_reduce on
 * the CPU (PyTorch's amax and amin with include_self; the message names scatter_reduce_) */
static int o_scatter_amax_(lua_State *L) {
    return scatter(L, TIDE_SCATTER_AMAX, 1);
}
static int o_scatter_amin_(lua_State *L) {
    return scatter(L, TIDE_SCATTER_AMIN, 1);
}

static int opt_bool(lua_State *L, int idx, int def, const char *op, const char *what) {
    if (lua_isnoneornil(L, idx))
        return def;
    if (lua_type(L, idx) != LUA_TBOOLEAN)
        tl_error(L, "tide: %s: %s must be a boolean, got %s", op, what, tl_typename(L, idx));
    return lua_toboolean(L, idx);
}

static int opt_dim(lua_State *L, ltensor *a, int idx, const char *op) {
    lua_Integer d = lua_isnoneornil(L, idx) ? -1 : tl_check_int(L, idx, op, "dim");
    if (tide_tensor_ndim(a->t) == 0 && (d == 1 || d == -1))
        return 0; /* a 0-d tensor sorts as one element, as in PyTorch */
    return tl_dim(L, a->t, d, op, 0);
}

/* t:sort([dim[, descending]]) -> values, indices; t:argsort(...) -> indices */
static int sort(lua_State *L, int with_values) {
    const char     *op = with_values ? "sort" : "argsort";
    tide_lua_state *S = TL_STATE(L);
    ltensor        *a = tl_check(L, 1, op);
    tl_max_args(L, 3, op);
    int      dim = opt_dim(L, a, 2, op);
    int      desc = opt_bool(L, 3, 0, op, "descending");
    ltensor *v = tl_push_empty(L);
    ltensor *i0 = tl_push_empty(L);
    TL_CALL_AS(L, S, tide_sort(S->ctx, a->t, dim, desc, &v->t, &i0->t), "sort", op);
    tl_gc_hint(L, S, tide_tensor_nbytes(v->t) + tide_tensor_nbytes(i0->t));
    tl_one_based(L, S, i0); /* (values, indices) at the top */
    if (!with_values)
        return 1;
    if (a->requires_grad && S->grad_enabled)
        tl_record(L, S, "sort", 3, -2, -1);
    return 2;
}
static int o_sort(lua_State *L) {
    return sort(L, 1);
}
static int o_argsort(lua_State *L) {
    return sort(L, 0);
}

/* t:topk(k[, dim[, largest[, sorted]]]) -> values, indices; always sorted (PyTorch's sorted =
 * false leaves the order unspecified, so sorted is a valid answer) */
static int o_topk(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    ltensor        *a = tl_check(L, 1, "topk");
    lua_Integer     k = tl_check_int(L, 2, "topk", "k");
    tl_max_args(L, 5, "topk");
    int dim = opt_dim(L, a, 3, "topk");
    int largest = opt_bool(L, 4, 1, "topk", "largest");
    (void)opt_bool(L, 5, 1, "topk", "sorted");
    int64_t len = tide_tensor_ndim(a->t) ? tide_tensor_shape(a->t)[dim] : 1;
    if (k < 0 || k > len)
        return tl_error(L, "tide: topk: k = %I is out of range for dim %d of size %I; use 0..%I", k,
                        dim + 1, (lua_Integer)len, (lua_Integer)len);
    ltensor *v = tl_push_empty(L);
    ltensor *i0 = tl_push_empty(L);
    TL_CALL(L, S, tide_topk(S->ctx, a->t, dim, (int64_t)k, largest, &v->t, &i0->t));
    tl_gc_hint(L, S, tide_tensor_nbytes(v->t) + tide_tensor_nbytes(i0->t));
    tl_one_based(L, S, i0); /* (values, indices) at the top */
    if (a->requires_grad && S->grad_enabled)
        tl_record(L, S, "topk", 5, -2, -1);
    return 2;
}

/* tide._kthvalue(t, k[, dim]) -> values, 1-based indices, dim kept (size 1): the k-th smallest
 * (k >= 1), or for k = 0 the lower median (NaN first), for k = -1 the lower median of the values
 * that are not NaN (include/tide.h, tide_kthvalue), for kthvalue, median and nanmedian
 * (lua/tide/statistics.lua), which gather the values again for the gradient: not recorded */
static int l_kthvalue(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    ltensor        *a = tl_check(L, 1, "kthvalue");
    lua_Integer     k = tl_check_int(L, 2, "kthvalue", "k");
    tl_max_args(L, 3, "kthvalue");
    int      dim = opt_dim(L, a, 3, "kthvalue");
    ltensor *v = tl_push_empty(L);
    ltensor *i0 = tl_push_empty(L);
    TL_CALL(L, S, tide_kthvalue(S->ctx, a->t, dim, (int64_t)k, &v->t, &i0->t));
    tl_gc_hint(L, S, tide_tensor_nbytes(v->t) + tide_tensor_nbytes(i0->t));
    tl_one_based(L, S, i0); /* (values, indices) at the top */
    return 2;
}

/* ---- masks, triangles, flips and rolls ---------------------------------------------------- */

static ltensor *check_mask_arg(lua_State *L, int idx, const char *op) {
    if (!tl_test(L, idx))
        tl_error(L, "tide: %s: mask must be a bool tensor, got %s", op, tl_typename(L, idx));
    ltensor *m = tl_check(L, idx, op);
    if (tide_tensor_dtype(m->t) != TIDE_DTYPE_U8) /* the common case: no strings made */
        return m;
    /* PyTorch 1.13's deprecated byte mask, with its words (masked_fill's name is its twin's) */
    const char *name = strncmp(op, "masked_fill", 11) ? op : "masked_fill_";
    const char *key = lua_pushfstring(L, "uint8_mask.%s", name);
    const char *msg = lua_pushfstring(L,
                                      "%s received a mask with dtype torch.uint8, this behavior "
                                      "is now deprecated,please use a mask with dtype torch.bool "
                                      "instead.",
                                      name);
    tl_byte_mask_to_bool(L, idx, key, msg);
    lua_pop(L, 2);
    return tl_check(L, idx, op);
}

/* the value at 3 as a 0-d tensor of a's dtype on a's device (a number, a boolean or a 0-d
 * tensor) */
static ltensor *fill_value(lua_State *L, tide_lua_state *S, ltensor *a, const char *op) {
    int t = lua_type(L, 3);
    if (t == LUA_TNUMBER || t == LUA_TBOOLEAN)
        return tl_push_scalar(L, S, tl_scalar(L, 3), tide_tensor_dtype(a->t),
                              tide_tensor_device(a->t), op);
    if (!tl_test(L, 3))
        tl_error(L, "tide: %s: value must be a number or a 0-d tensor, got %s", op,
                 tl_typename(L, 3));
    return tl_check(L, 3, op);
}

/* t:masked_fill(mask, value) and its in-place twin */
static int masked_fill(lua_State *L, int inplace) {
    const char     *op = inplace ? "masked_fill_" : "masked_fill";
    tide_lua_state *S = TL_STATE(L);
    ltensor        *a = tl_check(L, 1, op);
    ltensor        *m = check_mask_arg(L, 2, op);
    tl_max_args(L, 3, op);
    ltensor *v = fill_value(L, S, a, op);
    if (!inplace) {
        ltensor *r = tl_push_empty(L);
        TL_CALL(L, S, tide_masked_fill(S->ctx, a->t, m->t, v->t, &r->t));
        return tl_done(L, S, op, 3);
    }
    int          rec = tl_check_inplace(L, S, a, op);
    tide_tensor *o = a->t;
    TL_CALL_AS(L, S, tide_masked_fill(S->ctx, a->t, m->t, v->t, &o), "masked_fill", op);
    tl_inplace_done(L, S, op, rec);
    lua_settop(L, 1);
    return 1;
}
static int o_masked_fill(lua_State *L) {
    return masked_fill(L, 0);
}
static int o_masked_fill_(lua_State *L) {
    return masked_fill(L, 1);
}

static int o_masked_select(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    ltensor        *a = tl_check(L, 1, "masked_select");
    ltensor        *m = check_mask_arg(L, 2, "masked_select");
    tl_max_args(L, 2, "masked_select");
    ltensor *r = tl_push_empty(L);
    ltensor *p0 = tl_push_empty(L);
    TL_CALL(L, S, tide_masked_select(S->ctx, a->t, m->t, &r->t, &p0->t));
    tl_gc_hint(L, S, tide_tensor_nbytes(r->t));
    if (a->requires_grad && S->grad_enabled) {
        lua_pushvalue(L, 3); /* out, positions0, out, positions (1-based) */
        tl_push_index_base(L, S, p0->t, 1);
        tl_record(L, S, "masked_select", 2, -2, -1);
        lua_settop(L, 3);
    }
    lua_settop(L, 3);
    return 1;
}

static int tri(lua_State *L, int upper) {
    const char     *op = upper ? "triu" : "tril";
    tide_lua_state *S = TL_STATE(L);
    ltensor        *a = tl_check(L, 1, op);
    tl_max_args(L, 2, op);
    lua_Integer k = lua_isnil(L, 2) ? 0 : tl_check_int(L, 2, op, "diagonal");
    ltensor    *r = tl_push_empty(L);
    TL_CALL(L, S, tide_tri(S->ctx, a->t, (int64_t)k, upper, &r->t));
    return tl_done(L, S, op, 2);
}
static int o_tril(lua_State *L) {
    return tri(L, 0);
}
static int o_triu(lua_State *L) {
    return tri(L, 1);
}

/* integers from the table or the integers from idx to top; returns how many */
static int int_list(lua_State *L, int idx, int top, int64_t *v, const char *op, const char *what) {
    int n = 0;
    if (lua_type(L, idx) == LUA_TTABLE) {
        int len = tl_check_list(L, idx, op, what);
        if (len > TIDE_MAX_DIMS)
            tl_error(L, "tide: %s: %d %s given, at most %d", op, len, what, TIDE_MAX_DIMS);
        for (int i = 1; i <= len; i++) {
            lua_rawgeti(L, idx, i);
            v[n++] = tl_check_int(L, lua_gettop(L), op, what);
            lua_pop(L, 1);
        }
        return n;
    }
    for (int i = idx; i <= top; i++) {
        if (n == TIDE_MAX_DIMS)
            tl_error(L, "tide: %s: more than %d %s given", op, TIDE_MAX_DIMS, what);
        v[n++] = tl_check_int(L, i, op, what);
    }
    return n;
}

/* 1-based dims (negative from the end) to 0-based, checked */
static void dims0(lua_State *L, ltensor *a, int n, const int64_t *d1, int *d0, const char *op) {
    for (int i = 0; i < n; i++)
        d0[i] = tl_dim(L, a->t, d1[i], op, 0);
}

/* t:flip(dims) or t:flip(d1, d2, ...) */
static int o_flip(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    ltensor        *a = tl_check(L, 1, "flip");
    int             top = lua_gettop(L);
    while (top > 2 && lua_isnil(L, top)) /* trailing nils are omitted arguments */
        top--;
    if (lua_type(L, 2) == LUA_TTABLE)
        tl_max_args(L, top = 2, "flip");
    if (top < 2)
        return tl_error(L, "tide: flip: expected the dims to flip, as a table or integers");
    int64_t d1[TIDE_MAX_DIMS];
    int     d0[TIDE_MAX_DIMS];
    int     n = int_list(L, 2, top, d1, "flip", "dims");
    dims0(L, a, n, d1, d0, "flip");
    lua_settop(L, top);
    ltensor *r = tl_push_empty(L);
    TL_CALL(L, S, tide_flip(S->ctx, a->t, n, d0, &r->t));
    return tl_done(L, S, "flip", top);
}

/* t:roll(shifts[, dims]): numbers or equally long tables; no dims rolls the flattened tensor */
static int o_roll(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    ltensor        *a = tl_check(L, 1, "roll");
    tl_max_args(L, 3, "roll");
    int64_t sh[TIDE_MAX_DIMS], d1[TIDE_MAX_DIMS];
    int     d0[TIDE_MAX_DIMS];
    int     ns = int_list(L, 2, 2, sh, "roll", "shifts");
    int     nd = lua_isnil(L, 3) ? 0 : int_list(L, 3, 3, d1, "roll", "dims");
    if (nd == 0 && ns != 1)
        return tl_error(L,
                        "tide: roll: %d shifts need %d dims; give dims, or one shift to roll "
                        "the flattened tensor",
                        ns, ns);
    if (nd > 0 && nd != ns)
        return tl_error(L, "tide: roll: %d shifts for %d dims; give one shift per dim", ns, nd);
    dims0(L, a, nd, d1, d0, "roll");
    ltensor *r = tl_push_empty(L);
    TL_CALL(L, S, tide_roll(S->ctx, a->t, nd, sh, d0, &r->t));
    return tl_done(L, S, "roll", 3);
}

/* ---- one_hot and multinomial (integer results: never recorded) ---------------------------- */

/* tide.one_hot(t[, n]): 1-based classes in t, n classes (default: the largest class) */
static int l_one_hot(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    ltensor        *t = tl_check(L, 1, "one_hot");
    tl_max_args(L, 2, "one_hot");
    lua_Integer n = lua_isnil(L, 2) ? -1 : tl_check_int(L, 2, "one_hot", "num_classes");
    if (n < -1 || n == 0)
        return tl_error(L,
                        "tide: one_hot: num_classes must be positive (or -1: the largest "
                        "class), got %I",
                        n);
    tide_dtype dt = tide_tensor_dtype(t->t);
    if (dt != TIDE_DTYPE_I64 && dt != TIDE_DTYPE_I32)
        return tl_error(L,
                        "tide: one_hot: classes must be an int64 tensor, got %s; convert with "
                        ":long()",
                        tide_dtype_name(dt));
    ltensor *c0 = tl_push_index_base(L, S, t->t, 0);
    ltensor *r = tl_push_empty(L);
    TL_CALL(L, S, tide_one_hot(S->ctx, c0->t, (int64_t)n, &r->t));
    tl_free_temporary(c0);
    return tl_done(L, S, NULL, 2);
}

/* tide.multinomial(probs, n[, replacement][, {replacement = false}]) and
 * probs:multinomial(...) -> 1-based int64 categories; replacement by position as PyTorch's
 * multinomial(input, num_samples, replacement=False) */
static int l_multinomial(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    ltensor        *p = tl_check(L, 1, "multinomial");
    lua_Integer     n = tl_check_int(L, 2, "multinomial", "num_samples");
    int             positional = lua_type(L, 3) == LUA_TBOOLEAN;
    int             opts = positional ? 4 : 3;
    tl_max_args(L, opts, "multinomial");
    int replacement = positional && lua_toboolean(L, 3);
    if (!lua_isnil(L, opts)) {
        if (lua_type(L, opts) != LUA_TTABLE)
            return tl_error(L,
                            positional ? "tide: multinomial: options must be a table such as "
                                         "{replacement = true}, got %s"
                                       : "tide: multinomial: replacement (argument #3) must be a "
                                         "boolean or an options table such as "
                                         "{replacement = true}, got %s",
                            tl_typename(L, opts));
        static const char *const known[] = {"replacement", NULL};
        tl_check_options(L, opts, "multinomial", known, NULL);
        if (lua_getfield(L, opts, "replacement") != LUA_TNIL) {
            if (positional)
                return tl_error(L, "tide: multinomial: replacement given twice, as argument #3 "
                                   "and by name; pass it once");
            if (lua_type(L, -1) != LUA_TBOOLEAN)
                return tl_error(L, "tide: multinomial: replacement must be a boolean, got %s",
                                tl_typename(L, -1));
            replacement = lua_toboolean(L, -1);
        }
        lua_pop(L, 1);
    }
    ltensor *r0 = tl_push_empty(L);
    TL_CALL(L, S, tide_multinomial(S->ctx, p->t, (int64_t)n, replacement, &r0->t));
    tl_push_index_base(L, S, r0->t, 1);
    return tl_done(L, S, NULL, 3);
}

void tl_open_ordering(lua_State *L, int mod, int methods) {
    static const luaL_Reg meths[] = {{"gather", o_gather},
                                     {"scatter", o_scatter},
                                     {"scatter_", o_scatter_},
                                     {"scatter_add", o_scatter_add},
                                     {"scatter_add_", o_scatter_add_},
                                     {"_scatter_amax_", o_scatter_amax_},
                                     {"_scatter_amin_", o_scatter_amin_},
                                     {"sort", o_sort},
                                     {"argsort", o_argsort},
                                     {"topk", o_topk},
                                     {"masked_fill", o_masked_fill},
                                     {"masked_fill_", o_masked_fill_},
                                     {"masked_select", o_masked_select},
                                     {"tril", o_tril},
                                     {"triu", o_triu},
                                     {"flip", o_flip},
                                     {"roll", o_roll},
                                     {"multinomial", l_multinomial},
                                     {NULL, NULL}};
    tl_register(L, methods, meths);
    static const luaL_Reg funcs[] = {{"gather", o_gather},
                                     {"scatter", o_scatter},
                                     {"scatter_add", o_scatter_add},
                                     {"sort", o_sort},
                                     {"argsort", o_argsort},
                                     {"topk", o_topk},
                                     {"masked_fill", o_masked_fill},
                                     {"masked_select", o_masked_select},
                                     {"tril", o_tril},
                                     {"triu", o_triu},
                                     {"flip", o_flip},
                                     {"roll", o_roll},
                                     {"one_hot", l_one_hot},
                                     {"_kthvalue", l_kthvalue},
                                     {"multinomial", l_multinomial},
                                     {NULL, NULL}};
    tl_register(L, mod, funcs);
}
