/*
 * pool.c — CPU 2-d max pooling and its gradient.
 *
 * The kernel rows max_pool2d and max_pool2d_backward (include/tide_kernels.def): input
 * [N, C, H, W], out and indices [N, C, OH, OW], contiguous and checked by the dispatch, which
 * also sizes the output (ceil_mode included; every window starts inside the input or its left
 * padding). Work splits over the N*C planes, so threads
 * never share an output element. Each window's maximum: the first largest value in row-major
 * order, a NaN winning over numbers (the last NaN, as PyTorch's); its index is h*W + w within
 * the plane.
 */
#include "cpu.h"
#include <string.h>

/* the k taps i in [*lo, *hi) of a window starting at `start` (step d) that land in [0, size) */
static void taps(int64_t start, int k, int d, int64_t size, int *lo, int *hi) {
    int64_t a = start < 0 ? (-start + d - 1) / d : 0;
    int64_t b = start >= size ? 0 : (size - 1 - start) / d + 1;
    if (b > k)
        b = k;
    if (a > b)
        a = b;
    *lo = (int)a;
    *hi = (int)b;
}

/* the loops below vectorize once their compares may be if-converted: no-trapping-math (a quiet
 * NaN compare raises no trap anyone reads) */
#if defined(__GNUC__) && !defined(__clang__)
#define POOL_VECTORIZE __attribute__((optimize("no-trapping-math")))
#else
#define POOL_VECTORIZE
#endif

/* v replaces the best when larger, or when it is NaN (the last NaN of a window wins, as
 * PyTorch's `val > maxval || isnan(val)`); written as selects, not branches (random data makes
 * the branch a coin toss) */
#define POOL_TAKE(T, v, i)                                                                         \
    do {                                                                                           \
        T   v_ = (v);                                                                              \
        int t_ = v_ > best || v_ != v_;                                                            \
        best = t_ ? v_ : best;                                                                     \
        bi = t_ ? (i) : bi;                                                                        \
    } while (0)

/* one window by itself: its in-bounds taps found once, so the loops test nothing but the
 * values; an empty window (ceil_mode with dilation can make one) gives -inf and index -1 */
#define POOL_WINDOW(T, oh, ow)                                                                     \
    do {                                                                                           \
        int64_t w0 = (ow)*g.sw - g.pw;                                                             \
        int     jlo, jhi;                                                                          \
        taps(w0, g.kw, g.dw, W, &jlo, &jhi);                                                       \
        T       best = (T)-INFINITY;                                                               \
        int64_t bi = -1;                                                                           \
        if (ilo < ihi && jlo < jhi) {                                                              \
            bi = (h0 + (int64_t)ilo * g.dh) * W + w0 + (int64_t)jlo * g.dw;                        \
            best = src[bi];                                                                        \
        }                                                                                          \
        for (int i = ilo; i < ihi; i++) {                                                          \
            int64_t r = (h0 + (int64_t)i * g.dh) * W + w0;                                         \
            for (int j = jlo; j < jhi; j++)                                                        \
                POOL_TAKE(T, src[r + (int64_t)j * g.dw], r + (int64_t)j * g.dw);                   \
        }                                                                                          \
        d[ow] = best;                                                                              \
        x[ow] = bi;                                                                                \
    } while (0)

/* one tap (code c) over n outputs whose windows lie inside the input: the compares run across
 * the outputs, so the loop vectorizes (contiguous loads for stride 1) */
#define POOL_TAP_ROW(T, NAME, SW)                                                                  \
    static POOL_VECTORIZE void NAME(const T *restrict p, int64_t    sw, T *restrict best,          \
                                    int64_t *restrict code, int64_t n, int64_t c) {                \
        (void)sw;                                                                                  \
        for (int64_t k = 0; k < n; k++) {                                                          \
            T   v = p[k * (SW)], b = best[k];                                                      \
            int t = v > b || v != v;                                                               \
            best[k] = t ? v : b;                                                                   \
            code[k] = t ? c : code[k];                                                             \
        }                                                                                          \
    }
POOL_TAP_ROW(float, tap_row_f32_s1, 1)
POOL_TAP_ROW(float, tap_row_f32, sw)
POOL_TAP_ROW(double, tap_row_f64_s1, 1)
POOL_TAP_ROW(double, tap_row_f64, sw)

