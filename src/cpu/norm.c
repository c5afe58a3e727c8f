/*
 * norm.c — CPU layer norm and its gradient over the rows of a contiguous [rows, d] view.
 *
 * Each row's mean and variance accumulate in double, in two passes (the mean, then the squares
 * of the centred values), so float32 matches PyTorch to 1e-5 even for rows far from 0. Rows
 * run in parallel. The parameters' gradients sum the rows in blocks fixed by (rows, d) alone,
 * then the blocks in order: the same bits on any number of threads.
 */
#include "cpu.h"
#include <math.h>
#include <stdlib.h>

/* ---- forward ------------------------------------------------------------------------------ */

#define LN_FORWARD(T)                                                                              \
    CPU_HOT static void ln_rows_##T(T *y, T *mean, T *rstd, const T *x, const T *w, const T *b,    \
                                    int64_t r0, int64_t r1, int64_t d, double eps) {               \
        for (int64_t r = r0; r < r1; r++) {                                                        \
            const T *xr = x + r * d;                                                               \
            T       *yr = y + r * d;                                                               \
            double   s = 0, v = 0;                                                                 \
            _Pragma("omp simd reduction(+ : s)") for (int64_t j = 0; j < d; j++) s += xr[j];       \
            double mu = s / (double)d;                                                             \
            _Pragma("omp simd reduction(+ : v)") for (int64_t j = 0; j < d; j++) {                 \
                double c = xr[j] - mu;                                                             \
                v += c * c;                                                                        \
            }                                                                                      \
            double rs = 1.0 / sqrt(v / (double)d + eps);                                           \
            mean[r] = (T)mu;                                                                       \
            rstd[r] = (T)rs;                                                                       \
            T m = (T)mu, k = (T)rs;                                                                \
            if (w && b) {                                                                          \
                for (int64_t j = 0; j < d; j++)                                                    \
                    yr[j] = (xr[j] - m) * k * w[j] + b[j];                                         \
            } else if (w) {                                                                        \
                for (int64_t j = 0; j < d; j++)                                                    \
                    yr[j] = (xr[j] - m) * k * w[j];                                                \
            } else if (b) {                                                                        \
                for (int64_t j = 0; j < d; j++)                                                    \
                    yr[j] = (xr[j] - m) * k + b[j];                                                \
            } else {                                                                               \
                for (int64_t j = 0; j < d; j++)                                                    \
                    yr[j] = (xr[j] - m) * k;                                                       \
            }                                                                                      \
        }                                                                                          \
    }
LN_FORWARD(float)
LN_FORWARD(double)

static tide_status ln_check(const char *name, const tide_kview *x, const tide_kview *const *v,
                            int n) {
    if (x->dtype != TIDE_DTYPE_F32 && x->dtype != TIDE_DTYPE_F64)
        return cpu_notsup(name, x->dtype);
    for (int i = 0; i < n; i++)
        if (v[i] && v[i]->dtype != x->dtype)
            return tide_seterr(TIDE_EDTYPE, "%s: cpu kernel needs one dtype", name);
    return TIDE_OK;
}

/* the blocks rows are cut into: enough for the threads, few enough that the gradient's
 * per-block partials (2 * d doubles each) stay small; a function of rows and d only */
static int64_t ln_blocks(int64_t rows, int64_t d) {
    int64_t cap = ((int64_t)1 << 21) / d;
    int64_t n = rows < 64 ? rows : 64;
    if (n > cap)
        n = cap;
    return n < 1 ? 1 : n;
}

tide_status cpu_layer_norm(tide_device *dev, const tide_kview *y, const tide_kview *mean,
                           const tide_kview *rstd, const tide_kview *x, const tide_kview *weight,
                           const tide_kview *bias, double eps) {
    (void)dev;
    const tide_kview *v[5] = {y, mean, rstd, weight, bias};
    CPU_TRY(ln_check("layer_norm", x, v, 5));
    int64_t rows = x->shape[0], d = x->shape[1], nb = ln_blocks(rows, d);
    int     par = nb > 1 && rows * d >= CPU_PAR_GRAIN;
    int     f32 = x->dtype == TIDE_DTYPE_F32;
#pragma omp parallel for schedule(static) if (par)
    for (int64_t blk = 0; blk < nb; blk++) {
        int64_t r0 = rows * blk / nb, r1 = rows * (blk + 1) / nb;
        if (f32)
            ln_rows_float(y->data, mean->data, rstd->data, x->data, weight ? weight->data : NULL,
                          bias ? bias->data : NULL, r0, r1, d, eps);
        else
            ln_rows_double(y->data, mean->data, rstd->data, x->data, weight ? weight->data : NULL,
                           bias ? bias->data : NULL, r0, r1, d, eps);
    }
    return TIDE_OK;
}

