/* keywords.c — core._keywords(call, f, name[, slow][, nmax][, out_only]): the trampoline that
 * gives a Tensor method or a tide.X function PyTorch's keyword arguments
 * (lua/tide/tensor_keywords/). A call whose last non-nil argument is a table that is not a list
 * (the only argument, too: tide.randint({low = 0, high = 10, size = {3}})) goes to
 * tide.tensor_keywords.call(name, f, ...), which puts the names in their places; every other
 * call runs f at once. A C function of the binding runs on the trampoline's own frame (its
 * state is the trampoline's first upvalue too), so a plain call costs a few tests (10 to 30
 * ns), not a Lua wrapper's type() calls and argument copies.
 *
 * With slow (a Lua function doing more than the kernel f: x:sum({1, 2}), a dtype), f is the
 * kernel and runs directly unless the call needs slow: a table among the arguments, or more
 * than nmax of them (self counted); such calls go to tide.tensor_keywords.call(name, slow,
 * ...). The common call x:sum(2) then costs the kernel and those few tests.
 *
 * Without slow, nmax (when given) is the most arguments f takes by position (self counted):
 * a call with more is PyTorch's positional form of a parameter tide's f reads by name
 * (x:copy_(s, true), x:unique(true, true)) and goes to the Lua path too, whose adapter puts
 * each in its place.
 *
 * With out_only (a tide.X function with no keyword names but PyTorch's out=: tide.sin,
 * tide.zeros), only a table holding out goes to the Lua path; tide.zeros(3, {dtype = ...})
 * stays f's own call. */
#include "binding.h"
#include <string.h>

enum { UP_STATE = 1, UP_F, UP_NAME, UP_SLOW, UP_CALL, UP_INFO, N_UP };

/* what the fast path reads, in one upvalue: the kernel to call on this frame (NULL: f is not a
 * binding C function reading only the state), slow's presence, nmax and out_only */
typedef struct {
    lua_CFunction  direct;
    tl_out_into_fn into; /* out= straight into out (op_families.c), or NULL */
    int            has_slow, nmax, out_only;
} keywords_info;

/* A call whose keyword table (at top) holds out alone, given to into: written straight into out
 * when into takes it (1 result on the stack), else 0 and the stack as it was */
static int out_into(lua_State *L, const keywords_info *k, int top) {
    if (!k->into || lua_type(L, top) != LUA_TTABLE)
        return 0;
    lua_pushnil(L);
    if (!lua_next(L, top)) /* {}: no out */
        return 0;
    int only_out = lua_type(L, -2) == LUA_TSTRING && strcmp(lua_tostring(L, -2), "out") == 0;
    lua_pop(L, 1); /* the key stays, for the next lua_next */
    if (!only_out || lua_next(L, top)) {
        lua_settop(L, lua_gettop(L) - (only_out ? 2 : 1));
        return 0;
    }
    /* the key was popped by lua_next's end; out goes on top */
    lua_getfield(L, top, "out");
    int out_idx = lua_gettop(L);
    if (k->into(L, top - 1, out_idx))
        return 1;
    lua_pop(L, 1);
    return 0;
}

/* tide.tensor_keywords.call(name, fn, ...) with fn the upvalue at index up. A plain call, not
 * tl_call_lua's require and pcall: its errors (raise's, tl_error's) already name the user's
 * line, and a keyword call costs what its Lua costs */
static int keyword_path(lua_State *L, int up) {
    lua_pushvalue(L, lua_upvalueindex(UP_CALL));
    lua_insert(L, 1);
    lua_pushvalue(L, lua_upvalueindex(UP_NAME));
    lua_insert(L, 2);
    lua_pushvalue(L, lua_upvalueindex(up));
    lua_insert(L, 3);
    lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
    return lua_gettop(L);
}

