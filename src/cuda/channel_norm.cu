/*
 * channel_norm.cu — batch norm's passes on CUDA, the kernel rows channel_stats, channel_affine
 * and channel_grad_sums of include/tide_kernels.def over x seen as [rows, C, inner], by the
 * CPU's rules (src/cpu/channel_norm.c): float64 sums per channel, two passes for the variance.
 *
 * The sums: a block per channel, its threads striding over the channel's rows * inner elements,
 * a tree in shared memory, no atomics (the same bits every run). The affine pass: a thread per
 * element.
 */
#include "common.cuh"

#define CHANNEL_THREADS 256

/* the block's sum of v (every thread's), returned to thread 0; part: CHANNEL_THREADS doubles */
__device__ static double block_sum(double v, double *part) {
    int t = threadIdx.x;
    part[t] = v;
    __syncthreads();
    for (int o = CHANNEL_THREADS / 2; o > 0; o /= 2) {
        if (t < o)
            part[t] += part[t + o];
        __syncthreads();
    }
    double s = part[0];
    __syncthreads(); /* part is written again by the next sum */
    return s;
}

/* element e (0 .. rows * inner - 1) of channel ch */
__device__ static int64_t channel_at(int64_t e, int64_t ch, int64_t channels, int64_t inner) {
    return ((e / inner) * channels + ch) * inner + e % inner;
}

template <typename T>
__global__ void k_channel_stats(const T *x, T *mean, T *var, int64_t rows, int64_t channels,
                                int64_t inner) {
    __shared__ double part[CHANNEL_THREADS];
    int64_t           ch = blockIdx.x, m = rows * inner;
    double            s = 0;
    for (int64_t e = threadIdx.x; e < m; e += CHANNEL_THREADS)
        s += (double)x[channel_at(e, ch, channels, inner)];
    double mu = block_sum(s, part) / (double)m, v = 0;
    for (int64_t e = threadIdx.x; e < m; e += CHANNEL_THREADS) {
        double d = (double)x[channel_at(e, ch, channels, inner)] - mu;
        v += d * d;
    }
    v = block_sum(v, part);
    if (threadIdx.x == 0) {
        mean[ch] = (T)mu;
        var[ch] = (T)(v / (double)m);
    }
}

template <typename T>
__global__ void k_channel_grad_sums(const T *g, const T *x, const T *mean, T *sum_g, T *sum_gx,
                                    int64_t rows, int64_t channels, int64_t inner) {
    __shared__ double part[CHANNEL_THREADS];
    int64_t           ch = blockIdx.x, m = rows * inner;
    double            sg = 0, sgx = 0, mu = (double)mean[ch];
    for (int64_t e = threadIdx.x; e < m; e += CHANNEL_THREADS) {
        int64_t at = channel_at(e, ch, channels, inner);
        double  gk = (double)g[at];
        sg += gk;
        sgx += gk * ((double)x[at] - mu);
    }
    sg = block_sum(sg, part);
    sgx = block_sum(sgx, part);
    if (threadIdx.x == 0) {
        sum_g[ch] = (T)sg;
        sum_gx[ch] = (T)sgx;
    }
}

template <typename T>
__global__ void k_channel_affine(T *y, const T *x, const T *s, const T *t, const T *ctr,
                                 const T *x2, const T *s2, int64_t n, int64_t channels,
                                 int64_t inner) {
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    int64_t ch = (i / inner) % channels;
    T       v = (x[i] - (ctr ? ctr[ch] : (T)0)) * s[ch] + t[ch];
    if (x2)
        v += x2[i] * s2[ch];
    y[i] = v;
}

/* C blocks of threads, one per channel (a grid's x dimension holds 2^31 - 1) */
static tide_status channel_grid(const char *op, const tide_kernel_call *c, int64_t *channels,
                                int64_t *inner) {
    *inner = c->p[1].i;
    *channels = c->d / *inner;
    if (*channels > INT32_MAX)
        return tide_cuda_seterr(TIDE_ENOTSUP, "%s: more than 2^31 channels on cuda", op);
    return TIDE_OK;
}

