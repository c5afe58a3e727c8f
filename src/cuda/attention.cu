/*
 * attention.cu — the attention kernel rows (include/tide_kernels.def) on CUDA:
 * dropout(softmax(q k^T * scale)) v over packed sequences, each attending to itself, and its
 * gradients (src/cpu/attention.c has the layout).
 *
 * One warp per (query token, head), FlashAttention's online softmax: the warp takes the
 * sequence's keys 32 at a time (a lane each: its score), keeps the running maximum and sum,
 * rescales its accumulator by exp(old max - new max) and adds the chunk's weighted values, each
 * lane holding up to 4 of the head's d <= 128 features. No [L, L] scores are ever stored, so
 * any sequence length runs in the same memory. Half dtypes compute in float, float64 in double.
 * The dropout mask is scalar_math.h's tide_attention_keep, the CPU's. The core has checked the
 * offsets on the host before the call (a PACKED row).
 *
 * The backward takes three passes, none storing weights: per (query, head) the softmax's
 * maximum m and sum l and D = dout . out (the forward again); per (query, head) dq = scale
 * sum_j dS_ij k_j; per (key, head) dv = sum_i Z_ij dout_i and dk = scale sum_i dS_ij q_i, where
 * P_ij = exp(s_ij - m_i) / l_i, Z = P * mask / (1 - dropout), dP = (dout_i . v_j) * mask /
 * (1 - dropout) and dS = P (dP - D).
 */
#include "rows.cuh"

enum { ATT_WARP = 32, ATT_MAX_PER_LANE = 4 }; /* heads of up to 128 features */

/* the dropout of one call: the mask's key and threshold (scalar_math.h), a kept weight's factor,
 * and the tokens n; none when !on */
template <typename C> struct att_drop {
    unsigned long long           key;
    unsigned                     threshold;
    C                            inv;
    int64_t                      n;
    int                          on;
    __device__ __forceinline__ C factor(int64_t h, int64_t i, int64_t j) const {
        return !on ? (C)1 : tide_attention_keep(key, threshold, h, i, j, n) ? inv : (C)0;
    }
};

/* token i's sequence, first..last-1: the last b with offsets[b] <= i (empty ones before it are
 * skipped) */
__device__ __forceinline__ void seq_of(const int64_t *offsets, int64_t nseq, int64_t i,
                                       int64_t *first, int64_t *last) {
    int64_t lo = 0, hi = nseq;
    while (hi - lo > 1) {
        int64_t mid = (lo + hi) / 2;
        if (offsets[mid] <= i)
            lo = mid;
        else
            hi = mid;
    }
    *first = offsets[lo], *last = offsets[lo + 1];
}

/* a . b over a head's d features, by one lane */
template <int DT>
__device__ __forceinline__ typename tide_dt<DT>::C
           dot_head(const typename tide_dt<DT>::T *a, const typename tide_dt<DT>::T *b, int64_t d) {
               typename tide_dt<DT>::C s = 0;
               for (int64_t e = 0; e < d; e++)
        s += tide_load<DT>(a[e]) * tide_load<DT>(b[e]);
    return s;
}

/* this lane's features of a head (e = lane + 32 t < d): acc[t] = acc[t] * corr + the chunk's
 * weights w[0..n-1] times rows j0..j0+n-1 of x (row stride ld, the head at column off) */
template <int DT>
__device__ __forceinline__ void
add_chunk(typename tide_dt<DT>::C *acc, typename tide_dt<DT>::C corr,
          const typename tide_dt<DT>::C *w, const typename tide_dt<DT>::T *x, int64_t j0, int64_t n,
          int64_t ld, int64_t off, int64_t d, int lane) {
    for (int t = 0; t < ATT_MAX_PER_LANE; t++) {
        int64_t e = lane + (int64_t)ATT_WARP * t;
        if (e >= d)
            break;
        typename tide_dt<DT>::C a = acc[t] * corr;
        for (int64_t jj = 0; jj < n; jj++)
            a += w[jj] * tide_load<DT>(x[(j0 + jj) * ld + off + e]);
        acc[t] = a;
    }
}

/* the forward, and the backward's first pass (STATS: out not written; stats[3 row..] = m, l,
 * dout . out) */
