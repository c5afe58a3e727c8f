/*
 * channel_norm.c — batch norm's passes on the CPU, the kernel rows channel_stats,
 * channel_affine and channel_grad_sums of include/tide_kernels.def, over x seen as
 * [rows, C, inner] (a contiguous [N, C, H, W] is N rows of C channels of H * W).
 *
 * The sums run per channel in float64 (PyTorch's batch_norm_cpu_collect_stats accumulates in
 * its acc type, two passes: the mean, then the squared deviations from it), channels on
 * threads, each channel's runs of inner elements in SIMD lanes; with inner 1 (BatchNorm1d's
 * [N, C]) blocks of channels in the lanes instead. The affine pass is one multiply-add per
 * element in x's dtype, runs of (row, channel) on threads (rows, with inner 1).
 */
#include "cpu.h"
#include <stdlib.h>

typedef struct channel_geom {
    int64_t rows, channels, inner;
} channel_geom;

static channel_geom geom_of(const tide_kernel_call *c) {
    channel_geom g = {c->rows, c->d / c->p[1].i, c->p[1].i};
    return g;
}

/* channels on threads when there is work enough for two */
static int channel_par(const tide_kernel_call *c) {
    return c->rows * c->d >= CPU_PAR_GRAIN;
}

#define STATS(NAME, T)                                                                             \
    CPU_HOT static void NAME(const T *x, double *mean, double *var, channel_geom g, int par) {     \
        double m = (double)(g.rows * g.inner);                                                     \
        _Pragma("omp parallel for schedule(static) if (par)") for (int64_t ch = 0;                 \
                                                                   ch < g.channels; ch++) {        \
            double s = 0;                                                                          \
            for (int64_t r = 0; r < g.rows; r++) {                                                 \
                const T *p = x + (r * g.channels + ch) * g.inner;                                  \
                _Pragma("omp simd reduction(+ : s)") for (int64_t k = 0; k < g.inner; k++) s +=    \
                    (double)p[k];                                                                  \
            }                                                                                      \
            double mu = s / m, v = 0;                                                              \
            for (int64_t r = 0; r < g.rows; r++) {                                                 \
                const T *p = x + (r * g.channels + ch) * g.inner;                                  \
                _Pragma("omp simd reduction(+ : v)") for (int64_t k = 0; k < g.inner; k++) {       \
                    double e = (double)p[k] - mu;                                                  \
                    v += e * e;                                                                    \
                }                                                                                  \
            }                                                                                      \
            mean[ch] = mu;                                                                         \
            var[ch] = v / m;                                                                       \
        }                                                                                          \
    }
STATS(stats_f32, float)
STATS(stats_f64, double)

/* inner == 1 (BatchNorm1d's [N, C]): a channel's values lie C apart, so each thread takes a block
 * of CHANNEL_BLOCK channels and walks the rows, the block's sums in SIMD lanes (each channel
 * still summed in row order by one thread: the same bits on any number of threads) */
#define CHANNEL_BLOCK 64
#define STATS_COLS(NAME, T)                                                                        \
    CPU_HOT static void NAME(const T *x, double *mean, double *var, channel_geom g, int par) {     \
        int64_t nb = (g.channels + CHANNEL_BLOCK - 1) / CHANNEL_BLOCK;                             \
        double  m = (double)g.rows;                                                                \
        _Pragma("omp parallel for schedule(static) if (par)") for (int64_t b = 0; b < nb; b++) {   \
            int64_t c0 = b * CHANNEL_BLOCK, n = g.channels - c0;                                   \
            double  s[CHANNEL_BLOCK] = {0}, v[CHANNEL_BLOCK] = {0};                                \
            n = n < CHANNEL_BLOCK ? n : CHANNEL_BLOCK;                                             \
            for (int64_t r = 0; r < g.rows; r++) {                                                 \
                const T *p = x + r * g.channels + c0;                                              \
                _Pragma("omp simd") for (int64_t k = 0; k < n; k++) s[k] += (double)p[k];          \
            }                                                                                      \
            for (int64_t k = 0; k < n; k++)                                                        \
                s[k] /= m;                                                                         \
            for (int64_t r = 0; r < g.rows; r++) {                                                 \
                const T *p = x + r * g.channels + c0;                                              \
                _Pragma("omp simd") for (int64_t k = 0; k < n; k++) {                              \
                    double e = (double)p[k] - s[k];                                                \
                    v[k] += e * e;                                                                 \
                }                                                                                  \
            }                                                                                      \
            for (int64_t k = 0; k < n; k++) {                                                      \
                mean[c0 + k] = s[k];                                                               \
                var[c0 + k] = v[k] / m;                                                            \
            }                                                                                      \
        }                                                                                          \
    }
