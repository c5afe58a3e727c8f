/* count_ops.c — nonzero, unique and repeat_interleave (src/ops_count.c: results whose size
 * depends on values); indices and dims 1-based, options as a last table. */
#include "binding.h"

/* the options table at idx (nil: none), checked against known */
static int opts_at(lua_State *L, int idx, const char *op, const char *const *known,
                   const char *example) {
    if (lua_isnoneornil(L, idx))
        return 0;
    if (lua_type(L, idx) != LUA_TTABLE)
        tl_error(L, "tide: %s: options must be a table such as %s, got %s", op, example,
                 tl_typename(L, idx));
    tl_check_options(L, idx, op, known, NULL);
    return 1;
}

/* the boolean option key of the table at idx (def when absent) */
static int opt_flag(lua_State *L, int idx, const char *key, int def, const char *op) {
    int v = def;
    if (lua_getfield(L, idx, key) != LUA_TNIL) {
        if (lua_type(L, -1) != LUA_TBOOLEAN)
            tl_error(L, "tide: %s: %s must be a boolean, got %s", op, key, tl_typename(L, -1));
        v = lua_toboolean(L, -1);
    }
    lua_pop(L, 1);
    return v;
}

/* the integer option key of the table at idx; 0 when absent */
static int opt_int(lua_State *L, int idx, const char *key, lua_Integer *v, const char *op) {
    int has = lua_getfield(L, idx, key) != LUA_TNIL;
    if (has)
        *v = tl_check_int(L, lua_gettop(L), op, key);
    lua_pop(L, 1);
    return has;
}

/* t:nonzero([{as_tuple = false}]): int64 [n, ndim] of 1-based indices; as_tuple: a list of
 * ndim 1-d tensors, one per dim (one for a 0-d tensor, as PyTorch) */
static int o_nonzero(lua_State *L) {
    static const char *const known[] = {"as_tuple", NULL};
    tide_lua_state          *S = TL_STATE(L);
    ltensor                 *a = tl_check(L, 1, "nonzero");
    tl_max_args(L, 2, "nonzero");
    int as_tuple = opts_at(L, 2, "nonzero", known, "{as_tuple = true}") &&
                   opt_flag(L, 2, "as_tuple", 0, "nonzero");
    ltensor *r0 = tl_push_empty(L);
    TL_CALL(L, S, tide_nonzero(S->ctx, a->t, &r0->t));
    ltensor *r = tl_push_index_base(L, S, r0->t, 1);
    tl_gc_hint(L, S, tide_tensor_nbytes(r->t));
    if (!as_tuple)
        return 1;
    int nd = tide_tensor_ndim(a->t), cols = nd ? nd : 1;
    lua_createtable(L, cols, 0);
    for (int d = 0; d < cols; d++) {
        ltensor *c = tl_push_empty(L);
        if (nd) {
            tide_tensor *v = NULL;
            TL_CALL(L, S, tide_tensor_select(r->t, 1, d, &v));
            c->t = v;
            ltensor *cc = tl_push_empty(L);
            TL_CALL(L, S, tide_tensor_contiguous(S->ctx, c->t, &cc->t));
            lua_remove(L, -2);
        } else { /* a 0-d tensor's element counts as position 1 of a 1-d one */
            int64_t n = tide_tensor_shape(r->t)[0];
            TL_CALL(L, S,
                    tide_tensor_full(S->ctx, tide_tensor_device(r->t), TIDE_DTYPE_I64, 1, &n,
                                     tide_scalar_i(1), &c->t));
        }
        lua_rawseti(L, -2, d + 1);
    }
    return 1;
}

/* t:unique([{sorted = true, return_inverse = false, return_counts = false, dim = nil}]) ->
 * values[, inverse][, counts]; always sorted (PyTorch's sorted = false leaves the order
 * unspecified, so sorted is a valid answer) */
static int o_unique(lua_State *L) {
    static const char *const known[] = {"sorted", "return_inverse", "return_counts", "dim", NULL};
    tide_lua_state          *S = TL_STATE(L);
    ltensor                 *a = tl_check(L, 1, "unique");
    tl_max_args(L, 2, "unique");
    int         inverse = 0, counts = 0, dim = TIDE_ALL_DIMS;
    lua_Integer d1;
    if (opts_at(L, 2, "unique", known, "{return_counts = true}")) {
        (void)opt_flag(L, 2, "sorted", 1, "unique");
        inverse = opt_flag(L, 2, "return_inverse", 0, "unique");
        counts = opt_flag(L, 2, "return_counts", 0, "unique");
        if (opt_int(L, 2, "dim", &d1, "unique"))
            dim = tl_dim(L, a->t, d1, "unique", 0);
    }
    tl_not_differentiable(L, S, "unique", 1);
    ltensor *v = tl_push_empty(L);
    ltensor *i = inverse ? tl_push_empty(L) : NULL;
    ltensor *c = counts ? tl_push_empty(L) : NULL;
    TL_CALL(L, S, tide_unique(S->ctx, a->t, dim, &v->t, i ? &i->t : NULL, c ? &c->t : NULL));
    /* every result counted: the inverse of a million values is 8 MB the collector must see */
    tl_gc_hint(L, S,
               tide_tensor_nbytes(v->t) + (i ? tide_tensor_nbytes(i->t) : 0) +
                   (c ? tide_tensor_nbytes(c->t) : 0));
    if (i) /* 0-based groups to 1-based positions in values */
        tl_one_based(L, S, i);
    return 1 + inverse + counts;
}