/* ---- backward ----------------------------------------------------------------------------- */

/* per row, with xhat = (x - mean) * rstd and gw = dy * weight:
 *   dx = rstd * (gw - mean(gw) - xhat * mean(gw * xhat));
 * pw += dy * xhat and pb += dy (this block's partial sums for dweight and dbias, or NULL) */
#define LN_BACKWARD(T)                                                                             \
    CPU_HOT static void ln_back_rows_##T(T *dx, double *pw, double *pb, const T *dy, const T *x,   \
                                         const T *mean, const T *rstd, const T *w, int64_t r0,     \
                                         int64_t r1, int64_t d) {                                  \
        for (int64_t r = r0; r < r1; r++) {                                                        \
            const T *xr = x + r * d, *gr = dy + r * d;                                             \
            T        m = mean[r], k = rstd[r];                                                     \
            if (dx) {                                                                              \
                double a = 0, c = 0;                                                               \
                _Pragma("omp simd reduction(+ : a, c)") for (int64_t j = 0; j < d; j++) {          \
                    T g = w ? gr[j] * w[j] : gr[j];                                                \
                    a += g;                                                                        \
                    c += g * ((xr[j] - m) * k);                                                    \
                }                                                                                  \
                T  ma = (T)(a / (double)d), mc = (T)(c / (double)d);                               \
                T *o = dx + r * d;                                                                 \
                for (int64_t j = 0; j < d; j++) {                                                  \
                    T g = w ? gr[j] * w[j] : gr[j];                                                \
                    o[j] = k * (g - ma - (xr[j] - m) * k * mc);                                    \
                }                                                                                  \
            }                                                                                      \
            if (pw)                                                                                \
                for (int64_t j = 0; j < d; j++)                                                    \
                    pw[j] += (double)(gr[j] * ((xr[j] - m) * k));                                  \
            if (pb)                                                                                \
                for (int64_t j = 0; j < d; j++)                                                    \
                    pb[j] += gr[j];                                                                \
        }                                                                                          \
    }
LN_BACKWARD(float)
LN_BACKWARD(double)

#define LN_SUM_BLOCKS(T, out, part)                                                                \
    for (int64_t j = 0; j < d; j++) {                                                              \
        double s = 0;                                                                              \
        for (int64_t blk = 0; blk < nb; blk++)                                                     \
            s += (part)[blk * d + j];                                                              \
        ((T *)(out)->data)[j] = (T)s;                                                              \
    }

tide_status cpu_layer_norm_backward(tide_device *dev, const tide_kview *dx,
                                    const tide_kview *dweight, const tide_kview *dbias,
                                    const tide_kview *dy, const tide_kview *x,
                                    const tide_kview *mean, const tide_kview *rstd,
                                    const tide_kview *weight) {
    (void)dev;
    const tide_kview *v[7] = {dx, dweight, dbias, dy, mean, rstd, weight};
    CPU_TRY(ln_check("layer_norm_backward", x, v, 7));
    int64_t rows = x->shape[0], d = x->shape[1], nb = ln_blocks(rows, d);
    double *part = NULL; /* [nb, d] for dweight, then [nb, d] for dbias */
    if (dweight || dbias) {
        part = calloc((size_t)(2 * nb * d), sizeof(double));
        if (!part)
            return tide_seterr(TIDE_ENOMEM,
                               "layer_norm_backward: out of memory for %lld partial "
                               "sums",
                               (long long)(2 * nb * d));
    }
    int         par = nb > 1 && rows * d >= CPU_PAR_GRAIN;
    int         f32 = x->dtype == TIDE_DTYPE_F32;
    void       *pdx = dx ? dx->data : NULL;
    const void *pwt = weight ? weight->data : NULL;
#pragma omp parallel for schedule(static) if (par)
    for (int64_t blk = 0; blk < nb; blk++) {
        int64_t r0 = rows * blk / nb, r1 = rows * (blk + 1) / nb;
        double *pw = dweight ? part + blk * d : NULL, *pb = dbias ? part + (nb + blk) * d : NULL;
        if (f32)
            ln_back_rows_float(pdx, pw, pb, dy->data, x->data, mean->data, rstd->data, pwt, r0, r1,
                               d);
        else
            ln_back_rows_double(pdx, pw, pb, dy->data, x->data, mean->data, rstd->data, pwt, r0, r1,
                                d);
    }
    if (dweight && f32)
        LN_SUM_BLOCKS(float, dweight, part)
    else if (dweight)
        LN_SUM_BLOCKS(double, dweight, part)
    if (dbias && f32)
        LN_SUM_BLOCKS(float, dbias, part + nb * d)
    else if (dbias)
        LN_SUM_BLOCKS(double, dbias, part + nb * d)
    free(part);
    return TIDE_OK;
}
