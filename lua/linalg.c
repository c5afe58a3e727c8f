/* linalg.c — t:matmul(u) and tide.matmul(a, b); the decompositions' kernels for tide.linalg. */
#include "binding.h"

static int o_matmul(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    ltensor        *a = tl_check(L, 1, "matmul"), *b = tl_check(L, 2, "matmul");
    tl_max_args(L, 2, "matmul");
    ltensor *r = tl_push_like(L, 1);
    TL_CALL(L, S, tide_matmul(S->ctx, a->t, b->t, &r->t));
    return tl_done(L, S, a->requires_grad || b->requires_grad ? "matmul" : NULL, 2);
}

/* eigh(a, upper): w and v from the device's own solver, or nil where it has none (tide.linalg
 * then rotates in tensor ops). Without recording: tide.linalg records its own node. */
static int l_eigh(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    ltensor        *a = tl_check(L, 1, "linalg.eigh");
    int             upper = lua_toboolean(L, 2);
    lua_settop(L, 2);
    ltensor    *w = tl_push_empty(L), *v = tl_push_empty(L);
    tide_status st = tide_linalg_eigh(S->ctx, a->t, upper, &w->t, &v->t);
    if (st == TIDE_ENOTSUP) {
        lua_pushnil(L);
        return 1;
    }
    if (st != TIDE_OK) /* again through TL_CALL: memory reclaimed and retried, or raised */
        TL_CALL(L, S, tide_linalg_eigh(S->ctx, a->t, upper, &w->t, &v->t));
    tl_gc_hint(L, S, tide_tensor_nbytes(v->t));
    return 2;
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

void tl_open_linalg(lua_State *L, int mod, int methods) {
    static const luaL_Reg meths[] = {{"matmul", o_matmul}, {NULL, NULL}};
    tl_register(L, methods, meths);
    static const luaL_Reg funcs[] = {{"matmul", o_matmul}, {NULL, NULL}};
    tl_register(L, mod, funcs);
    static const luaL_Reg internal[] = {{"eigh", l_eigh}, {"svd", l_svd}, {NULL, NULL}};
    tl_register_internal(L, mod, internal);
}
