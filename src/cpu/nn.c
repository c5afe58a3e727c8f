/*
 * nn.c — CPU convolution helpers (im2col, col2im); max pooling is in pool.c.
 *
 * The kernel rows unfold2d and fold2d (include/tide_kernels.def), their shapes the dispatch's.
 * Layouts: input [N, C, H, W], columns [N, C*kh*kw, OH*OW], all contiguous. Work splits over
 * the N*C planes: each plane writes only its own rows of the columns (im2col) or its own plane
 * of the output (col2im, pooling), so threads never share an output element.
 */
#include "window_size.h"
#include "cpu.h"
#include "vec_math.h"
#include <string.h>

static tide_status float_check(const char *name, tide_dtype dt) {
    return dt == TIDE_DTYPE_F32 || dt == TIDE_DTYPE_F64 ? TIDE_OK : cpu_notsup(name, dt);
}

/* ---- im2col / col2im ---------------------------------------------------------------------- */

/* plane pl = n*C + c of the input fills rows c*kh*kw .. of batch n's column matrix; with
 * COL2IM the same walk adds the columns back into the plane instead. Columns are addressed by
 * their strides cs0 (batch) and cs1 (row), so the batch-folded layout [C*kh*kw, N, L] of
 * im2col_folded is the same walk. Tap (ki, kj) reads h = oh*sh - ph + ki*dh, w = ow*sw - pw +
 * kj*dw. With stride 1 along w, the in-bounds part of a row is one run (memcpy, or a plain add
 * loop), its padding is zero-filled around it. */
#define IM2COL_PLANE(T, COL2IM)                                                                    \
    do {                                                                                           \
        T      *im_ = (T *)img_base + pl * H * W;                                                  \
        int64_t n_ = pl / C, c_ = pl % C;                                                          \
        T      *col = (T *)col_base + n_ * cs0 + c_ * KK * cs1;                                    \
        for (int ki = 0; ki < g.kh; ki++)                                                          \
            for (int kj = 0; kj < g.kw; kj++, col += cs1) {                                        \
                /* ow in [lo, hi) reads w = ow - pw + kj*dw in [0, W) (stride 1 only) */           \
                int64_t dj = (int64_t)kj * g.dw;                                                   \
                int64_t lo = g.pw - dj > 0 ? g.pw - dj : 0, hi = W + g.pw - dj;                    \
                if (lo > OW)                                                                       \
                    lo = OW;                                                                       \
                if (hi > OW)                                                                       \
                    hi = OW;                                                                       \
                if (hi < lo)                                                                       \
                    hi = lo;                                                                       \
                for (int64_t oh = 0; oh < OH; oh++) {                                              \
                    int64_t h = oh * g.sh - g.ph + (int64_t)ki * g.dh;                             \
                    T      *crow = col + oh * OW;                                                  \
                    if (h < 0 || h >= H) {                                                         \
                        if (!COL2IM)                                                               \
                            memset(crow, 0, (size_t)OW * sizeof(T));                               \
                        continue;                                                                  \
                    }                                                                              \
                    T *irow = im_ + h * W;                                                         \
                    if (g.sw == 1) {                                                               \
                        T *src = irow + (lo - g.pw + dj);                                          \
                        if (COL2IM) {                                                              \
                            for (int64_t ow = lo; ow < hi; ow++)                                   \
                                src[ow - lo] += crow[ow];                                          \
                        } else {                                                                   \
                            memset(crow, 0, (size_t)lo * sizeof(T));                               \
                            memcpy(crow + lo, src, (size_t)(hi - lo) * sizeof(T));                 \
                            memset(crow + hi, 0, (size_t)(OW - hi) * sizeof(T));                   \
                        }                                                                          \
                        continue;                                                                  \
                    }                                                                              \
                    for (int64_t ow = 0; ow < OW; ow++) {                                          \
                        int64_t w = ow * g.sw - g.pw + dj;                                         \
                        if (COL2IM) {                                                              \
                            if (w >= 0 && w < W)                                                   \
                                irow[w] += crow[ow];                                               \
                        } else {                                                                   \
                            crow[ow] = (w >= 0 && w < W) ? irow[w] : 0;                            \
                        }                                                                          \
                    }                                                                              \
                }                                                                                  \
            }                                                                                      \
    } while (0)

/* cols [N, C*kh*kw, OH*OW] (strides of any order: folded columns too, unit along L) and img
 * [N, C, H, W] contiguous, float32 or float64, as the dispatch gives them */
static void im2col_walk(const tide_kview *cols, const tide_kview *img, tide_pool_geom g,
                        int col2im) {
    int64_t N = img->shape[0], C = img->shape[1], H = img->shape[2], W = img->shape[3];
    int64_t OH = tide_window_out_size(H, g.kh, g.sh, g.ph, g.dh, 0);
    int64_t OW = tide_window_out_size(W, g.kw, g.sw, g.pw, g.dw, 0);
    int64_t KK = (int64_t)g.kh * g.kw, L = OH * OW;
    void   *img_base = img->data, *col_base = cols->data;
    int64_t planes = N * C, cs0 = cols->strides[0], cs1 = cols->strides[1];
    int     f32 = img->dtype == TIDE_DTYPE_F32;
    if (col2im)
        memset(img_base, 0, (size_t)(planes * H * W) * cpu_dtype_size(img->dtype));
    int par = planes > 1 && planes * KK * L >= CPU_PAR_GRAIN;
#pragma omp parallel for schedule(static) if (par)
    for (int64_t pl = 0; pl < planes; pl++) {
        if (f32 && col2im)
            IM2COL_PLANE(float, 1);
        else if (f32)
            IM2COL_PLANE(float, 0);
        else if (col2im)
            IM2COL_PLANE(double, 1);
        else
            IM2COL_PLANE(double, 0);
    }
}

