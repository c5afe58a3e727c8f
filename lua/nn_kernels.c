/*
 * nn_kernels.c — the kernels nn builds on: softmax / log_softmax (methods and functions), and
 * tide.core's im2col, col2im, maxpool2d and maxpool2d_backward (autograd and
 * nn call them); layer_norm and its gradient are kernel rows (lua/kernels.c).
 */
#include "binding.h"
#include <limits.h>

static int softmax_impl(lua_State *L, int log) {
    tide_lua_state *S = TL_STATE(L);
    const char     *name = log ? "log_softmax" : "softmax";
    int             nargs = 2;
    TL_AUTOCAST(L, S, TL_AUTOCAST_FP32, 1, 1);
    ltensor *a = tl_check(L, 1, name);
    tl_max_args(L, 2, name);
    if (tide_tensor_ndim(a->t) == 0) { /* a 0-d tensor's dim 1 (or -1, the default) */
        if (lua_isnil(L, 2)) {
            lua_pushinteger(L, -1);
            lua_replace(L, 2);
        }
        int n = tl_scalar_dim(L, name);
        if (n >= 0)
            return n;
    }
    int dim =
        tl_dim(L, a->t, lua_isnoneornil(L, 2) ? -1 : tl_check_int(L, 2, name, "dim"), name, 0);
    ltensor *r = tl_push_empty(L);
    TL_CALL(L, S, tide_softmax(S->ctx, a->t, dim, log, &r->t));
    return tl_done(L, S, a->requires_grad ? name : NULL, nargs);
}
static int o_softmax(lua_State *L) {
    return softmax_impl(L, 0);
}
static int o_log_softmax(lua_State *L) {
    return softmax_impl(L, 1);
}

/* kh, kw, sh, sw, ph, pw[, dh = 1, dw = 1] at idx.. (dh, dw: the dilation) */
static tide_conv_geom geom(lua_State *L, int idx, const char *op) {
    static const char *const w[] = {"kh", "kw", "sh", "sw", "ph", "pw", "dh", "dw"};
    lua_Integer              v[8];
    for (int i = 0; i < 8; i++) {
        v[i] = i >= 6 && lua_isnoneornil(L, idx + i) ? 1 : tl_check_int(L, idx + i, op, w[i]);
        if (v[i] < INT_MIN || v[i] > INT_MAX) /* the core's tide_conv_geom holds ints */
            tl_error(L, "tide: %s: %s = %I does not fit in 32 bits; use a value in %d..%d", op,
                     w[i], v[i], INT_MIN, INT_MAX);
    }
    tide_conv_geom g = {(int)v[0], (int)v[1], (int)v[2], (int)v[3],
                        (int)v[4], (int)v[5], (int)v[6], (int)v[7]};
    return g;
}

static int l_im2col(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    ltensor        *x = tl_check(L, 1, "im2col");
    tide_conv_geom  g = geom(L, 2, "im2col");
    lua_settop(L, 9);
    ltensor *r = tl_push_empty(L);
    TL_CALL(L, S, tide_im2col(S->ctx, x->t, g, &r->t));
    return tl_done(L, S, x->requires_grad ? "im2col" : NULL, 9);
}

static int l_col2im(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    ltensor        *c = tl_check(L, 1, "col2im");
    lua_Integer     C = tl_check_int(L, 2, "col2im", "C"), H = tl_check_int(L, 3, "col2im", "H"),
                W = tl_check_int(L, 4, "col2im", "W");
    tide_conv_geom g = geom(L, 5, "col2im");
    lua_settop(L, 12);
    tl_not_differentiable(L, S, "col2im", 12); /* a gradient's helper: backward runs it */
    ltensor *r = tl_push_empty(L);
    TL_CALL(L, S, tide_col2im(S->ctx, c->t, C, H, W, g, &r->t));
    return tl_done(L, S, NULL, 12);
}

/* the batch-folded layout [C*kh*kw, N, L] (tide_im2col_folded): for conv2d's one-gemm path,
 * which records its own node; inputs that require grad are refused (gradients' helpers) */