template <int DT, bool STATS>
__global__ void k_attention(const typename tide_dt<DT>::T *q, const typename tide_dt<DT>::T *k,
                            const typename tide_dt<DT>::T *v, typename tide_dt<DT>::T *out,
                            const int64_t *offsets, int64_t nseq, int64_t heads, int64_t d,
                            typename tide_dt<DT>::C scale, att_drop<typename tide_dt<DT>::C> drop,
                            const typename tide_dt<DT>::T *dout, typename tide_dt<DT>::C *stats) {
    typedef typename tide_dt<DT>::T T;
    typedef typename tide_dt<DT>::C C;
    __shared__ C                    w[ATT_WARP]; /* one chunk's weights, read by every lane */
    int64_t row = blockIdx.x, i = row / heads, h = row % heads, ld = heads * d;
    int     lane = threadIdx.x;
    int64_t first, last;
    seq_of(offsets, nseq, i, &first, &last);
    const T *qi = q + i * ld + h * d;
    C        acc[ATT_MAX_PER_LANE] = {0, 0, 0, 0}, m = -INFINITY, l = 0;
    for (int64_t j0 = first; j0 < last; j0 += ATT_WARP) {
        int64_t j = j0 + lane;
        C       s = -INFINITY;
        if (j < last)
            s = dot_head<DT>(qi, k + j * ld + h * d, d) * scale;
        C mn = sm_max(m, warp_max(s)); /* finite unless a score is NaN or infinite */
        /* while every score so far is -inf there is no weight yet (exp(-inf + inf) is NaN): a
         * later finite score starts the sum, as softmax's maximum over the whole row does */
        C p = j < last && mn != -INFINITY ? exp(s - mn) : (C)0;
        C corr = m == -INFINITY ? (C)0 : exp(m - mn);
        l = l * corr + warp_sum(p);
        __syncthreads(); /* the previous chunk's weights are read */
        w[lane] = j < last ? p * drop.factor(h, i, j) : (C)0; /* l sums the undropped weights */
        __syncthreads();
        int64_t n = last - j0 < (int64_t)ATT_WARP ? last - j0 : (int64_t)ATT_WARP;
        add_chunk<DT>(acc, corr, w, v, j0, n, ld, h * d, d, lane);
        m = mn;
    }
    C dot = 0; /* STATS: dout . out */
    for (int t = 0; t < ATT_MAX_PER_LANE; t++) {
        int64_t e = lane + (int64_t)ATT_WARP * t;
        if (e >= d)
            break;
        if (STATS)
            dot += tide_load<DT>(dout[i * ld + h * d + e]) * (acc[t] / l);
        else
            out[i * ld + h * d + e] = tide_store<DT>(acc[t] / l);
    }
    if (STATS) {
        dot = warp_sum(dot);
        if (lane == 0)
            stats[3 * row] = m, stats[3 * row + 1] = l, stats[3 * row + 2] = dot;
    }
}

/* the backward's second pass: per (query i, head h), dq_i = scale sum_j dS_ij k_j */
template <int DT>
__global__ void
k_attention_dq(const typename tide_dt<DT>::T *q, const typename tide_dt<DT>::T *k,
               const typename tide_dt<DT>::T *v, const typename tide_dt<DT>::T *dout,
               typename tide_dt<DT>::T *dq, const int64_t *offsets, int64_t nseq, int64_t heads,
               int64_t d, typename tide_dt<DT>::C scale, att_drop<typename tide_dt<DT>::C> drop,
               const typename tide_dt<DT>::C *stats) {
    typedef typename tide_dt<DT>::T T;
    typedef typename tide_dt<DT>::C C;
    __shared__ C                    w[ATT_WARP];
    int64_t row = blockIdx.x, i = row / heads, h = row % heads, ld = heads * d;
    int     lane = threadIdx.x;
    int64_t first, last;
    seq_of(offsets, nseq, i, &first, &last);
    const T *qi = q + i * ld + h * d, *gi = dout + i * ld + h * d;
    C        m = stats[3 * row], l = stats[3 * row + 1], D = stats[3 * row + 2];
    C        acc[ATT_MAX_PER_LANE] = {0, 0, 0, 0};
    for (int64_t j0 = first; j0 < last; j0 += ATT_WARP) {
        int64_t j = j0 + lane;
        C       ds = 0;
        if (j < last) {
            C p = exp(dot_head<DT>(qi, k + j * ld + h * d, d) * scale - m) / l;
            C dp = dot_head<DT>(gi, v + j * ld + h * d, d) * drop.factor(h, i, j);
            ds = p * (dp - D) * scale;
        }
        __syncthreads();
        w[lane] = ds;
        __syncthreads();
        int64_t n = last - j0 < (int64_t)ATT_WARP ? last - j0 : (int64_t)ATT_WARP;
        add_chunk<DT>(acc, (C)1, w, k, j0, n, ld, h * d, d, lane);
    }
    for (int t = 0; t < ATT_MAX_PER_LANE; t++) {
        int64_t e = lane + (int64_t)ATT_WARP * t;
        if (e < d)
            dq[i * ld + h * d + e] = tide_store<DT>(acc[t]);
    }
}

