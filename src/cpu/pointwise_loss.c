/*
 * pointwise_loss.c — CPU pointwise losses and their gradients over the rows of a contiguous
 * [rows, d] view: the kernel rows pointwise_loss and pointwise_loss_backward of
 * include/tide_kernels.def, the math of src/pointwise_loss_math.h.
 *
 * nn's reductions are one row of numel elements (rows = 1), so a row's sum runs in parallel
 * inside the row: cut into blocks fixed by d alone, each summed in double, then the blocks added
 * in order (the same bits on any number of threads). "none" is rows of one element (d = 1): an
 * elementwise loop. float32 computes with vec_math.h's functions so that every loop vectorizes;
 * each loss's loop is its own instance (the kind a constant there).
 */
#include "cpu.h"
#include "pointwise_loss_math.h"
#include "vec_math.h"

/* the math always inlined into the loops below: float32 with vec_math.h's functions, float64
 * with libm's */
TIDE_DEF_POINTWISE_LOSS(CPU_VEC_FN, vf, float, fabsf, cpu_vexpf, cpu_vlogf, cpu_vlog1pf)
TIDE_DEF_POINTWISE_LOSS(CPU_VEC_FN, vd, double, fabs, exp, log, log1p)

/* LOSS_CASES(F, ...): F(kind, ...) with kind a constant, one case each, so that the always
 * inlined loop F is built once per loss, its branches on the kind gone */
#define LOSS_CASES(F, ...)                                                                         \
    switch (kind) {                                                                                \
    case TIDE_LOSS_MSE:                                                                            \
        F(TIDE_LOSS_MSE, __VA_ARGS__);                                                             \
        break;                                                                                     \
    case TIDE_LOSS_L1:                                                                             \
        F(TIDE_LOSS_L1, __VA_ARGS__);                                                              \
        break;                                                                                     \
    case TIDE_LOSS_SMOOTH_L1:                                                                      \
        F(TIDE_LOSS_SMOOTH_L1, __VA_ARGS__);                                                       \
        break;                                                                                     \
    case TIDE_LOSS_HUBER:                                                                          \
        F(TIDE_LOSS_HUBER, __VA_ARGS__);                                                           \
        break;                                                                                     \
    case TIDE_LOSS_BCE_WITH_LOGITS:                                                                \
        F(TIDE_LOSS_BCE_WITH_LOGITS, __VA_ARGS__);                                                 \
        break;                                                                                     \
    default:                                                                                       \
        F(TIDE_LOSS_SOFT_MARGIN, __VA_ARGS__);                                                     \
        break;                                                                                     \
    }

/* The loops over n elements of one dtype (SFX: vf for float32, vd for float64): sum_ the sum of
 * the losses in double; each_ y = loss * scale; grad_ the gradients gx and gt (either NULL),
 * the incoming gradient g[j * gs] (gs 1: one per element, 0: one for all). Then their
 * dispatchers by kind, built for each instruction set (CPU_HOT). */