template <typename T> static tide_status stats_run(tide_device *dev, const tide_kernel_call *c) {
    int64_t channels = 0, inner = 1;
    TIDE_TRY(channel_grid("channel_stats", c, &channels, &inner));
    cudaStream_t stream = NULL;
    TIDE_TRY(tide_cuda_enter(dev, &stream));
    void (*k)(const T *, T *, T *, int64_t, int64_t, int64_t) = k_channel_stats<T>;
    TIDE_LAUNCH(k, (unsigned)channels, CHANNEL_THREADS, 0, stream, (const T *)c->in[0]->data,
                (T *)c->out[0]->data, (T *)c->out[1]->data, c->rows, channels, inner);
    TIDE_CUDA_LAUNCHED(k_channel_stats);
    return TIDE_OK;
}

template <typename T> static tide_status sums_run(tide_device *dev, const tide_kernel_call *c) {
    int64_t channels = 0, inner = 1;
    TIDE_TRY(channel_grid("channel_grad_sums", c, &channels, &inner));
    cudaStream_t stream = NULL;
    TIDE_TRY(tide_cuda_enter(dev, &stream));
    void (*k)(const T *, const T *, const T *, T *, T *, int64_t, int64_t, int64_t) =
        k_channel_grad_sums<T>;
    TIDE_LAUNCH(k, (unsigned)channels, CHANNEL_THREADS, 0, stream, (const T *)c->in[0]->data,
                (const T *)c->in[1]->data, (const T *)c->in[2]->data, (T *)c->out[0]->data,
                (T *)c->out[1]->data, c->rows, channels, inner);
    TIDE_CUDA_LAUNCHED(k_channel_grad_sums);
    return TIDE_OK;
}

template <typename T> static tide_status affine_run(tide_device *dev, const tide_kernel_call *c) {
    if (!c->in[4] != !c->in[5])
        return tide_cuda_seterr(TIDE_EINVAL, "channel_affine: x2 and scale2 go together");
    int64_t inner = c->p[1].i, channels = c->d / inner, n = c->rows * c->d;
    if (n / TIDE_CUDA_THREADS >= INT32_MAX)
        return tide_cuda_seterr(TIDE_ENOTSUP, "channel_affine: more than 2^31 blocks on cuda");
    cudaStream_t stream = NULL;
    TIDE_TRY(tide_cuda_enter(dev, &stream));
    const T *opt[3];
    for (int i = 0; i < 3; i++)
        opt[i] = c->in[3 + i] ? (const T *)c->in[3 + i]->data : (const T *)NULL;
    void (*k)(T *, const T *, const T *, const T *, const T *, const T *, const T *, int64_t,
              int64_t, int64_t) = k_channel_affine<T>;
    TIDE_LAUNCH(k, tide_cuda_blocks(n), TIDE_CUDA_THREADS, 0, stream, (T *)c->out[0]->data,
                (const T *)c->in[0]->data, (const T *)c->in[1]->data, (const T *)c->in[2]->data,
                opt[0], opt[1], opt[2], n, channels, inner);
    TIDE_CUDA_LAUNCHED(k_channel_affine);
    return TIDE_OK;
}

/* call: in x; out mean, var; p d, inner */
extern "C" tide_status tide_cuda_channel_stats(tide_device *dev, const tide_kernel_call *c) {
    if (c->dtype == TIDE_DTYPE_F32)
        return stats_run<float>(dev, c);
    if (c->dtype == TIDE_DTYPE_F64)
        return stats_run<double>(dev, c);
    return tide_cuda_notsup("channel_stats", c->dtype);
}

/* call: in x, scale, shift, center, x2, scale2 (the last three optional); out y; p d, inner */
extern "C" tide_status tide_cuda_channel_affine(tide_device *dev, const tide_kernel_call *c) {
    if (c->dtype == TIDE_DTYPE_F32)
        return affine_run<float>(dev, c);
    if (c->dtype == TIDE_DTYPE_F64)
        return affine_run<double>(dev, c);
    return tide_cuda_notsup("channel_affine", c->dtype);
}

/* call: in g, x, mean; out sum_g, sum_gx; p d, inner */
extern "C" tide_status tide_cuda_channel_grad_sums(tide_device *dev, const tide_kernel_call *c) {
    if (c->dtype == TIDE_DTYPE_F32)
        return sums_run<float>(dev, c);
    if (c->dtype == TIDE_DTYPE_F64)
        return sums_run<double>(dev, c);
    return tide_cuda_notsup("channel_grad_sums", c->dtype);
}
