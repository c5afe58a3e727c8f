/*
 * optim.c — the fused optimizer steps on the CPU (tide_optim_step_; formulas in tide.h): one
 * pass that reads each element of the parameter, its gradient and its state once and writes
 * them back, instead of a chain of elementwise ops with a temporary for each.
 */
#include "cpu.h"

#define SGD_LOOP(T)                                                                                \
    do {                                                                                           \
        T        *p = (T *)param->data, *buf = state1 ? (T *)state1->data : NULL;                  \
        const T  *g = (const T *)grad->data;                                                       \
        const T   lr = (T)h->lr, wd = (T)h->weight_decay, mom = (T)h->momentum;                    \
        const T   keep = (T)(1 - h->dampening), sign = h->maximize ? (T)-1 : (T)1;                 \
        const int first = h->first_step, nesterov = h->nesterov;                                   \
        _Pragma("omp parallel for schedule(static) if (n >= CPU_PAR_GRAIN)") for (int64_t i = 0;   \
                                                                                  i < n; i++) {    \
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
        T        *p = (T *)param->data, *m = (T *)state1->data, *v = (T *)state2->data;            \
        const T  *g = (const T *)grad->data;                                                       \
        const T   wd = (T)h->weight_decay, b1 = (T)h->beta1, b2 = (T)h->beta2, eps = (T)h->eps;    \
        const T   decay = (T)(1 - h->lr * h->weight_decay), sign = h->maximize ? (T)-1 : (T)1;     \
        const T   step = (T)(h->lr / h->bias_correction1);                                         \
        const T   inv_sqrt_bc2 = (T)(1 / sqrt(h->bias_correction2));                               \
        const int decoupled = h->decoupled;                                                        \
        _Pragma("omp parallel for schedule(static) if (n >= CPU_PAR_GRAIN)") for (int64_t i = 0;   \
                                                                                  i < n; i++) {    \
            T gi = sign * g[i], pi = p[i];                                                         \
            if (wd != 0) {                                                                         \
                if (decoupled)                                                                     \
                    pi *= decay;                                                                   \
                else                                                                               \
                    gi += pi * wd;                                                                 \
            }                                                                                      \
            T mi = m[i] * b1 + gi * ((T)1 - b1);                                                   \
            T vi = v[i] * b2 + gi * gi * ((T)1 - b2);                                              \
            m[i] = mi;                                                                             \
            v[i] = vi;                                                                             \
            p[i] = pi - mi / (SQRT_##T(vi) * inv_sqrt_bc2 + eps) * step;                           \
        }                                                                                          \
    } while (0)

/* RMSprop: state1 square_avg, state2 the momentum buffer or NULL, state3 grad_avg or NULL */
#define RMSPROP_LOOP(T)                                                                            \
    do {                                                                                           \
        T       *p = (T *)param->data, *v = (T *)state1->data;                                     \
        T       *buf = state2 ? (T *)state2->data : NULL, *a = state3 ? (T *)state3->data : NULL;  \
        const T *g = (const T *)grad->data;                                                        \
        const T  lr = (T)h->lr, wd = (T)h->weight_decay, mom = (T)h->momentum;                     \
        const T  alpha = (T)h->alpha, eps = (T)h->eps, sign = h->maximize ? (T)-1 : (T)1;          \
        _Pragma("omp parallel for schedule(static) if (n >= CPU_PAR_GRAIN)") for (int64_t i = 0;   \
                                                                                  i < n; i++) {    \
            T gi = sign * g[i];                                                                    \
            if (wd != 0)                                                                           \
                gi += p[i] * wd;                                                                   \
            T vi = v[i] * alpha + gi * gi * ((T)1 - alpha);                                        \
            v[i] = vi;                                                                             \
            T avg;                                                                                 \
            if (a) {                                                                               \
                T ai = a[i] * alpha + gi * ((T)1 - alpha);                                         \
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
        T       *p = (T *)param->data, *s = (T *)state1->data;                                     \
        const T *g = (const T *)grad->data;                                                        \
        const T  lr = (T)h->lr, wd = (T)h->weight_decay, eps = (T)h->eps;                          \
        const T  sign = h->maximize ? (T)-1 : (T)1;                                                \
        _Pragma("omp parallel for schedule(static) if (n >= CPU_PAR_GRAIN)") for (int64_t i = 0;   \
                                                                                  i < n; i++) {    \
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

tide_status cpu_optim_step(tide_device *dev, const tide_optim_hparams *h, const tide_kview *param,
                           const tide_kview *grad, const tide_kview *state1,
                           const tide_kview *state2, const tide_kview *state3) {
    (void)dev;
    int64_t n = cpu_numel(param);
    int     f32 = param->dtype == TIDE_DTYPE_F32;
    if (!f32 && param->dtype != TIDE_DTYPE_F64)
        return cpu_notsup("optim_step", param->dtype);
    switch (h->kind) {
    case TIDE_OPTIM_SGD:
        if (f32)
            SGD_LOOP(float);
        else
            SGD_LOOP(double);
        break;
    case TIDE_OPTIM_ADAM:
        if (f32)
            ADAM_LOOP(float);
        else
            ADAM_LOOP(double);
        break;
    case TIDE_OPTIM_RMSPROP:
        if (f32)
            RMSPROP_LOOP(float);
        else
            RMSPROP_LOOP(double);
        break;
    case TIDE_OPTIM_ADAGRAD:
        if (f32)
            ADAGRAD_LOOP(float);
        else
            ADAGRAD_LOOP(double);
        break;
    }
    return TIDE_OK;
}
