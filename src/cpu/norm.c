/*
 * norm.c — CPU layer norm, RMS norm and their gradients over the rows of a contiguous [rows, d]
 * view: the kernel rows layer_norm, rms_norm and their _backward of include/tide_kernels.def.
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

/* the blocks rows are cut into: enough for the threads, few enough that the gradient's
 * per-block partials (2 * d doubles each) stay small; a function of rows and d only */
static int64_t ln_blocks(int64_t rows, int64_t d) {
    int64_t cap = ((int64_t)1 << 21) / d;
    int64_t n = rows < 64 ? rows : 64;
    if (n > cap)
        n = cap;
    return n < 1 ? 1 : n;
}

/* call (the row layer_norm): in x, weight|NULL, bias|NULL; out y, mean, rstd; p d, eps */
tide_status cpu_layer_norm(tide_device *dev, const tide_kernel_call *c) {
    (void)dev;
    if (c->dtype != TIDE_DTYPE_F32 && c->dtype != TIDE_DTYPE_F64)
        return cpu_notsup("layer_norm", c->dtype);
    int64_t     rows = c->rows, d = c->d, nb = ln_blocks(rows, d);
    int         par = nb > 1 && rows * d >= CPU_PAR_GRAIN;
    int         f32 = c->dtype == TIDE_DTYPE_F32;
    void       *y = c->out[0]->data, *mean = c->out[1]->data, *rstd = c->out[2]->data;
    const void *x = c->in[0]->data, *w = c->in[1] ? c->in[1]->data : NULL,
               *b = c->in[2] ? c->in[2]->data : NULL;
    double eps = c->p[1].f;
#pragma omp parallel for schedule(static) if (par)
    for (int64_t blk = 0; blk < nb; blk++) {
        int64_t r0 = rows * blk / nb, r1 = rows * (blk + 1) / nb;
        if (f32)
            ln_rows_float(y, mean, rstd, x, w, b, r0, r1, d, eps);
        else
            ln_rows_double(y, mean, rstd, x, w, b, r0, r1, d, eps);
    }
    return TIDE_OK;
}

/* the row add_layer_norm: y = layer_norm(x + residual) (in x, residual, weight|NULL, bias|NULL;
 * out y; p d, eps), a transformer's "add & norm" after inference's projections in one pass. Each
 * row's sum goes to the thread's buffer and through ln_rows: float32 and float64 give the add's
 * and layer_norm's values bit for bit; float16 and bfloat16 rows widen there (the sum unrounded,
 * y rounded once), with the weight and bias widened once a call. */