/* any geometry, one output row at a time: the columns whose windows cross the input's edge
 * window by window, the rest tap by tap (each tap a vectorized pass over the row, the winner
 * kept as the tap's number i*kw + j, then turned into its position) */
#define POOL_PLANE(T, TAP1, TAP)                                                                   \
    do {                                                                                           \
        const T *src = (const T *)input->data + pl * H * W;                                        \
        for (int64_t oh = 0; oh < OH; oh++) {                                                      \
            T       *d = (T *)out->data + (pl * OH + oh) * OW;                                     \
            int64_t *x = (int64_t *)indices->data + (pl * OH + oh) * OW;                           \
            int64_t  h0 = oh * g.sh - g.ph;                                                        \
            int      ilo, ihi;                                                                     \
            taps(h0, g.kh, g.dh, H, &ilo, &ihi);                                                   \
            for (int64_t ow = 0; ow < olo; ow++)                                                   \
                POOL_WINDOW(T, oh, ow);                                                            \
            for (int64_t ow = ohi; ow < OW; ow++)                                                  \
                POOL_WINDOW(T, oh, ow);                                                            \
            if (olo >= ohi)                                                                        \
                continue;                                                                          \
            if (ilo >= ihi) {                                                                      \
                for (int64_t ow = olo; ow < ohi; ow++)                                             \
                    POOL_WINDOW(T, oh, ow);                                                        \
                continue;                                                                          \
            }                                                                                      \
            int64_t  n = ohi - olo, c0 = olo * g.sw - g.pw;                                        \
            const T *first = src + (h0 + (int64_t)ilo * g.dh) * W + c0;                            \
            for (int64_t k = 0; k < n; k++) {                                                      \
                d[olo + k] = first[k * g.sw];                                                      \
                x[olo + k] = (int64_t)ilo * g.kw;                                                  \
            }                                                                                      \
            for (int i = ilo; i < ihi; i++)                                                        \
                for (int j = i == ilo ? 1 : 0; j < g.kw; j++) {                                    \
                    const T *p = src + (h0 + (int64_t)i * g.dh) * W + c0 + (int64_t)j * g.dw;      \
                    if (g.sw == 1)                                                                 \
                        TAP1(p, 1, d + olo, x + olo, n, (int64_t)i * g.kw + j);                    \
                    else                                                                           \
                        TAP(p, g.sw, d + olo, x + olo, n, (int64_t)i * g.kw + j);                  \
                }                                                                                  \
            for (int64_t k = 0; k < n; k++) {                                                      \
                int64_t t = x[olo + k], i = t / g.kw, j = t % g.kw;                                \
                x[olo + k] = (h0 + i * g.dh) * W + c0 + k * g.sw + j * g.dw;                       \
            }                                                                                      \
        }                                                                                          \
    } while (0)

/* the common 2x2 window, stride 2, whole windows only (no padding, dilation 1, output of
 * floor(H/2) x floor(W/2)): the same order and rule, branch-free. One output row at a time: the
 * first loop keeps the winner as a code (column + 2 row), the second turns codes into positions.
 */
#define POOL2_ROW(T, NAME)                                                                         \
    static POOL_VECTORIZE void NAME(const T *restrict r0, const T *restrict r1, T *restrict d,     \
                                    int64_t *restrict x, int64_t OW, int64_t W, int64_t i0) {      \
        for (int64_t ow = 0; ow < OW; ow++) {                                                      \
            T       a = r0[2 * ow], b = r0[2 * ow + 1], c = r1[2 * ow], e = r1[2 * ow + 1];        \
            T       best = a;                                                                      \
            int32_t bi = 0;                                                                        \
            POOL_TAKE(T, b, 1);                                                                    \
            POOL_TAKE(T, c, 2);                                                                    \
            POOL_TAKE(T, e, 3);                                                                    \
            d[ow] = best;                                                                          \
            x[ow] = bi;                                                                            \
        }                                                                                          \
        for (int64_t ow = 0; ow < OW; ow++)                                                        \
            x[ow] = i0 + 2 * ow + (x[ow] & 1) + (x[ow] >> 1) * W;                                  \
    }
POOL2_ROW(float, pool2_row_f32)
POOL2_ROW(double, pool2_row_f64)

