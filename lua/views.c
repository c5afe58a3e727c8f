/*
 * views.c — shape and layout methods: the views (t, transpose, view, expand, permute, narrow,
 * select, unsqueeze, squeeze, diagonal, unfold, as_strided), reshape and sum_to, and the copying
 * pair contiguous / clone.
 */
#include "binding.h"

static int transpose_impl(lua_State *L, const char *name, int d0, int d1, int nargs) {
    tide_lua_state *S = TL_STATE(L);
    ltensor        *a = lua_touserdata(L, 1);
    ltensor        *r = tl_push_empty(L);
    TL_CALL(L, S, tide_tensor_transpose(a->t, d0, d1, &r->t));
    return tl_done_view(L, S, a, name, nargs);
}

static int o_t(lua_State *L) {
    ltensor *a = tl_check(L, 1, "t");
    int      n = tide_tensor_ndim(a->t);
    tl_max_args(L, 1, "t");
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
    ltensor *a = tl_check(L, 1, "transpose");
    int      d0 = tl_dim(L, a->t, tl_check_int(L, 2, "transpose", "dim0"), "transpose", 0);
    int      d1 = tl_dim(L, a->t, tl_check_int(L, 3, "transpose", "dim1"), "transpose", 0);
    tl_max_args(L, 3, "transpose");
    return transpose_impl(L, "transpose", d0, d1, 3);
}

/* view / reshape / expand / sum_to take sizes as integers or one table */
static int shaped(lua_State *L, int kind) {
    static const char *const names[] = {"view", "reshape", "expand", "sum_to"};
    const char              *name = names[kind];
    tide_lua_state          *S = TL_STATE(L);
    ltensor                 *a = tl_check(L, 1, name);
    int64_t                  shape[TIDE_MAX_DIMS];
    int                      ndim, nargs;
    nargs = 1 + tl_shape(L, 2, shape, &ndim, name, kind != 3);
    tl_max_args(L, nargs, name); /* sizes end at the first non-number: view(2, 3, {...}) */
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
        return tl_done(L, S, a->requires_grad ? name : NULL, nargs);
    }
    if (kind == 1 && !tide_tensor_same_storage(a->t, r->t))
        tl_gc_hint(L, S, tide_tensor_nbytes(r->t));
    return tl_done_view(L, S, a, name, nargs);
}

/* t:view(dtype): t's bytes read as another dtype (no gradient flows through, as PyTorch's) */
static int view_dtype(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    ltensor        *a = tl_check(L, 1, "view");
    const char     *name = lua_tostring(L, 2);
    tide_dtype      dt;
    tl_max_args(L, 2, "view");
    if (tide_dtype_from_name(name, &dt) != TIDE_OK)
        return tl_error(L,
                        "tide: view: '%s' is neither sizes nor one of tide's real dtypes "
                        "(float32, float64, float16, bfloat16, int32, int64, uint8, bool); a "
                        "complex view is tide.view_as_complex(x)",
                        name);
    ltensor *r = tl_push_empty(L);
    TL_CALL(L, S, tide_tensor_view_dtype(a->t, dt, &r->t));
    return 1;
}

static int o_view(lua_State *L) {
    if (lua_type(L, 2) == LUA_TSTRING)
        return view_dtype(L);
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
    ltensor        *a = tl_check(L, 1, "permute");
    int             n = tide_tensor_ndim(a->t), perm[TIDE_MAX_DIMS], seen[TIDE_MAX_DIMS] = {0};
    int             istable = lua_type(L, 2) == LUA_TTABLE;
    if (istable)
        tl_max_args(L, 2, "permute");
    while (nargs > 2 && lua_isnil(L, nargs)) /* trailing nils are omitted arguments */
        nargs--;
    lua_settop(L, nargs = istable ? 2 : nargs);
    int given = istable ? tl_check_list(L, 2, "permute", "dims") : nargs - 1;
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
        perm[i] = tl_dim(L, a->t, tl_check_int(L, -1, "permute", "a dim"), "permute", 0);
        lua_pop(L, 1);
        if (seen[perm[i]]++)
            return tl_error(L, "tide: permute: dim %d appears twice; name every dim once",
                            perm[i] + 1);
    }
    ltensor *r = tl_push_empty(L);
    TL_CALL(L, S, tide_tensor_permute(a->t, perm, &r->t));
    return tl_done_view(L, S, a, "permute", nargs);
}

static int o_contiguous(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    ltensor        *a = tl_check(L, 1, "contiguous");
    tl_max_args(L, 1, "contiguous");
    if (tide_tensor_is_contiguous(a->t))
        return 1; /* the same object, as PyTorch */
    ltensor *r = tl_push_empty(L);
    TL_CALL(L, S, tide_tensor_contiguous(S->ctx, a->t, &r->t));
    return tl_done(L, S, a->requires_grad ? "contiguous" : NULL, 1);
}