/* the third pass: per (key j, head h), dv_j = sum_i Z_ij dout_i and dk_j = scale sum_i dS_ij q_i
 * (dk, dv NULL when not asked for) */
template <int DT>
__global__ void
k_attention_dkv(const typename tide_dt<DT>::T *q, const typename tide_dt<DT>::T *k,
                const typename tide_dt<DT>::T *v, const typename tide_dt<DT>::T *dout,
                typename tide_dt<DT>::T *dk, typename tide_dt<DT>::T *dv, const int64_t *offsets,
                int64_t nseq, int64_t heads, int64_t d, typename tide_dt<DT>::C scale,
                att_drop<typename tide_dt<DT>::C> drop, const typename tide_dt<DT>::C *stats) {
    typedef typename tide_dt<DT>::T T;
    typedef typename tide_dt<DT>::C C;
    __shared__ C                    wz[ATT_WARP], ws[ATT_WARP];
    int64_t row = blockIdx.x, j = row / heads, h = row % heads, ld = heads * d;
    int     lane = threadIdx.x;
    int64_t first, last;
    seq_of(offsets, nseq, j, &first, &last);
    const T *kj = k + j * ld + h * d, *vj = v + j * ld + h * d;
    C        ak[ATT_MAX_PER_LANE] = {0, 0, 0, 0}, av[ATT_MAX_PER_LANE] = {0, 0, 0, 0};
    for (int64_t i0 = first; i0 < last; i0 += ATT_WARP) {
        int64_t i = i0 + lane;
        C       z = 0, ds = 0;
        if (i < last) {
            const C *st = stats + 3 * (i * heads + h);
            C        p = exp(dot_head<DT>(q + i * ld + h * d, kj, d) * scale - st[0]) / st[1];
            C        f = drop.factor(h, i, j);
            z = p * f;
            ds = p * (dot_head<DT>(dout + i * ld + h * d, vj, d) * f - st[2]) * scale;
        }
        __syncthreads();
        wz[lane] = z, ws[lane] = ds;
        __syncthreads();
        int64_t n = last - i0 < (int64_t)ATT_WARP ? last - i0 : (int64_t)ATT_WARP;
        add_chunk<DT>(av, (C)1, wz, dout, i0, n, ld, h * d, d, lane);
        add_chunk<DT>(ak, (C)1, ws, q, i0, n, ld, h * d, d, lane);
    }
    for (int t = 0; t < ATT_MAX_PER_LANE; t++) {
        int64_t e = lane + (int64_t)ATT_WARP * t;
        if (e >= d)
            break;
        if (dk)
            dk[j * ld + h * d + e] = tide_store<DT>(ak[t]);
        if (dv)
            dv[j * ld + h * d + e] = tide_store<DT>(av[t]);
    }
}

/* a launch's error, as TIDE_CUDA_LAUNCHED gives it, without returning (a temporary is freed) */
static tide_status launched(const char *what, int line) {
    cudaError_t e = cudaGetLastError();
    return e == cudaSuccess ? TIDE_OK : tide_cuda_fail(e, what, __FILE__, line);
}

template <typename C> static att_drop<C> drop_of(const tide_kernel_call *c, int64_t heads) {
    double      p = c->p[3].f;
    att_drop<C> dr;
    dr.key = tide_rng_fmix((unsigned long long)c->p[4].i + 0x9E3779B97F4A7C15ULL);
    dr.threshold = tide_attention_threshold(p);
    dr.inv = (C)tide_attention_inverse(dr.threshold);
    dr.n = c->rows / heads;
    dr.on = p > 0;
    return dr;
}

struct run_attention {
    template <int DT>
    static tide_status run(cudaStream_t stream, const tide_kernel_call *c, const int64_t *offsets,
                           int64_t nseq, int64_t heads) {
        typedef typename tide_dt<DT>::T T;
        typedef typename tide_dt<DT>::C C;
        void (*kernel)(const T *, const T *, const T *, T *, const int64_t *, int64_t, int64_t,
                       int64_t, C, att_drop<C>, const T *, C *) = k_attention<DT, false>;
        TIDE_LAUNCH(kernel, (unsigned)c->rows, ATT_WARP, 0, stream, (const T *)c->in[0]->data,
                    (const T *)c->in[1]->data, (const T *)c->in[2]->data, (T *)c->out[0]->data,
                    offsets, nseq, heads, c->d, (C)c->p[2].f, drop_of<C>(c, heads), (const T *)NULL,
                    (C *)NULL);
        TIDE_CUDA_LAUNCHED(k_attention);
        return TIDE_OK;
    }
};

