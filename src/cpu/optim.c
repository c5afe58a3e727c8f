/*
 * optim.c — the fused optimizer steps on the CPU (tide_optim_step_; formulas in tide.h): one
 * pass that reads each element of the parameter, its gradient and its state once and writes
 * them back, instead of a chain of elementwise ops with a temporary for each.
 *
 * Each kind's loop is a function over a range of elements (CPU_HOT: built for AVX2 and
 * AVX-512 too); threads take one range each. The SGD, Adam and Adagrad loops vectorize (the
 * Makefile builds this file with -fno-math-errno: otherwise sqrt keeps its libm call for
 * errno, a branch in the loop); RMSprop's optional states keep its loop scalar.
 */
#include "cpu.h"
#include <omp.h>

/* the operands of one step, as the range functions see them */
typedef struct step_ops {
    const tide_optim_hparams *h;
    char                     *param, *state1, *state2, *state3;
    const char               *grad;
} step_ops;

typedef void (*step_fn)(const step_ops *o, int64_t i0, int64_t i1);

#define SGD_LOOP(T)                                                                                \
    do {                                                                                           \
        T        *p = (T *)o->param, *buf = (T *)o->state1;                                        \
        const T  *g = (const T *)o->grad;                                                          \
        const T   lr = (T)h->lr, wd = (T)h->weight_decay, mom = (T)h->momentum;                    \
        const T   keep = (T)(1 - h->dampening), sign = h->maximize ? (T)-1 : (T)1;                 \
        const int first = h->first_step, nesterov = h->nesterov;                                   \
        for (int64_t i = i0; i < i1; i++) {                                                        \
            T gi = sign * g[i];                                                                    \
            if (wd != 0)                                                                           \
                gi += p[i] * wd;                                                                   \
            if (buf) {                                                                             \
                T b = first ? gi : buf[i] * mom + gi * keep;                                       \
                buf[i] = b;                                                                        \
                gi = nesterov ? gi + b * mom : b;                                                  \
            }                                                                                      \
            p[i] -= gi * lr;                                                                       \
        }                                                                                          \
    } while (0)

#define ADAM_LOOP(T)                                                                               \
    do {                                                                                           \
        T       *p = (T *)o->param, *m = (T *)o->state1, *v = (T *)o->state2;                      \
        const T *g = (const T *)o->grad;                                                           \
        const T  wd = (T)h->weight_decay, b1 = (T)h->beta1, b2 = (T)h->beta2, eps = (T)h->eps;     \
        /* 1 - beta in double, then rounded, as PyTorch's value = 1 - beta2 (not 1 - (T)beta2) */  \
        const T   ob1 = (T)(1 - h->beta1), ob2 = (T)(1 - h->beta2);                                \
        const T   decay = (T)(1 - h->lr * h->weight_decay), sign = h->maximize ? (T)-1 : (T)1;     \
        const T   step = (T)(h->lr / h->bias_correction1);                                         \
        const T   inv_sqrt_bc2 = (T)(1 / sqrt(h->bias_correction2));                               \
        const int decoupled = h->decoupled;                                                        \
        for (int64_t i = i0; i < i1; i++) {                                                        \
            T gi = sign * g[i], pi = p[i];                                                         \
            if (wd != 0) {                                                                         \
                if (decoupled)                                                                     \
                    pi *= decay;                                                                   \
                else                                                                               \
                    gi += pi * wd;                                                                 \
            }                                                                                      \
            T mi = m[i] * b1 + gi * ob1;                                                           \
            T vi = v[i] * b2 + gi * gi * ob2;                                                      \
            m[i] = mi;                                                                             \
            v[i] = vi;                                                                             \
            p[i] = pi - mi / (SQRT_##T(vi) * inv_sqrt_bc2 + eps) * step;                           \
        }                                                                                          \
    } while (0)

/* RMSprop: state1 square_avg, state2 the momentum buffer or NULL, state3 grad_avg or NULL */
#define RMSPROP_LOOP(T)                                                                            \
    do {                                                                                           \
        T       *p = (T *)o->param, *v = (T *)o->state1;                                           \
        T       *buf = (T *)o->state2, *a = (T *)o->state3;                                        \
        const T *g = (const T *)o->grad;                                                           \
        const T  lr = (T)h->lr, wd = (T)h->weight_decay, mom = (T)h->momentum;                     \
        const T  alpha = (T)h->alpha, eps = (T)h->eps, sign = h->maximize ? (T)-1 : (T)1;          \
        const T  oa = (T)(1 - h->alpha);                                                           \
        for (int64_t i = i0; i < i1; i++) {                                                        \
            T gi = sign * g[i];                                                                    \
            if (wd != 0)                                                                           \
                gi += p[i] * wd;                                                                   \
            T vi = v[i] * alpha + gi * gi * oa;                                                    \
            v[i] = vi;                                                                             \
            T avg;                                                                                 \
            if (a) {                                                                               \
                T ai = a[i] * alpha + gi * oa;                                                     \
                a[i] = ai;                                                                         \
                avg = SQRT_##T(vi - ai * ai) + eps;                                                \
            } else {                                                                               \
                avg = SQRT_##T(vi) + eps;                                                          \
            }                                                                                      \
            if (buf) {                                                                             \
                T b = buf[i] * mom + gi / avg;                                                     \
                buf[i] = b;                                                                        \
                p[i] -= b * lr;                                                                    \
            } else {                                                                               \
                p[i] -= gi / avg * lr;                                                             \
            }                                                                                      \
        }                                                                                          \
    } while (0)

/* Adagrad: state1 the sum; h->lr is the decayed rate */
#define ADAGRAD_LOOP(T)                                                                            \
    do {                                                                                           \
        T       *p = (T *)o->param, *s = (T *)o->state1;                                           \
        const T *g = (const T *)o->grad;                                                           \
        const T  lr = (T)h->lr, wd = (T)h->weight_decay, eps = (T)h->eps;                          \
        const T  sign = h->maximize ? (T)-1 : (T)1;                                                \
        for (int64_t i = i0; i < i1; i++) {                                                        \
            T gi = sign * g[i];                                                                    \
            if (wd != 0)                                                                           \
                gi += p[i] * wd;                                                                   \
            T si = s[i] + gi * gi;                                                                 \
            s[i] = si;                                                                             \
            p[i] -= gi / (SQRT_##T(si) + eps) * lr;                                                \
        }                                                                                          \
    } while (0)

#define SQRT_float  sqrtf
#define SQRT_double sqrt

/* one range function per kind and dtype: NAME_f32 / NAME_f64 */
#define DEF_STEP(NAME, LOOP)                                                                       \
    CPU_HOT static void NAME##_f32(const step_ops *o, int64_t i0, int64_t i1) {                    \
        const tide_optim_hparams *h = o->h;                                                        \
        LOOP(float);                                                                               \
    }                                                                                              \
    CPU_HOT static void NAME##_f64(const step_ops *o, int64_t i0, int64_t i1) {                    \
        const tide_optim_hparams *h = o->h;                                                        \
        LOOP(double);                                                                              \
    }
