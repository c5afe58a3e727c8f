/* io.c — Lua entry points of the data readers and checkpoints (IDX, safetensors), plus the two
 * host helpers the data loader and the example need (a wall clock, isatty). Registered into
 * tide.core by tide_lua_register_io. */
#include "binding.h"
#include "tide_io.h"
#include "tide_lua.h"

#include <lauxlib.h>
#include <lualib.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define IDX_BOX "tide.io.idxfile"
#define ST_BOX  "tide.io.stfile"

/* tide reads and writes files only in a state whose host opened the io library: a sandbox that
 * leaves io out (the usual one for a game's mod scripts) gets no file access through tide
 * either. Checked in the registry's package.loaded, which the host controls. */
static void check_io_opened(lua_State *L, const char *op) {
    int top = lua_gettop(L);
    int opened = lua_getfield(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE) == LUA_TTABLE &&
                 lua_getfield(L, -1, LUA_IOLIBNAME) == LUA_TTABLE;
    lua_settop(L, top);
    if (!opened)
        tl_error(L,
                 "tide: %s: the io library is not available in this Lua state, and tide reads "
                 "and writes files only where it is; the host opens it with luaL_openlibs or "
                 "luaL_requiref(L, \"io\", luaopen_io, 1)",
                 op);
}

/* File handles live in a userdata box whose __gc closes them, so an error raised between open
 * and close leaks nothing. */
static int idx_box_gc(lua_State *L) {
    tide_idx_file **b = luaL_checkudata(L, 1, IDX_BOX);
    tide_idx_close(*b);
    *b = NULL;
    return 0;
}

static int st_box_gc(lua_State *L) {
    tide_st_file **b = luaL_checkudata(L, 1, ST_BOX);
    tide_st_close(*b);
    *b = NULL;
    return 0;
}

static void **push_box(lua_State *L, const char *mt, lua_CFunction gc) {
    void **b = lua_newuserdatauv(L, sizeof *b, 0);
    *b = NULL;
    if (luaL_newmetatable(L, mt)) {
        lua_pushcfunction(L, gc);
        lua_setfield(L, -2, "__gc");
#if LUA_VERSION_NUM >= 504
        lua_pushcfunction(L, gc);
        lua_setfield(L, -2, "__close");
#endif
    }
    lua_setmetatable(L, -2);
    return b;
}

/* a fresh host tensor, pushed; returns it borrowed (Lua holds the reference). Allocated through
 * TL_CALL: on ENOMEM/ELIMIT the tensors just dropped are collected and it is tried again. */
static tide_tensor *push_host_empty(lua_State *L, tide_lua_state *S, tide_dtype dt, int ndim,
                                    const int64_t *shape) {
    tide_device *cpu = NULL;
    tide_tensor *t = NULL;
    tide_device_get_index(TIDE_DEVICE_CPU, 0, &cpu); /* files load on the host (cpu:0 exists) */
    TL_CALL(L, S, tide_tensor_empty(S->ctx, cpu, dt, ndim, shape, &t));
    tide_lua_push_tensor(L, t); /* retains */
    tide_tensor_release(t);
    return t;
}

/* core.idx_load(path [, op [, magic]]) -> host tensor with the file's dtype and dims */
static int l_idx_load(lua_State *L) {
    const char *op = lua_type(L, 2) == LUA_TSTRING ? lua_tostring(L, 2) : "idx_load";
    const char *path = tl_check_string(L, 1, op, "path");
    lua_Integer magic = lua_isnoneornil(L, 3) ? 0 : tl_check_int(L, 3, op, "magic");
    check_io_opened(L, op);
    tide_idx_file **box = (tide_idx_file **)push_box(L, IDX_BOX, idx_box_gc);
    if (magic < 0 || magic > 0xFFFFFFFFLL)
        return tl_error(L, "tide: %s: magic %I out of range; give a 32-bit value", op, magic);
    if (tide_idx_open(op, path, (uint32_t)magic, box) != TIDE_OK)
        return tl_raise(L);
    tide_tensor *t = push_host_empty(L, TL_STATE(L), tide_idx_dtype(*box), tide_idx_ndim(*box),
                                     tide_idx_shape(*box));
    if (tide_idx_read(*box, t) != TIDE_OK)
        return tl_raise(L);
    tide_idx_close(*box);
    *box = NULL;
    return 1;
}

