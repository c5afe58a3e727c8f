/*
 * channel_norm.c — batch norm's passes on the CPU, the kernel rows channel_stats,
 * channel_affine and channel_grad_sums of include/tide_kernels.def, over x seen as
 * [rows, C, inner] (a contiguous [N, C, H, W] is N rows of C channels of H * W).
 *
 * The sums run per channel in float64 (PyTorch's batch_norm_cpu_collect_stats accumulates in
 * its acc type, two passes: the mean, then the squared deviations from it), channels on
 * threads, each channel's runs of inner elements in SIMD lanes. The affine pass is one
 * multiply-add per element in x's dtype, runs of (row, channel) on threads.
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

/* call: in x; out mean, var (channels); p d, inner */
tide_status cpu_channel_stats(tide_device *dev, const tide_kernel_call *c) {
    (void)dev;
    channel_geom g = geom_of(c);
    if (c->dtype == TIDE_DTYPE_F64) {
        stats_f64(c->in[0]->data, c->out[0]->data, c->out[1]->data, g, channel_par(c));
        return TIDE_OK;
    }
    if (c->dtype != TIDE_DTYPE_F32)
        return cpu_notsup("channel_stats", c->dtype);
    double *m = malloc((size_t)g.channels * 2 * sizeof *m);
    if (!m)
        return tide_seterr(TIDE_ENOMEM, "channel_stats: out of host memory for %lld sums",
                           (long long)g.channels);
    stats_f32(c->in[0]->data, m, m + g.channels, g, channel_par(c));
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

/* call: in g, x, mean; out sum_g, sum_gx (channels); p d, inner */
tide_status cpu_channel_grad_sums(tide_device *dev, const tide_kernel_call *c) {
    (void)dev;
    channel_geom g = geom_of(c);
    switch (c->dtype) {
    case TIDE_DTYPE_F32:
        grad_sums_f32(c->in[0]->data, c->in[1]->data, c->in[2]->data, c->out[0]->data,
                      c->out[1]->data, g, channel_par(c));
        return TIDE_OK;
    case TIDE_DTYPE_F64:
        grad_sums_f64(c->in[0]->data, c->in[1]->data, c->in[2]->data, c->out[0]->data,
                      c->out[1]->data, g, channel_par(c));
        return TIDE_OK;
    default:
        return cpu_notsup("channel_grad_sums", c->dtype);
    }
}
