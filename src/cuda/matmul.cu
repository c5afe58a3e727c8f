/*
 * matmul.cu — batched gemm through cuBLAS: out[b] = a[b] @ bm[b], row-major.
 *
 * cuBLAS is column-major, so row-major out = a @ bm is computed as out^T = bm^T @ a^T: a
 * row-major matrix is a column-major one with its dims swapped. A transposed view (unit stride
 * along rows) maps to CUBLAS_OP_T with no copy; a layout cuBLAS cannot express (neither dim of
 * unit stride) is first copied to a contiguous temporary. float16/bfloat16 go through
 * cublasGemmStridedBatchedEx with float accumulation; integers through a plain kernel.
 */
#include "map.cuh"

/* How cuBLAS sees the row-major R x C matrix with strides (sr, sc): as the column-major C x R
 * matrix (op N) with ld = sr, or, for a transposed layout, as op T of the column-major R x C
 * matrix with ld = sc. Returns false when neither fits. */
static bool blas_layout(int64_t R, int64_t C, int64_t sr, int64_t sc, cublasOperation_t *op,
                        int64_t *ld) {
    if ((sc == 1 || C == 1) && (R == 1 || sr >= (C > 1 ? C : 1))) {
        *op = CUBLAS_OP_N;
        *ld = R == 1 ? (C > 1 ? C : 1) : sr;
        return *ld <= INT32_MAX;
    }
    if ((sr == 1 || R == 1) && (C == 1 || sc >= (R > 1 ? R : 1))) {
        *op = CUBLAS_OP_T;
        *ld = C == 1 ? (R > 1 ? R : 1) : sc;
        return *ld <= INT32_MAX;
    }
    return false;
}

/* integer matmul: one thread per output element, exact int64 accumulation */
template <int DT>
__global__ void k_matmul_int(typename tide_dt<DT>::T *out, const typename tide_dt<DT>::T *a,
                             const typename tide_dt<DT>::T *b, int64_t B, int64_t M, int64_t N,
                             int64_t K, tide_kview av, tide_kview bv) {
    int64_t total = B * M * N;
    for (int64_t i = TIDE_GTID; i < total; i += TIDE_GSTRIDE) {
        int64_t  n = i % N, m = (i / N) % M, bb = i / (M * N);
        uint64_t acc = 0; /* wraps like the CPU's integer gemm (signed overflow is undefined) */
        for (int64_t k = 0; k < K; k++)
            acc += (uint64_t)a[bb * av.strides[0] + m * av.strides[1] + k * av.strides[2]] *
                   (uint64_t)b[bb * bv.strides[0] + k * bv.strides[1] + n * bv.strides[2]];
        out[i] = tide_store<DT>((int64_t)acc);
    }
}

struct run_matmul_int {
    template <int DT>
    static tide_status run(cudaStream_t stream, const tide_kview *out, const tide_kview *a,
                           const tide_kview *bm) {
        typedef typename tide_dt<DT>::T T;
        if constexpr (tide_dt_is_float<DT>()) {
            return tide_cuda_notsup("matmul", a->dtype);
        } else {
            int64_t B = out->shape[0], M = out->shape[1], N = out->shape[2], K = a->shape[2];
            TIDE_LAUNCH(k_matmul_int<DT>, tide_map_grid(B * M * N), TIDE_CUDA_THREADS, 0, stream,
                        (T *)out->data, (const T *)a->data, (const T *)bm->data, B, M, N, K, *a,
                        *bm);
            TIDE_CUDA_LAUNCHED(k_matmul_int);
            return TIDE_OK;
        }
    }
};

/* a contiguous copy of v in memory from the allocator (*tmp, freed by the caller) */
static tide_status contiguous_copy(tide_device *dev, const tide_kview *v, tide_kview *c, void **tmp,
                                   size_t *bytes) {
    *c = *v;
    int64_t s = 1;
    for (int d = v->ndim - 1; d >= 0; d--) {
        c->strides[d] = s;
        s *= v->shape[d];
    }
    *bytes = (size_t)s * tide_cuda_dtype_size(v->dtype);
    TIDE_TRY(tide_cuda_alloc(dev, *bytes, tmp));
    c->data = *tmp;
    tide_status st = tide_cuda_copy(dev, c, v);
    if (st != TIDE_OK) {
        tide_cuda_free(dev, *tmp, *bytes);
        *tmp = NULL;
    }
    return st;
}

