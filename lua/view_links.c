/*
 * view_links.c — the views of tensors that need no grad, linked to their root (PyTorch's _base).
 *
 * A view of a tensor that requires grad is recorded, and autograd reaches its base through the
 * graph. A view of one that needs none has no node, yet a value that requires grad may later be
 * written into it (`out:select(1, i):copy_(h)`) or into its base (`z:copy_(w)` with `v = z[2]`
 * made before): the root (the tensor whose storage the view views) must take the change, and
 * every view of the root must follow it. So, with grad mode on and autograd loaded, such a view
 * is linked to its root in C (view->root, and the root's list of its views: first_view, then
 * each view's next_view / prev_view), unlinked by the collector (tl_unlink_views), and holds
 * its root (set_root), as a PyTorch view holds its _base: Lua reaches
 * the root from the view when autograd asks (engine.lua), and the root lives while its views
 * do. The reference is one the collector sees: a registry reference that kept a root alive
 * while views followed it was never let go of once the root's graph reached one of them
 * (index_put_'s own permuted view), and kept the graph and the library that made it alive.
 */
#include "args.h"
#include <stdlib.h>

/* a tensor's links, allocated at its first (most tensors have none: ltensor stays small, which
 * every op's result pays for) */
struct tl_link {
    ltensor *root;                  /* a view's root; NULL for a root, or once it is collected */
    ltensor *first_view;            /* a root's views */
    ltensor *next_view, *prev_view; /* a view's neighbours in its root's list */
};

static const char follower_key = 'f'; /* registry: autograd's fn(view, root) making a view follow */

#if LUA_VERSION_NUM >= 504
/* the view's root in its second user value (userdata.c gives tensors two): a store, where a
 * table per view (below) made x[i] in grad mode twice as slow */
static void set_root(lua_State *L, int view_idx) { /* pops the root */
    lua_setiuservalue(L, view_idx, TL_ROOT_UV);
}
static int get_root(lua_State *L, int idx) { /* pushes it (nil when none) */
    return lua_getiuservalue(L, idx, TL_ROOT_UV);
}
#else
/* one user value (5.3), an environment table (5.1, LuaJIT): the root in the autograd table */
#define ROOT_FIELD "_root"
static void set_root(lua_State *L, int view_idx) {
    if (lua_getiuservalue(L, view_idx, 1) != LUA_TTABLE) {
        lua_pop(L, 1);
        lua_newtable(L);
        lua_pushvalue(L, -1);
        lua_setiuservalue(L, view_idx, 1);
    }
    lua_insert(L, -2);
    lua_setfield(L, -2, ROOT_FIELD);
    lua_pop(L, 1);
}
static int get_root(lua_State *L, int idx) {
    if (lua_getiuservalue(L, idx, 1) != LUA_TTABLE) {
        lua_pop(L, 1);
        lua_pushnil(L);
        return LUA_TNIL;
    }
    int t = lua_getfield(L, -1, ROOT_FIELD);
    lua_remove(L, -2);
    return t;
}
#endif

static struct tl_link *link_of(ltensor *u) {
    if (!u->link)
        u->link = calloc(1, sizeof *u->link);
    return u->link;
}

static ltensor *root_of(const ltensor *u) {
    return u->link ? u->link->root : NULL;
}

/* pushes the root of the linked view at idx, or nil (none, or one already being collected) */
static void push_root(lua_State *L, int idx, const ltensor *u) {
    if (!root_of(u))
        lua_pushnil(L);
    else
        get_root(L, idx);
}

/* the view at the top of the stack, of base (at base_idx) */
void tl_link_view(lua_State *L, int base_idx, ltensor *base, ltensor *view) {
    base_idx = lua_absindex(L, base_idx);
    int             view_idx = lua_gettop(L);
    ltensor        *root = root_of(base) ? root_of(base) : base;
    struct tl_link *rl = link_of(root), *vl = link_of(view);
    if (!rl || !vl)
        return; /* no memory for the links: the view stays unlinked, as under no_grad */
    if (root == base)
        lua_pushvalue(L, base_idx);
    else
        push_root(L, base_idx, base);
    set_root(L, view_idx);
    vl->root = root;
    vl->prev_view = NULL;
    vl->next_view = rl->first_view;
    if (rl->first_view)
        rl->first_view->link->prev_view = view;
    rl->first_view = view;
}

/* u is being collected: it leaves its root's list, its own views lose their root, and its
 * links are freed */
void tl_unlink_views(ltensor *u) {
    struct tl_link *l = u->link;
    if (l->root) {
        struct tl_link *rl = l->root->link;
        if (l->prev_view)
            l->prev_view->link->next_view = l->next_view;
        else
            rl->first_view = l->next_view;
        if (l->next_view)
            l->next_view->link->prev_view = l->prev_view;
    }
    for (ltensor *v = l->first_view, *next; v; v = next) {
        next = v->link->next_view;
        v->link->root = v->link->prev_view = v->link->next_view = NULL;
        v->follows = 0;
    }
    free(l);
    u->link = NULL;
}

/* A root that needed no grad took a value that requires grad: its views that need none require
 * grad from now, and each gets a view node of the root when its grad_fn is first read
 * (tl_follow_root). Returns how many. */
static int views_follow(lua_State *L) {
    ltensor *u = tl_check(L, 1, "views_follow");
    int      n = 0;
    for (ltensor *v = u->link ? u->link->first_view : NULL; v; v = v->link->next_view)
        if (!v->requires_grad) {
            v->requires_grad = 1;
            v->follows = 1;
            n++;
        }
    lua_pushinteger(L, n);
    return 1;
}
void tl_follow_root(lua_State *L, int idx, ltensor *u) {
    idx = lua_absindex(L, idx);
    u->follows = 0;
    lua_rawgetp(L, LUA_REGISTRYINDEX, &follower_key);
    lua_pushvalue(L, idx);
    push_root(L, idx, u);
    if (lua_isnil(L, -1) || lua_isnil(L, -3)) {
        lua_pop(L, 3);
        return;
    }
    lua_call(L, 2, 0);
}

/* core._internal.view_root(t): the root t is a view of (made while it needed no grad), or nil */
static int view_root(lua_State *L) {
    push_root(L, 1, tl_check(L, 1, "view_root"));
    return 1;
}

/* core._internal.set_view_follower(fn): autograd's fn(view, root), which gives a view that
 * follows its root its view node */
static int set_view_follower(lua_State *L) {
    luaL_checktype(L, 1, LUA_TFUNCTION);
    lua_settop(L, 1);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &follower_key);
    return 0;
}

void tl_open_view_links(lua_State *L, int mod) {
    static const luaL_Reg internal[] = {{"view_root", view_root},
                                        {"views_follow", views_follow},
                                        {"set_view_follower", set_view_follower},
                                        {NULL, NULL}};
    tl_register_internal(L, mod, internal);
}
