/* linalg.c — t:matmul(u) and tide.matmul(a, b); the decompositions' kernels for tide.linalg. */
#include "binding.h"

static int o_matmul(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    /* a complex operand (lua/tide/complex/tensor.lua, a Lua class): four real matmuls there */
    if (tl_is_class_table(L, 1, TL_COMPLEX_CLASS) || tl_is_class_table(L, 2, TL_COMPLEX_CLASS))
        return tl_call_lua(L, "tide.complex.tensor", "matmul");
    TL_AUTOCAST(L, S, TL_AUTOCAST_LOWER, 1, 2);
    ltensor *a = tl_check(L, 1, "matmul"), *b = tl_check(L, 2, "matmul");
    tl_max_args(L, 2, "matmul");
    ltensor *r = tl_push_like(L, 1);
    TL_CALL(L, S, tide_matmul(S->ctx, a->t, b->t, &r->t));
    return tl_done(L, S, a->requires_grad || b->requires_grad ? "matmul" : NULL, 2);
}

/* the solvers with one result r, the call expr: nil where the device has none; otherwise the
 * call again through TL_CALL (memory reclaimed and retried, or raised) on failure */
#define ONE_RESULT(L, S, r, expr)                                                                  \
    do {                                                                                           \
        tide_status one_ = (expr);                                                                 \
        if (one_ == TIDE_ENOTSUP) {                                                                \
            lua_pushnil(L);                                                                        \
            return 1;                                                                              \
        }                                                                                          \
        if (one_ != TIDE_OK)                                                                       \
            TL_CALL(L, S, expr);                                                                   \
        tl_gc_hint(L, S, tide_tensor_nbytes((r)->t));                                              \
        return 1;                                                                                  \
    } while (0)

/* the solvers with two results a and b: the same */
#define TWO_RESULTS(L, S, a, b, expr)                                                              \
    do {                                                                                           \
        tide_status two_ = (expr);                                                                 \
        if (two_ == TIDE_ENOTSUP) {                                                                \
            lua_pushnil(L);                                                                        \
            return 1;                                                                              \
        }                                                                                          \
        if (two_ != TIDE_OK)                                                                       \
            TL_CALL(L, S, expr);                                                                   \
        tl_gc_hint(L, S, tide_tensor_nbytes((a)->t) + tide_tensor_nbytes((b)->t));                 \
        return 2;                                                                                  \
    } while (0)

/* eigh(a, upper): w and v from the device's own solver, or nil where it has none (tide.linalg
 * then rotates in tensor ops). Without recording: tide.linalg records its own node. */
static int l_eigh(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    ltensor        *a = tl_check(L, 1, "linalg.eigh");
    int             upper = lua_toboolean(L, 2);
    lua_settop(L, 2);
    ltensor *w = tl_push_empty(L), *v = tl_push_empty(L);
    TWO_RESULTS(L, S, w, v, tide_linalg_eigh(S->ctx, a->t, upper, &w->t, &v->t));
}

/* eig(a, vectors): w (and v when vectors) from the device's own solver, as (real, imaginary)
 * pairs, or nil where it has none (tide.linalg then runs it on the host) */
static int l_eig(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    ltensor        *a = tl_check(L, 1, "linalg.eig");
    int             vectors = lua_toboolean(L, 2);
    lua_settop(L, 2);
    ltensor *w = tl_push_empty(L);
    if (!vectors)
        ONE_RESULT(L, S, w, tide_linalg_eig(S->ctx, a->t, &w->t, NULL));
    ltensor *v = tl_push_empty(L);
    TWO_RESULTS(L, S, w, v, tide_linalg_eig(S->ctx, a->t, &w->t, &v->t));
}

/* svd(a): u, s and vh of the reduced SVD from the device's own solver, or nil */
static int l_svd(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    ltensor        *a = tl_check(L, 1, "linalg.svd");
    lua_settop(L, 1);
    ltensor    *u = tl_push_empty(L), *s = tl_push_empty(L), *vh = tl_push_empty(L);
    tide_status st = tide_linalg_svd(S->ctx, a->t, &u->t, &s->t, &vh->t);
    if (st == TIDE_ENOTSUP) {
        lua_pushnil(L);
        return 1;
    }
    if (st != TIDE_OK)
        TL_CALL(L, S, tide_linalg_svd(S->ctx, a->t, &u->t, &s->t, &vh->t));
    tl_gc_hint(L, S, tide_tensor_nbytes(u->t) + tide_tensor_nbytes(vh->t));
    return 3;
}

