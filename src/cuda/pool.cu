/*
 * pool.cu — 2-D max pooling and its backward pass, the kernel rows max_pool2d and
 * max_pool2d_backward: kernel, stride, padding (skipped, as -inf) and dilation; the output size
 * (ceil_mode included) is the dispatch's, read from out.
 */
#include "window.cuh"

/* the window of g over img; the output size is other's */
static win_geom pool_geom_make(const tide_kview *img, const tide_kview *other, tide_pool_geom g) {
    win_geom q = win_make(img, other, g);
    q.OH = other->shape[2];
    q.OW = other->shape[3];
    return q;
}

/* one thread per output: the largest value of its window (NaN wins, first position on ties);
 * its position h*W + w within the plane goes to indices (-1 for a window with no input cell) */
template <int DT>
__global__ void k_maxpool2d(win_geom q, typename tide_dt<DT>::T *out, int64_t *idx,
                            const typename tide_dt<DT>::T *in, int64_t total, int64_t idx_s0,
                            int64_t idx_s1, int64_t idx_s2, int64_t idx_s3) {
    typedef typename tide_dt<DT>::C C;
    for (int64_t t = TIDE_GTID; t < total; t += TIDE_GSTRIDE) {
        int64_t ow = t % q.OW, oh = (t / q.OW) % q.OH, c = (t / (q.OW * q.OH)) % q.C,
                n = t / (q.OW * q.OH * q.C);
        const typename tide_dt<DT>::T *plane = in + n * q.is[0] + c * q.is[1];
        C                              best = -INFINITY;
        int64_t                        at = -1;
        for (int i = 0; i < q.kh; i++) {
            int64_t h = oh * q.sh - q.ph + (int64_t)i * q.dh;
            if (h < 0 || h >= q.H)
                continue;
            for (int j = 0; j < q.kw; j++) {
                int64_t w = ow * q.sw - q.pw + (int64_t)j * q.dw;
                if (w < 0 || w >= q.W)
                    continue;
                C v = tide_load<DT>(plane[h * q.is[2] + w * q.is[3]]);
                if (at < 0 || v != v || v > best) { /* the last NaN wins, as PyTorch's */
                    best = v;
                    at = h * q.W + w;
                }
            }
        }
        out[n * q.os[0] + c * q.os[1] + oh * q.os[2] + ow * q.os[3]] = tide_store<DT>(best);
        if (idx)
            idx[n * idx_s0 + c * idx_s1 + oh * idx_s2 + ow * idx_s3] = at;
    }
}

struct run_maxpool {
    template <int DT>
    static tide_status run(cudaStream_t stream, const win_geom &q, const tide_kview *out,
                           const tide_kview *indices, const tide_kview *in) {
        typedef typename tide_dt<DT>::T T;
        int64_t                         total = tide_cuda_numel(out);
        if (total == 0)
            return TIDE_OK;
        TIDE_LAUNCH(k_maxpool2d<DT>, tide_map_grid(total), TIDE_CUDA_THREADS, 0, stream, q,
                    (T *)out->data, indices ? (int64_t *)indices->data : NULL, (const T *)in->data,
                    total, indices ? indices->strides[0] : 0, indices ? indices->strides[1] : 0,
                    indices ? indices->strides[2] : 0, indices ? indices->strides[3] : 0);
        TIDE_CUDA_LAUNCHED(k_maxpool2d);
        return TIDE_OK;
    }
};

/* the row max_pool2d: the shapes the dispatch's */
extern "C" tide_status tide_cuda_max_pool2d(tide_device *dev, const tide_kernel_call *call) {
    const tide_kview *input = call->in[0], *out = call->out[0], *indices = call->out[1];
    cudaStream_t      stream = NULL;
    TIDE_TRY(tide_cuda_enter(dev, &stream));
    win_geom q = pool_geom_make(input, out, tide_window_of(call));
    TIDE_CUDA_DISPATCH_FLOAT(input->dtype, run_maxpool, stream, q, out, indices, input);
    return tide_cuda_notsup("max_pool2d", input->dtype);
}

/* grad_in[plane][idx] += grad_out, one thread per grad_out element (windows may overlap) */
template <typename T>
__global__ void k_maxpool2d_backward(win_geom q, T *gin, const T *gout, const int64_t *idx,
                                     int64_t total, int64_t i0, int64_t i1, int64_t i2,
                                     int64_t i3) {
    for (int64_t t = TIDE_GTID; t < total; t += TIDE_GSTRIDE) {
        int64_t ow = t % q.OW, oh = (t / q.OW) % q.OH, c = (t / (q.OW * q.OH)) % q.C,
                n = t / (q.OW * q.OH * q.C);
        int64_t at = idx[n * i0 + c * i1 + oh * i2 + ow * i3];
        if (at < 0 || at >= q.H * q.W)
            continue;
        atomic_add(gin + n * q.is[0] + c * q.is[1] + (at / q.W) * q.is[2] + (at % q.W) * q.is[3],
                   gout[n * q.os[0] + c * q.os[1] + oh * q.os[2] + ow * q.os[3]]);
    }
}

template <typename T>
static tide_status maxpool_back_typed(cudaStream_t stream, const win_geom &q, const tide_kview *gin,
                                      const tide_kview *gout, const tide_kview *idx) {
    int64_t total = tide_cuda_numel(gout);
    if (total == 0)
        return TIDE_OK;
    TIDE_LAUNCH(k_maxpool2d_backward<T>, tide_map_grid(total), TIDE_CUDA_THREADS, 0, stream, q,
                (T *)gin->data, (const T *)gout->data, (const int64_t *)idx->data, total,
                idx->strides[0], idx->strides[1], idx->strides[2], idx->strides[3]);
    TIDE_CUDA_LAUNCHED(k_maxpool2d_backward);
    return TIDE_OK;
}

/* the row max_pool2d_backward */
extern "C" tide_status tide_cuda_max_pool2d_backward(tide_device            *dev,
                                                     const tide_kernel_call *call) {
    const tide_kview *grad_out = call->in[0], *indices = call->in[1], *grad_in = call->out[0];
    TIDE_TRY(tide_cuda_fill(dev, grad_in, 0));
    cudaStream_t stream = NULL;
    TIDE_TRY(tide_cuda_enter(dev, &stream));
    tide_pool_geom none = {1, 1, 1, 1, 0, 0, 1, 1, 0};
    win_geom       q = pool_geom_make(grad_in, grad_out, none);
    switch (grad_in->dtype) {
    case TIDE_DTYPE_F32:
        return maxpool_back_typed<float>(stream, q, grad_in, grad_out, indices);
    case TIDE_DTYPE_F64:
        return maxpool_back_typed<double>(stream, q, grad_in, grad_out, indices);
    case TIDE_DTYPE_F16:
        return maxpool_back_typed<__half>(stream, q, grad_in, grad_out, indices);
    case TIDE_DTYPE_BF16:
        return maxpool_back_typed<__nv_bfloat16>(stream, q, grad_in, grad_out, indices);
    default:
        return tide_cuda_notsup("max_pool2d_backward", grad_in->dtype);
    }
}
