/* join.c — tide.cat(tensors[, dim]) and tide.stack(tensors[, dim]). */
#include "binding.h"

/* a list with a complex tensor (lua/tide/complex/tensor.lua, a Lua class): joined in Lua */
static int join_complex(lua_State *L, int nargs, const char *op) {
    lua_settop(L, nargs);
    return tl_call_lua(L, "tide.complex", op);
}

static int l_cat(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    int             nargs = lua_gettop(L) < 2 ? lua_gettop(L) : 2;
    tl_max_args(L, 2, "cat");
    if (lua_type(L, 1) != LUA_TTABLE)
        return tl_error(L, "tide: cat: expected a table of tensors, got %s", luaL_typename(L, 1));
    int n = (int)lua_rawlen(L, 1);
    if (n == 0)
        return tl_error(L, "tide: cat: expected at least one tensor, got an empty table");
    const tide_tensor **ts = lua_newuserdatauv(L, (size_t)n * sizeof *ts, 0);
    int                 rg = 0;
    for (int i = 0; i < n; i++) {
        lua_rawgeti(L, 1, i + 1);
        ltensor *u = tl_test(L, -1);
        if (!u && tl_is_class_table(L, -1, TL_COMPLEX_CLASS))
            return join_complex(L, nargs, "cat");
        if (!u || !u->t)
            return tl_error(L, "tide: cat: element %d of the table is %s; expected a tensor", i + 1,
                            u ? "a freed tensor" : luaL_typename(L, -1));
        ts[i] = u->t;
        rg |= u->requires_grad;
        lua_pop(L, 1);
    }
    int      dim = tl_dim(L, ts[tide_cat_reference(n, ts)],
                     lua_isnoneornil(L, 2) ? 1 : tl_check_int(L, 2, "cat", "dim"), "cat", 0);
    ltensor *r = tl_push_empty(L);
    TL_CALL(L, S, tide_cat(S->ctx, n, ts, dim, &r->t));
    return tl_done(L, S, rg ? "cat" : NULL, nargs);
}

/* tide.stack(tensors[, dim]): the core checks the shapes as given, unsqueezes and cats */
static int l_stack(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    int             nargs = lua_gettop(L) < 2 ? lua_gettop(L) : 2;
    tl_max_args(L, 2, "stack");
    if (lua_type(L, 1) != LUA_TTABLE || lua_rawlen(L, 1) == 0)
        return tl_error(L, "tide: stack: expected a non-empty table of tensors, got %s",
                        lua_type(L, 1) == LUA_TTABLE ? "an empty table" : luaL_typename(L, 1));
    int                 n = (int)lua_rawlen(L, 1), rg = 0, dim = 0;
    const tide_tensor **ts = lua_newuserdatauv(L, (size_t)n * sizeof *ts, 0);
    for (int i = 0; i < n; i++) {
        lua_rawgeti(L, 1, i + 1);
        ltensor *u = tl_test(L, -1);
        if (!u && tl_is_class_table(L, -1, TL_COMPLEX_CLASS))
            return join_complex(L, nargs, "stack");
        if (!u || !u->t)
            return tl_error(L, "tide: stack: element %d of the table is %s; expected a tensor",
                            i + 1, u ? "a freed tensor" : luaL_typename(L, -1));
        lua_pop(L, 1);
        if (i == 0)
            dim = tl_dim(L, u->t, lua_isnoneornil(L, 2) ? 1 : tl_check_int(L, 2, "stack", "dim"),
                         "stack", 1);
        rg |= u->requires_grad;
        ts[i] = u->t;
    }
    ltensor *r = tl_push_empty(L);
    TL_CALL(L, S, tide_stack(S->ctx, n, ts, dim, &r->t));
    return tl_done(L, S, rg ? "stack" : NULL, nargs);
}

void tl_open_join(lua_State *L, int mod) {
    static const luaL_Reg funcs[] = {{"cat", l_cat}, {"stack", l_stack}, {NULL, NULL}};
    tl_register(L, mod, funcs);
}
