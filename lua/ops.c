/*
 * ops.c — what the tensor-method files share (the result epilogue, number and integer
 * arguments), and tl_open_ops, which registers each file's methods and functions:
 * op_families.c (the rows of include/tide_ops.def), linalg.c, views.c, indexing.c, join.c,
 * fills.c, transfers.c, nn_kernels.c.
 *
 * Every method: check arguments, push the result userdata, call the core (TL_CALL raises), tell
 * the collector about new bytes, and let autograd record when an argument requires grad.
 */
#include "binding.h"

/* gc hint + autograd record for a new result at the top of the stack */
int tl_done(lua_State *L, tide_lua_state *S, const char *name, int nargs) {
    ltensor *r = lua_touserdata(L, -1);
    tl_gc_hint(L, S, tide_tensor_nbytes(r->t));
    if (name && S->grad_enabled)
        tl_record(L, S, name, nargs, -1, 0);
    return 1;
}

/* a view result: no new bytes */
int tl_done_view(lua_State *L, tide_lua_state *S, const char *name, int nargs) {
    if (S->grad_enabled)
        tl_record(L, S, name, nargs, -1, 0);
    return 1;
}

double tl_opt_number(lua_State *L, int idx, double def, const char *op, const char *what) {
    if (lua_isnoneornil(L, idx))
        return def;
    if (lua_type(L, idx) != LUA_TNUMBER)
        tl_error(L, "tide: %s: %s must be a number, got %s", op, what, tl_typename(L, idx));
    return lua_tonumber(L, idx);
}

lua_Integer tl_check_int(lua_State *L, int idx, const char *op, const char *what) {
    int         isint;
    lua_Integer v = lua_tointegerx(L, idx, &isint);
    if (!isint || lua_type(L, idx) != LUA_TNUMBER)
        tl_error(L, "tide: %s: %s must be an integer, got %s", op, what,
                 lua_type(L, idx) == LUA_TNUMBER ? lua_tostring(L, idx) : tl_typename(L, idx));
    return v;
}

/* the binding's own checks of plain arguments: lauxlib's luaL_check* would raise "bad argument
 * #1 to 'size' (number expected, got table)", without `tide:`, the op's name or the fix */
double tl_check_number(lua_State *L, int idx, const char *op, const char *what) {
    if (lua_type(L, idx) != LUA_TNUMBER)
        tl_error(L, "tide: %s: %s must be a number, got %s", op, what, tl_typename(L, idx));
    return lua_tonumber(L, idx);
}

const char *tl_check_string(lua_State *L, int idx, const char *op, const char *what) {
    if (lua_type(L, idx) != LUA_TSTRING)
        tl_error(L, "tide: %s: %s must be a string, got %s", op, what, tl_typename(L, idx));
    return lua_tostring(L, idx);
}

void tl_open_ops(lua_State *L, int mod, int methods) {
    tl_open_op_families(L, mod, methods);
    tl_open_linalg(L, mod, methods);
    tl_open_views(L, mod, methods);
    tl_open_indexing(L, mod, methods);
    tl_open_ordering(L, mod, methods);
    tl_open_count_ops(L, mod, methods);
    tl_open_join(L, mod);
    tl_open_fills(L, methods);
    tl_open_transfers(L, methods);
    tl_open_nn_kernels(L, mod, methods);
    tl_open_rnn_cell(L, mod);
}
