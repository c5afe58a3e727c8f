/*
 * rnn_cell.c — tide._internal.rnn_cell and rnn_cell_backward: one fused recurrent-cell step
 * (tide_rnn_cell). nn's RNN/LSTM/GRU call them and record the autograd node themselves (the
 * formula is the rnn_cell def in lua/tide/nn/_rnn.lua), so both refuse inputs that
 * require grad under grad mode.
 */
#include "binding.h"
#include <string.h>

static tide_rnn_kind check_kind(lua_State *L, int idx, const char *op) {
    static const char *const names[] = {"rnn_tanh", "rnn_relu", "lstm", "gru", NULL};
    const char              *s = lua_type(L, idx) == LUA_TSTRING ? lua_tostring(L, idx) : NULL;
    for (int i = 0; s && names[i]; i++)
        if (strcmp(s, names[i]) == 0)
            return (tide_rnn_kind)i;
    tl_error(L, "tide: %s: kind must be \"rnn_tanh\", \"rnn_relu\", \"lstm\" or \"gru\", got %s",
             op, s ? s : luaL_typename(L, idx));
    return TIDE_RNN_TANH;
}

/* the tensor at idx, or NULL for nil */
static tide_tensor *opt_tensor(lua_State *L, int idx, const char *op) {
    return lua_isnoneornil(L, idx) ? NULL : tl_check(L, idx, op)->t;
}

/* rnn_cell(kind, gi, gh[, prev]) -> out, saved (nil for the plain RNN) */
static int l_rnn_cell(lua_State *L) {
    static const char op[] = "rnn_cell";
    tide_lua_state   *S = TL_STATE(L);
    tide_rnn_kind     kind = check_kind(L, 1, op);
    ltensor          *gi = tl_check(L, 2, op), *gh = tl_check(L, 3, op);
    tide_tensor      *prev = opt_tensor(L, 4, op);
    lua_settop(L, 4);
    tl_not_differentiable(L, S, op, 4);
    ltensor *r = tl_push_empty(L), *sv = tl_push_empty(L);
    TL_CALL(L, S, tide_rnn_cell(S->ctx, kind, gi->t, gh->t, prev, &r->t, &sv->t));
    tl_gc_hint(L, S, tide_tensor_nbytes(r->t) + (sv->t ? tide_tensor_nbytes(sv->t) : 0));
    if (!sv->t) {
        lua_pop(L, 1);
        lua_pushnil(L);
    }
    return 2;
}

/* rnn_cell_backward(kind, saved, prev, out, grad_out) -> dgi, dgh (GRU; else nil), dprev */
static int l_rnn_cell_backward(lua_State *L) {
    static const char op[] = "rnn_cell_backward";
    tide_lua_state   *S = TL_STATE(L);
    tide_rnn_kind     kind = check_kind(L, 1, op);
    tide_tensor      *saved = opt_tensor(L, 2, op), *prev = opt_tensor(L, 3, op);
    ltensor          *out = tl_check(L, 4, op), *go = tl_check(L, 5, op);
    lua_settop(L, 5);
    tl_not_differentiable(L, S, op, 5);
    ltensor *di = tl_push_empty(L), *dh = tl_push_empty(L), *dp = tl_push_empty(L);
    TL_CALL(
        L, S,
        tide_rnn_cell_backward(S->ctx, kind, saved, prev, out->t, go->t, &di->t, &dh->t, &dp->t));
    for (int i = 8; i >= 7; i--)
        if (!((ltensor *)lua_touserdata(L, i))->t) {
            lua_pushnil(L);
            lua_replace(L, i);
        }
    return 3;
}

void tl_open_rnn_cell(lua_State *L, int mod) {
    static const luaL_Reg funcs[] = {
        {"rnn_cell", l_rnn_cell}, {"rnn_cell_backward", l_rnn_cell_backward}, {NULL, NULL}};
    tl_register_internal(L, mod, funcs);
}