/* lu_factor(a): lu and pivots from the device's own solver, or nil */
static int l_lu_factor(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    ltensor        *a = tl_check(L, 1, "linalg.lu_factor");
    lua_settop(L, 1);
    ltensor *lu = tl_push_empty(L), *piv = tl_push_empty(L);
    TWO_RESULTS(L, S, lu, piv, tide_linalg_lu_factor(S->ctx, a->t, &lu->t, &piv->t));
}

/* qr(a, complete): q and r from the device's own solver, or nil */
static int l_qr(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    ltensor        *a = tl_check(L, 1, "linalg.qr");
    int             complete = lua_toboolean(L, 2);
    lua_settop(L, 2);
    ltensor *q = tl_push_empty(L), *r = tl_push_empty(L);
    TWO_RESULTS(L, S, q, r, tide_linalg_qr(S->ctx, a->t, complete, &q->t, &r->t));
}

/* lu_solve(lu, pivots, b) */
static int l_lu_solve(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    ltensor *lu = tl_check(L, 1, "linalg.lu_solve"), *piv = tl_check(L, 2, "linalg.lu_solve"),
            *b = tl_check(L, 3, "linalg.lu_solve");
    lua_settop(L, 3);
    ltensor *x = tl_push_empty(L);
    ONE_RESULT(L, S, x, tide_linalg_lu_solve(S->ctx, lu->t, piv->t, b->t, &x->t));
}

/* cholesky(a): the lower factor */
static int l_cholesky(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    ltensor        *a = tl_check(L, 1, "linalg.cholesky");
    lua_settop(L, 1);
    ltensor *l = tl_push_empty(L);
    ONE_RESULT(L, S, l, tide_linalg_cholesky(S->ctx, a->t, &l->t));
}

/* solve_triangular(a, b, upper, unit) */
static int l_solve_triangular(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    ltensor        *a = tl_check(L, 1, "linalg.solve_triangular");
    ltensor        *b = tl_check(L, 2, "linalg.solve_triangular");
    int             upper = lua_toboolean(L, 3), unit = lua_toboolean(L, 4);
    lua_settop(L, 4);
    ltensor *x = tl_push_empty(L);
    ONE_RESULT(L, S, x, tide_linalg_solve_triangular(S->ctx, a->t, b->t, upper, unit, &x->t));
}

/* ldl_factor(a): ld, pivots and info from the device's own solver, or nil (tide.linalg then runs
 * it on the host) */
static int l_ldl_factor(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    ltensor        *a = tl_check(L, 1, "linalg.ldl_factor");
    lua_settop(L, 1);
    ltensor    *ld = tl_push_empty(L), *piv = tl_push_empty(L), *info = tl_push_empty(L);
    tide_status st = tide_linalg_ldl_factor(S->ctx, a->t, &ld->t, &piv->t, &info->t);
    if (st == TIDE_ENOTSUP) {
        lua_pushnil(L);
        return 1;
    }
    if (st != TIDE_OK)
        TL_CALL(L, S, tide_linalg_ldl_factor(S->ctx, a->t, &ld->t, &piv->t, &info->t));
    tl_gc_hint(L, S, tide_tensor_nbytes(ld->t) + tide_tensor_nbytes(piv->t));
    return 3;
}

/* ldl_solve(ld, pivots, b), or nil */
static int l_ldl_solve(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    ltensor *ld = tl_check(L, 1, "linalg.ldl_solve"), *piv = tl_check(L, 2, "linalg.ldl_solve"),
            *b = tl_check(L, 3, "linalg.ldl_solve");
    lua_settop(L, 3);
    ltensor *x = tl_push_empty(L);
    ONE_RESULT(L, S, x, tide_linalg_ldl_solve(S->ctx, ld->t, piv->t, b->t, &x->t));
}

void tl_open_linalg(lua_State *L, int mod, int methods) {
    static const luaL_Reg meths[] = {{"matmul", o_matmul}, {NULL, NULL}};
    tl_register(L, methods, meths);
    static const luaL_Reg funcs[] = {{"matmul", o_matmul}, {NULL, NULL}};
    tl_register(L, mod, funcs);
    static const luaL_Reg internal[] = {{"eigh", l_eigh},
                                        {"eig", l_eig},
                                        {"svd", l_svd},
                                        {"qr", l_qr},
                                        {"lu_factor", l_lu_factor},
                                        {"lu_solve", l_lu_solve},
                                        {"cholesky", l_cholesky},
                                        {"solve_triangular", l_solve_triangular},
                                        {"ldl_factor", l_ldl_factor},
                                        {"ldl_solve", l_ldl_solve},
                                        {NULL, NULL}};
    tl_register_internal(L, mod, internal);
}