/* narrow's start: an integer, or a 0-d integer tensor holding one (PyTorch's; 1-based too) */
static lua_Integer narrow_start(lua_State *L, tide_lua_state *S) {
    ltensor *s = tl_test(L, 3);
    if (!s)
        return tl_check_int(L, 3, "narrow", "start");
    if (!s->t)
        return tl_error(L, "tide: narrow: attempt to use a freed tensor");
    tide_dtype dt = tide_tensor_dtype(s->t);
    if (tide_tensor_ndim(s->t) != 0 || tide_dtype_is_float(dt) || dt == TIDE_DTYPE_BOOL)
        return tl_error(L,
                        "tide: narrow: start must be an integer or a 0-d integer tensor, got a "
                        "%s tensor with %d dims",
                        tide_dtype_name(dt), tide_tensor_ndim(s->t));
    tide_scalar v;
    TL_CALL(L, S, tide_tensor_item_x(S->ctx, s->t, &v));
    return (lua_Integer)v.i;
}

static int o_narrow(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    ltensor        *a = tl_check(L, 1, "narrow");
    int             dim = tl_dim(L, a->t, tl_check_int(L, 2, "narrow", "dim"), "narrow", 0);
    lua_Integer     start = narrow_start(L, S);
    lua_Integer     len = tl_check_int(L, 4, "narrow", "length");
    int64_t         size = tide_tensor_shape(a->t)[dim];
    int64_t         s0 = start >= 1 ? start - 1 : size + start;
    if (start == 0 || s0 < 0 || len < 0 || s0 > size || len > size - s0) /* no overflow */
        return tl_error(L,
                        "tide: narrow: start %I and length %I do not fit dim %d of size "
                        "%I; start is 1-based and start + length - 1 must be <= %I",
                        (lua_Integer)start, (lua_Integer)len, dim + 1, (lua_Integer)size,
                        (lua_Integer)size);
    tl_max_args(L, 4, "narrow");
    ltensor *r = tl_push_empty(L);
    TL_CALL(L, S, tide_tensor_narrow(a->t, dim, s0, len, &r->t));
    return tl_done_view(L, S, a, "narrow", 4);
}

static int o_select(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    tl_max_args(L, 3, "select");
    tl_select(L, S, tl_check_int(L, 2, "select", "dim"), tl_check_int(L, 3, "select", "index"),
              "select");
    ltensor *a = lua_touserdata(L, 1);
    return tl_done_view(L, S, a, "select", 3);
}

/* t:unfold(dim, size, step): the windows along dim as a view, PyTorch's Tensor.unfold (not
 * F.unfold's im2col) */
static int o_unfold(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    ltensor        *a = tl_check(L, 1, "unfold");
    tl_max_args(L, 4, "unfold");
    int         dim = tl_dim(L, a->t, tl_check_int(L, 2, "unfold", "dim"), "unfold", 0);
    lua_Integer size = tl_check_int(L, 3, "unfold", "size");
    lua_Integer step = tl_check_int(L, 4, "unfold", "step");
    lua_settop(L, 4);
    ltensor *r = tl_push_empty(L);
    TL_CALL(L, S, tide_tensor_unfold(a->t, dim, (int64_t)size, (int64_t)step, &r->t));
    return tl_done_view(L, S, a, "unfold", 4);
}

/* t:diagonal([offset = 0[, dim1 = 1[, dim2 = 2]]]): a view, as PyTorch's (writing into it writes
 * t) */
static int o_diagonal(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    ltensor        *a = tl_check(L, 1, "diagonal");
    tl_max_args(L, 4, "diagonal");
    if (tide_tensor_ndim(a->t) < 2)
        return tl_error(L, "tide: diagonal: needs a tensor with at least 2 dims, got %d-D",
                        tide_tensor_ndim(a->t));
    lua_Integer offset = lua_isnoneornil(L, 2) ? 0 : tl_check_int(L, 2, "diagonal", "offset");
    int         d1 = lua_isnoneornil(L, 3)
                         ? 0
                         : tl_dim(L, a->t, tl_check_int(L, 3, "diagonal", "dim1"), "diagonal", 0);
    int         d2 = lua_isnoneornil(L, 4)
                         ? 1
                         : tl_dim(L, a->t, tl_check_int(L, 4, "diagonal", "dim2"), "diagonal", 0);
    if (d1 == d2)
        return tl_error(L, "tide: diagonal: dim1 and dim2 must differ, got %d and %d", d1 + 1,
                        d2 + 1);
    lua_settop(L, 4);
    ltensor *r = tl_push_empty(L);
    TL_CALL(L, S, tide_tensor_diagonal(a->t, (int64_t)offset, d1, d2, &r->t));
    return tl_done_view(L, S, a, "diagonal", 4);
}

