/* device.c — device objects (interned: one userdata per device and state, so rawequal works),
 * the default device, and tide.cuda.* queries. */
#include "tensor.h"
#include <string.h>

#define TL_DEVICE "tide.Device"

static const char devices_key = 'd'; /* registry: lightuserdata(tide_device*) -> userdata */

typedef struct ldevice {
    tide_device *dev;
} ldevice;

void tl_push_device(lua_State *L, tide_device *dev) {
    lua_rawgetp(L, LUA_REGISTRYINDEX, &devices_key);
    if (lua_rawgetp(L, -1, dev) == LUA_TUSERDATA) {
        lua_remove(L, -2);
        return;
    }
    lua_pop(L, 1);
    ldevice *d = lua_newuserdatauv(L, sizeof *d, 0);
    d->dev = dev;
    luaL_setmetatable(L, TL_DEVICE);
    lua_pushvalue(L, -1);
    lua_rawsetp(L, -3, dev);
    lua_remove(L, -2);
}

tide_device *tl_check_device(lua_State *L, int idx, const char *op) {
    ldevice *d = luaL_testudata(L, idx, TL_DEVICE);
    if (d)
        return d->dev;
    if (lua_type(L, idx) == LUA_TSTRING) {
        tide_device *dev;
        if (tide_device_get(lua_tostring(L, idx), &dev) != TIDE_OK)
            tl_raise(L);
        return dev;
    }
    /* PyTorch's integer device i is cuda:i (torch.device(0), x.to(0), model.to(0)) */
    int         isint = 0;
    lua_Integer i = lua_type(L, idx) == LUA_TNUMBER ? lua_tointegerx(L, idx, &isint) : 0;
    if (isint && i >= 0 && i < 1000000) {
        char         name[32];
        tide_device *dev;
        snprintf(name, sizeof name, "cuda:%d", (int)i);
        if (tide_device_get(name, &dev) != TIDE_OK) {
            const char *msg = tide_errmsg();
            if (strncmp(msg, "tide: device: ", 14) == 0)
                msg += 14;
            tl_error(L, "tide: %s: the integer device %d is PyTorch's %s: %s", op, (int)i, name,
                     msg);
        }
        return dev;
    }
    tl_error(L,
             "tide: %s: expected a device, a device name such as \"cpu\" or \"cuda:0\", or "
             "an integer i (cuda:i), got %s",
             op, luaL_typename(L, idx));
    return NULL;
}

/* "cpu", "cuda", "cpu:..." or "cuda:..." (any registered backend's name): a device's name,
 * existing or not (vs "float128") */
int tl_is_device_name(const char *s) {
    for (int i = 0; i < tide_device_type_count(); i++) {
        const char *name = tide_device_type_name((tide_device_type)i);
        size_t      n = strlen(name);
        if (strncmp(s, name, n) == 0 && (s[n] == '\0' || s[n] == ':'))
            return 1;
    }
    return 0;
}

tide_device *tl_default_device(tide_lua_state *S) {
    if (S->default_dev)
        return S->default_dev;
    tide_device *dev = NULL;
    tide_device_get_index(TIDE_DEVICE_CPU, 0, &dev);
    return dev;
}

static int d_index(lua_State *L) {
    ldevice    *d = luaL_checkudata(L, 1, TL_DEVICE);
    const char *k = lua_tostring(L, 2);
    if (k && strcmp(k, "type") == 0)
        lua_pushstring(L, tide_device_type_name(tide_device_type_of(d->dev)));
    else if (k && strcmp(k, "index") == 0)
        lua_pushinteger(L, tide_device_index(d->dev));
    else
        lua_pushnil(L);
    return 1;
}

static int d_eq(lua_State *L) {
    ldevice *a = luaL_testudata(L, 1, TL_DEVICE), *b = luaL_testudata(L, 2, TL_DEVICE);
    lua_pushboolean(L, a && b && a->dev == b->dev);
    return 1;
}

static int d_tostring(lua_State *L) {
    ldevice *d = luaL_checkudata(L, 1, TL_DEVICE);
    lua_pushstring(L, tide_device_name(d->dev));
    return 1;
}

