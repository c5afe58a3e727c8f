/* fills.c — the in-place writes that replace a tensor's values: fill_, zero_, copy_, uniform_,
 * normal_. */
#include "binding.h"

/* t:fill_(v), v a 0-d tensor (PyTorch's fill_ takes one): copied in (converted to t's dtype
 * and device) and recorded as copy_, whose formula gives v the sum of t's gradient */
static int fill_from_tensor(lua_State *L, tide_lua_state *S, ltensor *a, ltensor *v) {
    if (!v->t)
        return tl_error(L, "tide: fill_: attempt to use a freed tensor");
    tl_max_args(L, 2, "fill_");
    if (tide_tensor_ndim(v->t) != 0)
        return tl_error(L,
                        "tide: fill_: value must be a number, got a tensor of %d dims; a 0-d "
                        "tensor works too: pass value:reshape({}) or value:item()",
                        tide_tensor_ndim(v->t));
    int rec = tl_check_inplace(L, S, a, "fill_");
    TL_CALL_AS(L, S, tide_tensor_copy_(S->ctx, a->t, v->t), "copy_", "fill_");
    tl_inplace_done(L, S, "copy_", rec);
    lua_settop(L, 1);
    return 1;
}

static int o_fill_(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    ltensor        *a = tl_check(L, 1, "fill_"), *v = tl_test(L, 2);
    if (v)
        return fill_from_tensor(L, S, a, v);
    if (!lua_isboolean(L, 2) && lua_type(L, 2) != LUA_TNUMBER)
        return tl_error(L, "tide: fill_: value must be a number, got %s", tl_typename(L, 2));
    tl_max_args(L, 2, "fill_");
    int rec = tl_check_inplace(L, S, a, "fill_");
    TL_CALL(L, S, tide_fill_x_(S->ctx, a->t, tl_scalar(L, 2)));
    tl_inplace_done(L, S, "fill_", rec);
    lua_settop(L, 1);
    return 1;
}

static int o_zero_(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    ltensor        *a = tl_check(L, 1, "zero_");
    if (lua_gettop(L) >= 2 && !lua_isnil(L, 2))
        return tl_error(L,
                        "tide: zero_: takes no argument, got argument #2 (%s); fill_(v) fills "
                        "with a value",
                        tl_typename(L, 2));
    tl_max_args(L, 1, "zero_");
    int rec = tl_check_inplace(L, S, a, "zero_");
    TL_CALL(L, S, tide_fill_(S->ctx, a->t, 0));
    tl_inplace_done(L, S, "zero_", rec);
    lua_settop(L, 1);
    return 1;
}

static int o_copy_(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    ltensor        *a = tl_check(L, 1, "copy_"), *b = tl_check(L, 2, "copy_");
    tl_max_args(L, 2, "copy_");
    int rec = tl_check_inplace(L, S, a, "copy_");
    TL_CALL(L, S, tide_tensor_copy_(S->ctx, a->t, b->t));
    tl_inplace_done(L, S, "copy_", rec);
    lua_settop(L, 1);
    return 1;
}

static int random_(lua_State *L, tide_random_kind kind, const char *name) {
    tide_lua_state *S = TL_STATE(L);
    ltensor        *a = tl_check(L, 1, name);
    double          lo = tl_opt_number(L, 2, kind == TIDE_RANDOM_UNIFORM ? 0 : 0, name,
                              kind == TIDE_RANDOM_UNIFORM ? "from" : "mean");
    double          hi = tl_opt_number(L, 3, 1, name, kind == TIDE_RANDOM_UNIFORM ? "to" : "std");
    tl_max_args(L, 3, name);
    int rec = tl_check_inplace(L, S, a, name);
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
/* t:_keep_mask_(p, scale): dropout's mask in place, scale with probability 1 - p, else 0 (nn's
 * dropout; its argument checks come first) */
static int o_keep_mask_(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    ltensor        *a = tl_check(L, 1, "dropout");
    double          p = tl_check_number(L, 2, "dropout", "p");
    double          scale = tl_check_number(L, 3, "dropout", "scale");
    int             rec = tl_check_inplace(L, S, a, "dropout");
    TL_CALL(L, S, tide_random_(S->ctx, a->t, TIDE_RANDOM_KEEP, p, scale));
    tl_inplace_done(L, S, "dropout", rec);
    lua_settop(L, 1);
    return 1;
}

void tl_open_fills(lua_State *L, int methods) {
    static const luaL_Reg meths[] = {{"fill_", o_fill_},
                                     {"zero_", o_zero_},
                                     {"copy_", o_copy_},
                                     {"uniform_", o_uniform_},
                                     {"normal_", o_normal_},
                                     {"_keep_mask_", o_keep_mask_},
                                     {NULL, NULL}};
    tl_register(L, methods, meths);
}
