/* ops_optim.c — tide_optim_step_: the fused optimizer updates (formulas in tide.h). The core
 * checks that parameter, gradient and state agree and gives the backend contiguous views; the
 * backend does the one pass. */
#include "tide_impl.h"

static tide_status check_like(const char *op, const tide_tensor *param, const tide_tensor *t,
                              const char *what, bool need_contiguous) {
    TIDE_TRY(tide_check_same_device(op, param, t));
    if (t->dtype != param->dtype)
        return tide_seterr(TIDE_EDTYPE, "%s: %s is %s but the parameter is %s; use one dtype", op,
                           what, tide_dtype_name(t->dtype), tide_dtype_name(param->dtype));
    bool same = t->ndim == param->ndim;
    for (int d = 0; same && d < t->ndim; d++)
        same = t->shape[d] == param->shape[d];
    if (!same) {
        char s1[200], s2[200];
        tide_shape_fmt(s1, sizeof s1, t->ndim, t->shape);
        tide_shape_fmt(s2, sizeof s2, param->ndim, param->shape);
        return tide_seterr(TIDE_ESHAPE, "%s: %s has shape %s but the parameter has %s", op, what,
                           s1, s2);
    }
    if (need_contiguous && !tide_tensor_is_contiguous(t))
        return tide_seterr(TIDE_EINVAL, "%s: %s must be contiguous", op, what);
    return TIDE_OK;
}

static tide_status check_hparams(const char *op, const tide_optim_hparams *h) {
    if (h->kind != TIDE_OPTIM_SGD && h->kind != TIDE_OPTIM_ADAM)
        return tide_seterr(TIDE_EINVAL, "%s: unknown optimizer kind %d", op, (int)h->kind);
    if (h->kind == TIDE_OPTIM_ADAM && !(h->bias_correction1 > 0 && h->bias_correction2 > 0))
        return tide_seterr(TIDE_EINVAL, "%s: bias corrections must be positive, got %g and %g", op,
                           h->bias_correction1, h->bias_correction2);
    return TIDE_OK;
}

tide_status tide_optim_step_(tide_ctx *ctx, const tide_optim_hparams *h, tide_tensor *param,
                             const tide_tensor *grad, tide_tensor *state1, tide_tensor *state2) {
    const char *op = h && h->kind == TIDE_OPTIM_ADAM ? "adam_step_" : "sgd_step_";
    if (!h || !param || !grad)
        return tide_seterr(TIDE_EINVAL, "%s: hparams, param and grad are required", op);
    TIDE_TRY(check_hparams(op, h));
    bool adam = h->kind == TIDE_OPTIM_ADAM;
    if (!tide_dtype_is_float(param->dtype))
        return tide_seterr(TIDE_EDTYPE, "%s: the parameter must be floating point, got %s", op,
                           tide_dtype_name(param->dtype));
    if (adam && (!state1 || !state2))
        return tide_seterr(TIDE_EINVAL, "%s: Adam needs both moment tensors", op);
    if (!adam && state2)
        return tide_seterr(TIDE_EINVAL, "%s: SGD keeps one state tensor (the momentum buffer)", op);
    if (!adam && (state1 != NULL) != (h->momentum != 0))
        return tide_seterr(TIDE_EINVAL, "%s: a momentum buffer goes with momentum != 0 only", op);
    if (!tide_tensor_is_contiguous(param))
        return tide_seterr(TIDE_EINVAL, "%s: the parameter must be contiguous", op);
    TIDE_TRY(check_like(op, param, grad, "grad", false));
    if (state1)
        TIDE_TRY(check_like(op, param, state1, adam ? "exp_avg" : "momentum_buffer", true));
    if (state2)
        TIDE_TRY(check_like(op, param, state2, "exp_avg_sq", true));
    tide_device *dev = param->storage->dev;
    if (!dev->backend->optim_step)
        return tide_notsup(op, dev);
    if (tide_tensor_numel(param) == 0)
        return TIDE_OK;
    tide_tensor *g;
    TIDE_TRY(tide_tensor_contiguous(ctx, grad, &g));
    tide_kview pv = tide_kview_of(param), gv = tide_kview_of(g), s1v, s2v;
    if (state1)
        s1v = tide_kview_of(state1);
    if (state2)
        s2v = tide_kview_of(state2);
    tide_status st =
        dev->backend->optim_step(dev, h, &pv, &gv, state1 ? &s1v : NULL, state2 ? &s2v : NULL);
    tide_tensor_release(g);
    if (st != TIDE_OK)
        return tide_err_op(st, op);
    tide_mark_written(param);
    if (state1)
        tide_mark_written(state1);
    if (state2)
        tide_mark_written(state2);
    return TIDE_OK;
}