static int keywords_call(lua_State *L) {
    const keywords_info *k = lua_touserdata(L, lua_upvalueindex(UP_INFO));
    int                  top = lua_gettop(L);
    while (top > 1 && lua_type(L, top) == LUA_TNIL) /* trailing nils: omitted */
        top--;
    if (k->into && top > 1 && out_into(L, k, top))
        return 1;
    if (k->has_slow) {
        int needs_slow = top > k->nmax;
        for (int i = 2; i <= top && !needs_slow; i++)
            needs_slow = lua_type(L, i) == LUA_TTABLE;
        if (needs_slow)
            return keyword_path(L, UP_SLOW);
    } else if (k->nmax && top > k->nmax) {
        return keyword_path(L, UP_F);
    } else if (top > 0 && lua_type(L, top) == LUA_TTABLE) {
        /* the first argument too: every parameter by name */
        /* a list ({1, 2}: dims, sizes) is a value: a keyword table has no [1] */
        lua_rawgeti(L, top, 1);
        int is_list = !lua_isnil(L, -1);
        lua_pop(L, 1);
        int keywords = !is_list;
        if (keywords && k->out_only) {
            lua_pushliteral(L, "out");
            keywords = lua_rawget(L, top) != LUA_TNIL;
            lua_pop(L, 1);
        }
        if (keywords)
            return keyword_path(L, UP_F);
    }
    if (k->direct)
        return k->direct(L);
    lua_pushvalue(L, lua_upvalueindex(UP_F));
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
    return lua_gettop(L);
}

/* core._keywords(call, f, name[, slow][, nmax][, out_only][, into]) -> f behind the
 * trampoline; call is tide.tensor_keywords' slow path; nmax is required with slow; into, a
 * light userdata from core._out_into, writes out= straight into out */
static int l_keywords(lua_State *L) {
    luaL_checktype(L, 1, LUA_TFUNCTION);
    luaL_checktype(L, 2, LUA_TFUNCTION);
    luaL_checkstring(L, 3);
    if (!lua_isnoneornil(L, 4)) {
        luaL_checktype(L, 4, LUA_TFUNCTION);
        luaL_checkinteger(L, 5);
    } else if (!lua_isnoneornil(L, 5)) {
        luaL_checkinteger(L, 5);
    }
    int            out_only = lua_toboolean(L, 6);
    tl_out_into_fn into = NULL;
    if (!lua_isnoneornil(L, 7)) {
        luaL_checktype(L, 7, LUA_TLIGHTUSERDATA);
        into = (tl_out_into_fn)(uintptr_t)lua_touserdata(L, 7);
    }
    lua_settop(L, 5);
    tl_push_state(L);
    int state = lua_gettop(L);
    /* direct: f is a C function whose only upvalue is the binding's state */
    int direct = 0;
    if (lua_iscfunction(L, 2) && lua_getupvalue(L, 2, 1) != NULL) {
        direct = lua_rawequal(L, -1, state);
        lua_pop(L, 1);
        if (direct && lua_getupvalue(L, 2, 2) != NULL) {
            direct = 0;
            lua_pop(L, 1);
        }
    }
    lua_pushvalue(L, 2); /* UP_F */
    lua_pushvalue(L, 3); /* UP_NAME */
    lua_pushvalue(L, 4); /* UP_SLOW */
    lua_pushvalue(L, 1); /* UP_CALL */
    keywords_info *k = lua_newuserdata(L, sizeof *k);
    k->direct = direct ? lua_tocfunction(L, 2) : NULL;
    k->has_slow = !lua_isnil(L, 4);
    k->nmax = (int)luaL_optinteger(L, 5, 0);
    k->out_only = out_only;
    k->into = into;
    lua_pushcclosure(L, keywords_call, N_UP - 1);
    return 1;
}

void tl_open_keywords(lua_State *L, int mod) {
    static const luaL_Reg funcs[] = {{"_keywords", l_keywords}, {NULL, NULL}};
    tl_register(L, mod, funcs);
}
