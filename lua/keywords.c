/* keywords.c — core._keywords(f, name): the trampoline that gives a Tensor method or a tide.X
 * function PyTorch's keyword arguments (lua/tide/tensor_keywords/). A call whose last non-nil
 * argument after the first is a table that is not a list goes to
 * tide.tensor_keywords.call(name, f, ...), which puts the names in their places; every other
 * call runs f at once. A C function of the binding runs on the trampoline's own frame (its
 * state is the trampoline's first upvalue too), so a plain call costs a few tests, not a Lua
 * wrapper's type() calls and argument copies. */
#include "binding.h"

/* upvalues: 1 the binding's state, 2 f, 3 name, 4 f is a binding C function reading only
 * upvalue 1 (run directly) */
static int keywords_call(lua_State *L) {
    int top = lua_gettop(L);
    while (top > 1 && lua_isnil(L, top))
        top--;
    if (top > 1 && lua_type(L, top) == LUA_TTABLE) {
        /* a list ({1, 2}: dims, sizes) is a value: a keyword table has no [1] */
        lua_rawgeti(L, top, 1);
        int is_list = !lua_isnil(L, -1);
        lua_pop(L, 1);
        if (!is_list) {
            lua_pushvalue(L, lua_upvalueindex(3));
            lua_insert(L, 1);
            lua_pushvalue(L, lua_upvalueindex(2));
            lua_insert(L, 2);
            return tl_call_lua(L, "tide.tensor_keywords", "call");
        }
    }
    if (lua_toboolean(L, lua_upvalueindex(4)))
        return lua_tocfunction(L, lua_upvalueindex(2))(L);
    lua_pushvalue(L, lua_upvalueindex(2));
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
    return lua_gettop(L);
}

/* core._keywords(f, name) -> f behind the trampoline */
static int l_keywords(lua_State *L) {
    luaL_checktype(L, 1, LUA_TFUNCTION);
    luaL_checkstring(L, 2);
    tl_push_state(L);
    int state = lua_gettop(L);
    /* direct: f is a C function whose only upvalue is the binding's state */
    int direct = 0;
    if (lua_iscfunction(L, 1) && lua_getupvalue(L, 1, 1) != NULL) {
        direct = lua_rawequal(L, -1, state);
        lua_pop(L, 1);
        if (direct && lua_getupvalue(L, 1, 2) != NULL) {
            direct = 0;
            lua_pop(L, 1);
        }
    }
    lua_pushvalue(L, 1);
    lua_pushvalue(L, 2);
    lua_pushboolean(L, direct);
    lua_pushcclosure(L, keywords_call, 4);
    return 1;
}

void tl_open_keywords(lua_State *L, int mod) {
    static const luaL_Reg funcs[] = {{"_keywords", l_keywords}, {NULL, NULL}};
    tl_register(L, mod, funcs);
}
