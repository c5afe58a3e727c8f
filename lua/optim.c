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

#include <stddef.h>

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

/* one hyperparameter argument: a number (checked, named in the message), or a flag (any value,
 * read for its truth) */
typedef struct {
    const char *name;
    size_t      off;
    int         flag;
} hparam_arg;
#define HNUM(f)                                                                                    \
    { #f, offsetof(tide_optim_hparams, f), 0 }
#define HFLAG(f)                                                                                   \
    { #f, offsetof(tide_optim_hparams, f), 1 }

/* a step's arguments: p, g, then nstates state tensors (bit i of `optional`: state i + 1 may be
 * nil), then the hyperparameters args (up to the one with a NULL name) */
typedef struct {
    const char     *op;
    tide_optim_kind kind;
    int             nstates;
    unsigned        optional;
    hparam_arg      args[10];
} step_desc;

static int step(lua_State *L, const step_desc *d) {
    tide_lua_state *S = TL_STATE(L);
    ltensor        *p = tl_check(L, 1, d->op);
    tide_tensor    *g = tl_check(L, 2, d->op)->t, *st[3] = {NULL, NULL, NULL};
    for (int i = 0; i < d->nstates; i++) {
        int at = 3 + i;
        st[i] = (d->optional >> i & 1u) ? opt_tensor(L, at, d->op) : tl_check(L, at, d->op)->t;
    }
    tide_optim_hparams h = {0};
    h.kind = d->kind;
    int idx = 3 + d->nstates;
    for (const hparam_arg *a = d->args; a->name; a++, idx++) {
        void *f = (char *)&h + a->off;
        if (a->flag)
            *(int *)f = lua_toboolean(L, idx);
        else
            *(double *)f = num(L, idx, d->op, a->name);
    }
    h.centered = d->kind == TIDE_OPTIM_RMSPROP && st[2] != NULL; /* grad_avg given */
    lua_settop(L, idx - 1);
    int rec = tl_check_inplace(L, S, p, d->op);
    TL_CALL(L, S, tide_optim_step_(S->ctx, &h, p->t, g, st[0], st[1], st[2]));
    tl_inplace_done(L, S, d->op, rec);
    return 0;
}

static int l_sgd_step(lua_State *L) {
    static const step_desc d = {"sgd_step_",
                                TIDE_OPTIM_SGD,
                                1,
                                1u,
                                {HNUM(lr), HNUM(momentum), HNUM(dampening), HNUM(weight_decay),
                                 HFLAG(nesterov), HFLAG(maximize), HFLAG(first_step)}};
    return step(L, &d);
}

static int l_adam_step(lua_State *L) {
    static const step_desc d = {"adam_step_",
                                TIDE_OPTIM_ADAM,
                                2,
                                0u,
                                {HNUM(lr), HNUM(beta1), HNUM(beta2), HNUM(eps), HNUM(weight_decay),
                                 HNUM(bias_correction1), HNUM(bias_correction2), HFLAG(decoupled),
                                 HFLAG(maximize)}};
    return step(L, &d);
}

static int l_rmsprop_step(lua_State *L) {
    static const step_desc d = {
        "rmsprop_step_",
        TIDE_OPTIM_RMSPROP,
        3,
        6u,
        {HNUM(lr), HNUM(alpha), HNUM(eps), HNUM(weight_decay), HNUM(momentum), HFLAG(maximize)}};
    return step(L, &d);
}

static int l_adagrad_step(lua_State *L) {
    static const step_desc d = {"adagrad_step_",
                                TIDE_OPTIM_ADAGRAD,
                                1,
                                0u,
                                {HNUM(lr), HNUM(eps), HNUM(weight_decay), HFLAG(maximize)}};
    return step(L, &d);
}

void tl_open_optim(lua_State *L, int mod) {
    static const luaL_Reg funcs[] = {{"_sgd_step_", l_sgd_step},
                                     {"_adam_step_", l_adam_step},
                                     {"_rmsprop_step_", l_rmsprop_step},
                                     {"_adagrad_step_", l_adagrad_step},
                                     {NULL, NULL}};
    tl_register(L, mod, funcs);
}
