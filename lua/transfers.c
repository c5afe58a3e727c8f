/*
 * transfers.c — moving values: t:to(device | dtype | tensor | opts), cpu, cuda, the dtype casts,
 * type_as, pin_memory / is_pinned, and the reads back to Lua (item, totable).
 */
#include "binding.h"

static int to_impl(lua_State *L, const char *name, tide_device *dev, int has_dt, tide_dtype dt,
                   int copy, int nb, int nargs) {
    tide_lua_state *S = TL_STATE(L);
    ltensor        *a = lua_touserdata(L, 1);
    if (!dev)
        dev = tide_tensor_device(a->t);
    if (!has_dt)
        dt = tide_tensor_dtype(a->t);
    if (!copy && dev == tide_tensor_device(a->t) && dt == tide_tensor_dtype(a->t)) {
        lua_pushvalue(L, 1); /* rule 3: the same object, no copy */
        return 1;
    }
    lua_settop(L, nargs);
    ltensor *r = tl_push_empty(L);
    TL_CALL(L, S, tide_tensor_to(S->ctx, a->t, dev, dt, nb ? TIDE_TO_NON_BLOCKING : 0, &r->t));
    return tl_done(L, S, a->requires_grad ? name : NULL, nargs);
}

static int dtype_arg(lua_State *L, int idx, tide_dtype *dt) {
    return lua_type(L, idx) == LUA_TSTRING &&
           tide_dtype_from_name(lua_tostring(L, idx), dt) == TIDE_OK;
}

/* t:to(dev | dtype | tensor [, opts]) or t:to(opts); opts = {device, dtype, copy, non_blocking} */
static int o_to(lua_State *L) {
    int nargs = lua_gettop(L);
    tl_check(L, 1, "to");
    for (int i = 2; i <= nargs; i++) /* x:to(tide.cfloat): complex tensors are a Lua class */
        if (tl_wants_complex(L, i))
            return tl_call_lua(L, "tide.complex", "real_to");
    tide_device *dev = NULL;
    tide_dtype   dt = TIDE_DTYPE_F32;
    int          has_dt = 0, copy = 0, nb = 0;
    for (int i = 2; i <= nargs; i++) {
        ltensor *u;
        if (lua_isnil(L, i))
            continue;
        if (lua_type(L, i) == LUA_TTABLE) {
            static const char *const known[] = {"device", "dtype", "copy", "non_blocking", NULL};
            tl_check_options(L, i, "to", known, NULL);
            if (lua_getfield(L, i, "device") != LUA_TNIL)
                dev = tl_check_device(L, -1, "to");
            if (lua_getfield(L, i, "dtype") != LUA_TNIL) {
                if (!dtype_arg(L, -1, &dt))
                    return tl_error(L, "tide: to: unknown dtype %s; use " TL_DTYPE_NAMES,
                                    luaL_tolstring(L, -1, 0));
                has_dt = 1;
            }
            lua_getfield(L, i, "copy");
            copy = lua_toboolean(L, -1);
            lua_getfield(L, i, "non_blocking");
            nb = lua_toboolean(L, -1);
            lua_pop(L, 4);
        } else if ((u = tl_test(L, i)) != NULL) {
            tl_check(L, i, "to");
            dev = tide_tensor_device(u->t);
            dt = tide_tensor_dtype(u->t);
            has_dt = 1;
        } else if (dtype_arg(L, i, &dt)) {
            has_dt = 1;
        } else if (lua_type(L, i) == LUA_TSTRING && !tl_is_device_name(lua_tostring(L, i))) {
            return tl_error(
                L,
                "tide: to: \"%s\" is neither a device nor a dtype; devices are " TL_DEVICE_NAMES
                ", dtypes " TL_DTYPE_NAMES,
                lua_tostring(L, i));
        } else {
            dev = tl_check_device(L, i, "to");
        }
    }
    return to_impl(L, "to", dev, has_dt, dt, copy, nb, nargs);
}

static int o_cpu(lua_State *L) {
    tl_check(L, 1, "cpu");
    tide_device *dev;
    tide_device_get_index(TIDE_DEVICE_CPU, 0, &dev);
    tl_max_args(L, 1, "cpu");
    return to_impl(L, "cpu", dev, 0, TIDE_DTYPE_F32, 0, 0, 1);
}

