/*
 * args.c — the binding's own checks of plain arguments (integers, numbers, strings, dims,
 * shapes) and the conversion of a Lua number to a core scalar. lauxlib's luaL_check* would
 * raise "bad argument #1 to 'size' (number expected, got table)", without `tide:`, the op's
 * name or the fix.
 */
#include "args.h"
#include <math.h>

/* the one wording for an argument past the last one op takes (nil there is an omitted one) */
void tl_max_args_slow(lua_State *L, int n, const char *op) {
    int k, last = lua_gettop(L);
    while (last > n && lua_isnil(L, last))
        last--;
    for (k = n + 1; k <= last; k++)
        if (!lua_isnil(L, k))
            tl_error(L,
                     "tide: %s: expected at most %d argument%s, got %d (argument #%d is a %s); "
                     "remove it: %s takes no such argument or option",
                     op, n, n == 1 ? "" : "s", last, k,
                     tl_test(L, k) ? "tensor" : luaL_typename(L, k), op);
    lua_settop(L, n);
}

void tl_byte_mask_to_bool(lua_State *L, int idx, const char *key, const char *msg) {
    ltensor *m = tl_test(L, idx);
    if (!m || !m->t || tide_tensor_dtype(m->t) != TIDE_DTYPE_U8)
        return;
    tl_warn_once(L, key, msg);
    tide_lua_state *S = TL_STATE(L);
    idx = lua_absindex(L, idx);
    ltensor *b = tl_push_like(L, idx);
    TL_CALL(L, S,
            tide_tensor_to(S->ctx, m->t, tide_tensor_device(m->t), TIDE_DTYPE_BOOL, 0, &b->t));
    lua_replace(L, idx);
}

/* a table given where a list goes must be a plain list: another key means an options table or
 * a typo, which rawlen would read as an empty list ({bogus = 1} as {}) and run silently */
int tl_check_list(lua_State *L, int idx, const char *op, const char *what) {
    int len = (int)lua_rawlen(L, idx);
    idx = lua_absindex(L, idx);
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        int         isint;
        lua_Integer k = lua_tointegerx(L, -2, &isint);
        if (lua_type(L, -2) != LUA_TNUMBER || !isint || k < 1 || k > len) {
            lua_pop(L, 1);
            if (lua_type(L, -1) == LUA_TSTRING)
                return tl_error(L,
                                "tide: %s: %s must be a list such as {1, 2}, got a table with "
                                "the key \"%s\"",
                                op, what, lua_tostring(L, -1));
            return tl_error(L,
                            "tide: %s: %s must be a list such as {1, 2}, got a table with a %s "
                            "key",
                            op, what, luaL_typename(L, -1));
        }
        lua_pop(L, 1);
    }
    return len;
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

int tl_dim(lua_State *L, const tide_tensor *t, lua_Integer d, const char *op, int extra) {
    int n = tide_tensor_ndim(t) + extra;
    if (d >= 1 && d <= n)
        return (int)d - 1;
    if (d <= -1 && d >= -n)
        return (int)(n + d);
    if (n == 0)
        return tl_error(L, "tide: %s: dim %I is out of range for a tensor with no dims", op,
                        (lua_Integer)d);
    return tl_error(L,
                    "tide: %s: dim %I is out of range for a tensor with %d dims; use 1..%d or "
                    "-%d..-1 (dims are 1-based)",
                    op, (lua_Integer)d, n, n, n);
}

int tl_scalar_dim(lua_State *L, const char *name) {
    ltensor *a = tl_test(L, 1);
    int      isint;
    if (!a || !a->t || tide_tensor_ndim(a->t) != 0)
        return -1;
    lua_Integer d = lua_tointegerx(L, 2, &isint);
    if (!isint || (d != 1 && d != -1))
        return -1;
    int top = lua_gettop(L);
    lua_getfield(L, 1, name);
    lua_getfield(L, 1, "reshape");
    lua_pushvalue(L, 1);
    lua_pushinteger(L, 1);
    lua_call(L, 2, 1);
    for (int i = 2; i <= top; i++)
        lua_pushvalue(L, i);
    lua_call(L, top, LUA_MULTRET);
    int n = lua_gettop(L) - top;
    for (int i = top + 1; i <= top + n; i++) {
        if (!tl_test(L, i))
            continue;
        lua_getfield(L, i, "reshape");
        lua_pushvalue(L, i);
        lua_newtable(L);
        lua_call(L, 2, 1);
        lua_replace(L, i);
    }
    return n;
}