struct run_attention_backward {
    template <int DT>
    static tide_status run(tide_device *dev, cudaStream_t stream, const tide_kernel_call *c,
                           const int64_t *offsets, int64_t nseq, int64_t heads) {
        typedef typename tide_dt<DT>::T T;
        typedef typename tide_dt<DT>::C C;
        const T    *q = (const T *)c->in[0]->data, *k = (const T *)c->in[1]->data;
        const T    *v = (const T *)c->in[2]->data, *g = (const T *)c->in[4]->data;
        T          *dq = c->out[0] ? (T *)c->out[0]->data : NULL;
        T          *dk = c->out[1] ? (T *)c->out[1]->data : NULL;
        T          *dv = c->out[2] ? (T *)c->out[2]->data : NULL;
        C           scale = (C)c->p[2].f;
        att_drop<C> drop = drop_of<C>(c, heads);
        size_t      bytes = (size_t)c->rows * 3 * sizeof(C);
        C          *stats = NULL;
        TIDE_TRY(tide_cuda_alloc(dev, bytes, (void **)&stats));
        void (*first)(const T *, const T *, const T *, T *, const int64_t *, int64_t, int64_t,
                      int64_t, C, att_drop<C>, const T *, C *) = k_attention<DT, true>;
        TIDE_LAUNCH(first, (unsigned)c->rows, ATT_WARP, 0, stream, q, k, v, (T *)NULL, offsets,
                    nseq, heads, c->d, scale, drop, g, stats);
        tide_status st = launched("k_attention<<<>>>", __LINE__);
        if (st == TIDE_OK && dq) {
            TIDE_LAUNCH(k_attention_dq<DT>, (unsigned)c->rows, ATT_WARP, 0, stream, q, k, v, g, dq,
                        offsets, nseq, heads, c->d, scale, drop, (const C *)stats);
            st = launched("k_attention_dq<<<>>>", __LINE__);
        }
        if (st == TIDE_OK && (dk || dv)) {
            TIDE_LAUNCH(k_attention_dkv<DT>, (unsigned)c->rows, ATT_WARP, 0, stream, q, k, v, g, dk,
                        dv, offsets, nseq, heads, c->d, scale, drop, (const C *)stats);
            st = launched("k_attention_dkv<<<>>>", __LINE__);
        }
        tide_cuda_free(dev, stats, bytes); /* ordered on the stream after the kernels */
        return st;
    }
};

/* both rows: heads of up to 128 features; TIDE_ENOTSUP above (the composite then runs) */
static tide_status attention_limits(const tide_kernel_call *c, const char *op) {
    if (c->d > (int64_t)ATT_WARP * ATT_MAX_PER_LANE || c->rows > INT32_MAX)
        return tide_cuda_seterr(TIDE_ENOTSUP,
                                "%s: the cuda kernel takes heads of at most %d features "
                                "and 2^31 rows",
                                op, ATT_WARP * ATT_MAX_PER_LANE);
    return TIDE_OK;
}

/* either row: the limits, the device's stream, one kernel launch per pass */
static tide_status attention_entry(tide_device *dev, const tide_kernel_call *c, bool backward) {
    const char *op = backward ? "attention_backward" : "attention";
    int64_t     heads = c->p[1].i;
    TIDE_TRY(attention_limits(c, op));
    cudaStream_t stream = NULL;
    TIDE_TRY(tide_cuda_enter(dev, &stream));
    const tide_kview *off = c->in[3];
    int64_t           nseq = off->shape[0] - 1;
    const int64_t    *offsets = (const int64_t *)off->data;
    if (backward) {
        TIDE_CUDA_DISPATCH_FLOAT(c->dtype, run_attention_backward, dev, stream, c, offsets, nseq,
                                 heads);
    } else {
        TIDE_CUDA_DISPATCH_FLOAT(c->dtype, run_attention, stream, c, offsets, nseq, heads);
    }
    return tide_cuda_notsup(op, c->dtype);
}

extern "C" tide_status tide_cuda_attention(tide_device *dev, const tide_kernel_call *c) {
    return attention_entry(dev, c, false);
}

extern "C" tide_status tide_cuda_attention_backward(tide_device *dev, const tide_kernel_call *c) {
    return attention_entry(dev, c, true);
}
