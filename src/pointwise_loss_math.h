/*
 * pointwise_loss_math.h — the scalar math of the kernel rows pointwise_loss and
 * pointwise_loss_backward (include/tide.h's tide_loss), written once for the CPU (src/cpu/
 * pointwise_loss.c) and CUDA (src/cuda/pointwise_loss.cu).
 *
 * The formulas are PyTorch 1.13's CPU kernels', in their order of operations, in the element's
 * own type: the loss of one element (mse_loss, smooth_l1_loss, huber_loss,
 * binary_cross_entropy_with_logits, soft_margin_loss; l1_loss is PyTorch's composite, |d|), and
 * the gradients with the reduction's norm (1 / numel for "mean", else 1) and the incoming
 * gradient g folded in. PyTorch's target gradients of mse, smooth_l1 and huber are their input
 * gradients with input and target swapped (at d = 0 with beta = 0, smooth_l1 gives -g to both);
 * l1's is the input's negated; soft_margin's, which PyTorch does not give, is
 * -x e^(-x t) / (1 + e^(-x t)).
 *
 * TIDE_DEF_POINTWISE_LOSS(QUAL, SFX, T, ABS, EXP, LOG, LOG1P) defines tide_loss_<SFX>,
 * tide_loss_grad_<SFX> and tide_loss_grad_target_<SFX> over T with the given functions: here
 * d (double) and f (float) with libm's; the CPU adds its vectorizable float32 ones (vf).
 */
#ifndef TIDE_POINTWISE_LOSS_MATH_H
#define TIDE_POINTWISE_LOSS_MATH_H

#include "scalar_math.h"
#include "tide.h"

#define TIDE_DEF_POINTWISE_LOSS(QUAL, SFX, T, ABS, EXP, LOG, LOG1P)                                \
    QUAL T tide_loss_##SFX(int kind, T x, T t, T beta) {                                           \
        T d = x - t, z = ABS(d);                                                                   \
        switch (kind) {                                                                            \
        case TIDE_LOSS_MSE:                                                                        \
            return d * d;                                                                          \
        case TIDE_LOSS_L1:                                                                         \
            return z;                                                                              \
        case TIDE_LOSS_SMOOTH_L1:                                                                  \
            return z < beta ? (T)0.5 * z * z / beta : z - (T)0.5 * beta;                           \
        case TIDE_LOSS_HUBER:                                                                      \
            return z < beta ? (T)0.5 * z * z : beta * (z - (T)0.5 * beta);                         \
        case TIDE_LOSS_BCE_WITH_LOGITS: {                                                          \
            T m = -x < 0 ? (T)0 : -x; /* clamp_min(-x, 0): NaN stays */                            \
            return ((T)1 - t) * x + m + LOG(EXP(-m) + EXP(-x - m));                                \
        }                                                                                          \
        default:                                                                                   \
            return LOG1P(EXP(-x * t));                                                             \
        }                                                                                          \
    }                                                                                              \
    /* norm * g * dloss/dx; smooth_l1's and huber's branches in PyTorch's order (x - t <= -beta    \
     * first) */                                                                                   \
    QUAL T tide_loss_grad_##SFX(int kind, T x, T t, T beta, T norm, T g) {                         \
        T d = x - t;                                                                               \
        switch (kind) {                                                                            \
        case TIDE_LOSS_MSE:                                                                        \
            return (T)2 * norm * d * g;                                                            \
        case TIDE_LOSS_L1:                                                                         \
            return g * norm * (T)((d > 0) - (d < 0)); /* sgn(NaN) is 0, as PyTorch's */            \
        case TIDE_LOSS_SMOOTH_L1:                                                                  \
            return d <= -beta ? -norm * g : d >= beta ? norm * g : norm * d * g / beta;            \
        case TIDE_LOSS_HUBER:                                                                      \
            return d <= -beta ? -norm * g * beta : d >= beta ? norm * g * beta : norm * d * g;     \
        case TIDE_LOSS_BCE_WITH_LOGITS:                                                            \
            return ((T)1 / ((T)1 + EXP(-x)) - t) * g * norm;                                       \
        default: {                                                                                 \
            T e = EXP(-t * x);                                                                     \
            return t * e * -norm / (e + (T)1) * g;                                                 \
        }                                                                                          \
        }                                                                                          \
    }                                                                                              \
    QUAL T tide_loss_grad_target_##SFX(int kind, T x, T t, T beta, T norm, T g) {                  \
        switch (kind) {                                                                            \
        case TIDE_LOSS_MSE:                                                                        \
        case TIDE_LOSS_SMOOTH_L1:                                                                  \
        case TIDE_LOSS_HUBER:                                                                      \
            return tide_loss_grad_##SFX(kind, t, x, beta, norm, g);                                \
        case TIDE_LOSS_L1:                                                                         \
            return -tide_loss_grad_##SFX(kind, x, t, beta, norm, g);                               \
        case TIDE_LOSS_BCE_WITH_LOGITS:                                                            \
            return -x * g * norm;                                                                  \
        default: {                                                                                 \
            T e = EXP(-x * t);                                                                     \
            return -x * e / ((T)1 + e) * g * norm;                                                 \
        }                                                                                          \
        }                                                                                          \
    }

TIDE_DEF_POINTWISE_LOSS(TIDE_HD, d, double, fabs, exp, log, log1p)
TIDE_DEF_POINTWISE_LOSS(TIDE_HD, f, float, fabsf, expf, logf, log1pf)

#endif /* TIDE_POINTWISE_LOSS_MATH_H */
