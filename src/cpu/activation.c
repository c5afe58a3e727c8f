/*
 * activation.c — the kernel rows activation and activation_backward on the CPU: an activation
 * of nn.functional (include/tide.h's tide_activation) or its gradient in one pass over
 * contiguous tensors, instead of a chain of 3 to 8 elementwise ops with a temporary each.
 *
 * The math is src/activation_math.h's, shared with the CUDA kernels: float32 by vec_math.h's
 * exp, log1p and tanh, so each kind's loop vectorizes (CPU_HOT: built for AVX2 and AVX-512
 * too), float64 by libm's. float16 and bfloat16 go through the float32 loop a block at a time
 * (widened, computed, rounded once, as PyTorch's). Threads take one range each.
 */
#include "cpu.h"
#include "dtype_convert.h"
#include "vec_math.h"
#include <omp.h>

#define ACT_HD static inline __attribute__((always_inline))

#define ACT_T        float
#define ACT_FN(name) tide_act_##name##_f
#define ACT_EXP      cpu_vexpf
#define ACT_LOG1P    cpu_vlog1pf
#define ACT_TANH     cpu_vtanhf
#include "activation_math.h"
#undef ACT_T
#undef ACT_FN
#undef ACT_EXP
#undef ACT_LOG1P
#undef ACT_TANH

#define ACT_T        double
#define ACT_FN(name) tide_act_##name##_d
#define ACT_EXP      exp
#define ACT_LOG1P    log1p
#define ACT_TANH     tanh
#include "activation_math.h"
#undef ACT_T
#undef ACT_FN
#undef ACT_EXP
#undef ACT_LOG1P
#undef ACT_TANH

/* one call's operands: y = f(x), or (backward) y = g * f'(x) */
typedef struct act_op {
    int         kind, backward;
    double      p1, p2, p3;
    const char *x, *g;
    char       *y;
} act_op;

/* each kind's loop over [i0, i1), value or gradient, in type S (f or d) */
#define ACT_LOOP_CASE(S, T, E, name)                                                               \
    case TIDE_ACTIVATION_##E:                                                                      \
        if (o->backward)                                                                           \
            for (int64_t i = i0; i < i1; i++)                                                      \
                y[i] = tide_act_##name##_grad_##S(g[i], x[i], k);                                  \
        else                                                                                       \
            for (int64_t i = i0; i < i1; i++)                                                      \
                y[i] = tide_act_##name##_##S(x[i], k);                                             \
        break;
#define ACT_CASE_F(E, name) ACT_LOOP_CASE(f, float, E, name)
#define ACT_CASE_D(E, name) ACT_LOOP_CASE(d, double, E, name)

/* activation_math.h's kinds in two stages (float32): stage 1 over a block into a buffer that
 * stays in L1, then stage 2 */
#define ACT_STAGE 256
#define ACT_STAGED_LOOP(E, U1, OUT)                                                                \
    case TIDE_ACTIVATION_##E:                                                                      \
        for (int64_t b = i0; b < i1; b += ACT_STAGE) {                                             \
            float   u[ACT_STAGE];                                                                  \
            int64_t m = i1 - b < ACT_STAGE ? i1 - b : ACT_STAGE;                                   \
            for (int64_t j = 0; j < m; j++)                                                        \
                u[j] = tide_act_##U1##_f(x[b + j], k);                                             \
            for (int64_t j = 0; j < m; j++)                                                        \
                y[b + j] = OUT;                                                                    \
        }                                                                                          \
        return;
