/*
 * record.c — what the binding tells tide.autograd: after a differentiable op whose input
 * requires grad (grad mode on), hook(name, out, args); before an in-place op, the same hook
 * with out = nil; and the epilogue every op ends with (tl_done: the collector's hint, then the
 * record). Tensors without grad never reach Lua code.
 */
#include "args.h"

static void call_hook(lua_State *L, tide_lua_state *S, const char *name, int nargs, int out_idx,
                      int extra_idx);
static int  any_requires_grad(lua_State *L, int nargs);

/* Before an in-place op: with grad mode on and a tensor argument that requires grad, autograd
 * (the hook, called with out = nil) refuses a leaf that requires grad, or notes what the op
 * will overwrite; returns the number of arguments to record after the op (tl_inplace_done), 0
 * when nothing is recorded. Without autograd loaded, any tensor that requires grad refuses. */
int tl_check_inplace(lua_State *L, tide_lua_state *S, ltensor *self, const char *op) {
    int nargs = lua_gettop(L);
    if (!S->grad_enabled)
        return 0;
    if (self->no_grad_view && (self->no_grad_view == 2 || any_requires_grad(L, nargs)))
        tl_error(L,
                 "tide: %s: in-place operation with grad mode on, on a view made under "
                 "tide.no_grad: ambiguous, so refused (as PyTorch does); make the view and the "
                 "in-place op both inside tide.no_grad (not recorded) or both outside it "
                 "(recorded)",
                 op);
    if (S->hook_ref != LUA_NOREF && tl_needs_record(L, S, nargs)) {
        call_hook(L, S, op, nargs, 0, 0);
        return nargs;
    }
    if (self->requires_grad)
        tl_error(L,
                 "tide: %s: in-place operation on a tensor that requires grad; wrap it in "
                 "tide.no_grad or use detach()",
                 op);
    return 0;
}

/* After the in-place op succeeded: records it (the result is the first argument) */
void tl_inplace_done(lua_State *L, tide_lua_state *S, const char *op, int nargs) {
    if (nargs)
        call_hook(L, S, op, nargs, 1, 0);
}

static int arg_requires_grad(lua_State *L, int idx);

/* An op without a gradient formula given an input that requires grad (grad mode on): refused
 * rather than returning a silently detached result. */
void tl_not_differentiable(lua_State *L, tide_lua_state *S, const char *op, int nargs) {
    if (!S->grad_enabled)
        return;
    for (int i = 1; i <= nargs; i++)
        if (arg_requires_grad(L, i))
            tl_error(L,
                     "tide: %s: not differentiable: argument #%d requires grad; call it under "
                     "tide.no_grad or on detach()ed tensors",
                     op, i);
}

static int arg_requires_grad(lua_State *L, int idx) {
    ltensor *u = tl_test(L, idx);
    if (u)
        return u->requires_grad;
    if (lua_type(L, idx) == LUA_TTABLE) { /* tide.cat({a, b}, dim) */
        int n = (int)lua_rawlen(L, idx), rg = 0;
        for (int i = 1; i <= n && !rg; i++) {
            lua_rawgeti(L, idx, i);
            u = tl_test(L, -1);
            rg = u && u->requires_grad;
            lua_pop(L, 1);
        }
        return rg;
    }
    return 0;
}

static int any_requires_grad(lua_State *L, int nargs) {
    for (int i = 1; i <= nargs; i++)
        if (arg_requires_grad(L, i))
            return 1;
    return 0;
}

int tl_needs_record(lua_State *L, tide_lua_state *S, int nargs) {
    if (!S->grad_enabled || S->hook_ref == LUA_NOREF)
        return 0;
    return any_requires_grad(L, nargs);
}

/* hook(name, out, {n = nargs, args 1..nargs as passed, indices = extra}) */
void tl_record(lua_State *L, tide_lua_state *S, const char *name, int nargs, int out_idx,
               int extra_idx) {
    if (tl_needs_record(L, S, nargs))
        call_hook(L, S, name, nargs, out_idx, extra_idx);
}

