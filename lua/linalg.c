/* linalg.c — t:matmul(u) and tide.matmul(a, b). */
#include "binding.h"

static int o_matmul(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    ltensor        *a = tl_check(L, 1, "matmul"), *b = tl_check(L, 2, "matmul");
    tl_max_args(L, 2, "matmul");
    ltensor *r = tl_push_like(L, 1);
    TL_CALL(L, S, tide_matmul(S->ctx, a->t, b->t, &r->t));
    return tl_done(L, S, a->requires_grad || b->requires_grad ? "matmul" : NULL, 2);
}

void tl_open_linalg(lua_State *L, int mod, int methods) {
    static const luaL_Reg meths[] = {{"matmul", o_matmul}, {NULL, NULL}};
    tl_register(L, methods, meths);
    static const luaL_Reg funcs[] = {{"matmul", o_matmul}, {NULL, NULL}};
    tl_register(L, mod, funcs);
}
