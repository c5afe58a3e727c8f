/* indexing.c — index_select, index_add_ (1-based indices, a tensor or a table) and where. */
#include "binding.h"
#include <math.h>

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
            lua_Integer v = tl_check_int(L, -1, op, "an index");
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
    ltensor   *ix = tl_check(L, idx, op);
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
    return tl_push_index_base(L, S, ix->t, 0);
}

/* a 0-d index is PyTorch's one-element index: its [1] view replaces it at 3 */
static void index_as_1d(lua_State *L) {
    ltensor *ix = tl_test(L, 3);
    if (!ix || !ix->t || tide_tensor_ndim(ix->t) != 0)
        return;
    lua_getfield(L, 3, "reshape");
    lua_pushvalue(L, 3);
    lua_pushinteger(L, 1);
    lua_call(L, 2, 1);
    lua_replace(L, 3);
}

static int o_index_select(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    ltensor        *a = tl_check(L, 1, "index_select");
    index_as_1d(L);
    /* a 0-d tensor is its one element at dim 1 (or -1), its result 0-d, as PyTorch's, which
     * gives the element once for several indices too (each checked: 1 is the only one) */
    ltensor *ix1 = tl_test(L, 3);
    if (tide_tensor_ndim(a->t) == 0 && ix1 && ix1->t && tide_tensor_numel(ix1->t) >= 1) {
        if (tide_tensor_numel(ix1->t) > 1) {
            lua_settop(L, 3);
            lua_getfield(L, 1, "reshape");
            lua_pushvalue(L, 1);
            lua_pushinteger(L, 1);
            lua_call(L, 2, 1); /* a's [1] view, at 4 */
            push_index0(L, S, tl_check(L, 4, "index_select")->t, 0, 3, "index_select");
            lua_settop(L, 3);
            lua_createtable(L, 1, 0);
            lua_pushinteger(L, 1);
            lua_rawseti(L, -2, 1);
            lua_replace(L, 3);
        }
        int n = tl_scalar_dim(L, "index_select");
        if (n >= 0)
            return n;
    }
    int dim = tl_dim(L, a->t, tl_check_int(L, 2, "index_select", "dim"), "index_select", 0);
    tl_max_args(L, 3, "index_select");
    ltensor *ix = push_index0(L, S, a->t, dim, 3, "index_select");
    ltensor *r = tl_push_empty(L);
    TL_CALL(L, S, tide_index_select(S->ctx, a->t, dim, ix->t, &r->t));
    tl_free_temporary(ix);
    return tl_done(L, S, a->requires_grad ? "index_select" : NULL, 3);
}

static int o_index_add_(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    ltensor        *a = tl_check(L, 1, "index_add_");
    int             dim = tl_dim(L, a->t, tl_check_int(L, 2, "index_add_", "dim"), "index_add_", 0);
    ltensor        *src = tl_check(L, 4, "index_add_");
    tl_max_args(L, 4, "index_add_");
    int      rec = tl_check_inplace(L, S, a, "index_add_");
    ltensor *ix = push_index0(L, S, a->t, dim, 3, "index_add_");
    TL_CALL(L, S, tide_index_add_(S->ctx, a->t, dim, ix->t, src->t));
    tl_free_temporary(ix);
    tl_inplace_done(L, S, "index_add_", rec);
    lua_settop(L, 1);
    return 1;
}

/* where(cond, a, b); numbers become 0-d tensors on cond's device. t:where(cond, b) is
 * where(cond, t, b) and is recorded with the arguments in that order. */
static int where_impl(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    ltensor        *c = tl_check(L, 1, "where");
    ltensor        *ab[2];
    tl_max_args(L, 3, "where");
    /* PyTorch 1.13's deprecated byte condition (pytorch-crf's masks) */
    tl_byte_mask_to_bool(L, 1, "uint8_where",
                         "where received a uint8 condition tensor. This behavior is deprecated "
                         "and will be removed in a future version of PyTorch. Use a boolean "
                         "condition instead.");
    c = tl_test(L, 1);
    for (int k = 0; k < 2; k++)
        ab[k] = tl_test(L, 2 + k);
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
                            : tide_default_float();
        if (o && o->t && !tide_dtype_is_float(dt)) {
            /* beside an integer or bool tensor the number promotes, as in arithmetic: 2.5 makes
             * the default float (it was cut to 2), an integer makes a bool one int64 */
            tide_scalar v = tl_scalar(L, 2 + k);
            int         integral = v.is_int || (v.d == floor(v.d) && isfinite(v.d));
            dt = !integral ? tide_default_float() : dt == TIDE_DTYPE_BOOL ? TIDE_DTYPE_I64 : dt;
        }
        ab[k] = tl_push_scalar(L, S, tl_scalar(L, 2 + k), dt, tide_tensor_device(c->t), "where");
    }
    ltensor *r = tl_push_empty(L);
    TL_CALL(L, S, tide_where(S->ctx, c->t, ab[0]->t, ab[1]->t, &r->t));
    tl_gc_hint(L, S, tide_tensor_nbytes(r->t));
    int rg = (ab[0]->requires_grad || ab[1]->requires_grad);
    if (rg && S->grad_enabled)
        tl_record(L, S, "where", 3, -1, 0);
    return 1;
}

/* tide.where(cond) alone is torch.where's one-argument form: cond:nonzero({as_tuple = true}) */
static int l_where(lua_State *L) {
    if (lua_gettop(L) == 1) {
        tl_check(L, 1, "where");
        lua_getfield(L, 1, "nonzero");
        lua_pushvalue(L, 1);
        lua_createtable(L, 0, 1);
        lua_pushboolean(L, 1);
        lua_setfield(L, -2, "as_tuple");
        lua_call(L, 2, 1);
        return 1;
    }
    return where_impl(L);
}

static int o_where(lua_State *L) {
    tl_max_args(L, 3, "where");
    lua_pushvalue(L, 1); /* t, cond, b -> cond, t, b */
    lua_pushvalue(L, 2);
    lua_replace(L, 1);
    lua_replace(L, 2);
    return where_impl(L);
}

void tl_open_indexing(lua_State *L, int mod, int methods) {
    static const luaL_Reg meths[] = {{"index_select", o_index_select},
                                     {"index_add_", o_index_add_},
                                     {"where", o_where},
                                     {NULL, NULL}};
    tl_register(L, methods, meths);
    static const luaL_Reg funcs[] = {
        {"index_select", o_index_select}, {"where", l_where}, {NULL, NULL}};
    tl_register(L, mod, funcs);
}