/* hook(name, out or nil when out_idx is 0, args) */
static void call_hook(lua_State *L, tide_lua_state *S, const char *name, int nargs, int out_idx,
                      int extra_idx) {
    if (out_idx)
        out_idx = lua_absindex(L, out_idx);
    if (extra_idx)
        extra_idx = lua_absindex(L, extra_idx);
    lua_rawgeti(L, LUA_REGISTRYINDEX, S->hook_ref);
    lua_pushstring(L, name);
    if (out_idx)
        lua_pushvalue(L, out_idx);
    else
        lua_pushnil(L);
    lua_createtable(L, nargs, 8); /* room for autograd's fields: no rehash as they are set */
    for (int i = 1; i <= nargs; i++) {
        lua_pushvalue(L, i);
        lua_rawseti(L, -2, i);
    }
    lua_pushinteger(L, nargs);
    lua_setfield(L, -2, "n");
    if (extra_idx) {
        lua_pushvalue(L, extra_idx);
        lua_setfield(L, -2, "indices");
    }
    lua_call(L, 3, 0);
}

static int l_set_autograd_hook(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    if (!lua_isnil(L, 1))
        luaL_checktype(L, 1, LUA_TFUNCTION);
    lua_settop(L, 1);
    if (S->hook_ref == LUA_NOREF) /* returns the previous hook */
        lua_pushnil(L);
    else
        lua_rawgeti(L, LUA_REGISTRYINDEX, S->hook_ref);
    luaL_unref(L, LUA_REGISTRYINDEX, S->hook_ref);
    lua_pushvalue(L, 1);
    S->hook_ref = lua_isnil(L, 1) ? (lua_pop(L, 1), LUA_NOREF) : luaL_ref(L, LUA_REGISTRYINDEX);
    return 1;
}

/* set_grad_enabled(mode): sets it, returns the previous mode; set_grad_enabled(mode, fn, ...):
 * PyTorch's `with torch.set_grad_enabled(mode):`, fn(...) run in that mode, the previous one
 * restored after it (also on error), fn's results returned */
static int l_set_grad_enabled(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    int             prev = S->grad_enabled;
    int             n = lua_gettop(L);
    if (n >= 2 && !lua_isnil(L, 2)) {
        if (lua_type(L, 2) != LUA_TFUNCTION)
            return tl_error(L,
                            "tide: set_grad_enabled: expected a function after the mode "
                            "(set_grad_enabled(false, fn, ...)), got %s",
                            luaL_typename(L, 2));
        S->grad_enabled = lua_toboolean(L, 1);
        int st = lua_pcall(L, n - 2, LUA_MULTRET, 0);
        S->grad_enabled = prev;
        if (st != 0)
            return lua_error(L);
        return lua_gettop(L) - 1;
    }
    S->grad_enabled = lua_toboolean(L, 1);
    lua_pushboolean(L, prev);
    return 1;
}

static int l_is_grad_enabled(lua_State *L) {
    lua_pushboolean(L, TL_STATE(L)->grad_enabled);
    return 1;
}

/* gc hint + autograd record for a new result at the top of the stack */
int tl_done(lua_State *L, tide_lua_state *S, const char *name, int nargs) {
    ltensor *r = lua_touserdata(L, -1);
    tl_gc_hint(L, S, tide_tensor_nbytes(r->t));
    if (name && S->grad_enabled)
        tl_record(L, S, name, nargs, -1, 0);
    return 1;
}

/* a view result at the top of the stack, of the tensor a at index 1: recorded when a requires
 * grad, else linked to its root (no new bytes either way) */
int tl_done_view(lua_State *L, tide_lua_state *S, ltensor *a, const char *name, int nargs) {
    ltensor *r = lua_touserdata(L, -1);
    if (!S->grad_enabled) {
        if (r != a && tide_dtype_is_float(tide_tensor_dtype(a->t)) &&
            tide_tensor_same_storage(a->t, r->t))
            r->no_grad_view = (a->requires_grad || a->no_grad_view == 2) ? 2 : 1;
        return 1;
    }
    if (a->no_grad_view && r != a) /* a view of such a view is one too, as PyTorch's */
        r->no_grad_view = a->no_grad_view;
    if (a->requires_grad) {
        tl_record(L, S, name, nargs, -1, 0);
        return 1;
    }
    /* linked when a write could give it a gradient: autograd loaded, and a float view */
    if (S->hook_ref != LUA_NOREF && r != a && tide_dtype_is_float(tide_tensor_dtype(a->t)) &&
        tide_tensor_same_storage(a->t, r->t))
        tl_link_view(L, 1, a, r);
    return 1;
}

void tl_open_record(lua_State *L, int mod) {
    static const luaL_Reg funcs[] = {{"set_autograd_hook", l_set_autograd_hook},
                                     {"set_grad_enabled", l_set_grad_enabled},
                                     {"is_grad_enabled", l_is_grad_enabled},
                                     {NULL, NULL}};
    tl_register(L, mod, funcs);
}