/* a 0-d integer tensor given as a size (PyTorch's torch.zeros(n) with n = t.sum()): its value,
 * read through t:item() (a copy to the host for a device tensor, as PyTorch's) */
static int is_size_tensor(lua_State *L, int idx) {
    ltensor *u = tl_test(L, idx);
    return u && u->t && tide_tensor_ndim(u->t) == 0 &&
           !tide_dtype_is_float(tide_tensor_dtype(u->t));
}

static lua_Integer size_tensor_value(lua_State *L, int idx) {
    idx = lua_absindex(L, idx);
    lua_getfield(L, idx, "item");
    lua_pushvalue(L, idx);
    lua_call(L, 1, 1);
    lua_Integer v = lua_tointeger(L, -1);
    lua_pop(L, 1);
    return v;
}

static int64_t shape_entry(lua_State *L, int idx, int pos, const char *op, int allow_neg1) {
    int         isint;
    lua_Integer v = lua_tointegerx(L, idx, &isint);
    if (!isint && is_size_tensor(L, idx)) {
        v = size_tensor_value(L, idx);
        isint = 1;
    }
    if (!isint) {
        if (lua_type(L, idx) == LUA_TNUMBER)
            return tl_error(L, "tide: %s: size %s at position %d is not an integer", op,
                            lua_tostring(L, idx), pos);
        return tl_error(L, "tide: %s: size at position %d must be an integer, got %s", op, pos,
                        luaL_typename(L, idx));
    }
    if (v < 0 && !(allow_neg1 && v == -1)) {
        if (allow_neg1)
            return tl_error(L,
                            "tide: %s: size %I at position %d is invalid; sizes must be "
                            "positive or -1",
                            op, (lua_Integer)v, pos);
        return tl_error(L,
                        "tide: %s: size %I at position %d is invalid; sizes must be "
                        "non-negative",
                        op, (lua_Integer)v, pos);
    }
    return (int64_t)v;
}

int tl_shape(lua_State *L, int idx, int64_t *shape, int *ndim, const char *op, int allow_neg1) {
    int n = 0;
    if (lua_type(L, idx) == LUA_TTABLE) {
        int len = tl_check_list(L, idx, op, "the shape");
        if (len > TIDE_MAX_DIMS)
            return tl_error(L, "tide: %s: %d dims given; tide supports at most %d", op, len,
                            TIDE_MAX_DIMS);
        for (int i = 1; i <= len; i++) {
            lua_rawgeti(L, idx, i);
            shape[n++] = shape_entry(L, -1, i, op, allow_neg1);
            lua_pop(L, 1);
        }
        *ndim = n;
        return 1;
    }
    while (lua_type(L, idx + n) == LUA_TNUMBER || is_size_tensor(L, idx + n)) {
        if (n == TIDE_MAX_DIMS)
            return tl_error(L, "tide: %s: more than %d dims given; tide supports at most %d", op,
                            TIDE_MAX_DIMS, TIDE_MAX_DIMS);
        shape[n] = shape_entry(L, idx + n, n + 1, op, allow_neg1);
        n++;
    }
    *ndim = n;
    return n;
}

int tl_isinteger(lua_State *L, int idx) {
#if TL_NO_INTEGERS
    if (lua_type(L, idx) == LUA_TNUMBER && lua_tonumber(L, idx) == 0 &&
        signbit(lua_tonumber(L, idx)))
        return 0;
#endif
    return lua_isinteger(L, idx);
}

tide_scalar tl_scalar(lua_State *L, int idx) {
    if (tl_isinteger(L, idx))
        return tide_scalar_i((int64_t)lua_tointeger(L, idx));
    if (lua_isboolean(L, idx))
        return tide_scalar_i(lua_toboolean(L, idx));
    return tide_scalar_f(lua_tonumber(L, idx));
}
