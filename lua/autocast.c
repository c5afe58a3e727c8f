/*
 * autocast.c — tide.amp.autocast in the binding. While a region is on, tide.amp has set a
 * caster (S->autocast_ref); an op whose policy asks for it (matmul: LOWER; the op table's
 * AUTOCAST_FP32 rows, softmax: FP32) hands each float tensor argument to the caster first,
 * which returns it cast (a recorded `to`, so gradients reach the float32 parameters) or as it
 * is where the region does not apply (another device type, float64, the dtype already right).
 * Outside a region the cost is one test per op (TL_AUTOCAST).
 */
#include "args.h"

void tl_autocast(lua_State *L, tide_lua_state *S, int policy, int first, int last) {
    for (int i = first; i <= last; i++) {
        ltensor *u = tl_test(L, i);
        if (!u || !u->t)
            continue;
        tide_dtype dt = tide_tensor_dtype(u->t);
        if (!tide_dtype_is_float(dt) || dt == TIDE_DTYPE_F64)
            continue; /* PyTorch's autocast leaves integers and float64 alone */
        lua_rawgeti(L, LUA_REGISTRYINDEX, S->autocast_ref);
        lua_pushvalue(L, i);
        lua_pushinteger(L, policy);
        lua_call(L, 2, 1);
        lua_replace(L, i);
    }
}

/* _internal.set_autocast(caster | nil): the caster of the region now on, or none; returns the
 * previous one (tide.amp restores it when the region ends) */
static int l_set_autocast(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    if (!lua_isnil(L, 1))
        luaL_checktype(L, 1, LUA_TFUNCTION);
    lua_settop(L, 1);
    if (S->autocast_ref == LUA_NOREF)
        lua_pushnil(L);
    else
        lua_rawgeti(L, LUA_REGISTRYINDEX, S->autocast_ref);
    luaL_unref(L, LUA_REGISTRYINDEX, S->autocast_ref);
    lua_pushvalue(L, 1);
    S->autocast_ref = lua_isnil(L, 1) ? (lua_pop(L, 1), LUA_NOREF) : luaL_ref(L, LUA_REGISTRYINDEX);
    return 1;
}

void tl_open_autocast(lua_State *L, int mod) {
    static const luaL_Reg internal[] = {{"set_autocast", l_set_autocast}, {NULL, NULL}};
    tl_register_internal(L, mod, internal);
    /* _internal.autocast_policies: the numbers the caster is called with */
    tl_push_internal(L, mod);
    lua_createtable(L, 0, 2);
    lua_pushinteger(L, TL_AUTOCAST_LOWER);
    lua_setfield(L, -2, "lower");
    lua_pushinteger(L, TL_AUTOCAST_FP32);
    lua_setfield(L, -2, "fp32");
    lua_setfield(L, -2, "autocast_policies");
    lua_pop(L, 1);
}