/* core.safetensors_load(path) -> {name = host tensor}, {key = value}, {names in file order} */
static int l_st_load(lua_State *L) {
    const char *path = tl_check_string(L, 1, "safetensors_load", "path");
    check_io_opened(L, "load");
    tide_st_file **box = (tide_st_file **)push_box(L, ST_BOX, st_box_gc);
    if (tide_st_open(path, box) != TIDE_OK)
        return tl_raise(L);
    tide_st_file *f = *box;
    int           n = tide_st_count(f);
    lua_createtable(L, 0, n); /* tensors */
    lua_createtable(L, 0, 0); /* metadata */
    lua_createtable(L, n, 0); /* names */
    for (int i = 0; i < tide_st_metadata_count(f); i++) {
        lua_pushstring(L, tide_st_metadata_value(f, i));
        lua_setfield(L, -3, tide_st_metadata_key(f, i));
    }
    for (int i = 0; i < n; i++) {
        tide_tensor *t = push_host_empty(L, TL_STATE(L), tide_st_dtype(f, i), tide_st_ndim(f, i),
                                         tide_st_shape(f, i));
        if (tide_st_read(f, i, t) != TIDE_OK)
            return tl_raise(L);
        lua_setfield(L, -4, tide_st_name(f, i));
        lua_pushstring(L, tide_st_name(f, i));
        lua_rawseti(L, -2, i + 1);
    }
    tide_st_close(f);
    *box = NULL;
    return 3;
}

/* core.safetensors_save(path, names, tensors [, metadata]): names and tensors are sequences
 * of the same length, metadata a table of strings. */
static int l_st_save(lua_State *L) {
    const char *path = luaL_checkstring(L, 1);
    check_io_opened(L, "save");
    luaL_checktype(L, 2, LUA_TTABLE);
    luaL_checktype(L, 3, LUA_TTABLE);
    int         has_meta = !lua_isnoneornil(L, 4);
    lua_Integer n = luaL_len(L, 2), nmeta = 0;
    if (has_meta)
        luaL_checktype(L, 4, LUA_TTABLE);
    if (luaL_len(L, 3) != n)
        return tl_error(L, "tide: save: %s: %I names but %I tensors", path, n, luaL_len(L, 3));
    if (n > INT32_MAX / 2)
        return tl_error(L, "tide: save: %s: too many tensors (%I)", path, n);
    if (has_meta)
        for (lua_pushnil(L); lua_next(L, 4); lua_pop(L, 1)) {
            if (lua_type(L, -2) != LUA_TSTRING || lua_type(L, -1) != LUA_TSTRING)
                return tl_error(L,
                                "tide: save: %s: metadata keys and values must be strings; "
                                "convert them with tostring",
                                path);
            nmeta++;
        }
    /* the arrays are Lua memory: nothing to free if a check below raises */
    const char        **names = lua_newuserdatauv(L, sizeof(char *) * (size_t)(n + 1), 0);
    const tide_tensor **ts = lua_newuserdatauv(L, sizeof(void *) * (size_t)(n + 1), 0);
    const char        **mk = lua_newuserdatauv(L, sizeof(char *) * (size_t)(nmeta + 1), 0);
    const char        **mv = lua_newuserdatauv(L, sizeof(char *) * (size_t)(nmeta + 1), 0);
    for (lua_Integer i = 1; i <= n; i++) {
        lua_geti(L, 2, i);
        if (lua_type(L, -1) != LUA_TSTRING)
            return tl_error(L, "tide: save: %s: name %I is not a string", path, i);
        names[i - 1] = lua_tostring(L, -1); /* kept alive by table 2 */
        lua_pop(L, 1);
        lua_geti(L, 3, i);
        tide_tensor *t = tide_lua_to_tensor(L, -1);
        if (!t)
            return tl_error(L, "tide: save: %s: '%s' is not a live tensor (got %s)", path,
                            names[i - 1], luaL_typename(L, -1));
        ts[i - 1] = t; /* kept alive by table 3 */
        lua_pop(L, 1);
    }
    int k = 0;
    if (has_meta)
        for (lua_pushnil(L); lua_next(L, 4); lua_pop(L, 1)) {
            mk[k] = lua_tostring(L, -2);
            mv[k++] = lua_tostring(L, -1);
        }
    /* notes the copies of device tensors to the host, for tracing */
    TL_CALL(L, TL_STATE(L),
            tide_st_save(TL_STATE(L)->ctx, "save", path, (int)n, names, ts, k, mk, mv));
    return 0;
}

/* core.isatty([fd = 1]) -> boolean (false on any error) */
static int l_isatty(lua_State *L) {
    lua_Integer fd = lua_isnoneornil(L, 1) ? 1 : tl_check_int(L, 1, "isatty", "fd");
    lua_pushboolean(L, fd >= 0 && fd <= INT_MAX && isatty((int)fd) == 1);
    return 1;
}

/* core.wall_time() -> seconds from a monotonic clock (os.clock counts CPU time of all threads) */
static int l_wall_time(lua_State *L) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    lua_pushnumber(L, (lua_Number)ts.tv_sec + (lua_Number)ts.tv_nsec * 1e-9);
    return 1;
}

void tide_lua_register_io(lua_State *L) {
    static const luaL_Reg fns[] = {
        {"idx_load", l_idx_load}, {"safetensors_load", l_st_load}, {"safetensors_save", l_st_save},
        {"isatty", l_isatty},     {"wall_time", l_wall_time},      {NULL, NULL},
    };
    tl_register(L, -1, fns); /* upvalue: the state (TL_STATE) */
}