STATS_COLS(stats_cols_f32, float)
STATS_COLS(stats_cols_f64, double)

/* call: in x; out mean, var (channels); p d, inner */
tide_status cpu_channel_stats(tide_device *dev, const tide_kernel_call *c) {
    (void)dev;
    channel_geom g = geom_of(c);
    int          cols = g.inner == 1;
    if (c->dtype == TIDE_DTYPE_F64) {
        (cols ? stats_cols_f64 : stats_f64)(c->in[0]->data, c->out[0]->data, c->out[1]->data, g,
                                            channel_par(c));
        return TIDE_OK;
    }
    if (c->dtype != TIDE_DTYPE_F32)
        return cpu_notsup("channel_stats", c->dtype);
    double *m = malloc((size_t)g.channels * 2 * sizeof *m);
    if (!m)
        return tide_seterr(TIDE_ENOMEM, "channel_stats: out of host memory for %lld sums",
                           (long long)g.channels);
    (cols ? stats_cols_f32 : stats_f32)(c->in[0]->data, m, m + g.channels, g, channel_par(c));
    float *mean = c->out[0]->data, *var = c->out[1]->data;
    for (int64_t ch = 0; ch < g.channels; ch++) {
        mean[ch] = (float)m[ch];
        var[ch] = (float)m[g.channels + ch];
    }
    free(m);
    return TIDE_OK;
}

#define AFFINE(NAME, T)                                                                            \
    CPU_HOT static void NAME(T *y, const T *x, const T *s, const T *t, const T *ctr, const T *x2,  \
                             const T *s2, channel_geom g, int par) {                               \
        if (g.inner == 1) { /* [N, C]: each row one SIMD loop over its channels */                 \
            _Pragma("omp parallel for schedule(static) if (par)") for (int64_t r = 0; r < g.rows;  \
                                                                       r++) {                      \
                const T *xr = x + r * g.channels, *zr = x2 ? x2 + r * g.channels : NULL;           \
                T       *yr = y + r * g.channels;                                                  \
                _Pragma("omp simd") for (int64_t k = 0; k < g.channels; k++) {                     \
                    T v = (xr[k] - (ctr ? ctr[k] : (T)0)) * s[k] + t[k];                           \
                    yr[k] = zr ? v + zr[k] * s2[k] : v;                                            \
                }                                                                                  \
            }                                                                                      \
            return;                                                                                \
        }                                                                                          \
        int64_t runs = g.rows * g.channels;                                                        \
        _Pragma("omp parallel for schedule(static) if (par)") for (int64_t j = 0; j < runs; j++) { \
            int64_t  ch = j % g.channels;                                                          \
            const T  a = s[ch], b = t[ch], m = ctr ? ctr[ch] : (T)0;                               \
            const T *xj = x + j * g.inner;                                                         \
            T       *yj = y + j * g.inner;                                                         \
            if (x2) {                                                                              \
                const T  a2 = s2[ch];                                                              \
                const T *zj = x2 + j * g.inner;                                                    \
                _Pragma("omp simd") for (int64_t k = 0; k < g.inner; k++) yj[k] =                  \
                    (xj[k] - m) * a + zj[k] * a2 + b;                                              \
            } else {                                                                               \
                _Pragma("omp simd") for (int64_t k = 0; k < g.inner; k++) yj[k] =                  \
                    (xj[k] - m) * a + b;                                                           \
            }                                                                                      \
        }                                                                                          \
    }
AFFINE(affine_f32, float)
AFFINE(affine_f64, double)

/* call: in x, scale, shift, center, x2, scale2 (the last three optional); out y; p d, inner */
tide_status cpu_channel_affine(tide_device *dev, const tide_kernel_call *c) {
    (void)dev;
    channel_geom g = geom_of(c);
    if (!c->in[4] != !c->in[5])
        return tide_seterr(TIDE_EINVAL, "channel_affine: x2 and scale2 go together");
    const void *ctr = c->in[3] ? c->in[3]->data : NULL, *x2 = c->in[4] ? c->in[4]->data : NULL,
               *s2 = c->in[5] ? c->in[5]->data : NULL;
    switch (c->dtype) {
    case TIDE_DTYPE_F32:
        affine_f32(c->out[0]->data, c->in[0]->data, c->in[1]->data, c->in[2]->data, ctr, x2, s2, g,
                   channel_par(c));
        return TIDE_OK;
    case TIDE_DTYPE_F64:
        affine_f64(c->out[0]->data, c->in[0]->data, c->in[1]->data, c->in[2]->data, ctr, x2, s2, g,
                   channel_par(c));
        return TIDE_OK;
    default:
        return cpu_notsup("channel_affine", c->dtype);
    }
}