tide_status cpu_add_layer_norm(tide_device *dev, const tide_kernel_call *c) {
    (void)dev;
    tide_dtype dt = c->dtype;
    if (dt != TIDE_DTYPE_F32 && dt != TIDE_DTYPE_F64 && !cpu_is_half(dt))
        return cpu_notsup("add_layer_norm", dt);
    int64_t rows = c->rows, d = c->d, nb = ln_blocks(rows, d);
    int     par = nb > 1 && rows * d >= CPU_PAR_GRAIN, half = cpu_is_half(dt);
    size_t  esz = cpu_dtype_size(dt), tsz = dt == TIDE_DTYPE_F64 ? sizeof(double) : sizeof(float);
    char   *y = c->out[0]->data;
    const char *x = c->in[0]->data, *res = c->in[1]->data;
    const void *w = c->in[2] ? c->in[2]->data : NULL, *b = c->in[3] ? c->in[3]->data : NULL;
    double      eps = c->p[1].f;
    float      *wb = NULL; /* half: the weight and bias as floats */
    if (half && (w || b)) {
        wb = malloc(2 * (size_t)d * sizeof(float));
        if (!wb)
            return tide_seterr(TIDE_ENOMEM, "add_layer_norm: out of memory for %lld floats",
                               (long long)(2 * d));
        if (w)
            cpu_convert_row(TIDE_DTYPE_F32, (char *)wb, sizeof(float), dt, w, (int64_t)esz, d);
        if (b)
            cpu_convert_row(TIDE_DTYPE_F32, (char *)(wb + d), sizeof(float), dt, b, (int64_t)esz,
                            d);
        w = w ? (const void *)wb : NULL;
        b = b ? (const void *)(wb + d) : NULL;
    }
    int failed = 0;
#pragma omp parallel if (par) reduction(| : failed)
    {
        char *buf = malloc(2 * (size_t)d * tsz); /* the row's sum, and half's float result */
        if (!buf)
            failed = 1;
#pragma omp for schedule(static)
        for (int64_t blk = 0; blk < nb; blk++) {
            for (int64_t r = rows * blk / nb; buf && r < rows * (blk + 1) / nb; r++) {
                const char *xr = x + r * d * (int64_t)esz, *rr = res + r * d * (int64_t)esz;
                char       *yr = y + r * d * (int64_t)esz;
                if (dt == TIDE_DTYPE_F64) {
                    double       *s = (double *)buf, mu, rs;
                    const double *a = (const double *)xr, *e = (const double *)rr;
                    for (int64_t j = 0; j < d; j++)
                        s[j] = a[j] + e[j];
                    ln_rows_double((double *)yr, &mu, &rs, s, w, b, 0, 1, d, eps);
                    continue;
                }
                float *s = (float *)buf, *o = s + d, mu, rs;
                if (half) {
                    cpu_convert_row(TIDE_DTYPE_F32, (char *)s, sizeof(float), dt, xr, (int64_t)esz,
                                    d);
                    cpu_convert_row(TIDE_DTYPE_F32, (char *)o, sizeof(float), dt, rr, (int64_t)esz,
                                    d);
                    for (int64_t j = 0; j < d; j++)
                        s[j] += o[j];
                    ln_rows_float(o, &mu, &rs, s, w, b, 0, 1, d, eps);
                    cpu_convert_row(dt, yr, (int64_t)esz, TIDE_DTYPE_F32, (const char *)o,
                                    sizeof(float), d);
                } else {
                    const float *a = (const float *)xr, *e = (const float *)rr;
                    for (int64_t j = 0; j < d; j++)
                        s[j] = a[j] + e[j];
                    ln_rows_float((float *)yr, &mu, &rs, s, w, b, 0, 1, d, eps);
                }
            }
        }
        free(buf);
    }
    free(wb);
    if (failed)
        return tide_seterr(TIDE_ENOMEM, "add_layer_norm: out of memory for a row of %lld",
                           (long long)d);
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

/* call (the row layer_norm_backward): in x, dy, mean, rstd, weight|NULL; out dx, dweight,
 * dbias (each NULL when not wanted); p d */
tide_status cpu_layer_norm_backward(tide_device *dev, const tide_kernel_call *c) {
    (void)dev;
    if (c->dtype != TIDE_DTYPE_F32 && c->dtype != TIDE_DTYPE_F64)
        return cpu_notsup("layer_norm_backward", c->dtype);
    const tide_kview *dx = c->out[0], *dweight = c->out[1], *dbias = c->out[2];
    int64_t           rows = c->rows, d = c->d, nb = ln_blocks(rows, d);
    double           *part = NULL; /* [nb, d] for dweight, then [nb, d] for dbias */
    if (dweight || dbias) {
        part = calloc((size_t)(2 * nb * d), sizeof(double));
        if (!part)
            return tide_seterr(TIDE_ENOMEM,
                               "layer_norm_backward: out of memory for %lld partial "
                               "sums",
                               (long long)(2 * nb * d));
    }
    int         par = nb > 1 && rows * d >= CPU_PAR_GRAIN;
    int         f32 = c->dtype == TIDE_DTYPE_F32;
    void       *pdx = dx ? dx->data : NULL;
    const void *x = c->in[0]->data, *dy = c->in[1]->data, *mean = c->in[2]->data,
               *rstd = c->in[3]->data, *pwt = c->in[4] ? c->in[4]->data : NULL;
#pragma omp parallel for schedule(static) if (par)
    for (int64_t blk = 0; blk < nb; blk++) {
        int64_t r0 = rows * blk / nb, r1 = rows * (blk + 1) / nb;
        double *pw = dweight ? part + blk * d : NULL, *pb = dbias ? part + (nb + blk) * d : NULL;
        if (f32)
            ln_back_rows_float(pdx, pw, pb, dy, x, mean, rstd, pwt, r0, r1, d);
        else
            ln_back_rows_double(pdx, pw, pb, dy, x, mean, rstd, pwt, r0, r1, d);
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

/* ---- RMS norm (the rows rms_norm, rms_norm_backward of include/tide_kernels.def) ---------- */

/* y = x * rstd * weight, rstd = 1 / sqrt(mean(x^2) + eps), the mean accumulated in double */
#define RMS_FORWARD(T)                                                                             \
    CPU_HOT static void rms_rows_##T(T *y, T *rstd, const T *x, const T *w, int64_t r0,            \
                                     int64_t r1, int64_t d, double eps) {                          \
        for (int64_t r = r0; r < r1; r++) {                                                        \
            const T *xr = x + r * d;                                                               \
            T       *yr = y + r * d;                                                               \
            double   v = 0;                                                                        \
            _Pragma("omp simd reduction(+ : v)") for (int64_t j = 0; j < d; j++) v +=              \
                (double)xr[j] * xr[j];                                                             \
            T k = (T)(1.0 / sqrt(v / (double)d + eps));                                            \
            rstd[r] = k;                                                                           \
            if (w) {                                                                               \
                for (int64_t j = 0; j < d; j++)                                                    \
                    yr[j] = xr[j] * k * w[j];                                                      \
            } else {                                                                               \
                for (int64_t j = 0; j < d; j++)                                                    \
                    yr[j] = xr[j] * k;                                                             \
            }                                                                                      \
        }                                                                                          \
    }
RMS_FORWARD(float)
RMS_FORWARD(double)

/* call: in x, weight|NULL; out y, rstd; p d, eps */
tide_status cpu_rms_norm(tide_device *dev, const tide_kernel_call *c) {
    (void)dev;
    int64_t     rows = c->rows, d = c->d, nb = ln_blocks(rows, d);
    int         par = nb > 1 && rows * d >= CPU_PAR_GRAIN;
    const void *w = c->in[1] ? c->in[1]->data : NULL;
    void       *y = c->out[0]->data, *rstd = c->out[1]->data;
    const void *x = c->in[0]->data;
    double      eps = c->p[1].f;
    if (c->dtype != TIDE_DTYPE_F32 && c->dtype != TIDE_DTYPE_F64)
        return cpu_notsup("rms_norm", c->dtype);
#pragma omp parallel for schedule(static) if (par)
    for (int64_t blk = 0; blk < nb; blk++) {
        int64_t r0 = rows * blk / nb, r1 = rows * (blk + 1) / nb;
        if (c->dtype == TIDE_DTYPE_F32)
            rms_rows_float(y, rstd, x, w, r0, r1, d, eps);
        else
            rms_rows_double(y, rstd, x, w, r0, r1, d, eps);
    }
    return TIDE_OK;
}

/* per row, with xhat = x * rstd and gw = dy * weight: dx = rstd * (gw - xhat * mean(gw * xhat));
 * pw += dy * xhat (this block's partial sums for dweight, or NULL) */
#define RMS_BACKWARD(T)                                                                            \
    CPU_HOT static void rms_back_rows_##T(T *dx, double *pw, const T *dy, const T *x,              \
                                          const T *rstd, const T *w, int64_t r0, int64_t r1,       \
                                          int64_t d) {                                             \
        for (int64_t r = r0; r < r1; r++) {                                                        \
            const T *xr = x + r * d, *gr = dy + r * d;                                             \
            T        k = rstd[r];                                                                  \
            if (dx) {                                                                              \
                double a = 0;                                                                      \
                _Pragma("omp simd reduction(+ : a)") for (int64_t j = 0; j < d; j++) {             \
                    T g = w ? gr[j] * w[j] : gr[j];                                                \
                    a += g * (xr[j] * k);                                                          \
                }                                                                                  \
                T  ma = (T)(a / (double)d);                                                        \
                T *o = dx + r * d;                                                                 \
                for (int64_t j = 0; j < d; j++) {                                                  \
                    T g = w ? gr[j] * w[j] : gr[j];                                                \
                    o[j] = k * (g - xr[j] * k * ma);                                               \
                }                                                                                  \
            }                                                                                      \
            if (pw)                                                                                \
                for (int64_t j = 0; j < d; j++)                                                    \
                    pw[j] += (double)(gr[j] * (xr[j] * k));                                        \
        }                                                                                          \
    }
RMS_BACKWARD(float)
RMS_BACKWARD(double)

/* call: in x, dy, rstd, weight|NULL; out dx|NULL, dweight|NULL; p d */
tide_status cpu_rms_norm_backward(tide_device *dev, const tide_kernel_call *c) {
    (void)dev;
    const tide_kview *dx = c->out[0], *dweight = c->out[1];
    int64_t           rows = c->rows, d = c->d, nb = ln_blocks(rows, d);
    int               f32 = c->dtype == TIDE_DTYPE_F32;
    if (!f32 && c->dtype != TIDE_DTYPE_F64)
        return cpu_notsup("rms_norm_backward", c->dtype);
    double *part = NULL; /* [nb, d] for dweight */
    if (dweight) {
        part = calloc((size_t)(nb * d), sizeof(double));
        if (!part)
            return tide_seterr(TIDE_ENOMEM,
                               "rms_norm_backward: out of memory for %lld partial sums",
                               (long long)(nb * d));
    }
    int         par = nb > 1 && rows * d >= CPU_PAR_GRAIN;
    void       *pdx = dx ? dx->data : NULL;
    const void *x = c->in[0]->data, *dy = c->in[1]->data, *rstd = c->in[2]->data;
    const void *w = c->in[3] ? c->in[3]->data : NULL;
#pragma omp parallel for schedule(static) if (par)
    for (int64_t blk = 0; blk < nb; blk++) {
        int64_t r0 = rows * blk / nb, r1 = rows * (blk + 1) / nb;
        double *pw = part ? part + blk * d : NULL;
        if (f32)
            rms_back_rows_float(pdx, pw, dy, x, rstd, w, r0, r1, d);
        else
            rms_back_rows_double(pdx, pw, dy, x, rstd, w, r0, r1, d);
    }
    if (dweight && f32)
        LN_SUM_BLOCKS(float, dweight, part)
    else if (dweight)
        LN_SUM_BLOCKS(double, dweight, part)
    free(part);
    return TIDE_OK;
}
