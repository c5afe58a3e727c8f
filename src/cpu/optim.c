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

#define SQRT_float  sqrtf
#define SQRT_double sqrt

tide_status cpu_optim_step(tide_device *dev, const tide_optim_hparams *h, const tide_kview *param,
                           const tide_kview *grad, const tide_kview *state1,
                           const tide_kview *state2) {
    (void)dev;
    int64_t n = cpu_numel(param);
    int     f32 = param->dtype == TIDE_DTYPE_F32;
    if (!f32 && param->dtype != TIDE_DTYPE_F64)
        return cpu_notsup("optim_step", param->dtype);
    if (h->kind == TIDE_OPTIM_SGD) {
        if (f32)
            SGD_LOOP(float);
        else
            SGD_LOOP(double);
    } else {
        if (f32)
            ADAM_LOOP(float);
        else
            ADAM_LOOP(double);
    }
    return TIDE_OK;
}
