/*
 * attention.cu — the attention kernel row (include/tide_kernels.def) on CUDA: softmax(q k^T *
 * scale) v over packed sequences, each attending to itself (src/cpu/attention.c has the layout).
 *
 * One warp per (query token, head), FlashAttention's online softmax: the warp takes the
 * sequence's keys 32 at a time (a lane each: its score), keeps the running maximum and sum,
 * rescales its accumulator by exp(old max - new max) and adds the chunk's weighted values, each
 * lane holding up to 4 of the head's d <= 128 features. No [L, L] scores are ever stored, so
 * any sequence length runs in the same memory. Half dtypes compute in float, float64 in double.
 * The core has checked the offsets on the host before the call (a PACKED row).
 */
#include "rows.cuh"

enum { ATT_WARP = 32, ATT_MAX_PER_LANE = 4 }; /* heads of up to 128 features */

template <int DT>
__global__ void k_attention(const typename tide_dt<DT>::T *q, const typename tide_dt<DT>::T *k,
                            const typename tide_dt<DT>::T *v, typename tide_dt<DT>::T *out,
                            const int64_t *offsets, int64_t nseq, int64_t heads, int64_t d,
                            typename tide_dt<DT>::C scale) {
    typedef typename tide_dt<DT>::T T;
    typedef typename tide_dt<DT>::C C;
    __shared__ C                    w[ATT_WARP]; /* one chunk's weights, read by every lane */
    int64_t row = blockIdx.x, i = row / heads, h = row % heads, ld = heads * d;
    int     lane = threadIdx.x;
    /* token i's sequence: the last b with offsets[b] <= i (empty ones before it are skipped) */
    int64_t lo = 0, hi = nseq;
    while (hi - lo > 1) {
        int64_t mid = (lo + hi) / 2;
        if (offsets[mid] <= i)
            lo = mid;
        else
            hi = mid;
    }
    int64_t  first = offsets[lo], last = offsets[lo + 1];
    const T *qi = q + i * ld + h * d;
    C        acc[ATT_MAX_PER_LANE] = {0, 0, 0, 0}, m = -INFINITY, l = 0;
    for (int64_t j0 = first; j0 < last; j0 += ATT_WARP) {
        int64_t j = j0 + lane;
        C       s = -INFINITY;
        if (j < last) {
            const T *kj = k + j * ld + h * d;
            C        dot = 0;
            for (int64_t e = 0; e < d; e++)
                dot += tide_load<DT>(qi[e]) * tide_load<DT>(kj[e]);
            s = dot * scale;
        }
        C mn = sm_max(m, warp_max(s)); /* finite unless a score is NaN or infinite */
        /* while every score so far is -inf there is no weight yet (exp(-inf + inf) is NaN): a
         * later finite score starts the sum, as softmax's maximum over the whole row does */
        C p = j < last && mn != -INFINITY ? exp(s - mn) : (C)0;
        C corr = m == -INFINITY ? (C)0 : exp(m - mn);
        l = l * corr + warp_sum(p);
        __syncthreads(); /* the previous chunk's weights are read */
        w[lane] = p;
        __syncthreads();
        int64_t n = last - j0 < (int64_t)ATT_WARP ? last - j0 : (int64_t)ATT_WARP;
        for (int t = 0; t < ATT_MAX_PER_LANE; t++) {
            int64_t e = lane + (int64_t)ATT_WARP * t;
            if (e >= d)
                break;
            C a = acc[t] * corr;
            for (int64_t jj = 0; jj < n; jj++)
                a += w[jj] * tide_load<DT>(v[(j0 + jj) * ld + h * d + e]);
            acc[t] = a;
        }
        m = mn;
    }
    for (int t = 0; t < ATT_MAX_PER_LANE; t++) {
        int64_t e = lane + (int64_t)ATT_WARP * t;
        if (e < d)
            out[i * ld + h * d + e] = tide_store<DT>(acc[t] / l);
    }
}

struct run_attention {
    template <int DT>
    static tide_status run(cudaStream_t stream, const tide_kernel_call *c, const int64_t *offsets,
                           int64_t nseq, int64_t heads) {
        typedef typename tide_dt<DT>::T T;
        typedef typename tide_dt<DT>::C C;
        TIDE_LAUNCH(k_attention<DT>, (unsigned)c->rows, ATT_WARP, 0, stream,
                    (const T *)c->in[0]->data, (const T *)c->in[1]->data, (const T *)c->in[2]->data,
                    (T *)c->out[0]->data, offsets, nseq, heads, c->d, (C)c->p[2].f);
        TIDE_CUDA_LAUNCHED(k_attention);
        return TIDE_OK;
    }
};

extern "C" tide_status tide_cuda_attention(tide_device *dev, const tide_kernel_call *c) {
    int64_t heads = c->p[1].i, d = c->d;
    /* training's attention (dropout, and the gradients: no attention_backward here) takes the
     * composite on CUDA */
    if (c->p[3].f > 0)
        return tide_cuda_seterr(TIDE_ENOTSUP, "attention: the cuda kernel has no dropout");
    if (d > (int64_t)ATT_WARP * ATT_MAX_PER_LANE || c->rows > INT32_MAX)
        return tide_cuda_seterr(TIDE_ENOTSUP,
                                "attention: the cuda kernel takes heads of at most %d features "
                                "and 2^31 rows",
                                ATT_WARP * ATT_MAX_PER_LANE);
    cudaStream_t stream = NULL;
    TIDE_TRY(tide_cuda_enter(dev, &stream));
    /* the core has checked the offsets on the host (a PACKED row): the kernel may index with them
     */
    const tide_kview *off = c->in[3];
    int64_t           nseq = off->shape[0] - 1;
    TIDE_CUDA_DISPATCH_FLOAT(c->dtype, run_attention, stream, c, (const int64_t *)off->data, nseq,
                             heads);
    return tide_cuda_notsup("attention", c->dtype);
}
