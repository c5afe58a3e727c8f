/*
 * softmax_rows.c — the kernel rows softmax and softmax_backward of include/tide_kernels.def on
 * the CPU: each line of a row seen as [len, inner] (the dim's elements, inner apart). Lines
 * inner apart by a SIMD width or more go a block of columns at a time (here); the others to
 * softmax.c's line kernels, float16 and bfloat16 through half.c's float32 copies.
 */
#include "cpu.h"
#include "scalar_math.h"
#include "vec_math.h"
#include <stdlib.h>

/* ---- the kernel rows ---------------------------------------------------------------------- */

/* the row's tensors as [rows, len, inner] (backend.h), or the one error */
static tide_status lines_view(const char *op, const tide_kernel_call *c, const tide_kview *v,
                              tide_kview *v3) {
    if (!tide_lines_view(c, 1, v, v3))
        return tide_seterr(TIDE_EINVAL, "%s: inner %lld does not divide the row's %lld", op,
                           (long long)c->p[1].i, (long long)c->d);
    return TIDE_OK;
}

/* ---- float32 lines inner apart: a block of columns at a time -------------------------------
 * A dim that is not the last (NCHW's channels: inner = H * W) makes each line a column of the
 * row's [len, inner] block. Walking a line alone strides through memory; these kernels walk a
 * block of SM_COLS columns down the len rows together, SIMD across the columns, with the line
 * kernels' arithmetic: the max first (a NaN makes its line NaN), the sum in float (the row
 * kernel's float lanes), the gradient's sums in double. */
#define SM_COLS 64

CPU_HOT static void sm_cols_f32(float *y, const float *x, int64_t len, int64_t inner, int64_t kn,
                                int log) {
    float mx[SM_COLS], sum[SM_COLS];
    for (int64_t k = 0; k < kn; k++)
        mx[k] = -INFINITY, sum[k] = 0;
    for (int64_t i = 0; i < len; i++) {
        const float *xi = x + i * inner;
#pragma omp simd
        for (int64_t k = 0; k < kn; k++)
            mx[k] = (xi[k] > mx[k] || xi[k] != xi[k]) ? xi[k] : mx[k];
    }
    for (int64_t i = 0; i < len; i++) {
        const float *xi = x + i * inner;
        float       *yi = y + i * inner;
#pragma omp simd
        for (int64_t k = 0; k < kn; k++) {
            float e = cpu_vexpf(xi[k] - mx[k]);
            sum[k] += e;
            if (!log)
                yi[k] = e;
        }
    }
    for (int64_t k = 0; k < kn; k++) /* (log: the log-sum-exp; else the reciprocal) */
        sum[k] = log ? (float)tide_log_d(sum[k]) : (float)(1.0 / sum[k]);
    for (int64_t i = 0; i < len; i++) {
        const float *xi = x + i * inner;
        float       *yi = y + i * inner;
        if (log) {
#pragma omp simd
            for (int64_t k = 0; k < kn; k++)
                yi[k] = xi[k] - mx[k] - sum[k];
        } else {
#pragma omp simd
            for (int64_t k = 0; k < kn; k++)
                yi[k] *= sum[k];
        }
    }
}

CPU_HOT static void smb_cols_f32(float *dx, const float *y, const float *g, int64_t len,
                                 int64_t inner, int64_t kn, int log) {
    double acc[SM_COLS];
    float  st[SM_COLS];
    for (int64_t k = 0; k < kn; k++)
        acc[k] = 0;
    for (int64_t i = 0; i < len; i++) {
        const float *yi = y + i * inner, *gi = g + i * inner;
#pragma omp simd
        for (int64_t k = 0; k < kn; k++)
            acc[k] += log ? gi[k] : gi[k] * yi[k];
    }
    for (int64_t k = 0; k < kn; k++)
        st[k] = (float)acc[k];
    for (int64_t i = 0; i < len; i++) {
        const float *yi = y + i * inner, *gi = g + i * inner;
        float       *oi = dx + i * inner;
        if (log) {
#pragma omp simd
            for (int64_t k = 0; k < kn; k++)
                oi[k] = gi[k] - cpu_vexpf(yi[k]) * st[k];
        } else {
#pragma omp simd
            for (int64_t k = 0; k < kn; k++)
                oi[k] = yi[k] * (gi[k] - st[k]);
        }
    }
}