DEF_STEP(sgd, SGD_LOOP)
DEF_STEP(adam, ADAM_LOOP)
DEF_STEP(rmsprop, RMSPROP_LOOP)
DEF_STEP(adagrad, ADAGRAD_LOOP)

static char *data_of(const tide_kview *v) {
    return v ? (char *)v->data : NULL;
}

static tide_status optim_step(tide_device *dev, const tide_optim_hparams *h,
                              const tide_kview *param, const tide_kview *grad,
                              const tide_kview *state1, const tide_kview *state2,
                              const tide_kview *state3) {
    (void)dev;
    int64_t n = cpu_numel(param);
    int     f32 = param->dtype == TIDE_DTYPE_F32;
    if (!f32 && param->dtype != TIDE_DTYPE_F64)
        return cpu_notsup("optim_step", param->dtype);
    /* by kind, then float32 or not */
    static const step_fn steps[][2] = {
        [TIDE_OPTIM_SGD] = {sgd_f64, sgd_f32},
        [TIDE_OPTIM_ADAM] = {adam_f64, adam_f32},
        [TIDE_OPTIM_RMSPROP] = {rmsprop_f64, rmsprop_f32},
        [TIDE_OPTIM_ADAGRAD] = {adagrad_f64, adagrad_f32},
    };
    step_fn fn = (unsigned)h->kind < sizeof steps / sizeof steps[0] ? steps[h->kind][f32] : NULL;
    if (!fn)
        return tide_seterr(TIDE_EINVAL, "optim_step: unknown optimizer kind %d (cpu kernel)",
                           (int)h->kind);
    step_ops o = {h,
                  data_of(param),
                  data_of(state1),
                  data_of(state2),
                  data_of(state3),
                  (const char *)grad->data};
    int      nt = omp_get_max_threads();
    if (n < CPU_PAR_GRAIN || nt < 2 || omp_in_parallel()) {
        fn(&o, 0, n);
        return TIDE_OK;
    }
    if (n / CPU_PAR_GRAIN < nt) /* no thread gets less than a grain */
        nt = (int)(n / CPU_PAR_GRAIN);
#pragma omp parallel num_threads(nt)
    {
        /* ranges rounded to 16 elements so threads do not share cache lines */
        int64_t t = omp_get_thread_num(), tn = omp_get_num_threads();
        int64_t b = (n * t / tn) & ~(int64_t)15,
                e = t == tn - 1 ? n : (n * (t + 1) / tn) & ~(int64_t)15;
        if (b < e)
            fn(&o, b, e);
    }
    return TIDE_OK;
}

/* ---- the kernel rows sgd_step_, adam_step_, rmsprop_step_, adagrad_step_ ------------------ */

/* (CPU column HALF: a half parameter and its state come as float32 copies, rounded once a step) */
static tide_status optim_row(tide_device *dev, const tide_kernel_call *c) {
    tide_optim_hparams h = tide_optim_hparams_of(c);
    return optim_step(dev, &h, c->in[0], c->in[1], c->in[2], c->in[3], c->in[4]);
}
tide_status cpu_sgd_step_(tide_device *dev, const tide_kernel_call *c) {
    return optim_row(dev, c);
}
tide_status cpu_adam_step_(tide_device *dev, const tide_kernel_call *c) {
    return optim_row(dev, c);
}
tide_status cpu_rmsprop_step_(tide_device *dev, const tide_kernel_call *c) {
    return optim_row(dev, c);
}
tide_status cpu_adagrad_step_(tide_device *dev, const tide_kernel_call *c) {
    return optim_row(dev, c);
}