/* the kernel rows unfold2d (im2col) and fold2d (col2im), CPU column HALF */
tide_status cpu_unfold2d(tide_device *dev, const tide_kernel_call *call) {
    (void)dev;
    im2col_walk(call->out[0], call->in[0], tide_window_of(call), 0);
    return TIDE_OK;
}

tide_status cpu_fold2d(tide_device *dev, const tide_kernel_call *call) {
    (void)dev;
    im2col_walk(call->in[0], call->out[0], tide_window_of(call), 1);
    return TIDE_OK;
}

/* ---- activation backward (relu, gelu) ----------------------------------------------------- */

/* grad_in = input <= 0 ? 0 : grad_out in one pass (was x:gt(0), a cast and a mul). PyTorch's
 * threshold_backward: 0 where x <= 0 (so at 0 and -0), the gradient elsewhere, NaN included.
 * Both operands are read unconditionally so the select is branchless and vectorizes (a branch
 * mispredicts on every other element of random data). */
#define RELU_BACK_ROW(T)                                                                           \
    do {                                                                                           \
        if (s[0] == sizeof(T) && s[1] == sizeof(T) && s[2] == sizeof(T)) {                         \
            T       *o = (T *)p[0];                                                                \
            const T *g = (const T *)p[1], *x = (const T *)p[2];                                    \
            for (int64_t i = 0; i < n; i++) {                                                      \
                T gi = g[i];                                                                       \
                o[i] = x[i] <= 0 ? (T)0 : gi;                                                      \
            }                                                                                      \
        } else {                                                                                   \
            for (int64_t i = 0; i < n; i++) {                                                      \
                T x = *(const T *)(p[2] + i * s[2]), g = *(const T *)(p[1] + i * s[1]);            \
                *(T *)(p[0] + i * s[0]) = x <= 0 ? (T)0 : g;                                       \
            }                                                                                      \
        }                                                                                          \
    } while (0)

CPU_HOT static void relu_back_row(char **p, const int64_t *s, int64_t n, int64_t index, void *arg) {
    (void)index;
    if (*(const int *)arg)
        RELU_BACK_ROW(float);
    else
        RELU_BACK_ROW(double);
}

/* exact GELU's gradient g * (Phi(x) + x phi(x)): float32 by vec_math.h (vectorized, within
 * 3e-7 of the double value), float64 by libm's erfc and exp */
static double gelu_grad_d(double x) {
    double phi = 0.39894228040143268 * exp(-0.5 * x * x);
    return 0.5 * erfc(-x * 0.70710678118654752) + (phi == 0 ? 0.0 : x * phi);
}

CPU_HOT static void gelu_back_row(char **p, const int64_t *s, int64_t n, int64_t index, void *arg) {
    (void)index;
    if (!*(const int *)arg) {
        for (int64_t i = 0; i < n; i++) {
            double x = *(const double *)(p[2] + i * s[2]), g = *(const double *)(p[1] + i * s[1]);
            *(double *)(p[0] + i * s[0]) = g * gelu_grad_d(x);
        }
    } else if (s[0] == sizeof(float) && s[1] == sizeof(float) && s[2] == sizeof(float)) {
        float       *o = (float *)p[0];
        const float *g = (const float *)p[1], *x = (const float *)p[2];
        for (int64_t i = 0; i < n; i++)
            o[i] = g[i] * cpu_vgelu_gradf(x[i]);
    } else {
        for (int64_t i = 0; i < n; i++) {
            float x = *(const float *)(p[2] + i * s[2]), g = *(const float *)(p[1] + i * s[1]);
            *(float *)(p[0] + i * s[0]) = g * cpu_vgelu_gradf(x);
        }
    }
}

static tide_status act_backward(tide_device *dev, tide_act act, const tide_kview *grad_in,
                                const tide_kview *grad_out, const tide_kview *input) {
    (void)dev;
    const char *name = act == TIDE_ACT_GELU ? "gelu_backward" : "relu_backward";
    if (act != TIDE_ACT_RELU && act != TIDE_ACT_GELU)
        return tide_seterr(TIDE_EINVAL, "act_backward: unknown activation %d", (int)act);
    TIDE_TRY(float_check(name, grad_in->dtype));
    if (grad_out->dtype != grad_in->dtype || input->dtype != grad_in->dtype)
        return tide_seterr(TIDE_EDTYPE, "%s: cpu kernel needs one float dtype", name);
    const tide_kview *v[3] = {grad_in, grad_out, input};
    cpu_iter          it;
    TIDE_TRY(cpu_iter_init(&it, name, 3, v));
    int f32 = grad_in->dtype == TIDE_DTYPE_F32;
    if (act == TIDE_ACT_GELU)
        cpu_iter_run(&it, CPU_PAR_GRAIN_HEAVY, gelu_back_row, &f32);
    else
        cpu_iter_run(&it, CPU_PAR_GRAIN, relu_back_row, &f32);
    return TIDE_OK;
}

/* the kernel rows (CPU column HALF: half tensors come as float32 copies); elementwise, so
 * relu_backward_ may write the gradient it reads */
tide_status cpu_relu_backward(tide_device *dev, const tide_kernel_call *c) {
    return act_backward(dev, TIDE_ACT_RELU, c->out[0], c->in[0], c->in[1]);
}
tide_status cpu_gelu_backward(tide_device *dev, const tide_kernel_call *c) {
    return act_backward(dev, TIDE_ACT_GELU, c->out[0], c->in[0], c->in[1]);
}
tide_status cpu_relu_backward_(tide_device *dev, const tide_kernel_call *c) {
    return act_backward(dev, TIDE_ACT_RELU, c->in[0], c->in[0], c->in[1]);
}