/* the repeats at idx: nil when a number (*count set), else a tensor (a table of integers
 * becomes an int64 tensor on dev) */
static ltensor *repeats_arg(lua_State *L, tide_lua_state *S, int idx, tide_device *dev,
                            int64_t *count) {
    static const char op[] = "repeat_interleave";
    if (lua_type(L, idx) == LUA_TNUMBER) {
        *count = tl_check_int(L, idx, op, "repeats");
        return NULL;
    }
    if (lua_type(L, idx) == LUA_TTABLE) {
        int64_t      n = (int64_t)lua_rawlen(L, idx);
        tide_device *host = dev; /* written here, then moved to dev when off the host */
        if (tide_device_type_of(dev) != TIDE_DEVICE_CPU)
            tide_device_get_index(TIDE_DEVICE_CPU, 0, &host);
        ltensor *w = tl_push_empty(L);
        TL_CALL(L, S, tide_tensor_empty(S->ctx, host, TIDE_DTYPE_I64, 1, &n, &w->t));
        int64_t *p = tide_tensor_data(w->t);
        for (int64_t i = 0; i < n; i++) {
            lua_rawgeti(L, idx, (lua_Integer)i + 1);
            p[i] = tl_check_int(L, lua_gettop(L), op, "repeats");
            lua_pop(L, 1);
        }
        if (dev == host)
            return w;
        ltensor *r = tl_push_empty(L);
        TL_CALL(L, S, tide_tensor_to(S->ctx, w->t, dev, TIDE_DTYPE_I64, 0, &r->t));
        return r;
    }
    if (!tl_test(L, idx))
        tl_error(L,
                 "tide: %s: repeats must be an integer, a table of integers or an int64 tensor, "
                 "got %s",
                 op, tl_typename(L, idx));
    return tl_check(L, idx, op);
}

/* t:repeat_interleave(repeats[, dim[, {output_size =}] | {dim =, output_size =}]) and, with a
 * tensor of repeats alone, tide.repeat_interleave(repeats[, {output_size =}]): 1-based i
 * repeated repeats[i] times */
static int o_repeat_interleave(lua_State *L) {
    static const char *const known[] = {"dim", "output_size", NULL};
    static const char        op[] = "repeat_interleave";
    tide_lua_state          *S = TL_STATE(L);
    ltensor                 *a = tl_check(L, 1, op);
    tl_max_args(L, 4, op);
    lua_Integer size = -1, d1;
    if (lua_isnil(L, 2) || lua_type(L, 2) == LUA_TTABLE) { /* the repeats alone */
        if (lua_type(L, 2) == LUA_TTABLE && lua_rawlen(L, 2) > 0)
            goto with_input; /* t:repeat_interleave({1, 2}) */
        tl_max_args(L, 2, op);
        if (opts_at(L, 2, op, known + 1, "{output_size = 5}") &&
            opt_int(L, 2, "output_size", &size, op) && size < 0)
            return tl_error(L, "tide: %s: output_size must be non-negative, got %I", op, size);
        ltensor *r0 = tl_push_empty(L);
        TL_CALL(L, S, tide_repeat_interleave_index(S->ctx, a->t, (int64_t)size, &r0->t));
        tl_push_index_base(L, S, r0->t, 1);
        return tl_done(L, S, NULL, 2);
    }
with_input:;
    int dim = TIDE_ALL_DIMS;
    if (lua_type(L, 3) == LUA_TNUMBER) {
        dim = tl_dim(L, a->t, tl_check_int(L, 3, op, "dim"), op, 0);
        /* t:repeat_interleave(r, dim, {output_size =}), PyTorch's keyword after dim */
        if (opts_at(L, 4, op, known + 1, "{output_size = 5}") &&
            opt_int(L, 4, "output_size", &size, op) && size < 0)
            return tl_error(L, "tide: %s: output_size must be non-negative, got %I", op, size);
    } else if (opts_at(L, 3, op, known, "{dim = 1}")) {
        tl_max_args(L, 3, op); /* the options end the arguments */
        lua_settop(L, 4);
        if (opt_int(L, 3, "dim", &d1, op))
            dim = tl_dim(L, a->t, d1, op, 0);
        if (opt_int(L, 3, "output_size", &size, op) && size < 0)
            return tl_error(L, "tide: %s: output_size must be non-negative, got %I", op, size);
    }
    int64_t  count = 0;
    ltensor *rep = repeats_arg(L, S, 2, tide_tensor_device(a->t), &count);
    ltensor *r = tl_push_empty(L);
    ltensor *i0 = tl_push_empty(L);
    TL_CALL(L, S,
            tide_repeat_interleave(S->ctx, a->t, dim, rep ? rep->t : NULL, count, (int64_t)size,
                                   &r->t, &i0->t));
    tl_gc_hint(L, S, tide_tensor_nbytes(r->t));
    if (a->requires_grad && S->grad_enabled) {
        /* the sources, 1-based: the gradient's index_add_ */
        tl_push_index_base(L, S, i0->t, 1);
        tl_record(L, S, op, 3, -3, -1);
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    return 1;
}

void tl_open_count_ops(lua_State *L, int mod, int methods) {
    static const luaL_Reg fns[] = {{"nonzero", o_nonzero},
                                   {"unique", o_unique},
                                   {"repeat_interleave", o_repeat_interleave},
                                   {NULL, NULL}};
    tl_register(L, methods, fns);
    tl_register(L, mod, fns);
}