/* tide.device(spec[, n]) */
static int l_device(lua_State *L) {
    if (lua_type(L, 1) == LUA_TSTRING && !lua_isnoneornil(L, 2)) {
        const char      *s = lua_tostring(L, 1);
        lua_Integer      n = tl_check_int(L, 2, "device", "the device index");
        tide_device_type type;
        if (tide_device_type_from_name(s, &type) != TIDE_OK) /* "cpu", "cuda", a registered one */
            return tl_error(L,
                            "tide: device: unknown device type \"%s\" with index %d; use "
                            "\"cpu\" or \"cuda\"",
                            s, (int)n);
        tide_device *dev;
        if (n < 0 || n > 1 << 20 || tide_device_get_index(type, (int)n, &dev) != TIDE_OK) {
            if (n < 0 || n > 1 << 20)
                return tl_error(L,
                                "tide: device: index %d is invalid; device ordinals are "
                                "0-based and non-negative",
                                (int)n);
            return tl_raise(L);
        }
        tl_push_device(L, dev);
        return 1;
    }
    tl_push_device(L, tl_check_device(L, 1, "device"));
    return 1;
}

static int l_devices(lua_State *L) {
    int n = 0;
    lua_newtable(L);
    tide_device *dev = NULL;
    for (int i = 0; i < tide_device_count(TIDE_DEVICE_CPU); i++)
        if (tide_device_get_index(TIDE_DEVICE_CPU, i, &dev) == TIDE_OK) {
            tl_push_device(L, dev);
            lua_rawseti(L, -2, ++n);
        }
    for (int t = 1; t < tide_device_type_count(); t++) /* each loadable backend, cuda first */
        for (int i = 0; i < tide_device_count((tide_device_type)t); i++)
            if (tide_device_get_index((tide_device_type)t, i, &dev) == TIDE_OK) {
                tl_push_device(L, dev);
                lua_rawseti(L, -2, ++n);
            }
    return 1;
}

static int l_best_device(lua_State *L) {
    tide_device *dev = NULL; /* set by whichever lookup succeeds (cpu:0 always exists) */
    if (!tide_cuda_is_available() || tide_device_get("cuda", &dev) != TIDE_OK)
        tide_device_get_index(TIDE_DEVICE_CPU, 0, &dev);
    tl_push_device(L, dev);
    return 1;
}

static int l_set_default_device(lua_State *L) {
    TL_STATE(L)->default_dev = tl_check_device(L, 1, "set_default_device");
    return 0;
}

static int l_get_default_device(lua_State *L) {
    tl_push_device(L, tl_default_device(TL_STATE(L)));
    return 1;
}

/* ---- tide.cuda ---- */

static int c_is_available(lua_State *L) {
    lua_pushboolean(L, tide_cuda_is_available());
    return 1;
}

static int c_device_count(lua_State *L) {
    lua_pushinteger(L, tide_cuda_is_available() ? tide_device_count(TIDE_DEVICE_CUDA) : 0);
    return 1;
}

static int c_unavailable_reason(lua_State *L) {
    const char *r = tide_cuda_unavailable_reason();
    if (r)
        lua_pushstring(L, r);
    else
        lua_pushnil(L);
    return 1;
}

/* the device argument at idx, or the current CUDA device (raising why CUDA is unusable) */
static tide_device *opt_cuda(lua_State *L, int idx, const char *op) {
    if (!lua_isnoneornil(L, idx))
        return tl_check_device(L, idx, op);
    tide_device *dev;
    if (tide_device_get("cuda", &dev) != TIDE_OK)
        tl_raise(L);
    return dev;
}

static int c_synchronize(lua_State *L) {
    if (tide_device_synchronize(opt_cuda(L, 1, "cuda.synchronize")) != TIDE_OK)
        return tl_raise(L);
    return 0;
}

static int push_stat(lua_State *L, const char *op, int which) {
    tide_memory_stats ms;
    if (tide_device_memory_stats(opt_cuda(L, 1, op), &ms) != TIDE_OK)
        return tl_raise(L);
    lua_pushinteger(L, (lua_Integer)(which == 0   ? ms.allocated
                                     : which == 1 ? ms.reserved
                                                  : ms.peak));
    return 1;
}

static int c_memory_allocated(lua_State *L) {
    return push_stat(L, "cuda.memory_allocated", 0);
}
static int c_memory_reserved(lua_State *L) {
    return push_stat(L, "cuda.memory_reserved", 1);
}
static int c_max_memory_allocated(lua_State *L) {
    return push_stat(L, "cuda.max_memory_allocated", 2);
}

static int c_empty_cache(lua_State *L) {
    if (!lua_isnoneornil(L, 1)) {
        if (tide_device_empty_cache(tl_check_device(L, 1, "cuda.empty_cache")) != TIDE_OK)
            return tl_raise(L);
        return 0;
    }
    tide_device *dev;
    if (tide_cuda_is_available())
        for (int i = 0; i < tide_device_count(TIDE_DEVICE_CUDA); i++)
            if (tide_device_get_index(TIDE_DEVICE_CUDA, i, &dev) == TIDE_OK)
                tide_device_empty_cache(dev);
    return 0;
}

