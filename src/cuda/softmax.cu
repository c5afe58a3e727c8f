/*
 * softmax.cu — softmax and log_softmax over one dim: three passes over each row (max, sum of
 * exp(x - max), write), in float for float32/float16/bfloat16 and double for float64, with the
 * exp/log of scalar_math.h. A warp per row for rows up to 1024 long, a block per row beyond.
 * Their gradient from the result y: one sum per row, then dx in one more pass.
 */
#include "map.cuh"
#include "rows.cuh"

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

/* ---- the gradient ------------------------------------------------------------------------- */

struct smbparams {
    tide_iter<3> it; /* over the rows: operand 0 dx, 1 y, 2 g */
    uint32_t     rows;
    int64_t      R, ostride, ystride, gstride;
    int          log;
};

/* dx = y * (g - sum(g * y)), or g - exp(y) * sum(g) for log_softmax's y */
template <int DT, int ROW_THREADS>
__global__ void k_softmax_backward(smbparams p, typename tide_dt<DT>::T *dx,
                                   const typename tide_dt<DT>::T *y,
                                   const typename tide_dt<DT>::T *g) {
    typedef typename tide_dt<DT>::C C;
    __shared__ C                    sh[32];
    int                             lane = ROW_THREADS == 32 ? threadIdx.x % 32 : threadIdx.x;
    uint32_t                        per_block = ROW_THREADS == 32 ? blockDim.x / 32 : 1;
    uint32_t row = blockIdx.x * per_block + (ROW_THREADS == 32 ? threadIdx.x / 32 : 0);
    if (row >= p.rows)
        return; /* whole warps leave together: the shuffles below stay full */
    int64_t off[3];
    tide_iter_offsets<3, uint32_t>(p.it, row, off);
    const typename tide_dt<DT>::T *yr = y + off[1], *gr = g + off[2];
    typename tide_dt<DT>::T       *o = dx + off[0];
    int                            nthreads = ROW_THREADS == 32 ? 32 : blockDim.x;

    C s = 0;
    for (int64_t r = lane; r < p.R; r += nthreads) {
        C gv = (C)tide_load<DT>(gr[r * p.gstride]);
        s += p.log ? gv : gv * (C)tide_load<DT>(yr[r * p.ystride]);
    }
    s = row_sum<C, ROW_THREADS>(s, sh);
    for (int64_t r = lane; r < p.R; r += nthreads) {
        C gv = (C)tide_load<DT>(gr[r * p.gstride]), yv = (C)tide_load<DT>(yr[r * p.ystride]);
        o[r * p.ostride] = tide_store<DT>(p.log ? gv - sm_exp(yv) * s : yv * (gv - s));
    }
}

struct run_softmax_backward {
    template <int DT>
    static tide_status run(cudaStream_t stream, smbparams p, const tide_kview *dx,
                           const tide_kview *y, const tide_kview *g) {
        typedef typename tide_dt<DT>::T T;
        T                              *po = (T *)dx->data;
        const T                        *py = (const T *)y->data, *pg = (const T *)g->data;
        if (p.R <= 1024) {
            unsigned per_block = TIDE_CUDA_THREADS / 32;
            unsigned blocks = (unsigned)((p.rows + per_block - 1) / per_block);
            void (*warp_per_row)(smbparams, T *, const T *, const T *) = k_softmax_backward<DT, 32>;
            TIDE_LAUNCH(warp_per_row, blocks, TIDE_CUDA_THREADS, 0, stream, p, po, py, pg);
            TIDE_CUDA_LAUNCHED(k_softmax_backward);
        } else {
            void (*block_per_row)(smbparams, T *, const T *, const T *) = k_softmax_backward<DT, 0>;
            TIDE_LAUNCH(block_per_row, p.rows, 512, 0, stream, p, po, py, pg);
            TIDE_CUDA_LAUNCHED(k_softmax_backward);
        }
        return TIDE_OK;
    }
};

extern "C" tide_status tide_cuda_softmax_backward(tide_device *dev, const tide_kview *dx,
                                                  const tide_kview *y, const tide_kview *g, int dim,
                                                  int log) {
    const char *name = log ? "log_softmax_backward" : "softmax_backward";
    if (dim < 0 || dim >= y->ndim)
        return tide_cuda_seterr(TIDE_EINVAL, "%s: dim %d out of range for %d dims", name, dim,
                                y->ndim);
    if (dx->dtype != y->dtype || g->dtype != y->dtype)
        return tide_cuda_seterr(TIDE_EDTYPE, "%s: cuda kernel needs dx, y and g of one dtype",
                                name);
    cudaStream_t stream = NULL;
    TIDE_TRY_ST(tide_cuda_enter(dev, &stream));
    tide_kview o1 = *dx, y1 = *y, g1 = *g;
    o1.shape[dim] = y1.shape[dim] = g1.shape[dim] = 1;
    const tide_kview *views[3] = {&o1, &y1, &g1};
    smbparams         p;
    int64_t           rows = tide_cuda_numel(&y1);
    if (rows == 0 || y->shape[dim] == 0)
        return TIDE_OK;
    if (rows > INT32_MAX)
        return tide_cuda_seterr(TIDE_ENOTSUP, "%s: more than 2^31 rows on cuda", name);
    p.it = tide_iter_make<3>(views);
    p.rows = (uint32_t)rows;
    p.R = y->shape[dim];
    p.ostride = dx->strides[dim];
    p.ystride = y->strides[dim];
    p.gstride = g->strides[dim];
    p.log = log;
    TIDE_CUDA_DISPATCH_FLOAT(y->dtype, run_softmax_backward, stream, p, dx, y, g);
    return tide_cuda_notsup(name, y->dtype);
}
