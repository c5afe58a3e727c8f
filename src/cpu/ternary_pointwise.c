/*
 * ternary_pointwise.c — the addcmul, addcdiv and lerp kernel rows (include/tide_kernels.def):
 * one pass over x, two more operands and the result, where tide.pointwise's compositions made
 * three temporaries (addcmul of 10^6 float32: 2.0 ms against PyTorch's 0.3). The formulas are
 * PyTorch's CPU kernels', in its order of operations, in the dtype (float16 and bfloat16 come
 * as float32 copies: the CPU column HALF).
 */
#include "cpu.h"

typedef struct ternary_arg {
    tide_kernel kernel;
    double      scalar; /* value, or lerp's number weight */
    int         f32, has_c;
} ternary_arg;

/* PyTorch's lerp: from x below |w| = 0.5, from end above, so that w = 1 gives end exactly */
#define LERP_ONE(T, x, e, w)                                                                       \
    ((w) < (T)0.5 && (w) > (T)-0.5 ? (x) + (w) * ((e) - (x)) : (e) - ((e) - (x)) * ((T)1 - (w)))

/* p[0] y, p[1] x, p[2] t1 or end, p[3] t2 or the weight (lerp: absent when w is a number) */
#define TERNARY_ROW(T)                                                                             \
    do {                                                                                           \
        T       *y = (T *)p[0];                                                                    \
        const T *x = (const T *)p[1], *b = (const T *)p[2];                                        \
        const T *c = ta->has_c ? (const T *)p[3] : NULL;                                           \
        const T  v = (T)ta->scalar;                                                                \
        int      flat = s[0] == sizeof(T) && s[1] == sizeof(T) && s[2] == sizeof(T) &&             \
                   (!c || s[3] == sizeof(T));                                                      \
        if (!flat) {                                                                               \
            for (int64_t i = 0; i < n; i++) {                                                      \
                T xi = *(const T *)(p[1] + i * s[1]), bi = *(const T *)(p[2] + i * s[2]);          \
                T ci = c ? *(const T *)(p[3] + i * s[3]) : v, r;                                   \
                if (ta->kernel == TIDE_K_ADDCMUL)                                                  \
                    r = xi + v * bi * ci;                                                          \
                else if (ta->kernel == TIDE_K_ADDCDIV)                                             \
                    r = xi + v * bi / ci;                                                          \
                else                                                                               \
                    r = LERP_ONE(T, xi, bi, ci);                                                   \
                *(T *)(p[0] + i * s[0]) = r;                                                       \
            }                                                                                      \
        } else if (ta->kernel == TIDE_K_ADDCMUL) {                                                 \
            for (int64_t i = 0; i < n; i++)                                                        \
                y[i] = x[i] + v * b[i] * c[i];                                                     \
        } else if (ta->kernel == TIDE_K_ADDCDIV) {                                                 \
            for (int64_t i = 0; i < n; i++)                                                        \
                y[i] = x[i] + v * b[i] / c[i];                                                     \
        } else if (c) {                                                                            \
            for (int64_t i = 0; i < n; i++)                                                        \
                y[i] = LERP_ONE(T, x[i], b[i], c[i]);                                              \
        } else {                                                                                   \
            for (int64_t i = 0; i < n; i++)                                                        \
                y[i] = LERP_ONE(T, x[i], b[i], v);                                                 \
        }                                                                                          \
    } while (0)

CPU_HOT static void ternary_row(char **p, const int64_t *s, int64_t n, int64_t index, void *arg) {
    (void)index;
    const ternary_arg *ta = arg;
    if (ta->f32)
        TERNARY_ROW(float);
    else
        TERNARY_ROW(double);
}

static tide_status run_ternary(const tide_kernel_call *c, const char *name) {
    tide_dtype dt = c->dtype;
    if (dt != TIDE_DTYPE_F32 && dt != TIDE_DTYPE_F64)
        return cpu_notsup(name, dt);
    ternary_arg       ta = {c->kernel, c->p[0].f, dt == TIDE_DTYPE_F32, c->in[3] != NULL};
    const tide_kview *v[4] = {c->in[0], c->in[1], c->in[2], c->in[3]};
    cpu_iter          it;
    TIDE_TRY(cpu_iter_init(&it, name, c->in[3] ? 4 : 3, v));
    cpu_iter_run(&it, CPU_PAR_GRAIN, ternary_row, &ta);
    return TIDE_OK;
}

tide_status cpu_addcmul(tide_device *dev, const tide_kernel_call *c) {
    (void)dev;
    return run_ternary(c, "addcmul");
}

tide_status cpu_addcdiv(tide_device *dev, const tide_kernel_call *c) {
    (void)dev;
    return run_ternary(c, "addcdiv");
}

tide_status cpu_lerp(tide_device *dev, const tide_kernel_call *c) {
    (void)dev;
    return run_ternary(c, "lerp");
}
