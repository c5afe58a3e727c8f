/*
 * view_links.c — the views of tensors that need no grad, linked to their root (PyTorch's _base).
 *
 * A view of a tensor that requires grad is recorded, and autograd reaches its base through the
 * graph. A view of one that needs none has no node, yet a value that requires grad may later be
 * written into it (`out:select(1, i):copy_(h)`) or into its base (`z:copy_(w)` with `v = z[2]`
 * made before): the root (the tensor whose storage the view views) must take the change, and
 * every view of the root must follow it. So, with grad mode on and autograd loaded, such a view
 * is linked to its root in C, at the cost of a few pointer stores: view->root, and the root's
 * list of its views (first_view, then each view's next_view / prev_view), unlinked by the
 * collector (tl_unlink_views). Lua sees the links only when autograd asks (engine.lua): the
 * root is found by its address in a registry table with weak values, written once, at its first
 * view; while views follow a root (views_follow), a registry reference keeps the root alive.
 */
#include "args.h"
#include <stdlib.h>

/* a tensor's links, allocated at its first (most tensors have none: ltensor stays small, which
 * every op's result pays for) */
struct tl_link {
    ltensor *root;                  /* a view's root; NULL for a root, or once it is collected */
    ltensor *first_view;            /* a root's views */
    ltensor *next_view, *prev_view; /* a view's neighbours in its root's list */
    int      keep_ref;              /* a root that views follow: its registry reference, else 0 */
};

static const char roots_key = 'r';    /* registry: a root's address -> the root (weak values) */
static const char follower_key = 'f'; /* registry: autograd's fn(view, root) making a view follow */

static struct tl_link *link_of(ltensor *u) {
    if (!u->link)
        u->link = calloc(1, sizeof *u->link);
    return u->link;
}

static ltensor *root_of(const ltensor *u) {
    return u->link ? u->link->root : NULL;
}

void tl_link_view(lua_State *L, int base_idx, ltensor *base, ltensor *view) {
    ltensor        *root = root_of(base) ? root_of(base) : base;
    struct tl_link *rl = link_of(root), *vl = link_of(view);
    if (!rl || !vl)
        return;            /* no memory for the links: the view stays unlinked, as under no_grad */
    if (!rl->first_view) { /* its first view: the root is base, found by its address from now */
        lua_rawgetp(L, LUA_REGISTRYINDEX, &roots_key);
        lua_pushvalue(L, base_idx);
        lua_rawsetp(L, -2, root);
        lua_pop(L, 1);
    }
    vl->root = root;
    vl->prev_view = NULL;
    vl->next_view = rl->first_view;
    if (rl->first_view)
        rl->first_view->link->prev_view = view;
    rl->first_view = view;
}

/* pushes u's root, or nil (none, or one already being collected) */
static void push_root(lua_State *L, const ltensor *u) {
    if (!root_of(u)) {
        lua_pushnil(L);
        return;
    }
    lua_rawgetp(L, LUA_REGISTRYINDEX, &roots_key);
    lua_rawgetp(L, -1, root_of(u));
    lua_remove(L, -2);
}

/* u is being collected: it leaves its root's list, its own views lose their root, and its
 * links are freed */
void tl_unlink_views(lua_State *L, ltensor *u) {
    struct tl_link *l = u->link;
    if (l->root) {
        struct tl_link *rl = l->root->link;
        if (l->prev_view)
            l->prev_view->link->next_view = l->next_view;
        else
            rl->first_view = l->next_view;
        if (l->next_view)
            l->next_view->link->prev_view = l->prev_view;
        if (!rl->first_view && rl->keep_ref) { /* its last view: nothing follows it now */
            luaL_unref(L, LUA_REGISTRYINDEX, rl->keep_ref);
            rl->keep_ref = 0;
        }
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
    if (n && !u->link->keep_ref) {
        lua_pushvalue(L, 1);
        u->link->keep_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    }
    lua_pushinteger(L, n);
    return 1;
}
void tl_follow_root(lua_State *L, int idx, ltensor *u) {
    idx = lua_absindex(L, idx);
    u->follows = 0;
    lua_rawgetp(L, LUA_REGISTRYINDEX, &follower_key);
    lua_pushvalue(L, idx);
    push_root(L, u);
    if (lua_isnil(L, -1) || lua_isnil(L, -3)) {
        lua_pop(L, 3);
        return;
    }
    lua_call(L, 2, 0);
}

/* core._internal.view_root(t): the root t is a view of (made while it needed no grad), or nil */
static int view_root(lua_State *L) {
    push_root(L, tl_check(L, 1, "view_root"));
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
    lua_newtable(L);
    lua_createtable(L, 0, 1);
    lua_pushliteral(L, "v");
    lua_setfield(L, -2, "__mode");
    lua_setmetatable(L, -2);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &roots_key);
    static const luaL_Reg internal[] = {{"view_root", view_root},
                                        {"views_follow", views_follow},
                                        {"set_view_follower", set_view_follower},
                                        {NULL, NULL}};
    tl_register_internal(L, mod, internal);
}