static int l_im2col_folded(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    ltensor        *x = tl_check(L, 1, "im2col_folded");
    tide_conv_geom  g = geom(L, 2, "im2col_folded");
    lua_settop(L, 9);
    tl_not_differentiable(L, S, "im2col_folded", 9);
    ltensor *r = tl_push_empty(L);
    TL_CALL(L, S, tide_im2col_folded(S->ctx, x->t, g, &r->t));
    return tl_done(L, S, NULL, 9);
}

static int l_col2im_folded(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    ltensor        *c = tl_check(L, 1, "col2im_folded");
    lua_Integer     C = tl_check_int(L, 2, "col2im_folded", "C"),
                H = tl_check_int(L, 3, "col2im_folded", "H"),
                W = tl_check_int(L, 4, "col2im_folded", "W");
    tide_conv_geom g = geom(L, 5, "col2im_folded");
    lua_settop(L, 12);
    tl_not_differentiable(L, S, "col2im_folded", 12);
    ltensor *r = tl_push_empty(L);
    TL_CALL(L, S, tide_col2im_folded(S->ctx, c->t, C, H, W, g, &r->t));
    return tl_done(L, S, NULL, 12);
}

static int check_groups(lua_State *L, int idx, const char *op) {
    lua_Integer groups = tl_check_int(L, idx, op, "groups");
    if (groups < 1 || groups > INT_MAX)
        tl_error(L, "tide: %s: groups = %I must be in 1..%d", op, groups, INT_MAX);
    return (int)groups;
}

/* conv2d by the device's own convolution (tide_conv2d: oneDNN on the CPU): x, w, b or nil, the
 * geometry (8 integers), groups. The result, or nil where the device has no such kernel (nn
 * then runs im2col + gemm). A helper of nn's fused conv2d, which records its own node. */
static int l_conv2d(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    ltensor        *x = tl_check(L, 1, "conv2d"), *w = tl_check(L, 2, "conv2d");
    ltensor        *b = lua_isnoneornil(L, 3) ? NULL : tl_check(L, 3, "conv2d");
    tide_conv_geom  g = geom(L, 4, "conv2d");
    int             groups = check_groups(L, 12, "conv2d");
    lua_settop(L, 12);
    tl_not_differentiable(L, S, "conv2d", 3);
    ltensor    *r = tl_push_empty(L);
    tide_status st = tide_conv2d(S->ctx, x->t, w->t, b ? b->t : NULL, g, groups, &r->t);
    if (st == TIDE_ENOTSUP) {
        lua_pushnil(L);
        return 1;
    }
    if (st != TIDE_OK) /* again through TL_CALL: memory reclaimed and retried, or raised */
        TL_CALL(L, S, tide_conv2d(S->ctx, x->t, w->t, b ? b->t : NULL, g, groups, &r->t));
    return tl_done(L, S, NULL, 12);
}

/* the three gradients a backward kernel was asked for (want[i]), pushed at stack slots
 * first..first+2: an unwanted one's slot becomes nil, the others' bytes go to the collector */
static void wanted_grads(lua_State *L, tide_lua_state *S, ltensor *const r[3], const int want[3],
                         int first) {
    size_t bytes = 0;
    for (int i = 0; i < 3; i++) {
        if (want[i]) {
            bytes += tide_tensor_nbytes(r[i]->t);
        } else {
            lua_pushnil(L);
            lua_replace(L, first + i);
        }
    }
    tl_gc_hint(L, S, bytes);
}

/* its gradients: grad_out, x, w, the geometry, groups, then whether the input's, the weight's
 * and the bias's are wanted. true and the three (nil where not wanted), or false where the
 * device has no such kernel. */
