/*
 * softmax.cu — softmax and log_softmax over one dim: three passes over each row (max, sum of
 * exp(x - max), write), in float for float32/float16/bfloat16 and double for float64, with the
 * exp/log of scalar_math.h. A warp per row for rows up to 1024 long, a block per row beyond.
 */
#include "map.cuh"

__device__ __forceinline__ float sm_exp(float x) {
    return tide_exp_f(x);
}
__device__ __forceinline__ double sm_exp(double x) {
    return tide_exp_d(x);
}
__device__ __forceinline__ float sm_log(float x) {
    return tide_log_f(x);
}
__device__ __forceinline__ double sm_log(double x) {
    return tide_log_d(x);
}

/* NaN wins, as in max() */
template <typename C> __device__ __forceinline__ C sm_max(C a, C b) {
    return (a != a || a > b) ? a : b;
}

template <typename C> __device__ __forceinline__ C warp_max(C v) {
    for (int o = 16; o > 0; o /= 2)
        v = sm_max(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

template <typename C> __device__ __forceinline__ C warp_sum(C v) {
    for (int o = 16; o > 0; o /= 2)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

/* reduces v over the block (blockDim.x a multiple of 32, at most 1024) */
template <typename C, bool MAX> __device__ C block_reduce(C v, C *sh) {
    v = MAX ? warp_max(v) : warp_sum(v);
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32, nw = blockDim.x / 32;
    __syncthreads(); /* sh may still be read from a previous call */
    if (lane == 0)
        sh[warp] = v;
    __syncthreads();
    v = sh[0];
    for (int w = 1; w < nw; w++)
        v = MAX ? sm_max(v, sh[w]) : v + sh[w];
    return v;
}

struct smparams {
    tide_iter<2> it; /* over the rows: operand 0 out, 1 a */
    uint32_t     rows;
    int64_t      R, ostride, astride;
    int          log;
};

/* threads of a row group: a warp (ROW_THREADS = 32, several rows per block) or the block */
template <int DT, int ROW_THREADS>
__global__ void k_softmax(smparams p, typename tide_dt<DT>::T *out,
                          const typename tide_dt<DT>::T *a) {
    typedef typename tide_dt<DT>::C C;
    __shared__ C                    sh[32];
    int                             lane = ROW_THREADS == 32 ? threadIdx.x % 32 : threadIdx.x;
    uint32_t                        per_block = ROW_THREADS == 32 ? blockDim.x / 32 : 1;
    uint32_t row = blockIdx.x * per_block + (ROW_THREADS == 32 ? threadIdx.x / 32 : 0);
    if (row >= p.rows)
        return; /* whole warps leave together: the shuffles below stay full */
    int64_t off[2];
    tide_iter_offsets<2, uint32_t>(p.it, row, off);
    const typename tide_dt<DT>::T *x = a + off[1];
    typename tide_dt<DT>::T       *y = out + off[0];
    int                            nthreads = ROW_THREADS == 32 ? 32 : blockDim.x;

    C m = -INFINITY;
    for (int64_t r = lane; r < p.R; r += nthreads)
        m = sm_max(m, (C)tide_load<DT>(x[r * p.astride]));
    m = ROW_THREADS == 32 ? warp_max(m) : block_reduce<C, true>(m, sh);
    C s = 0;
    for (int64_t r = lane; r < p.R; r += nthreads)
        s += sm_exp((C)tide_load<DT>(x[r * p.astride]) - m);
    s = ROW_THREADS == 32 ? warp_sum(s) : block_reduce<C, false>(s, sh);
    C ls = sm_log(s), inv = (C)1 / s;
    for (int64_t r = lane; r < p.R; r += nthreads) {
        C v = (C)tide_load<DT>(x[r * p.astride]) - m;
        y[r * p.ostride] = tide_store<DT>(p.log ? v - ls : sm_exp(v) * inv);
    }
}

struct run_softmax {
    template <int DT>
    static tide_status run(cudaStream_t stream, smparams p, const tide_kview *out,
                           const tide_kview *a) {
        typedef typename tide_dt<DT>::T T;
        T                              *po = (T *)out->data;
        const T                        *pa = (const T *)a->data;
        if (p.R <= 1024) {
            unsigned per_block = TIDE_CUDA_THREADS / 32;
            unsigned blocks = (unsigned)((p.rows + per_block - 1) / per_block);
            void (*warp_per_row)(smparams, T *, const T *) = k_softmax<DT, 32>;
            TIDE_LAUNCH(warp_per_row, blocks, TIDE_CUDA_THREADS, 0, stream, p, po, pa);
            TIDE_CUDA_LAUNCHED(k_softmax);
        } else {
            void (*block_per_row)(smparams, T *, const T *) = k_softmax<DT, 0>;
            TIDE_LAUNCH(block_per_row, p.rows, 512, 0, stream, p, po, pa);
            TIDE_CUDA_LAUNCHED(k_softmax);
        }
        return TIDE_OK;
    }
};

extern "C" tide_status tide_cuda_softmax(tide_device *dev, const tide_kview *out,
                                         const tide_kview *a, int dim, int log) {
    const char *name = log ? "log_softmax" : "softmax";
    if (dim < 0 || dim >= a->ndim)
        return tide_cuda_seterr(TIDE_EINVAL, "%s: dim %d out of range for %d dims", name, dim,
                                a->ndim);
    cudaStream_t stream = NULL;
    TIDE_TRY_ST(tide_cuda_enter(dev, &stream));
    tide_kview a1 = *a, o1 = *out;
    a1.shape[dim] = o1.shape[dim] = 1;
    const tide_kview *views[2] = {&o1, &a1};
    smparams          p;
    int64_t           rows = tide_cuda_numel(&a1);
    if (rows == 0 || a->shape[dim] == 0)
        return TIDE_OK;
    if (rows > INT32_MAX)
        return tide_cuda_seterr(TIDE_ENOTSUP, "%s: more than 2^31 rows on cuda", name);
    p.it = tide_iter_make<2>(views);
    p.rows = (uint32_t)rows;
    p.R = a->shape[dim];
    p.ostride = out->strides[dim];
    p.astride = a->strides[dim];
    p.log = log;
    TIDE_CUDA_DISPATCH_FLOAT(a->dtype, run_softmax, stream, p, out, a);
    return tide_cuda_notsup(name, a->dtype);
}
