/* ops_optim.c — tide_optim_step_: the fused optimizer updates (formulas in tide.h), the kernel
 * rows sgd_step_, adam_step_, rmsprop_step_ and adagrad_step_ (include/tide_kernels.def). The
 * rows check devices, dtypes, shapes and contiguity; this adds what a row cannot say: which
 * states go with the options. */
#include "tide_impl.h"

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
    if (h->kind == TIDE_OPTIM_ADAM && (!state1 || !state2))
        return tide_seterr(TIDE_EINVAL, "%s: Adam needs both moment tensors", op);
    if (h->kind == TIDE_OPTIM_SGD && state2)
        return tide_seterr(TIDE_EINVAL, "%s: SGD keeps one state tensor (the momentum buffer)", op);
    if (h->kind == TIDE_OPTIM_SGD && (state1 != NULL) != (h->momentum != 0))
        return tide_seterr(TIDE_EINVAL, "%s: a momentum buffer goes with momentum != 0 only", op);
    TIDE_TRY(check_states(op, h, state1, state2, state3));
    /* each row's inputs and parameters, in its order */
    const tide_tensor *in[TIDE_KERNEL_MAX_TENSORS] = {param, grad};
    tide_kernel_scalar p[TIDE_KERNEL_MAX_PARAMS];
    tide_kernel        k;
    switch (h->kind) {
    case TIDE_OPTIM_SGD:
        k = TIDE_K_SGD_STEP;
        in[2] = state1;
        p[0].f = h->lr, p[1].f = h->momentum, p[2].f = h->dampening, p[3].f = h->weight_decay;
        p[4].i = h->nesterov != 0, p[5].i = h->maximize != 0, p[6].i = h->first_step != 0;
        break;
    case TIDE_OPTIM_ADAM:
        k = TIDE_K_ADAM_STEP;
        in[2] = state1, in[3] = state2;
        p[0].f = h->lr, p[1].f = h->beta1, p[2].f = h->beta2, p[3].f = h->eps;
        p[4].f = h->weight_decay, p[5].f = h->bias_correction1, p[6].f = h->bias_correction2;
        p[7].i = h->decoupled != 0, p[8].i = h->maximize != 0;
        break;
    case TIDE_OPTIM_RMSPROP:
        k = TIDE_K_RMSPROP_STEP;
        in[2] = state1, in[3] = state2, in[4] = state3;
        p[0].f = h->lr, p[1].f = h->alpha, p[2].f = h->eps, p[3].f = h->weight_decay;
        p[4].f = h->momentum, p[5].i = h->maximize != 0;
        break;
    default:
        k = TIDE_K_ADAGRAD_STEP;
        in[2] = state1;
        p[0].f = h->lr, p[1].f = h->eps, p[2].f = h->weight_decay, p[3].i = h->maximize != 0;
        break;
    }
    return tide_kernel_run(ctx, k, in, p, NULL, NULL);
}
