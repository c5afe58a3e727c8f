/*
 * half.c — float16 and bfloat16 on the CPU, through the float32 kernels.
 *
 * cpu_<entry>_or_half is the CPU table's entry for each HALF row of src/backend_entries.def: it
 * calls the kernels (cpu_<entry>) straight for every other dtype, so the kernel files know
 * nothing of half and never call back here. An entry called with half operands widens each of them
 * to a float32 scratch copy, runs the float32 kernel on the copies, and rounds its results back
 * into the half outputs (to nearest, ties to even: the copy entry's conversion). That is each op
 * computed in float32 and rounded once, as PyTorch's CPU kernels compute these dtypes (their
 * "opmath" type) and as tide's CUDA kernels do: the same op gives the same values on both devices
 * but for summation order. Every op pays two conversions, vectorised in the copy entry
 * (elementwise.c: F16C for float16), so half runs at about float32's speed and holds half its
 * memory. The exception is a bfloat16 matmul: oneDNN multiplies bfloat16 itself
 * (matmul_bf16.c), where the CPU has the instructions several times faster than float32.
 *
 * A failed kernel writes nothing back, so a half tensor is left as it was, as every other
 * tensor is. Inputs are widened before the kernel runs, so an output that aliases an input
 * (x:add_(x)) reads the old values. An input broadcast with stride 0 is widened at its own
 * size (one row for a bias), not at the output's.
 */
#include "cpu.h"

enum { IN = 1, OUT = 2, INOUT = IN | OUT };

typedef struct {
    tide_kview v;   /* what the kernel gets: the float32 copy, or the caller's view */
    void      *buf; /* the copy's memory, NULL when the view was not half */
    size_t     bytes;
} wide;

/* w->v: a float32 copy of h when h is half (its values when mode has IN), else h itself */
static tide_status widen(tide_device *dev, const tide_kview *h, int mode, wide *w) {
    w->buf = NULL;
    w->bytes = 0;
    if (!h)
        return TIDE_OK;
    w->v = *h;
    if (!cpu_is_half(h->dtype))
        return TIDE_OK;
    /* the values the view reaches: a stride-0 dim of an input counts once */
    tide_kview src = *h;
    int64_t    n = 1;
    for (int d = h->ndim - 1; d >= 0; d--) {
        if (mode == IN && h->strides[d] == 0)
            src.shape[d] = 1;
        w->v.strides[d] = src.shape[d] == 1 && h->shape[d] != 1 ? 0 : n;
        n *= src.shape[d];
    }
    w->v.dtype = TIDE_DTYPE_F32;
    w->bytes = (size_t)(n > 0 ? n : 1) * sizeof(float);
    TIDE_TRY(cpu_alloc(dev, w->bytes, &w->buf));
    w->v.data = w->buf;
    if (!(mode & IN) || n == 0)
        return TIDE_OK;
    /* the copy's destination: src's shape, contiguous */
    tide_kview dst = src;
    dst.data = w->buf;
    dst.dtype = TIDE_DTYPE_F32;
    int64_t step = 1;
    for (int d = h->ndim - 1; d >= 0; d--) {
        dst.strides[d] = step;
        step *= src.shape[d];
    }
    tide_status st = cpu_copy(dev, &dst, &src);
    if (st != TIDE_OK) {
        cpu_free(dev, w->buf, w->bytes);
        w->buf = NULL;
    }
    return st;
}

/* the n views widened by mode; on a failure the ones already widened are released */
static tide_status widen_all(tide_device *dev, int n, const tide_kview *const *h, const int *mode,
                             wide *w) {
    for (int i = 0; i < n; i++) {
        tide_status st = widen(dev, h[i], mode[i], &w[i]);
        if (st != TIDE_OK) {
            while (i-- > 0)
                if (w[i].buf)
                    cpu_free(dev, w[i].buf, w[i].bytes);
            return st;
        }
    }
    return TIDE_OK;
}

/* after the kernel: its half outputs rounded back when it succeeded; every copy released */
static tide_status finish_all(tide_device *dev, int n, const tide_kview *const *h, const int *mode,
                              wide *w, tide_status st) {
    for (int i = 0; i < n; i++) {
        if (!w[i].buf)
            continue;
        if (st == TIDE_OK && (mode[i] & OUT) && tide_kview_numel(h[i]) > 0)
            st = cpu_copy(dev, h[i], &w[i].v);
        cpu_free(dev, w[i].buf, w[i].bytes);
    }
    return st;
}

