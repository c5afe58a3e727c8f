/* dist.c — tide.core._dist: the collectives of include/tide_dist.h for lua/tide/distributed/.
 * Options and names are checked in Lua; here each call checks its tensor and raises the core's
 * message (which names the rank) at the user's line. */
#include "binding.h"
#include "tide_dist.h"
#include <string.h>

#define TL_DIST_WORK "tide.dist.Work"

static const char *const backends[] = {"mpi", "nccl", "auto", NULL};
static const char *const ops[] = {"sum", "mean", "max", "min", NULL};

static int l_is_available(lua_State *L) {
    lua_pushboolean(
        L, tide_dist_is_available((tide_dist_backend)luaL_checkoption(L, 1, "auto", backends)));
    return 1;
}

static int l_unavailable_reason(lua_State *L) {
    const char *r =
        tide_dist_unavailable_reason((tide_dist_backend)luaL_checkoption(L, 1, "auto", backends));
    if (r)
        lua_pushstring(L, r);
    else
        lua_pushnil(L);
    return 1;
}

static int l_init(lua_State *L) {
    tide_dist_backend b = (tide_dist_backend)luaL_checkoption(L, 1, "auto", backends);
    if (tide_dist_init(b) != TIDE_OK)
        return tl_raise(L);
    return 0;
}

static int l_info(lua_State *L) {
    lua_createtable(L, 0, 6);
    lua_pushboolean(L, tide_dist_is_initialized());
    lua_setfield(L, -2, "initialized");
    lua_pushinteger(L, tide_dist_rank());
    lua_setfield(L, -2, "rank");
    lua_pushinteger(L, tide_dist_world_size());
    lua_setfield(L, -2, "world_size");
    lua_pushinteger(L, tide_dist_local_rank());
    lua_setfield(L, -2, "local_rank");
    lua_pushboolean(L, tide_dist_has_backend(TIDE_DIST_MPI));
    lua_setfield(L, -2, "mpi");
    lua_pushboolean(L, tide_dist_has_backend(TIDE_DIST_NCCL));
    lua_setfield(L, -2, "nccl");
    return 1;
}

static int l_rank(lua_State *L) {
    lua_pushinteger(L, tide_dist_rank());
    return 1;
}

static int l_world_size(lua_State *L) {
    lua_pushinteger(L, tide_dist_world_size());
    return 1;
}

static int l_set_timeout(lua_State *L) {
    lua_Number s = luaL_checknumber(L, 1);
    if (!(s >= 0))
        return tl_error(L, "tide: dist.init: timeout %f is invalid; use seconds >= 0 (0: none)",
                        (double)s);
    lua_pushnumber(L, tide_dist_timeout());
    tide_dist_set_timeout(s);
    return 1;
}

static int l_all_reduce(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    ltensor        *t = tl_check(L, 1, "all_reduce");
    tide_dist_op    op = (tide_dist_op)luaL_checkoption(L, 2, "sum", ops);
    TL_CALL(L, S, tide_dist_all_reduce(S->ctx, t->t, op));
    lua_settop(L, 1);
    return 1;
}

typedef struct lwork {
    tide_dist_work *w;
} lwork;

/* a started reduction; waited for by :wait(), or by the collector (never left running) */
static int l_all_reduce_start(lua_State *L) {
    ltensor     *t = tl_check(L, 1, "all_reduce");
    tide_dist_op op = (tide_dist_op)luaL_checkoption(L, 2, "sum", ops);
    lwork       *u = lua_newuserdatauv(L, sizeof *u, 0);
    u->w = NULL;
    luaL_setmetatable(L, TL_DIST_WORK);
    if (tide_dist_all_reduce_start(t->t, op, &u->w) != TIDE_OK)
        return tl_raise(L);
    return 1;
}

static int l_work_wait(lua_State *L) {
    lwork          *u = luaL_checkudata(L, 1, TL_DIST_WORK);
    tide_dist_work *w = u->w;
    u->w = NULL;
    if (tide_dist_wait(w) != TIDE_OK)
        return tl_raise(L);
    return 0;
}

static int l_work_gc(lua_State *L) {
    lwork *u = luaL_checkudata(L, 1, TL_DIST_WORK);
    if (u->w)
        tide_dist_wait(u->w);
    u->w = NULL;
    return 0;
}

static int l_broadcast(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    ltensor        *t = tl_check(L, 1, "broadcast");
    lua_Integer     src = luaL_optinteger(L, 2, 0);
    if (src < 0 || src >= tide_dist_world_size())
        return tl_error(L, "tide: broadcast: source rank %I does not exist: ranks are 0 to %d",
                        (lua_Integer)src, tide_dist_world_size() - 1);
    TL_CALL(L, S, tide_dist_broadcast(S->ctx, t->t, (int)src));
    lua_settop(L, 1);
    return 1;
}

static int l_all_gather(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    ltensor        *t = tl_check(L, 1, "all_gather");
    ltensor        *out = tl_push_empty(L);
    TL_CALL(L, S, tide_dist_all_gather(S->ctx, t->t, &out->t));
    return 1;
}

static int l_reduce_scatter(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    ltensor        *t = tl_check(L, 1, "reduce_scatter");
    tide_dist_op    op = (tide_dist_op)luaL_checkoption(L, 2, "sum", ops);
    ltensor        *out = tl_push_empty(L);
    TL_CALL(L, S, tide_dist_reduce_scatter(S->ctx, t->t, op, &out->t));
    return 1;
}

static int l_barrier(lua_State *L) {
    if (tide_dist_barrier() != TIDE_OK)
        return tl_raise(L);
    return 0;
}

static int l_finalize(lua_State *L) {
    if (tide_dist_finalize() != TIDE_OK)
        return tl_raise(L);
    return 0;
}

void tl_open_dist(lua_State *L, int mod) {
    if (luaL_newmetatable(L, TL_DIST_WORK)) {
        lua_pushcfunction(L, l_work_gc);
        lua_setfield(L, -2, "__gc");
        lua_newtable(L);
        lua_pushcfunction(L, l_work_wait);
        lua_setfield(L, -2, "wait");
        lua_setfield(L, -2, "__index");
    }
    lua_pop(L, 1);
    static const luaL_Reg funcs[] = {{"is_available", l_is_available},
                                     {"unavailable_reason", l_unavailable_reason},
                                     {"init", l_init},
                                     {"info", l_info},
                                     {"rank", l_rank},
                                     {"world_size", l_world_size},
                                     {"set_timeout", l_set_timeout},
                                     {"all_reduce", l_all_reduce},
                                     {"all_reduce_start", l_all_reduce_start},
                                     {"broadcast", l_broadcast},
                                     {"all_gather", l_all_gather},
                                     {"reduce_scatter", l_reduce_scatter},
                                     {"barrier", l_barrier},
                                     {"finalize", l_finalize},
                                     {NULL, NULL}};
    lua_newtable(L);
    tl_register(L, lua_gettop(L), funcs);
    lua_setfield(L, mod, "_dist");
}