#define LOSS_LOOPS(SFX, T)                                                                         \
    CPU_VEC_FN void sum_##SFX(int kind, double *out, const T *x, const T *t, int64_t n, T beta) {  \
        double s = 0;                                                                              \
        _Pragma("omp simd reduction(+ : s)") for (int64_t j = 0; j < n; j++) s +=                  \
            tide_loss_##SFX(kind, x[j], t[j], beta);                                               \
        *out = s;                                                                                  \
    }                                                                                              \
    CPU_VEC_FN void each_##SFX(int kind, T *y, const T *x, const T *t, int64_t n, T beta,          \
                               T scale) {                                                          \
        _Pragma("omp simd") for (int64_t j = 0; j < n; j++) y[j] =                                 \
            tide_loss_##SFX(kind, x[j], t[j], beta) * scale;                                       \
    }                                                                                              \
    CPU_VEC_FN void grad_##SFX(int kind, T *gx, T *gt, const T *x, const T *t, const T *g,         \
                               int64_t gs, int64_t n, T beta, T norm) {                            \
        if (gx && gt) {                                                                            \
            _Pragma("omp simd") for (int64_t j = 0; j < n; j++) {                                  \
                gx[j] = tide_loss_grad_##SFX(kind, x[j], t[j], beta, norm, g[j * gs]);             \
                gt[j] = tide_loss_grad_target_##SFX(kind, x[j], t[j], beta, norm, g[j * gs]);      \
            }                                                                                      \
        } else if (gx) {                                                                           \
            _Pragma("omp simd") for (int64_t j = 0; j < n; j++) gx[j] =                            \
                tide_loss_grad_##SFX(kind, x[j], t[j], beta, norm, g[j * gs]);                     \
        } else {                                                                                   \
            _Pragma("omp simd") for (int64_t j = 0; j < n; j++) gt[j] =                            \
                tide_loss_grad_target_##SFX(kind, x[j], t[j], beta, norm, g[j * gs]);              \
        }                                                                                          \
    }                                                                                              \
    CPU_HOT static double block_sum_##SFX(int kind, const T *x, const T *t, int64_t n, T beta) {   \
        double s = 0;                                                                              \
        LOSS_CASES(sum_##SFX, &s, x, t, n, beta);                                                  \
        return s;                                                                                  \
    }                                                                                              \
    CPU_HOT static void block_each_##SFX(int kind, T *y, const T *x, const T *t, int64_t n,        \
                                         T beta, T scale) {                                        \
        LOSS_CASES(each_##SFX, y, x, t, n, beta, scale);                                           \
    }                                                                                              \
    CPU_HOT static void block_grad_##SFX(int kind, T *gx, T *gt, const T *x, const T *t,           \
                                         const T *g, int64_t gs, int64_t n, T beta, T norm) {      \
        if (gs) { /* a stride of 1 the compiler sees: contiguous loads */                          \
            LOSS_CASES(grad_##SFX, gx, gt, x, t, g, 1, n, beta, norm);                             \
        } else {                                                                                   \
            LOSS_CASES(grad_##SFX, gx, gt, x, t, g, 0, n, beta, norm);                             \
        }                                                                                          \
    }
LOSS_LOOPS(vf, float)
LOSS_LOOPS(vd, double)

/* the losses that call exp and log: split into threads sooner */
static int64_t loss_grain(int kind) {
    return kind >= TIDE_LOSS_BCE_WITH_LOGITS ? CPU_PAR_GRAIN_HEAVY : CPU_PAR_GRAIN;
}

/* Elementwise work (each_ and grad_) runs in blocks of LOSS_BLOCK elements, on the threads above
 * the kind's grain; a row's sum in at most LOSS_MAX_BLOCKS blocks of at least LOSS_BLOCK (a
 * function of d only, so the bits do not depend on the threads), added in order. */
#define LOSS_BLOCK      ((int64_t)1 << 14)
#define LOSS_MAX_BLOCKS 256

static int64_t elementwise_blocks(int64_t n) {
    return (n + LOSS_BLOCK - 1) / LOSS_BLOCK;
}

static int64_t sum_blocks(int64_t d) {
    int64_t n = elementwise_blocks(d);
    return n > LOSS_MAX_BLOCKS ? LOSS_MAX_BLOCKS : n;
}

/* ---- forward ------------------------------------------------------------------------------ */

/* the sum of a row's d losses */
static double row_sum(int kind, int f32, const char *x, const char *t, int64_t d, double beta) {
    double  part[LOSS_MAX_BLOCKS];
    int64_t nb = sum_blocks(d);
    size_t  es = f32 ? sizeof(float) : sizeof(double);
#pragma omp parallel for schedule(static) if (nb > 1 && d >= loss_grain(kind))
    for (int64_t b = 0; b < nb; b++) {
        int64_t     j0 = d * b / nb, n = d * (b + 1) / nb - j0;
        const void *xb = x + (size_t)j0 * es, *tb = t + (size_t)j0 * es;
        part[b] =
            f32 ? block_sum_vf(kind, xb, tb, n, (float)beta) : block_sum_vd(kind, xb, tb, n, beta);
    }
    double s = 0;
    for (int64_t b = 0; b < nb; b++)
        s += part[b];
    return s;
}

/* call (the row pointwise_loss): in input, target; out loss [rows]; p d, kind, beta, scale */
tide_status cpu_pointwise_loss(tide_device *dev, const tide_kernel_call *c) {
    (void)dev;
    if (c->dtype != TIDE_DTYPE_F32 && c->dtype != TIDE_DTYPE_F64)
        return cpu_notsup("pointwise_loss", c->dtype);
    int         kind = (int)c->p[1].i, f32 = c->dtype == TIDE_DTYPE_F32;
    double      beta = c->p[2].f, scale = c->p[3].f;
    int64_t     rows = c->rows, d = c->d;
    size_t      es = f32 ? sizeof(float) : sizeof(double);
    const char *x = c->in[0]->data, *t = c->in[1]->data;
    char       *y = c->out[0]->data;
    if (d == 1) { /* "none": each element its own row */
        int64_t nb = elementwise_blocks(rows);
#pragma omp parallel for schedule(static) if (rows >= loss_grain(kind))
        for (int64_t b = 0; b < nb; b++) {
            int64_t j0 = b * LOSS_BLOCK, n = rows - j0 < LOSS_BLOCK ? rows - j0 : LOSS_BLOCK;
            size_t  off = (size_t)j0 * es;
            if (f32)
                block_each_vf(kind, (float *)(y + off), (const float *)(x + off),
                              (const float *)(t + off), n, (float)beta, (float)scale);
            else
                block_each_vd(kind, (double *)(y + off), (const double *)(x + off),
                              (const double *)(t + off), n, beta, scale);
        }
        return TIDE_OK;
    }
    for (int64_t r = 0; r < rows; r++) {
        size_t off = (size_t)(r * d) * es;
        double s = row_sum(kind, f32, x + off, t + off, d, beta) * scale;
        if (f32)
            ((float *)y)[r] = (float)s;
        else
            ((double *)y)[r] = s;
    }
    return TIDE_OK;
}

/* ---- backward ----------------------------------------------------------------------------- */

/* call (the row pointwise_loss_backward): in input, target, grad [rows]; out grad_input|NULL,
 * grad_target|NULL; p d, kind, beta, scale. Each element's gradient g is grad[row]: with d = 1
 * one per element, else one per row of d */
tide_status cpu_pointwise_loss_backward(tide_device *dev, const tide_kernel_call *c) {
    (void)dev;
    if (c->dtype != TIDE_DTYPE_F32 && c->dtype != TIDE_DTYPE_F64)
        return cpu_notsup("pointwise_loss_backward", c->dtype);
    int         kind = (int)c->p[1].i, f32 = c->dtype == TIDE_DTYPE_F32;
    double      beta = c->p[2].f, scale = c->p[3].f;
    int64_t     rows = c->rows, d = c->d, n = rows * d, nb = elementwise_blocks(n);
    size_t      es = f32 ? sizeof(float) : sizeof(double);
    char       *gx = c->out[0] ? c->out[0]->data : NULL, *gt = c->out[1] ? c->out[1]->data : NULL;
    const char *x = c->in[0]->data, *t = c->in[1]->data, *g = c->in[2]->data;
    if (!gx && !gt)
        return TIDE_OK;
#pragma omp parallel for schedule(static) if (n >= loss_grain(kind))
    for (int64_t b = 0; b < nb; b++) {
        /* block b's elements, cut where a row ends so that each piece has one g (or one each) */
        for (int64_t j = b * LOSS_BLOCK, end = j + LOSS_BLOCK < n ? j + LOSS_BLOCK : n; j < end;) {
            int64_t r = d == 1 ? j : j / d, m = d == 1 ? end - j : (r + 1) * d - j;
            m = m < end - j ? m : end - j;
            size_t off = (size_t)j * es;
            char  *bx = gx ? gx + off : NULL, *bt = gt ? gt + off : NULL;
            if (f32)
                block_grad_vf(kind, (float *)bx, (float *)bt, (const float *)(x + off),
                              (const float *)(t + off), (const float *)g + r, d == 1, m,
                              (float)beta, (float)scale);
            else
                block_grad_vd(kind, (double *)bx, (double *)bt, (const double *)(x + off),
                              (const double *)(t + off), (const double *)g + r, d == 1, m, beta,
                              scale);
            j += m;
        }
    }
    return TIDE_OK;
}