/* the kernel's view of operand i: NULL stays NULL */
#define V(i) (h[i] ? &w[i].v : NULL)
/* widen the operands h[] by mode[], run CALL on V(0), V(1), ..., round the outputs back */
#define THROUGH_FLOAT(CALL)                                                                        \
    do {                                                                                           \
        enum { N = sizeof mode / sizeof mode[0] };                                                 \
        wide w[N];                                                                                 \
        TIDE_TRY(widen_all(dev, N, h, mode, w));                                                   \
        return finish_all(dev, N, h, mode, w, (CALL));                                             \
    } while (0)

tide_status cpu_binary_or_half(tide_device *dev, tide_op op, const tide_kview *out,
                               const tide_kview *a, const tide_kview *b) {
    if (!cpu_is_half(a->dtype))
        return cpu_binary(dev, op, out, a, b);
    const tide_kview *h[] = {out, a, b};
    const int         mode[] = {OUT, IN, IN};
    THROUGH_FLOAT(cpu_binary(dev, op, V(0), V(1), V(2)));
}

/* the scalar stays a double: the float32 kernel rounds it once, to float32, not to half */
tide_status cpu_binary_scalar_or_half(tide_device *dev, tide_op op, const tide_kview *out,
                                      const tide_kview *a, double s, int reverse) {
    if (!cpu_is_half(a->dtype))
        return cpu_binary_scalar(dev, op, out, a, s, reverse);
    const tide_kview *h[] = {out, a};
    const int         mode[] = {OUT, IN};
    THROUGH_FLOAT(cpu_binary_scalar(dev, op, V(0), V(1), s, reverse));
}

tide_status cpu_unary_or_half(tide_device *dev, tide_op op, const tide_kview *out,
                              const tide_kview *a, const double *params) {
    if (!cpu_is_half(a->dtype))
        return cpu_unary(dev, op, out, a, params);
    const tide_kview *h[] = {out, a};
    const int         mode[] = {OUT, IN};
    THROUGH_FLOAT(cpu_unary(dev, op, V(0), V(1), params));
}

tide_status cpu_reduce_or_half(tide_device *dev, tide_op op, const tide_kview *out,
                               const tide_kview *indices, const tide_kview *a, int dim) {
    if (!cpu_is_half(a->dtype))
        return cpu_reduce(dev, op, out, indices, a, dim);
    const tide_kview *h[] = {out, indices, a};
    const int         mode[] = {OUT, OUT, IN};
    THROUGH_FLOAT(cpu_reduce(dev, op, V(0), V(1), V(2), dim));
}

tide_status cpu_matmul_or_half(tide_device *dev, const tide_kview *out, const tide_kview *a,
                               const tide_kview *bm) {
    if (!cpu_is_half(a->dtype))
        return cpu_matmul(dev, out, a, bm);
    if (cpu_matmul_bf16(dev, out, a, bm)) /* bfloat16 in hardware, where oneDNN takes it */
        return TIDE_OK;
    const tide_kview *h[] = {out, a, bm};
    const int         mode[] = {OUT, IN, IN};
    THROUGH_FLOAT(cpu_matmul(dev, V(0), V(1), V(2)));
}

tide_status cpu_softmax_or_half(tide_device *dev, const tide_kview *out, const tide_kview *a,
                                int dim, int log) {
    if (!cpu_is_half(a->dtype))
        return cpu_softmax(dev, out, a, dim, log);
    const tide_kview *h[] = {out, a};
    const int         mode[] = {OUT, IN};
    THROUGH_FLOAT(cpu_softmax(dev, V(0), V(1), dim, log));
}

tide_status cpu_softmax_backward_or_half(tide_device *dev, const tide_kview *dx,
                                         const tide_kview *y, const tide_kview *g, int dim,
                                         int log) {
    if (!cpu_is_half(y->dtype))
        return cpu_softmax_backward(dev, dx, y, g, dim, log);
    const tide_kview *h[] = {dx, y, g};
    const int         mode[] = {OUT, IN, IN};
    THROUGH_FLOAT(cpu_softmax_backward(dev, V(0), V(1), V(2), dim, log));
}

