/*
 * conv.cu — the nn kernels: the rows unfold2d / fold2d (im2col / col2im: convolution as gemm
 * and its gradient), any dilation; padding reads as 0. Max pooling is in pool.cu.
 */
#include "window.cuh"

/* Enters dev and gives the window of the call's geometry over the image img ([N, C, H, W]) with
 * cols ([N, C*kh*kw, OH*OW], strides of any order: folded ones too), sizes from the dispatch */
static tide_status conv_enter(tide_device *dev, const tide_kernel_call *call, const tide_kview *img,
                              const tide_kview *cols, cudaStream_t *stream, win_geom *q) {
    tide_pool_geom g = tide_window_of(call);
    TIDE_TRY(tide_cuda_enter(dev, stream));
    *q = win_make(img, cols, g);
    q->OH = (q->H + 2 * (int64_t)g.ph - (int64_t)q->dh * (g.kh - 1) - 1) / g.sh + 1;
    q->OW = (q->W + 2 * (int64_t)g.pw - (int64_t)q->dw * (g.kw - 1) - 1) / g.sw + 1;
    return TIDE_OK;
}

// ---- im2col ---------------------------------------------------------------------------------

/* one thread per column element (n, row = (c*kh + i)*kw + j, col = oh*OW + ow) */
template <typename T> __global__ void k_im2col(win_geom q, T *cols, const T *in, int64_t total) {
    int64_t L = q.OH * q.OW, rows = q.C * q.kh * q.kw;
    for (int64_t t = TIDE_GTID; t < total; t += TIDE_GSTRIDE) {
        int64_t col = t % L, row = (t / L) % rows, n = t / (L * rows);
        int64_t c = row / (q.kh * q.kw), i = (row / q.kw) % q.kh, j = row % q.kw;
        int64_t h = (col / q.OW) * q.sh - q.ph + i * q.dh,
                w = (col % q.OW) * q.sw - q.pw + j * q.dw;
        T v;
        memset(&v, 0, sizeof v);
        if (h >= 0 && h < q.H && w >= 0 && w < q.W)
            v = in[n * q.is[0] + c * q.is[1] + h * q.is[2] + w * q.is[3]];
        cols[n * q.os[0] + row * q.os[1] + col * q.os[2]] = v;
    }
}

template <typename T>
static tide_status im2col_bytes(cudaStream_t stream, const win_geom &q, const tide_kview *cols,
                                const tide_kview *in) {
    int64_t total = tide_cuda_numel(cols);
    if (total == 0)
        return TIDE_OK;
    TIDE_LAUNCH(k_im2col<T>, tide_map_grid(total), TIDE_CUDA_THREADS, 0, stream, q, (T *)cols->data,
                (const T *)in->data, total);
    TIDE_CUDA_LAUNCHED(k_im2col);
    return TIDE_OK;
}

/* the row unfold2d */
extern "C" tide_status tide_cuda_unfold2d(tide_device *dev, const tide_kernel_call *call) {
    const tide_kview *input = call->in[0], *cols = call->out[0];
    cudaStream_t      stream = NULL;
    win_geom          q = win_geom();
    TIDE_TRY(conv_enter(dev, call, input, cols, &stream, &q));
    return tide_cuda_by_size(input->dtype, "unfold2d", [&](auto z) {
        return im2col_bytes<decltype(z)>(stream, q, cols, input);
    });
}

// ---- col2im ---------------------------------------------------------------------------------

/* one thread per image element gathers every column entry that im2col copied from it: no
 * atomics, and the same order of summation on every run */
template <int DT>
__global__ void k_col2im(win_geom q, typename tide_dt<DT>::T *out,
                         const typename tide_dt<DT>::T *cols, int64_t total) {
    typedef typename tide_dt<DT>::C C;
    for (int64_t t = TIDE_GTID; t < total; t += TIDE_GSTRIDE) {
        int64_t w = t % q.W, h = (t / q.W) % q.H, c = (t / (q.W * q.H)) % q.C,
                n = t / (q.W * q.H * q.C);
        C acc = 0;
        for (int i = 0; i < q.kh; i++) {
            int64_t hh = h + q.ph - i * q.dh;
            if (hh < 0 || hh % q.sh != 0 || hh / q.sh >= q.OH)
                continue;
            for (int j = 0; j < q.kw; j++) {
                int64_t ww = w + q.pw - j * q.dw;
                if (ww < 0 || ww % q.sw != 0 || ww / q.sw >= q.OW)
                    continue;
                int64_t row = (c * q.kh + i) * q.kw + j, col = (hh / q.sh) * q.OW + ww / q.sw;
                acc += tide_load<DT>(cols[n * q.os[0] + row * q.os[1] + col * q.os[2]]);
            }
        }
        out[n * q.is[0] + c * q.is[1] + h * q.is[2] + w * q.is[3]] = tide_store<DT>(acc);
    }
}