static int o_unsqueeze(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    ltensor        *a = tl_check(L, 1, "unsqueeze");
    int             d = tl_dim(L, a->t, tl_check_int(L, 2, "unsqueeze", "dim"), "unsqueeze", 1);
    tl_max_args(L, 2, "unsqueeze");
    ltensor *r = tl_push_empty(L);
    TL_CALL(L, S, tide_tensor_unsqueeze(a->t, d, &r->t));
    return tl_done_view(L, S, a, "unsqueeze", 2);
}

static int o_squeeze(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    ltensor        *a = tl_check(L, 1, "squeeze");
    int             nargs = 2;
    tl_max_args(L, 2, "squeeze");
    int d = -1;
    if (!lua_isnoneornil(L, 2)) {
        lua_Integer v = tl_check_int(L, 2, "squeeze", "dim");
        /* a 0-d tensor takes dim 1 or -1 and stays as it is (PyTorch's squeeze(0) and (-1)) */
        if (tide_tensor_ndim(a->t) > 0 || (v != 1 && v != -1))
            d = tl_dim(L, a->t, v, "squeeze", 0);
    }
    ltensor *r = tl_push_empty(L);
    TL_CALL(L, S, tide_tensor_squeeze(a->t, d, &r->t));
    return tl_done_view(L, S, a, "squeeze", nargs);
}

/* t:as_strided(size, stride[, storage_offset]): a view of t's storage with any geometry, as
 * PyTorch's; storage_offset counts elements from the storage's start (default: t's own) */
static int o_as_strided(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    ltensor        *a = tl_check(L, 1, "as_strided");
    tl_max_args(L, 4, "as_strided");
    int64_t shape[TIDE_MAX_DIMS], st[TIDE_MAX_DIMS];
    int     ndim;
    if (lua_type(L, 2) != LUA_TTABLE || lua_type(L, 3) != LUA_TTABLE)
        return tl_error(L,
                        "tide: as_strided: size and stride must be lists such as {2, 3} and "
                        "{3, 1}, got %s and %s",
                        luaL_typename(L, 2), luaL_typename(L, 3));
    tl_shape(L, 2, shape, &ndim, "as_strided", 0);
    int n = tl_check_list(L, 3, "as_strided", "stride");
    if (n != ndim)
        return tl_error(L, "tide: as_strided: %d sizes but %d strides; give one stride a size",
                        ndim, n);
    for (int i = 0; i < n; i++) {
        lua_rawgeti(L, 3, i + 1);
        int         isint;
        lua_Integer v = lua_tointegerx(L, -1, &isint);
        if (!isint || lua_type(L, -1) != LUA_TNUMBER)
            return tl_error(L, "tide: as_strided: stride at position %d must be an integer, got %s",
                            i + 1, tl_typename(L, -1));
        st[i] = (int64_t)v;
        lua_pop(L, 1);
    }
    int64_t offset = lua_isnoneornil(L, 4)
                         ? tide_tensor_offset(a->t)
                         : (int64_t)tl_check_int(L, 4, "as_strided", "storage_offset");
    lua_settop(L, 3);
    lua_pushinteger(L, (lua_Integer)offset); /* recorded as given: a replay on another tensor */
    ltensor *r = tl_push_empty(L);
    TL_CALL(L, S, tide_tensor_as_strided(a->t, ndim, shape, st, offset, &r->t));
    return tl_done_view(L, S, a, "as_strided", 4);
}

static int o_clone(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    ltensor        *a = tl_check(L, 1, "clone");
    tl_max_args(L, 1, "clone");
    ltensor *r = tl_push_empty(L);
    TL_CALL(L, S, tide_tensor_clone(S->ctx, a->t, &r->t));
    return tl_done(L, S, a->requires_grad ? "clone" : NULL, 1);
}

void tl_open_views(lua_State *L, int mod, int methods) {
    static const luaL_Reg meths[] = {{"t", o_t},
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
                                     {"diagonal", o_diagonal},
                                     {"unfold", o_unfold},
                                     {"as_strided", o_as_strided},
                                     {"clone", o_clone},
                                     {NULL, NULL}};
    tl_register(L, methods, meths);
    static const luaL_Reg funcs[] = {{"transpose", o_transpose},
                                     {"reshape", o_reshape},
                                     {"permute", o_permute},
                                     {"narrow", o_narrow},
                                     {"select", o_select},
                                     {"unsqueeze", o_unsqueeze},
                                     {"squeeze", o_squeeze},
                                     {"clone", o_clone},
                                     {"diagonal", o_diagonal},
                                     {"as_strided", o_as_strided},
                                     {NULL, NULL}};
    tl_register(L, mod, funcs);
}