/* the row's blocks of columns, in parallel over rows times blocks: in[1] NULL for the forward */
static void sm_blocks_f32(const tide_kernel_call *c, int backward) {
    int64_t      rows = c->rows, d = c->d, inner = c->p[1].i, len = d / inner;
    int64_t      nb = (inner + SM_COLS - 1) / SM_COLS;
    int          log = (int)c->p[2].i;
    float       *out = c->out[0]->data;
    const float *a = c->in[0]->data, *g = backward ? c->in[1]->data : NULL;
#pragma omp parallel for schedule(static) if (rows * d >= CPU_PAR_GRAIN_HEAVY)
    for (int64_t u = 0; u < rows * nb; u++) {
        int64_t r = u / nb, k0 = (u % nb) * SM_COLS;
        int64_t kn = inner - k0 < SM_COLS ? inner - k0 : SM_COLS, off = r * d + k0;
        if (backward)
            smb_cols_f32(out + off, a + off, g + off, len, inner, kn, log);
        else
            sm_cols_f32(out + off, a + off, len, inner, kn, log);
    }
}

/* float16 and bfloat16 by the blocks: the rows widened to float32 whole and the result rounded
 * back once, so that a half result is the float32 one rounded (as half.c does for the lines) */
static tide_status sm_blocks_half(const tide_kernel_call *c, int backward) {
    const char *op = backward ? "softmax_backward" : "softmax";
    size_t      n = (size_t)(c->rows * c->d), es = cpu_dtype_size(c->dtype);
    int         nin = backward ? 2 : 1;
    float      *buf = malloc((size_t)(nin + 1) * n * sizeof(float));
    if (!buf)
        return tide_seterr(TIDE_ENOMEM, "%s: out of host memory for a float32 copy of %zu %s", op,
                           n, tide_dtype_name(c->dtype));
    tide_kernel_call w = *c;
    tide_kview       v[3];
    w.dtype = TIDE_DTYPE_F32;
    for (int k = 0; k <= nin; k++) {
        v[k] = k ? *c->in[k - 1] : *c->out[0];
        v[k].data = buf + (size_t)k * n;
        v[k].dtype = TIDE_DTYPE_F32;
        if (k) {
            cpu_convert_row(TIDE_DTYPE_F32, v[k].data, sizeof(float), c->dtype, c->in[k - 1]->data,
                            (int64_t)es, (int64_t)n);
            w.in[k - 1] = &v[k];
        }
    }
    w.out[0] = &v[0];
    sm_blocks_f32(&w, backward);
    cpu_convert_row(c->dtype, c->out[0]->data, (int64_t)es, TIDE_DTYPE_F32, (const char *)buf,
                    sizeof(float), (int64_t)n);
    free(buf);
    return TIDE_OK;
}

/* the blocks serve lines at least a SIMD width apart, float32 (half through float32) */
static int sm_by_blocks(const tide_kernel_call *c) {
    return (c->dtype == TIDE_DTYPE_F32 || cpu_is_half(c->dtype)) && c->p[1].i >= 8 &&
           c->d % c->p[1].i == 0;
}

static tide_status sm_blocks(const tide_kernel_call *c, int backward) {
    if (c->dtype != TIDE_DTYPE_F32)
        return sm_blocks_half(c, backward);
    sm_blocks_f32(c, backward);
    return TIDE_OK;
}

tide_status cpu_softmax(tide_device *dev, const tide_kernel_call *c) {
    int        log = (int)c->p[2].i;
    tide_kview y3 = {0}, x3 = {0};
    if (sm_by_blocks(c))
        return sm_blocks(c, 0);
    TIDE_TRY(lines_view("softmax", c, c->out[0], &y3));
    TIDE_TRY(lines_view("softmax", c, c->in[0], &x3));
    return cpu_softmax_dim_or_half(dev, &y3, &x3, 1, log);
}

tide_status cpu_softmax_backward(tide_device *dev, const tide_kernel_call *c) {
    int        log = (int)c->p[2].i;
    tide_kview dx3 = {0}, y3 = {0}, g3 = {0};
    if (sm_by_blocks(c))
        return sm_blocks(c, 1);
    TIDE_TRY(lines_view("softmax_backward", c, c->out[0], &dx3));
    TIDE_TRY(lines_view("softmax_backward", c, c->in[0], &y3));
    TIDE_TRY(lines_view("softmax_backward", c, c->in[1], &g3));
    return cpu_softmax_backward_dim_or_half(dev, &dx3, &y3, &g3, 1, log);
}