static int l_conv2d_backward(lua_State *L) {
    static const char op[] = "conv2d_backward";
    tide_lua_state   *S = TL_STATE(L);
    ltensor          *gy = tl_check(L, 1, op), *x = tl_check(L, 2, op);
    ltensor          *w = tl_check(L, 3, op);
    tide_conv_geom    g = geom(L, 4, op);
    int               groups = check_groups(L, 12, op);
    int               want[3] = {lua_toboolean(L, 13), lua_toboolean(L, 14), lua_toboolean(L, 15)};
    lua_settop(L, 15);
    tl_not_differentiable(L, S, op, 3);
    lua_pushboolean(L, 1);
    ltensor *r[3];
    for (int i = 0; i < 3; i++)
        r[i] = tl_push_empty(L);
#define CONV_BACKWARD_CALL                                                                         \
    tide_conv2d_backward(S->ctx, gy->t, x->t, w->t, g, groups, want[0] ? &r[0]->t : NULL,          \
                         want[1] ? &r[1]->t : NULL, want[2] ? &r[2]->t : NULL)
    tide_status st = CONV_BACKWARD_CALL;
    if (st == TIDE_ENOTSUP) {
        lua_pushboolean(L, 0);
        return 1;
    }
    if (st != TIDE_OK)
        TL_CALL(L, S, CONV_BACKWARD_CALL);
#undef CONV_BACKWARD_CALL
    wanted_grads(L, S, r, want, 17);
    return 4;
}

/* maxpool2d(x, kh, kw, sh, sw, ph, pw[, dh = 1, dw = 1, ceil_mode = false]): values and
 * 0-based argmax positions */
static int l_maxpool2d(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    ltensor        *x = tl_check(L, 1, "maxpool2d");
    tide_conv_geom  c = geom(L, 2, "maxpool2d");
    lua_Integer     d[2] = {1, 1};
    for (int i = 0; i < 2; i++)
        if (!lua_isnoneornil(L, 8 + i)) {
            d[i] = tl_check_int(L, 8 + i, "maxpool2d", i ? "dw" : "dh");
            if (d[i] < 1 || d[i] > INT_MAX)
                tl_error(L, "tide: maxpool2d: dilation %I must be in 1..%d", d[i], INT_MAX);
        }
    tide_pool_geom g = {
        c.kh, c.kw, c.sh, c.sw, c.ph, c.pw, (int)d[0], (int)d[1], lua_toboolean(L, 10)};
    lua_settop(L, 10);
    ltensor *r = tl_push_empty(L), *ix = tl_push_empty(L);
    TL_CALL(L, S, tide_maxpool2d_ex(S->ctx, x->t, g, &r->t, &ix->t));
    tl_gc_hint(L, S, tide_tensor_nbytes(r->t) + tide_tensor_nbytes(ix->t));
    if (x->requires_grad && S->grad_enabled)
        tl_record(L, S, "maxpool2d", 10, -2, -1);
    return 2;
}

static int l_maxpool2d_backward(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    ltensor        *go = tl_check(L, 1, "maxpool2d_backward");
    ltensor        *ix = tl_check(L, 2, "maxpool2d_backward");
    lua_Integer     H = tl_check_int(L, 3, "maxpool2d_backward", "H");
    lua_Integer     W = tl_check_int(L, 4, "maxpool2d_backward", "W");
    lua_settop(L, 4);
    tl_not_differentiable(L, S, "maxpool2d_backward", 4);
    ltensor *r = tl_push_empty(L);
    TL_CALL(L, S, tide_maxpool2d_backward(S->ctx, go->t, ix->t, H, W, &r->t));
    return tl_done(L, S, NULL, 4);
}

void tl_open_nn_kernels(lua_State *L, int mod, int methods) {
    static const luaL_Reg meths[] = {
        {"softmax", o_softmax}, {"log_softmax", o_log_softmax}, {NULL, NULL}};
    tl_register(L, methods, meths);
    tl_register(L, mod, meths);
    static const luaL_Reg internal[] = {{"im2col", l_im2col},
                                        {"col2im", l_col2im},
                                        {"im2col_folded", l_im2col_folded},
                                        {"conv2d", l_conv2d},
                                        {"conv2d_backward", l_conv2d_backward},
                                        {"col2im_folded", l_col2im_folded},
                                        {"maxpool2d", l_maxpool2d},
                                        {"maxpool2d_backward", l_maxpool2d_backward},
                                        {NULL, NULL}};
    tl_register_internal(L, mod, internal);
}
