/*
 * userdata.c — the tensor userdata: pushing a new one (empty, then filled by the core), the type
 * test and the check of a live tensor, and the same for hosts (include/tide_lua.h).
 */
#include <string.h>
#include "args.h"
#include "tide_lua.h"

static const char tensor_mt_key = 't'; /* registry: the metatable, by address (fast) */

/* Every tensor userdata starts with this address (struct ltensor): the type test reads it
 * instead of comparing metatables, which took three API calls and a stack push and pop (a tenth
 * of `a + b`, tested twice and again by its finalizer). Only this file writes it, and Lua code
 * cannot write a userdata's bytes, so no other value passes the test. */
static const char tensor_tag = 'T';

ltensor *tl_push_empty(lua_State *L) {
    ltensor *u = lua_newuserdatauv(L, sizeof *u, TL_TENSOR_UVS);
    u->tag = &tensor_tag;
    u->t = NULL;
    u->requires_grad = u->follows = u->no_grad_view = 0;
    u->link = NULL;
    lua_rawgetp(L, LUA_REGISTRYINDEX, &tensor_mt_key);
    lua_setmetatable(L, -2);
    tl_uv_init(L, -1); /* 5.1, LuaJIT: a store of its own (compat.h) */
    return u;
}

/* tl_push_empty for the result of an op on the tensor at idx: its metatable is the one to set,
 * and reading it is cheaper than the registry lookup (about 120 instructions an op) */
ltensor *tl_push_like(lua_State *L, int idx) {
    idx = lua_absindex(L, idx);
    ltensor *u = lua_newuserdatauv(L, sizeof *u, TL_TENSOR_UVS);
    u->tag = &tensor_tag;
    u->t = NULL;
    u->requires_grad = u->follows = u->no_grad_view = 0;
    u->link = NULL;
    lua_getmetatable(L, idx);
    lua_setmetatable(L, -2);
    tl_uv_init(L, -1);
    return u;
}

ltensor *tl_test(lua_State *L, int idx) {
    /* a full userdata of a tensor's size (light userdata has length 0; a string or table of
     * that length has no userdata pointer) whose first bytes are the tag */
    ltensor *u = lua_touserdata(L, idx);
    if (!u || lua_rawlen(L, idx) != sizeof *u || u->tag != &tensor_tag)
        return NULL;
    return u;
}

/* whether the value at idx is a table whose metatable's __name is `name`: a sparse COO tensor
 * (lua/tide/sparse/coo.lua, "SparseTensor") or a complex one (lua/tide/complex/tensor.lua,
 * "ComplexTensor"), which the dense real ops' errors name, with the way to a real tensor */
int tl_is_class_table(lua_State *L, int idx, const char *name) {
    int is = 0;
    if (lua_type(L, idx) == LUA_TTABLE && lua_getmetatable(L, idx)) {
        lua_getfield(L, -1, "__name");
        is = lua_type(L, -1) == LUA_TSTRING && !strcmp(lua_tostring(L, -1), name);
        lua_pop(L, 2);
    }
    return is;
}

int tl_complex_method(lua_State *L, const char *name) {
    lua_getfield(L, 1, name);
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
    return lua_gettop(L);
}

/* whether the value at idx asks for a complex result: a dtype name "complex...", an options
 * table whose dtype is one, or a complex tensor (lua/tide/complex/tensor.lua) */
int tl_wants_complex(lua_State *L, int idx) {
    int         type = lua_type(L, idx), complex = 0;
    const char *name = NULL;
    if (type == LUA_TSTRING)
        return strncmp(lua_tostring(L, idx), "complex", 7) == 0;
    if (type != LUA_TTABLE)
        return 0;
    if (tl_is_class_table(L, idx, TL_COMPLEX_CLASS))
        return 1;
    lua_pushliteral(L, "dtype");
    lua_rawget(L, idx < 0 ? idx - 1 : idx);
    name = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
    complex = name && strncmp(name, "complex", 7) == 0;
    lua_pop(L, 1);
    return complex;
}

/* "a tensor" for a tide tensor, else the Lua type name: for messages about a wrong argument */
const char *tl_typename(lua_State *L, int idx) {
    if (tl_test(L, idx))
        return "a tensor";
    if (tl_is_class_table(L, idx, TL_SPARSE_CLASS))
        return "a sparse tensor (t:to_dense() makes it dense)";
    if (tl_is_class_table(L, idx, TL_COMPLEX_CLASS))
        return "a complex tensor (z.real, z.imag and tide.view_as_real(z) are real tensors)";
    return luaL_typename(L, idx);
}

ltensor *tl_check(lua_State *L, int idx, const char *op) {
    ltensor *u = tl_test(L, idx);
    if (!u)
        tl_error(L, "tide: %s: argument #%d must be a tensor, got %s", op, idx,
                 tl_typename(L, idx));
    else if (!u->t)
        tl_error(L, "tide: %s: attempt to use a freed tensor", op);
    return u;
}

ltensor *tl_push_scalar(lua_State *L, tide_lua_state *S, tide_scalar v, tide_dtype dt,
                        tide_device *dev, const char *op) {
    ltensor *r = tl_push_empty(L);
    TL_CALL_AS(L, S, tide_tensor_full(S->ctx, dev, dt, 0, NULL, v, &r->t), "full", op);
    return r;
}

ltensor *tl_push_index_base(lua_State *L, tide_lua_state *S, const tide_tensor *t, int base) {
    ltensor *r = tl_push_empty(L);
    TL_CALL(L, S, tide_binary_scalar(S->ctx, base ? TIDE_OP_ADD : TIDE_OP_SUB, t, 1, 0, &r->t));
    return r;
}

void tl_one_based(lua_State *L, tide_lua_state *S, ltensor *idx) {
    tide_tensor *dst = idx->t;
    TL_CALL(L, S, tide_binary_scalar(S->ctx, TIDE_OP_ADD, idx->t, 1, 0, &dst));
}

void tl_free_temporary(ltensor *u) {
    tide_tensor_release(u->t);
    u->t = NULL;
}

int tl_new_tensor_metatable(lua_State *L) {
    luaL_newmetatable(L, TL_TENSOR);
    lua_pushvalue(L, -1);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &tensor_mt_key);
    return lua_gettop(L);
}

/* ---- C API for hosts (include/tide_lua.h) ------------------------------------------------- */

void tide_lua_push_tensor(lua_State *L, tide_tensor *t) {
    ltensor *u = tl_push_empty(L);
    tide_tensor_retain(t);
    u->t = t;
}

tide_tensor *tide_lua_to_tensor(lua_State *L, int idx) {
    ltensor *u = luaL_testudata(L, idx, TL_TENSOR);
    return u ? u->t : NULL;
}

tide_tensor *tide_lua_check_tensor(lua_State *L, int idx) {
    ltensor *u = luaL_testudata(L, idx, TL_TENSOR);
    if (!u)
        tl_error(L, "tide: expected a tensor at argument #%d, got %s", idx, tl_typename(L, idx));
    else if (!u->t)
        tl_error(L, "tide: attempt to use a freed tensor (argument #%d)", idx);
    return u->t;
}