static int o_cuda(lua_State *L) {
    tl_check(L, 1, "cuda");
    tl_max_args(L, 2, "cuda");
    int          nargs = 2;
    tide_device *dev;
    if (lua_isnoneornil(L, 2)) {
        if (tide_device_get("cuda", &dev) != TIDE_OK)
            return tl_raise(L);
    } else {
        lua_Integer n = tl_check_int(L, 2, "cuda", "the device ordinal");
        if (n < 0 || n > 1 << 20 ||
            tide_device_get_index(TIDE_DEVICE_CUDA, (int)n, &dev) != TIDE_OK)
            return n < 0 || n > 1 << 20
                       ? tl_error(L, "tide: cuda: device ordinal %I is invalid", (lua_Integer)n)
                       : tl_raise(L);
    }
    return to_impl(L, "cuda", dev, 0, TIDE_DTYPE_F32, 0, 0, nargs);
}

#define CAST(fname, DT)                                                                            \
    static int o_##fname(lua_State *L) {                                                           \
        tl_check(L, 1, #fname);                                                                    \
        tl_max_args(L, 1, #fname);                                                                 \
        return to_impl(L, #fname, NULL, 1, TIDE_DTYPE_##DT, 0, 0, 1);                              \
    }
CAST(float, F32)
CAST(double, F64)
CAST(half, F16)
CAST(bfloat16, BF16)
CAST(long, I64)
CAST(int, I32)
CAST(byte, U8)
CAST(bool, BOOL)

static int o_type_as(lua_State *L) {
    tl_check(L, 1, "type_as");
    ltensor *u = tl_check(L, 2, "type_as");
    tl_max_args(L, 2, "type_as");
    return to_impl(L, "type_as", NULL, 1, tide_tensor_dtype(u->t), 0, 0, 2);
}

static int o_pin_memory(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    ltensor        *a = tl_check(L, 1, "pin_memory");
    tl_max_args(L, 1, "pin_memory");
    if (tide_tensor_is_pinned(a->t))
        return 1;
    ltensor *r = tl_push_empty(L);
    TL_CALL(L, S, tide_tensor_pin_memory(S->ctx, a->t, &r->t));
    return tl_done(L, S, a->requires_grad ? "pin_memory" : NULL,
                   1); /* the gradient passes through */
}

static int o_is_pinned(lua_State *L) {
    tl_max_args(L, 1, "is_pinned");
    lua_pushboolean(L, tide_tensor_is_pinned(tl_check(L, 1, "is_pinned")->t));
    return 1;
}

static int o_item(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    ltensor        *a = tl_check(L, 1, "item");
    tide_scalar     v;
    tl_max_args(L, 1, "item");
    int64_t n = tide_tensor_numel(a->t);
    if (n != 1)
        return tl_error(L, "tide: item: the tensor has %I elements; item() needs exactly one",
                        (lua_Integer)n);
    TL_CALL(L, S, tide_tensor_item_x(S->ctx, a->t, &v));
    tide_dtype dt = tide_tensor_dtype(a->t);
    if (dt == TIDE_DTYPE_BOOL)
        lua_pushboolean(L, v.i != 0);
    else if (v.is_int) /* exact for int64 (up to 2^53 in a Lua without integers) */
        tl_push_int64(L, v.i, "item");
    else
        lua_pushnumber(L, v.d);
    return 1;
}

void tl_open_transfers(lua_State *L, int methods) {
    static const luaL_Reg meths[] = {{"to", o_to},
                                     {"cpu", o_cpu},
                                     {"cuda", o_cuda},
                                     {"float", o_float},
                                     {"double", o_double},
                                     {"half", o_half},
                                     {"bfloat16", o_bfloat16},
                                     {"long", o_long},
                                     {"int", o_int},
                                     {"byte", o_byte},
                                     {"bool", o_bool},
                                     {"type_as", o_type_as},
                                     {"pin_memory", o_pin_memory},
                                     {"is_pinned", o_is_pinned},
                                     {"item", o_item},
                                     {"totable", tl_totable},
                                     {"tolist", tl_tolist}, /* PyTorch's name for it */
                                     {NULL, NULL}};
    tl_register(L, methods, meths);
}