struct run_col2im {
    template <int DT>
    static tide_status run(cudaStream_t stream, const win_geom &q, const tide_kview *out,
                           const tide_kview *cols) {
        typedef typename tide_dt<DT>::T T;
        int64_t                         total = tide_cuda_numel(out);
        if (total == 0)
            return TIDE_OK;
        TIDE_LAUNCH(k_col2im<DT>, tide_map_grid(total), TIDE_CUDA_THREADS, 0, stream, q,
                    (T *)out->data, (const T *)cols->data, total);
        TIDE_CUDA_LAUNCHED(k_col2im);
        return TIDE_OK;
    }
};

/* the row fold2d */
extern "C" tide_status tide_cuda_fold2d(tide_device *dev, const tide_kernel_call *call) {
    const tide_kview *cols = call->in[0], *out = call->out[0];
    cudaStream_t      stream = NULL;
    win_geom          q = win_geom();
    TIDE_TRY(conv_enter(dev, call, out, cols, &stream, &q));
    TIDE_CUDA_DISPATCH_FLOAT(out->dtype, run_col2im, stream, q, out, cols);
    return tide_cuda_notsup("fold2d", out->dtype);
}

// ---- activation backward (relu, gelu) ---------------------------------------------------------

/* grad_in = input <= 0 ? 0 : grad_out, one pass (map2: vectorized when contiguous); a NaN
 * input passes the gradient, as PyTorch's threshold_backward and the CPU kernel */
template <int DT> struct relu_back_fn {
    __device__ typename tide_dt<DT>::T operator()(typename tide_dt<DT>::T g,
                                                  typename tide_dt<DT>::T x) const {
        return tide_load<DT>(x) <= 0 ? tide_store<DT>(0.0f) : g;
    }
};

/* exact GELU's gradient g * (Phi(x) + x phi(x)), Phi from erfc (no cancellation in the left
 * tail); x phi(x) is 0 where phi underflows, +-inf included. In double, rounded once to the
 * dtype (half types too: through float, as every half kernel stores) */
template <int DT> struct gelu_back_fn {
    __device__ typename tide_dt<DT>::T operator()(typename tide_dt<DT>::T g,
                                                  typename tide_dt<DT>::T x) const {
        double xd = (double)tide_load<DT>(x);
        double phi = 0.39894228040143268 * exp(-0.5 * xd * xd);
        double d = 0.5 * erfc(-xd * 0.70710678118654752) + (phi == 0 ? 0.0 : xd * phi);
        return tide_store<DT>((double)tide_load<DT>(g) * d);
    }
};

struct run_act_back {
    template <int DT>
    static tide_status run(tide_device *dev, tide_act act, const tide_kview *grad_in,
                           const tide_kview *grad_out, const tide_kview *input) {
        typedef typename tide_dt<DT>::T T;
        if (act == TIDE_ACT_GELU)
            return tide_map2<gelu_back_fn<DT>, T, T, T>(dev, {}, grad_in, grad_out, input);
        return tide_map2<relu_back_fn<DT>, T, T, T>(dev, {}, grad_in, grad_out, input);
    }
};

static tide_status act_backward(tide_device *dev, tide_act act, const tide_kview *grad_in,
                                const tide_kview *grad_out, const tide_kview *input) {
    const char *name = act == TIDE_ACT_GELU ? "gelu_backward" : "relu_backward";
    if (act != TIDE_ACT_RELU && act != TIDE_ACT_GELU)
        return tide_cuda_seterr(TIDE_EINVAL, "act_backward: unknown activation %d", (int)act);
    if (grad_out->dtype != grad_in->dtype || input->dtype != grad_in->dtype)
        return tide_cuda_seterr(TIDE_EDTYPE, "%s: cuda kernel needs one dtype", name);
    TIDE_CUDA_DISPATCH_FLOAT(grad_in->dtype, run_act_back, dev, act, grad_in, grad_out, input);
    return tide_cuda_seterr(TIDE_ENOTSUP, "%s: cuda kernel needs a float dtype", name);
}

/* the kernel rows: elementwise, so relu_backward_ may write the gradient it reads */
extern "C" tide_status tide_cuda_relu_backward(tide_device *dev, const tide_kernel_call *c) {
    return act_backward(dev, TIDE_ACT_RELU, c->out[0], c->in[0], c->in[1]);
}
extern "C" tide_status tide_cuda_gelu_backward(tide_device *dev, const tide_kernel_call *c) {
    return act_backward(dev, TIDE_ACT_GELU, c->out[0], c->in[0], c->in[1]);
}
extern "C" tide_status tide_cuda_relu_backward_(tide_device *dev, const tide_kernel_call *c) {
    return act_backward(dev, TIDE_ACT_RELU, c->in[0], c->in[0], c->in[1]);
}
