/*
 * optim.c — the binding of the fused optimizer steps (tide_optim_step_), for tide.optim:
 *   core._sgd_step_(p, g, buf|nil, lr, momentum, dampening, weight_decay, nesterov, maximize,
 *                   first_step)
 *   core._adam_step_(p, g, exp_avg, exp_avg_sq, lr, beta1, beta2, eps, weight_decay,
 *                    bias_correction1, bias_correction2, decoupled, maximize)
 *   core._rmsprop_step_(p, g, square_avg, momentum_buffer|nil, grad_avg|nil, lr, alpha, eps,
 *                       weight_decay, momentum, maximize)
 *   core._adagrad_step_(p, g, sum, lr (decayed), eps, weight_decay, maximize)
 * Both write p and the state in place and return nothing. The optimizers call them inside
 * their no-grad step, so the in-place rules of autograd still apply to direct calls.
 */
#include "binding.h"

static double num(lua_State *L, int idx, const char *op, const char *what) {
    if (lua_type(L, idx) != LUA_TNUMBER)
        tl_error(L, "tide: %s: %s must be a number, got %s", op, what, luaL_typename(L, idx));
    return lua_tonumber(L, idx);
}

/* the tensor at idx, or NULL for nil */
static tide_tensor *opt_tensor(lua_State *L, int idx, const char *op) {
    if (lua_isnil(L, idx))
        return NULL;
    return tl_check(L, idx, op)->t;
}

static int l_sgd_step(lua_State *L) {
    static const char  op[] = "sgd_step_";
    tide_lua_state    *S = TL_STATE(L);
    ltensor           *p = tl_check(L, 1, op);
    tide_tensor       *g = tl_check(L, 2, op)->t, *buf = opt_tensor(L, 3, op);
    tide_optim_hparams h = {0};
    h.kind = TIDE_OPTIM_SGD;
    h.lr = num(L, 4, op, "lr");
    h.momentum = num(L, 5, op, "momentum");
    h.dampening = num(L, 6, op, "dampening");
    h.weight_decay = num(L, 7, op, "weight_decay");
    h.nesterov = lua_toboolean(L, 8);
    h.maximize = lua_toboolean(L, 9);
    h.first_step = lua_toboolean(L, 10);
    lua_settop(L, 10);
    int rec = tl_check_inplace(L, S, p, op);
    TL_CALL(L, S, tide_optim_step_(S->ctx, &h, p->t, g, buf, NULL, NULL));
    tl_inplace_done(L, S, op, rec);
    return 0;
}

static int l_adam_step(lua_State *L) {
    static const char op[] = "adam_step_";
    tide_lua_state   *S = TL_STATE(L);
    ltensor          *p = tl_check(L, 1, op);
    tide_tensor *g = tl_check(L, 2, op)->t, *m = tl_check(L, 3, op)->t, *v = tl_check(L, 4, op)->t;
    tide_optim_hparams h = {0};
    h.kind = TIDE_OPTIM_ADAM;
    h.lr = num(L, 5, op, "lr");
    h.beta1 = num(L, 6, op, "beta1");
    h.beta2 = num(L, 7, op, "beta2");
    h.eps = num(L, 8, op, "eps");
    h.weight_decay = num(L, 9, op, "weight_decay");
    h.bias_correction1 = num(L, 10, op, "bias_correction1");
    h.bias_correction2 = num(L, 11, op, "bias_correction2");
    h.decoupled = lua_toboolean(L, 12);
    h.maximize = lua_toboolean(L, 13);
    lua_settop(L, 13);
    int rec = tl_check_inplace(L, S, p, op);
    TL_CALL(L, S, tide_optim_step_(S->ctx, &h, p->t, g, m, v, NULL));
    tl_inplace_done(L, S, op, rec);
    return 0;
}

static int l_rmsprop_step(lua_State *L) {
    static const char  op[] = "rmsprop_step_";
    tide_lua_state    *S = TL_STATE(L);
    ltensor           *p = tl_check(L, 1, op);
    tide_tensor       *g = tl_check(L, 2, op)->t, *v = tl_check(L, 3, op)->t;
    tide_tensor       *buf = opt_tensor(L, 4, op), *avg = opt_tensor(L, 5, op);
    tide_optim_hparams h = {0};
    h.kind = TIDE_OPTIM_RMSPROP;
    h.lr = num(L, 6, op, "lr");
    h.alpha = num(L, 7, op, "alpha");
    h.eps = num(L, 8, op, "eps");
    h.weight_decay = num(L, 9, op, "weight_decay");
    h.momentum = num(L, 10, op, "momentum");
    h.maximize = lua_toboolean(L, 11);
    h.centered = avg != NULL;
    lua_settop(L, 11);
    int rec = tl_check_inplace(L, S, p, op);
    TL_CALL(L, S, tide_optim_step_(S->ctx, &h, p->t, g, v, buf, avg));
    tl_inplace_done(L, S, op, rec);
    return 0;
}

static int l_adagrad_step(lua_State *L) {
    static const char  op[] = "adagrad_step_";
    tide_lua_state    *S = TL_STATE(L);
    ltensor           *p = tl_check(L, 1, op);
    tide_tensor       *g = tl_check(L, 2, op)->t, *sum = tl_check(L, 3, op)->t;
    tide_optim_hparams h = {0};
    h.kind = TIDE_OPTIM_ADAGRAD;
    h.lr = num(L, 4, op, "lr");
    h.eps = num(L, 5, op, "eps");
    h.weight_decay = num(L, 6, op, "weight_decay");
    h.maximize = lua_toboolean(L, 7);
    lua_settop(L, 7);
    int rec = tl_check_inplace(L, S, p, op);
    TL_CALL(L, S, tide_optim_step_(S->ctx, &h, p->t, g, sum, NULL, NULL));
    tl_inplace_done(L, S, op, rec);
    return 0;
}

void tl_open_optim(lua_State *L, int mod) {
    static const luaL_Reg funcs[] = {{"_sgd_step_", l_sgd_step},
                                     {"_adam_step_", l_adam_step},
                                     {"_rmsprop_step_", l_rmsprop_step},
                                     {"_adagrad_step_", l_adagrad_step},
                                     {NULL, NULL}};
    tl_register(L, mod, funcs);
}