tide_status cpu_index_add_or_half(tide_device *dev, const tide_kview *dst, int dim,
                                  const tide_kview *index, const tide_kview *src) {
    if (!cpu_is_half(dst->dtype))
        return cpu_index_add(dev, dst, dim, index, src);
    const tide_kview *h[] = {dst, index, src};
    const int         mode[] = {INOUT, IN, IN};
    THROUGH_FLOAT(cpu_index_add(dev, V(0), dim, V(1), V(2)));
}

tide_status cpu_where_or_half(tide_device *dev, const tide_kview *out, const tide_kview *cond,
                              const tide_kview *a, const tide_kview *b) {
    if (!cpu_is_half(a->dtype))
        return cpu_where(dev, out, cond, a, b);
    const tide_kview *h[] = {out, cond, a, b};
    const int         mode[] = {OUT, IN, IN, IN};
    THROUGH_FLOAT(cpu_where(dev, V(0), V(1), V(2), V(3)));
}

/* element i of the float32 draw, rounded: the same stream as a float32 tensor's. A uniform
 * draw stays below hi after rounding (0.9999 would round to 1 in bfloat16): one that reaches hi
 * takes the largest half value below it, as the CUDA kernel does (src/cuda/random.cu) */
tide_status cpu_random_or_half(tide_device *dev, const tide_kview *out, tide_random_kind kind,
                               double lo, double hi, uint64_t seed, uint64_t offset) {
    if (!cpu_is_half(out->dtype))
        return cpu_random(dev, out, kind, lo, hi, seed, offset);
    const tide_kview *h[] = {out};
    const int         mode[] = {OUT};
    wide              w[1];
    TIDE_TRY(widen_all(dev, 1, h, mode, w));
    tide_status st = cpu_random(dev, V(0), kind, lo, hi, seed, offset);
    if (st == TIDE_OK && kind == TIDE_RANDOM_UNIFORM && hi > lo) {
        int     bf = out->dtype == TIDE_DTYPE_BF16;
        float  *f = w[0].v.data, below = tide_half_below(bf, hi);
        int64_t n = tide_kview_numel(out);
        for (int64_t i = 0; i < n; i++)
            if (tide_round_half(bf, f[i]) >= hi)
                f[i] = below;
    }
    return finish_all(dev, 1, h, mode, w, st);
}

tide_status cpu_arange_or_half(tide_device *dev, const tide_kview *out, double start, double step) {
    if (!cpu_is_half(out->dtype))
        return cpu_arange(dev, out, start, step);
    const tide_kview *h[] = {out};
    const int         mode[] = {OUT};
    THROUGH_FLOAT(cpu_arange(dev, V(0), start, step));
}

tide_status cpu_scatter_or_half(tide_device *dev, const tide_kview *dst, int dim,
                                const tide_kview *index, const tide_kview *src, int accumulate) {
    if (!cpu_is_half(dst->dtype))
        return cpu_scatter(dev, dst, dim, index, src, accumulate);
    const tide_kview *h[] = {dst, index, src};
    const int         mode[] = {INOUT, IN, IN};
    THROUGH_FLOAT(cpu_scatter(dev, V(0), dim, V(1), V(2), accumulate));
}

tide_status cpu_sort_or_half(tide_device *dev, const tide_kview *values, const tide_kview *indices,
                             const tide_kview *a, int dim, int descending) {
    if (!cpu_is_half(a->dtype))
        return cpu_sort(dev, values, indices, a, dim, descending);
    const tide_kview *h[] = {values, indices, a};
    const int         mode[] = {OUT, OUT, IN};
    THROUGH_FLOAT(cpu_sort(dev, V(0), V(1), V(2), dim, descending));
}

tide_status cpu_im2col_or_half(tide_device *dev, const tide_kview *cols, const tide_kview *input,
                               tide_conv_geom g) {
    if (!cpu_is_half(input->dtype))
        return cpu_im2col(dev, cols, input, g);
    const tide_kview *h[] = {cols, input};
    const int         mode[] = {OUT, IN};
    THROUGH_FLOAT(cpu_im2col(dev, V(0), V(1), g));
}

