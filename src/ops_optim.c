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
        tide_shape_strs sh = tide_shapes_fmt(t->ndim, t->shape, param->ndim, param->shape);
        return tide_seterr(TIDE_ESHAPE, "%s: %s has shape %s but the parameter has %s", op, what,
                           sh.a, sh.b);
    }
    if (need_contiguous && !tide_tensor_is_contiguous(t))
        return tide_seterr(TIDE_EINVAL, "%s: %s must be contiguous", op, what);
    return TIDE_OK;
}

static tide_status check_hparams(const char *op, const tide_optim_hparams *h) {
    if (h->kind < TIDE_OPTIM_SGD || h->kind > TIDE_OPTIM_ADAGRAD)
        return tide_seterr(TIDE_EINVAL, "%s: unknown optimizer kind %d", op, (int)h->kind);
    if (h->kind == TIDE_OPTIM_ADAM && !(h->bias_correction1 > 0 && h->bias_correction2 > 0))
        return tide_seterr(TIDE_EINVAL, "%s: bias corrections must be positive, got %g and %g", op,
                           h->bias_correction1, h->bias_correction2);
    return TIDE_OK;
}

/* the states each kind keeps: which must be there (and which must not) */
static tide_status check_states(const char *op, const tide_optim_hparams *h, const tide_tensor *s1,
                                const tide_tensor *s2, const tide_tensor *s3) {
    bool want1 = true, want2 = false, want3 = false;
    switch (h->kind) {
    case TIDE_OPTIM_SGD:
        want1 = h->momentum != 0;
        break;
    case TIDE_OPTIM_ADAM:
        want2 = true;
        break;
    case TIDE_OPTIM_RMSPROP:
        want2 = h->momentum != 0;
        want3 = h->centered != 0;
        break;
    case TIDE_OPTIM_ADAGRAD:
        break;
    }
    if ((s1 != NULL) != want1 || (s2 != NULL) != want2 || (s3 != NULL) != want3)
        return tide_seterr(TIDE_EINVAL,
                           "%s: expected state tensors %s, %s, %s for these options, got %s, "
                           "%s, %s",
                           op, want1 ? "tensor" : "nil", want2 ? "tensor" : "nil",
                           want3 ? "tensor" : "nil", s1 ? "tensor" : "nil", s2 ? "tensor" : "nil",
                           s3 ? "tensor" : "nil");
    return TIDE_OK;
}

static const char *op_name(const tide_optim_hparams *h) {
    if (!h)
        return "optim_step_";
    switch (h->kind) {
    case TIDE_OPTIM_ADAM:
        return "adam_step_";
    case TIDE_OPTIM_RMSPROP:
        return "rmsprop_step_";
    case TIDE_OPTIM_ADAGRAD:
        return "adagrad_step_";
    default:
        return "sgd_step_";
    }
}

tide_status tide_optim_step_(tide_ctx *ctx, const tide_optim_hparams *h, tide_tensor *param,
                             const tide_tensor *grad, tide_tensor *state1, tide_tensor *state2,
                             tide_tensor *state3) {
    const char *op = op_name(h);
    if (!h || !param || !grad)
        return tide_seterr(TIDE_EINVAL, "%s: hparams, param and grad are required", op);
    TIDE_TRY(check_hparams(op, h));
    if (!tide_dtype_is_float(param->dtype))
        return tide_seterr(TIDE_EDTYPE, "%s: the parameter must be floating point, got %s", op,
                           tide_dtype_name(param->dtype));
    if (h->kind == TIDE_OPTIM_ADAM && (!state1 || !state2))
        return tide_seterr(TIDE_EINVAL, "%s: Adam needs both moment tensors", op);
    if (h->kind == TIDE_OPTIM_SGD && state2)
        return tide_seterr(TIDE_EINVAL, "%s: SGD keeps one state tensor (the momentum buffer)", op);
    if (h->kind == TIDE_OPTIM_SGD && (state1 != NULL) != (h->momentum != 0))
        return tide_seterr(TIDE_EINVAL, "%s: a momentum buffer goes with momentum != 0 only", op);
    TIDE_TRY(check_states(op, h, state1, state2, state3));
    if (!tide_tensor_is_contiguous(param))
        return tide_seterr(TIDE_EINVAL, "%s: the parameter must be contiguous", op);
    TIDE_TRY(check_like(op, param, grad, "grad", false));
    static const char *const names[][3] = {{"momentum_buffer", "", ""},
                                           {"exp_avg", "exp_avg_sq", ""},
                                           {"square_avg", "momentum_buffer", "grad_avg"},
                                           {"sum", "", ""}};
    const char *const       *nm = names[h->kind];
    if (state1)
        TIDE_TRY(check_like(op, param, state1, nm[0], true));
    if (state2)
        TIDE_TRY(check_like(op, param, state2, nm[1], true));
    if (state3)
        TIDE_TRY(check_like(op, param, state3, nm[2], true));
    tide_device             *dev = param->storage->dev;
    tide_entry_optim_step_fn fn;
    TIDE_TRY(tide_entry_optim_step(dev, op, &fn));
    if (tide_tensor_numel(param) == 0)
        return TIDE_OK;
    tide_tensor *g;
    TIDE_TRY(tide_tensor_contiguous(ctx, grad, &g));
    tide_kview pv = tide_kview_of(param), gv = tide_kview_of(g), s1v, s2v, s3v;
    if (state1)
        s1v = tide_kview_of(state1);
    if (state2)
        s2v = tide_kview_of(state2);
    if (state3)
        s3v = tide_kview_of(state3);
    tide_status st =
        fn(dev, h, &pv, &gv, state1 ? &s1v : NULL, state2 ? &s2v : NULL, state3 ? &s3v : NULL);
    tide_tensor_release(g);
    if (st != TIDE_OK)
        return tide_err_op(st, op);
    tide_mark_written(param);
    if (state1)
        tide_mark_written(state1);
    if (state2)
        tide_mark_written(state2);
    if (state3)
        tide_mark_written(state3);
    return TIDE_OK;
}