#define GRAD_SUMS(NAME, T)                                                                         \
    CPU_HOT static void NAME(const T *gr, const T *x, const T *mean, T *sum_g, T *sum_gx,          \
                             channel_geom g, int par) {                                            \
        _Pragma("omp parallel for schedule(static) if (par)") for (int64_t ch = 0;                 \
                                                                   ch < g.channels; ch++) {        \
            double sg = 0, sgx = 0, mu = (double)mean[ch];                                         \
            for (int64_t r = 0; r < g.rows; r++) {                                                 \
                int64_t  at = (r * g.channels + ch) * g.inner;                                     \
                const T *gp = gr + at, *xp = x + at;                                               \
                _Pragma("omp simd reduction(+ : sg, sgx)") for (int64_t k = 0; k < g.inner; k++) { \
                    double gk = (double)gp[k];                                                     \
                    sg += gk;                                                                      \
                    sgx += gk * ((double)xp[k] - mu);                                              \
                }                                                                                  \
            }                                                                                      \
            sum_g[ch] = (T)sg;                                                                     \
            sum_gx[ch] = (T)sgx;                                                                   \
        }                                                                                          \
    }
GRAD_SUMS(grad_sums_f32, float)
GRAD_SUMS(grad_sums_f64, double)

/* inner == 1: blocks of channels on threads, the rows walked (STATS_COLS's order) */
#define GRAD_SUMS_COLS(NAME, T)                                                                    \
    CPU_HOT static void NAME(const T *gr, const T *x, const T *mean, T *sum_g, T *sum_gx,          \
                             channel_geom g, int par) {                                            \
        int64_t nb = (g.channels + CHANNEL_BLOCK - 1) / CHANNEL_BLOCK;                             \
        _Pragma("omp parallel for schedule(static) if (par)") for (int64_t b = 0; b < nb; b++) {   \
            int64_t c0 = b * CHANNEL_BLOCK, n = g.channels - c0;                                   \
            double  sg[CHANNEL_BLOCK] = {0}, sgx[CHANNEL_BLOCK] = {0}, mu[CHANNEL_BLOCK];          \
            n = n < CHANNEL_BLOCK ? n : CHANNEL_BLOCK;                                             \
            for (int64_t k = 0; k < n; k++)                                                        \
                mu[k] = (double)mean[c0 + k];                                                      \
            for (int64_t r = 0; r < g.rows; r++) {                                                 \
                const T *gp = gr + r * g.channels + c0, *xp = x + r * g.channels + c0;             \
                _Pragma("omp simd") for (int64_t k = 0; k < n; k++) {                              \
                    double gk = (double)gp[k];                                                     \
                    sg[k] += gk;                                                                   \
                    sgx[k] += gk * ((double)xp[k] - mu[k]);                                        \
                }                                                                                  \
            }                                                                                      \
            for (int64_t k = 0; k < n; k++) {                                                      \
                sum_g[c0 + k] = (T)sg[k];                                                          \
                sum_gx[c0 + k] = (T)sgx[k];                                                        \
            }                                                                                      \
        }                                                                                          \
    }
GRAD_SUMS_COLS(grad_sums_cols_f32, float)
GRAD_SUMS_COLS(grad_sums_cols_f64, double)

/* call: in g, x, mean; out sum_g, sum_gx (channels); p d, inner */
tide_status cpu_channel_grad_sums(tide_device *dev, const tide_kernel_call *c) {
    (void)dev;
    channel_geom g = geom_of(c);
    switch (c->dtype) {
    case TIDE_DTYPE_F32:
        (g.inner == 1 ? grad_sums_cols_f32 : grad_sums_f32)(c->in[0]->data, c->in[1]->data,
                                                            c->in[2]->data, c->out[0]->data,
                                                            c->out[1]->data, g, channel_par(c));
        return TIDE_OK;
    case TIDE_DTYPE_F64:
        (g.inner == 1 ? grad_sums_cols_f64 : grad_sums_f64)(c->in[0]->data, c->in[1]->data,
                                                            c->in[2]->data, c->out[0]->data,
                                                            c->out[1]->data, g, channel_par(c));
        return TIDE_OK;
    default:
        return cpu_notsup("channel_grad_sums", c->dtype);
    }
}