tide_status cpu_col2im_or_half(tide_device *dev, const tide_kview *out, const tide_kview *cols,
                               tide_conv_geom g) {
    if (!cpu_is_half(cols->dtype))
        return cpu_col2im(dev, out, cols, g);
    const tide_kview *h[] = {out, cols};
    const int         mode[] = {OUT, IN};
    THROUGH_FLOAT(cpu_col2im(dev, V(0), V(1), g));
}

tide_status cpu_maxpool2d_or_half(tide_device *dev, const tide_kview *out,
                                  const tide_kview *indices, const tide_kview *input,
                                  tide_pool_geom g) {
    if (!cpu_is_half(input->dtype))
        return cpu_maxpool2d(dev, out, indices, input, g);
    const tide_kview *h[] = {out, indices, input};
    const int         mode[] = {OUT, OUT, IN};
    THROUGH_FLOAT(cpu_maxpool2d(dev, V(0), V(1), V(2), g));
}

tide_status cpu_maxpool2d_backward_or_half(tide_device *dev, const tide_kview *grad_in,
                                           const tide_kview *grad_out, const tide_kview *indices) {
    if (!cpu_is_half(grad_out->dtype))
        return cpu_maxpool2d_backward(dev, grad_in, grad_out, indices);
    const tide_kview *h[] = {grad_in, grad_out, indices};
    const int         mode[] = {OUT, IN, IN};
    THROUGH_FLOAT(cpu_maxpool2d_backward(dev, V(0), V(1), V(2)));
}

tide_status cpu_act_backward_or_half(tide_device *dev, tide_act act, const tide_kview *grad_in,
                                     const tide_kview *grad_out, const tide_kview *input) {
    if (!cpu_is_half(grad_out->dtype))
        return cpu_act_backward(dev, act, grad_in, grad_out, input);
    const tide_kview *h[] = {grad_in, grad_out, input};
    const int         mode[] = {OUT, IN, IN};
    THROUGH_FLOAT(cpu_act_backward(dev, act, V(0), V(1), V(2)));
}

tide_status cpu_rnn_cell_or_half(tide_device *dev, tide_rnn_kind kind, const tide_kview *out,
                                 const tide_kview *saved, const tide_kview *gi,
                                 const tide_kview *gh, const tide_kview *prev) {
    if (!cpu_is_half(gi->dtype))
        return cpu_rnn_cell(dev, kind, out, saved, gi, gh, prev);
    const tide_kview *h[] = {out, saved, gi, gh, prev};
    const int         mode[] = {OUT, OUT, IN, IN, IN};
    THROUGH_FLOAT(cpu_rnn_cell(dev, kind, V(0), V(1), V(2), V(3), V(4)));
}

tide_status cpu_rnn_cell_backward_or_half(tide_device *dev, tide_rnn_kind kind,
                                          const tide_kview *dgi, const tide_kview *dgh,
                                          const tide_kview *dprev, const tide_kview *saved,
                                          const tide_kview *prev, const tide_kview *out,
                                          const tide_kview *grad_out) {
    if (!cpu_is_half(grad_out->dtype))
        return cpu_rnn_cell_backward(dev, kind, dgi, dgh, dprev, saved, prev, out, grad_out);
    const tide_kview *h[] = {dgi, dgh, dprev, saved, prev, out, grad_out};
    const int         mode[] = {OUT, OUT, OUT, IN, IN, IN, IN};
    THROUGH_FLOAT(cpu_rnn_cell_backward(dev, kind, V(0), V(1), V(2), V(3), V(4), V(5), V(6)));
}

/* the step in float32; the parameter and the optimizer's state rounded once per step */
tide_status cpu_optim_step_or_half(tide_device *dev, const tide_optim_hparams *hp,
                                   const tide_kview *param, const tide_kview *grad,
                                   const tide_kview *state1, const tide_kview *state2,
                                   const tide_kview *state3) {
    if (!cpu_is_half(param->dtype))
        return cpu_optim_step(dev, hp, param, grad, state1, state2, state3);
    const tide_kview *h[] = {param, grad, state1, state2, state3};
    const int         mode[] = {INOUT, IN, INOUT, INOUT, INOUT};
    THROUGH_FLOAT(cpu_optim_step(dev, hp, V(0), V(1), V(2), V(3), V(4)));
}