/* tide.empty_cache(dev): gives the free blocks dev's allocator keeps back to the system */
static int l_empty_cache(lua_State *L) {
    if (tide_device_empty_cache(tl_check_device(L, 1, "empty_cache")) != TIDE_OK)
        return tl_raise(L);
    return 0;
}

/* tide.memory_stats(dev) -> {allocated =, reserved =, peak =} for any device */
static int l_memory_stats(lua_State *L) {
    tide_memory_stats ms;
    if (tide_device_memory_stats(tl_check_device(L, 1, "memory_stats"), &ms) != TIDE_OK)
        return tl_raise(L);
    lua_createtable(L, 0, 3);
    lua_pushinteger(L, (lua_Integer)ms.allocated);
    lua_setfield(L, -2, "allocated");
    lua_pushinteger(L, (lua_Integer)ms.reserved);
    lua_setfield(L, -2, "reserved");
    lua_pushinteger(L, (lua_Integer)ms.peak);
    lua_setfield(L, -2, "peak");
    return 1;
}

static int l_synchronize(lua_State *L) {
    if (tide_device_synchronize(tl_check_device(L, 1, "synchronize")) != TIDE_OK)
        return tl_raise(L);
    return 0;
}

/* tide.cpu_info() -> { blas_core = "SkylakeX" | nil, threads = n, bf16_gemm = "oneDNN ..." | nil }:
 * what the CPU backend runs */
static int l_cpu_info(lua_State *L) {
    tide_device     *dev = NULL;
    tide_device_info info;
    if (tide_device_get_index(TIDE_DEVICE_CPU, 0, &dev) != TIDE_OK ||
        tide_device_get_info(dev, &info) != TIDE_OK)
        return tl_raise(L);
    lua_createtable(L, 0, 3);
    if (info.blas_core) {
        lua_pushstring(L, info.blas_core);
        lua_setfield(L, -2, "blas_core");
    }
    lua_pushinteger(L, info.threads);
    lua_setfield(L, -2, "threads");
    const char *bf16 = tide_cpu_bf16_gemm();
    if (bf16) {
        lua_pushstring(L, bf16);
        lua_setfield(L, -2, "bf16_gemm");
    }
    return 1;
}

/* tide.set_num_threads(n), tide.get_num_threads(): PyTorch's names for the CPU's threads */
static int l_set_num_threads(lua_State *L) {
    tl_max_args(L, 1, "set_num_threads");
    lua_Integer n = tl_check_int(L, 1, "set_num_threads", "n");
    if (n < 1 || n > 65536)
        return tl_error(L, "tide: set_num_threads: n must be from 1 to 65536, got %s",
                        lua_tostring(L, 1));
    if (tide_cpu_set_threads((int)n) != TIDE_OK)
        return tl_raise(L);
    return 0;
}

static int l_get_num_threads(lua_State *L) {
    tl_max_args(L, 0, "get_num_threads");
    lua_pushinteger(L, tide_cpu_threads());
    return 1;
}

void tl_open_device(lua_State *L, int mod) {
    mod = lua_absindex(L, mod);
    if (luaL_newmetatable(L, TL_DEVICE)) {
        static const luaL_Reg mt[] = {
            {"__index", d_index}, {"__eq", d_eq}, {"__tostring", d_tostring}, {NULL, NULL}};
        luaL_setfuncs(L, mt, 0);
    }
    lua_pop(L, 1);
    lua_newtable(L); /* interned devices; values weak is pointless: devices live forever */
    lua_rawsetp(L, LUA_REGISTRYINDEX, &devices_key);

    static const luaL_Reg funcs[] = {{"device", l_device},
                                     {"devices", l_devices},
                                     {"best_device", l_best_device},
                                     {"set_default_device", l_set_default_device},
                                     {"get_default_device", l_get_default_device},
                                     {"memory_stats", l_memory_stats},
                                     {"empty_cache", l_empty_cache},
                                     {"synchronize", l_synchronize},
                                     {"cpu_info", l_cpu_info},
                                     {"set_num_threads", l_set_num_threads},
                                     {"get_num_threads", l_get_num_threads},
                                     {NULL, NULL}};
    tl_register(L, mod, funcs);

    static const luaL_Reg cuda[] = {{"is_available", c_is_available},
                                    {"device_count", c_device_count},
                                    {"unavailable_reason", c_unavailable_reason},
                                    {"synchronize", c_synchronize},
                                    {"memory_allocated", c_memory_allocated},
                                    {"memory_reserved", c_memory_reserved},
                                    {"max_memory_allocated", c_max_memory_allocated},
                                    {"empty_cache", c_empty_cache},
                                    {NULL, NULL}};
    lua_newtable(L);
    tl_register(L, -1, cuda);
    lua_setfield(L, mod, "cuda");
}