#define ACT_STAGED_V(E, name, u1)                                                                  \
    ACT_STAGED_LOOP(E, u1, tide_act_##name##_from_f(x[b + j], u[j], k))
#define ACT_STAGED_G(E, name, u1)                                                                  \
    ACT_STAGED_LOOP(E, u1, tide_act_##name##_from_f(g[b + j], x[b + j], u[j], k))
#define ACT_NONE(E, name, u1)

CPU_HOT static void act_range_f32(const act_op *o, int64_t i0, int64_t i1) {
    const float *restrict x = (const float *)o->x, *restrict g = (const float *)o->g;
    float *restrict y = (float *)o->y;
    tide_act_coefs_f k = tide_act_coefs_of_f(o->kind, o->p1, o->p2, o->p3);
    if (o->backward) {
        switch (o->kind) {
            TIDE_ACTIVATION_STAGED(ACT_NONE, ACT_STAGED_G)
        default:
            break;
        }
    } else {
        switch (o->kind) {
            TIDE_ACTIVATION_STAGED(ACT_STAGED_V, ACT_NONE)
        default:
            break;
        }
    }
    switch (o->kind) {
        TIDE_ACTIVATION_KINDS(ACT_CASE_F)
    default:
        break;
    }
}

CPU_HOT static void act_range_f64(const act_op *o, int64_t i0, int64_t i1) {
    const double *restrict x = (const double *)o->x, *restrict g = (const double *)o->g;
    double *restrict y = (double *)o->y;
    tide_act_coefs_d k = tide_act_coefs_of_d(o->kind, o->p1, o->p2, o->p3);
    switch (o->kind) {
        TIDE_ACTIVATION_KINDS(ACT_CASE_D)
    default:
        break;
    }
}

/* float16 / bfloat16: blocks widened into float32 buffers, the float32 loop, rounded back */
#define ACT_BLOCK 256

static void widen(int bf, float *dst, const char *src, int64_t i0, int64_t m) {
    const uint16_t *s = (const uint16_t *)src + i0;
    for (int64_t i = 0; i < m; i++)
        dst[i] = bf ? tide_bf16_to_float(s[i]) : tide_half_to_float(s[i]);
}

static void act_range_half(const act_op *o, int bf, int64_t i0, int64_t i1) {
    float xb[ACT_BLOCK], gb[ACT_BLOCK], yb[ACT_BLOCK];
    for (int64_t b = i0; b < i1; b += ACT_BLOCK) {
        int64_t m = i1 - b < ACT_BLOCK ? i1 - b : ACT_BLOCK;
        widen(bf, xb, o->x, b, m);
        if (o->backward)
            widen(bf, gb, o->g, b, m);
        act_op f = *o;
        f.x = (const char *)xb, f.g = (const char *)gb, f.y = (char *)yb;
        act_range_f32(&f, 0, m);
        uint16_t *y = (uint16_t *)o->y + b;
        for (int64_t i = 0; i < m; i++)
            y[i] = bf ? tide_float_to_bf16(yb[i]) : tide_float_to_half(yb[i]);
    }
}

static void act_range(const act_op *o, tide_dtype dt, int64_t i0, int64_t i1) {
    if (dt == TIDE_DTYPE_F32)
        act_range_f32(o, i0, i1);
    else if (dt == TIDE_DTYPE_F64)
        act_range_f64(o, i0, i1);
    else
        act_range_half(o, dt == TIDE_DTYPE_BF16, i0, i1);
}

/* whether a kind's element costs an exp or a tanh (threads pay off sooner) */
static int act_heavy(int kind) {
    switch (kind) {
    case TIDE_ACTIVATION_ELU:
    case TIDE_ACTIVATION_SOFTPLUS:
    case TIDE_ACTIVATION_SILU:
    case TIDE_ACTIVATION_MISH:
    case TIDE_ACTIVATION_LOGSIGMOID:
    case TIDE_ACTIVATION_TANHSHRINK:
        return 1;
    default:
        return 0;
    }
}

static tide_status act_run(const tide_kernel_call *c, int backward) {
    const tide_kview *x = c->in[backward ? 1 : 0];
    act_op            o;
    o.kind = (int)c->p[0].i, o.backward = backward;
    o.p1 = c->p[1].f, o.p2 = c->p[2].f, o.p3 = c->p[3].f;
    o.x = (const char *)x->data, o.y = (char *)c->out[0]->data;
    o.g = backward ? (const char *)c->in[0]->data : NULL;
    tide_dtype dt = x->dtype;
    if (dt != TIDE_DTYPE_F32 && dt != TIDE_DTYPE_F64 && !cpu_is_half(dt))
        return cpu_notsup(backward ? "activation_backward" : "activation", dt);
    int64_t n = cpu_numel(x), grain = act_heavy(o.kind) ? CPU_PAR_GRAIN_HEAVY : CPU_PAR_GRAIN;
    int     nt = omp_get_max_threads();
    if (n < grain || nt < 2 || omp_in_parallel()) {
        act_range(&o, dt, 0, n);
        return TIDE_OK;
    }
    if (n / grain < nt) /* no thread gets less than a grain */
        nt = (int)(n / grain);
#pragma omp parallel num_threads(nt)
    {
        /* ranges rounded to 32 elements so threads do not share cache lines */
        int64_t t = omp_get_thread_num(), tn = omp_get_num_threads();
        int64_t b = (n * t / tn) & ~(int64_t)31,
                e = t == tn - 1 ? n : (n * (t + 1) / tn) & ~(int64_t)31;
        if (b < e)
            act_range(&o, dt, b, e);
    }
    return TIDE_OK;
}

tide_status cpu_activation(tide_device *dev, const tide_kernel_call *c) {
    (void)dev;
    return act_run(c, 0);
}

tide_status cpu_activation_backward(tide_device *dev, const tide_kernel_call *c) {
    (void)dev;
    return act_run(c, 1);
}