static tide_status gemm(tide_device *dev, const tide_kview *out, const tide_kview *a,
                        const tide_kview *bm, bool *unfit) {
    int64_t           B = out->shape[0], M = out->shape[1], N = out->shape[2], K = a->shape[2];
    cublasOperation_t opa, opb;
    int64_t           lda, ldb;
    *unfit = !blas_layout(M, K, a->strides[1], a->strides[2], &opa, &lda) ||
             !blas_layout(K, N, bm->strides[1], bm->strides[2], &opb, &ldb);
    if (*unfit)
        return TIDE_OK;
    if (M > INT32_MAX || N > INT32_MAX || K > INT32_MAX || B > INT32_MAX)
        return tide_cuda_seterr(TIDE_ENOTSUP, "matmul: dims beyond 2^31 on cuda");
    cublasHandle_t h;
    TIDE_TRY(tide_cuda_blas(dev, &h));
    /* out^T (N x M, ld N) = bm^T (N x K) @ a^T (K x M) */
    long long sa = B > 1 ? a->strides[0] : 0, sb = B > 1 ? bm->strides[0] : 0, so = M * N;
    int       m = (int)N, n = (int)M, k = (int)K;
    switch (a->dtype) {
    case TIDE_DTYPE_F32: {
        const float one = 1, zero = 0;
        if (B == 1)
            TIDE_CUBLAS_TRY(tide_cublas.sgemm(h, opb, opa, m, n, k, &one, (const float *)bm->data,
                                              (int)ldb, (const float *)a->data, (int)lda, &zero,
                                              (float *)out->data, (int)N));
        else
            TIDE_CUBLAS_TRY(tide_cublas.sgemm_batched(h, opb, opa, m, n, k, &one,
                                                      (const float *)bm->data, (int)ldb, sb,
                                                      (const float *)a->data, (int)lda, sa, &zero,
                                                      (float *)out->data, (int)N, so, (int)B));
        return TIDE_OK;
    }
    case TIDE_DTYPE_F64: {
        const double one = 1, zero = 0;
        if (B == 1)
            TIDE_CUBLAS_TRY(tide_cublas.dgemm(h, opb, opa, m, n, k, &one, (const double *)bm->data,
                                              (int)ldb, (const double *)a->data, (int)lda, &zero,
                                              (double *)out->data, (int)N));
        else
            TIDE_CUBLAS_TRY(tide_cublas.dgemm_batched(h, opb, opa, m, n, k, &one,
                                                      (const double *)bm->data, (int)ldb, sb,
                                                      (const double *)a->data, (int)lda, sa, &zero,
                                                      (double *)out->data, (int)N, so, (int)B));
        return TIDE_OK;
    }
    case TIDE_DTYPE_F16:
    case TIDE_DTYPE_BF16: {
        const float  one = 1, zero = 0;
        cudaDataType t = a->dtype == TIDE_DTYPE_F16 ? CUDA_R_16F : CUDA_R_16BF;
        if (B == 1)
            TIDE_CUBLAS_TRY(tide_cublas.gemm_ex(h, opb, opa, m, n, k, &one, bm->data, t, (int)ldb,
                                                a->data, t, (int)lda, &zero, out->data, t, (int)N,
                                                CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
        else
            TIDE_CUBLAS_TRY(tide_cublas.gemm_batched_ex(
                h, opb, opa, m, n, k, &one, bm->data, t, (int)ldb, sb, a->data, t, (int)lda, sa,
                &zero, out->data, t, (int)N, so, (int)B, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
        return TIDE_OK;
    }
    default:
        return tide_cuda_notsup("matmul", a->dtype);
    }
}

extern "C" tide_status tide_cuda_matmul(tide_device *dev, const tide_kview *out,
                                        const tide_kview *a, const tide_kview *bm) {
    if (out->ndim != 3 || a->ndim != 3 || bm->ndim != 3)
        return tide_cuda_seterr(TIDE_EINVAL, "matmul: the backend takes 3-D views");
    cudaStream_t stream = NULL;
    TIDE_TRY(tide_cuda_enter(dev, &stream));
    if (tide_cuda_numel(out) == 0)
        return TIDE_OK;
    if (a->shape[2] == 0) /* empty inner dim: a sum of nothing */
        return tide_cuda_fill(dev, out, 0);
    if (!tide_dt_is_float_rt(a->dtype)) {
        TIDE_CUDA_DISPATCH_ALL(a->dtype, run_matmul_int, stream, out, a, bm);
        return tide_cuda_notsup("matmul", a->dtype);
    }
    bool unfit = false;
    TIDE_TRY(gemm(dev, out, a, bm, &unfit));
    if (!unfit)
        return TIDE_OK;
    /* copy whichever operand cuBLAS cannot take, then run again */
    tide_kview        ca = *a, cb = *bm;
    void             *ta = NULL, *tb = NULL;
    size_t            na = 0, nb = 0;
    cublasOperation_t op;
    int64_t           ld;
    tide_status       st = TIDE_OK;
    if (!blas_layout(a->shape[1], a->shape[2], a->strides[1], a->strides[2], &op, &ld))
        st = contiguous_copy(dev, a, &ca, &ta, &na);
    if (st == TIDE_OK &&
        !blas_layout(bm->shape[1], bm->shape[2], bm->strides[1], bm->strides[2], &op, &ld))
        st = contiguous_copy(dev, bm, &cb, &tb, &nb);
    if (st == TIDE_OK)
        st = gemm(dev, out, &ca, &cb, &unfit);
    if (ta)
        tide_cuda_free(dev, ta, na);
    if (tb)
        tide_cuda_free(dev, tb, nb);
    return st;
}

// ---- the linear kernel row: y = act(x w^T + bias) ---------------------------------------------

TIDE_CUDA_FLOAT_OVERLOADS(lin_gelu, gelu)
TIDE_CUDA_FLOAT_OVERLOADS(lin_relu, relu)

/* the epilogue of one element, in the compute type (float for the half dtypes, as every half
 * kernel computes), rounded once to the dtype */
template <int DT> struct lin_epilogue {
    typedef typename tide_dt<DT>::T T;
    typedef typename tide_dt<DT>::C C;
    int                             act;
    __device__ __forceinline__ T    apply(C v) const {
           if (act == TIDE_ACT_GELU)
            v = lin_gelu(v);
        else if (act == TIDE_ACT_RELU)
            v = lin_relu(v);
        return tide_store<DT>(v);
    }
    __device__ __forceinline__ T operator()(T y, T b) const {
        return apply(tide_load<DT>(y) + tide_load<DT>(b));
    }
    __device__ __forceinline__ T operator()(T y) const {
        return apply(tide_load<DT>(y));
    }
};

struct run_linear_epilogue {
    template <int DT>
    static tide_status run(tide_device *dev, const tide_kview *y, const tide_kview *bias, int act) {
        typedef typename tide_dt<DT>::T T;
        if (!bias)
            return tide_map1<lin_epilogue<DT>, T, T>(dev, {act}, y, y);
        tide_kview b2 = *y; /* the bias broadcast over the rows */
        b2.data = bias->data;
        b2.strides[0] = 0;
        b2.strides[1] = 1;
        return tide_map2<lin_epilogue<DT>, T, T, T>(dev, {act}, y, y, &b2);
    }
};

/* cuBLAS's product, then one pass for the bias and the activation */
extern "C" tide_status tide_cuda_linear(tide_device *dev, const tide_kernel_call *c) {
    const tide_kview *bias = c->in[2], *y = c->out[0];
    int               act = (int)c->p[2].i;
    tide_kview        y3, x3, wt; /* w^T: CUBLAS_OP_T, no copy */
    tide_linear_views(c, &y3, &x3, &wt);
    TIDE_TRY(tide_cuda_matmul(dev, &y3, &x3, &wt));
    if (!bias && act == TIDE_ACT_NONE)
        return TIDE_OK;
    TIDE_CUDA_DISPATCH_FLOAT(c->dtype, run_linear_epilogue, dev, y, bias, act);
    return tide_cuda_notsup("linear", c->dtype);
}