#define POOL2_PLANE(T, ROW)                                                                        \
    do {                                                                                           \
        const T *src = (const T *)input->data + pl * H * W;                                        \
        T       *dst = (T *)out->data + pl * OH * OW;                                              \
        int64_t *ix = (int64_t *)indices->data + pl * OH * OW;                                     \
        for (int64_t oh = 0; oh < OH; oh++)                                                        \
            ROW(src + 2 * oh * W, src + (2 * oh + 1) * W, dst + oh * OW, ix + oh * OW, OW, W,      \
                2 * oh * W);                                                                       \
    } while (0)

/* the row max_pool2d: float32 and float64 (CPU column HALF), the shapes the dispatch's */
tide_status cpu_max_pool2d(tide_device *dev, const tide_kernel_call *call) {
    (void)dev;
    const tide_kview *input = call->in[0], *out = call->out[0], *indices = call->out[1];
    tide_pool_geom    g = tide_window_of(call);
    int64_t N = input->shape[0], C = input->shape[1], H = input->shape[2], W = input->shape[3];
    int64_t OH = out->shape[2], OW = out->shape[3];
    /* the output columns [olo, ohi) whose windows lie inside the input's width */
    int64_t olo = (g.pw + g.sw - 1) / g.sw, span = W - 1 - (int64_t)(g.kw - 1) * g.dw + g.pw;
    int64_t ohi = span < 0 ? 0 : span / g.sw + 1;
    olo = olo < OW ? olo : OW;
    ohi = ohi < OW ? ohi : OW;
    ohi = ohi > olo ? ohi : olo;
    int64_t planes = N * C;
    int     f32 = input->dtype == TIDE_DTYPE_F32;
    int     par = planes > 1 && planes * OH * OW * g.kh * g.kw >= CPU_PAR_GRAIN_HEAVY;
    int     two = g.kh == 2 && g.kw == 2 && g.sh == 2 && g.sw == 2 && g.ph == 0 && g.pw == 0 &&
              g.dh == 1 && g.dw == 1 && 2 * OH <= H && 2 * OW <= W;
#pragma omp parallel for schedule(static) if (par)
    for (int64_t pl = 0; pl < planes; pl++) {
        if (two && f32)
            POOL2_PLANE(float, pool2_row_f32);
        else if (two)
            POOL2_PLANE(double, pool2_row_f64);
        else if (f32)
            POOL_PLANE(float, tap_row_f32_s1, tap_row_f32);
        else
            POOL_PLANE(double, tap_row_f64_s1, tap_row_f64);
    }
    return TIDE_OK;
}

/* each plane zeroed then scattered into while it is in cache; an index outside the plane (a
 * user's, or an empty window's -1) adds nothing: one unsigned test */
#define POOL_BACK_PLANE(T)                                                                         \
    do {                                                                                           \
        T *gi = (T *)grad_in->data + pl * HW;                                                      \
        memset(gi, 0, (size_t)HW * sizeof(T));                                                     \
        const T       *go = (const T *)grad_out->data + pl * L;                                    \
        const int64_t *ix = (const int64_t *)indices->data + pl * L;                               \
        for (int64_t i = 0; i < L; i++)                                                            \
            if ((uint64_t)ix[i] < (uint64_t)HW)                                                    \
                gi[ix[i]] += go[i];                                                                \
    } while (0)

/* the row max_pool2d_backward */
tide_status cpu_max_pool2d_backward(tide_device *dev, const tide_kernel_call *call) {
    (void)dev;
    const tide_kview *grad_out = call->in[0], *indices = call->in[1], *grad_in = call->out[0];
    int64_t           planes = grad_in->shape[0] * grad_in->shape[1];
    int64_t HW = grad_in->shape[2] * grad_in->shape[3], L = grad_out->shape[2] * grad_out->shape[3];
    int     f32 = grad_in->dtype == TIDE_DTYPE_F32;
    int     par = planes > 1 && planes * (L + HW) >= CPU_PAR_GRAIN;
#pragma omp parallel for schedule(static) if (par)
    for (int64_t pl = 0; pl < planes; pl++) {
        if (f32)
            POOL_BACK_PLANE(float);
        else
            POOL_BACK_PLANE(double);
    }
    return TIDE_OK;
}
