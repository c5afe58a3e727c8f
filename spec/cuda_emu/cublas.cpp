/*
 * cublas.cpp — the emulated cuBLAS: the gemms src/cuda/ calls, column-major, through OpenBLAS.
 * Its own library (libcublas_emu.so), opened by src/cuda/blas_loader.cu on the first gemm as
 * the real cuBLAS is; it needs the emulated libtide_cuda.so (its runtime checks the operands).
 */
#include "cuda_emu.h"

#include <cblas.h>
#include <cublas_v2.h>
#include <stdio.h>
#include <vector>

extern "C" {

struct cublasContext {
    cudaStream_t stream;
    int          device;
};

cublasStatus_t cublasCreate(cublasHandle_t *handle) {
    *handle = new cublasContext{NULL, cuda_emu_current_device()};
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetStream(cublasHandle_t handle, cudaStream_t stream) {
    handle->stream = stream;
    return CUBLAS_STATUS_SUCCESS;
}

const char *cublasGetStatusString(cublasStatus_t s) {
    switch (s) {
    case CUBLAS_STATUS_SUCCESS:
        return "the operation completed successfully";
    case CUBLAS_STATUS_INVALID_VALUE:
        return "an invalid numeric value was used as an argument";
    case CUBLAS_STATUS_NOT_SUPPORTED:
        return "the functionality requested is not supported";
    default:
        return "unknown error";
    }
}

} // extern "C"

namespace {

/* what cuBLAS validates before it runs, and the emulator's own checks of the operands */
cublasStatus_t gemm_check(const char *fn, cublasHandle_t h, cublasOperation_t ta,
                          cublasOperation_t tb, int m, int n, int k, const void *A, int lda,
                          size_t asz, const void *B, int ldb, size_t bsz, const void *C, int ldc,
                          size_t csz) {
    int arows = ta == CUBLAS_OP_N ? m : k, acols = ta == CUBLAS_OP_N ? k : m;
    int brows = tb == CUBLAS_OP_N ? k : n, bcols = tb == CUBLAS_OP_N ? n : k;
    if (m < 0 || n < 0 || k < 0 || lda < (arows > 1 ? arows : 1) || ldb < (brows > 1 ? brows : 1) ||
        ldc < (m > 1 ? m : 1))
        return CUBLAS_STATUS_INVALID_VALUE;
    if (m == 0 || n == 0)
        return CUBLAS_STATUS_SUCCESS;
    /* the last element each operand reaches */
    size_t aspan = ((size_t)(acols - 1) * lda + arows) * asz;
    size_t bspan = ((size_t)(bcols - 1) * ldb + brows) * bsz;
    size_t cspan = ((size_t)(n - 1) * ldc + m) * csz;
    if (!cuda_emu_gemm_operands_ok(fn, h->stream, k > 0 ? A : NULL, aspan, k > 0 ? B : NULL, bspan,
                                   C, cspan))
        return CUBLAS_STATUS_EXECUTION_FAILED;
    return CUBLAS_STATUS_SUCCESS;
}

CBLAS_TRANSPOSE tr(cublasOperation_t op) {
    return op == CUBLAS_OP_N ? CblasNoTrans : CblasTrans;
}

float to_float(const void *p, cudaDataType t, size_t i) {
    switch (t) {
    case CUDA_R_16F:
        return __half2float(((const __half *)p)[i]);
    case CUDA_R_16BF:
        return __bfloat162float(((const __nv_bfloat16 *)p)[i]);
    default:
        return ((const float *)p)[i];
    }
}

void from_float(void *p, cudaDataType t, size_t i, float v) {
    switch (t) {
    case CUDA_R_16F:
        ((__half *)p)[i] = __float2half(v);
        break;
    case CUDA_R_16BF:
        ((__nv_bfloat16 *)p)[i] = __float2bfloat16(v);
        break;
    default:
        ((float *)p)[i] = v;
    }
}

size_t type_size(cudaDataType t) {
    return t == CUDA_R_16F || t == CUDA_R_16BF ? 2 : t == CUDA_R_32F ? 4 : 0;
}

/* one gemm of any supported storage type, computed in float as CUBLAS_COMPUTE_32F does */
void gemm_ex_one(cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, float alpha,
                 const void *A, cudaDataType at, int lda, const void *B, cudaDataType bt, int ldb,
                 float beta, void *C, cudaDataType ct, int ldc) {
    int                arows = ta == CUBLAS_OP_N ? m : k, acols = ta == CUBLAS_OP_N ? k : m;
    int                brows = tb == CUBLAS_OP_N ? k : n, bcols = tb == CUBLAS_OP_N ? n : k;
    std::vector<float> a((size_t)lda * acols), b((size_t)ldb * bcols), c((size_t)ldc * n);
    for (int j = 0; j < acols; j++)
        for (int i = 0; i < arows; i++)
            a[(size_t)j * lda + i] = to_float(A, at, (size_t)j * lda + i);
    for (int j = 0; j < bcols; j++)
        for (int i = 0; i < brows; i++)
            b[(size_t)j * ldb + i] = to_float(B, bt, (size_t)j * ldb + i);
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++)
            c[(size_t)j * ldc + i] = beta != 0 ? to_float(C, ct, (size_t)j * ldc + i) : 0;
    if (k > 0)
        cblas_sgemm(CblasColMajor, tr(ta), tr(tb), m, n, k, alpha, a.data(), lda, b.data(), ldb,
                    beta, c.data(), ldc);
    else
        for (float &v : c)
            v *= beta;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++)
            from_float(C, ct, (size_t)j * ldc + i, c[(size_t)j * ldc + i]);
}

bool ex_types_ok(cudaDataType at, cudaDataType bt, cudaDataType ct, cublasComputeType_t compute) {
    return type_size(at) && at == bt && type_size(ct) &&
           (compute == CUBLAS_COMPUTE_32F || compute == CUBLAS_COMPUTE_32F_FAST_TF32);
}

} // namespace

extern "C" {

cublasStatus_t cublasSgemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m,
                           int n, int k, const float *alpha, const float *A, int lda,
                           const float *B, int ldb, const float *beta, float *C, int ldc) {
    cublasStatus_t s =
        gemm_check("cublasSgemm", h, ta, tb, m, n, k, A, lda, 4, B, ldb, 4, C, ldc, 4);
    if (s == CUBLAS_STATUS_SUCCESS && m > 0 && n > 0)
        cblas_sgemm(CblasColMajor, tr(ta), tr(tb), m, n, k, *alpha, A, lda, B, ldb, *beta, C, ldc);
    return s;
}

cublasStatus_t cublasDgemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m,
                           int n, int k, const double *alpha, const double *A, int lda,
                           const double *B, int ldb, const double *beta, double *C, int ldc) {
    cublasStatus_t s =
        gemm_check("cublasDgemm", h, ta, tb, m, n, k, A, lda, 8, B, ldb, 8, C, ldc, 8);
    if (s == CUBLAS_STATUS_SUCCESS && m > 0 && n > 0)
        cblas_dgemm(CblasColMajor, tr(ta), tr(tb), m, n, k, *alpha, A, lda, B, ldb, *beta, C, ldc);
    return s;
}

cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t h, cublasOperation_t ta,
                                         cublasOperation_t tb, int m, int n, int k,
                                         const float *alpha, const float *A, int lda, long long sa,
                                         const float *B, int ldb, long long sb, const float *beta,
                                         float *C, int ldc, long long sc, int batch) {
    if (batch < 0)
        return CUBLAS_STATUS_INVALID_VALUE;
    for (int i = 0; i < batch; i++) {
        cublasStatus_t s = cublasSgemm(h, ta, tb, m, n, k, alpha, A + i * sa, lda, B + i * sb, ldb,
                                       beta, C + i * sc, ldc);
        if (s != CUBLAS_STATUS_SUCCESS)
            return s;
    }
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasDgemmStridedBatched(cublasHandle_t h, cublasOperation_t ta,
                                         cublasOperation_t tb, int m, int n, int k,
                                         const double *alpha, const double *A, int lda,
                                         long long sa, const double *B, int ldb, long long sb,
                                         const double *beta, double *C, int ldc, long long sc,
                                         int batch) {
    if (batch < 0)
        return CUBLAS_STATUS_INVALID_VALUE;
    for (int i = 0; i < batch; i++) {
        cublasStatus_t s = cublasDgemm(h, ta, tb, m, n, k, alpha, A + i * sa, lda, B + i * sb, ldb,
                                       beta, C + i * sc, ldc);
        if (s != CUBLAS_STATUS_SUCCESS)
            return s;
    }
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGemmEx(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m,
                            int n, int k, const void *alpha, const void *A, cudaDataType at,
                            int lda, const void *B, cudaDataType bt, int ldb, const void *beta,
                            void *C, cudaDataType ct, int ldc, cublasComputeType_t compute,
                            cublasGemmAlgo_t algo) {
    (void)algo;
    if (!ex_types_ok(at, bt, ct, compute))
        return CUBLAS_STATUS_NOT_SUPPORTED;
    cublasStatus_t s = gemm_check("cublasGemmEx", h, ta, tb, m, n, k, A, lda, type_size(at), B, ldb,
                                  type_size(bt), C, ldc, type_size(ct));
    if (s == CUBLAS_STATUS_SUCCESS && m > 0 && n > 0)
        gemm_ex_one(ta, tb, m, n, k, *(const float *)alpha, A, at, lda, B, bt, ldb,
                    *(const float *)beta, C, ct, ldc);
    return s;
}

cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t h, cublasOperation_t ta,
                                          cublasOperation_t tb, int m, int n, int k,
                                          const void *alpha, const void *A, cudaDataType at,
                                          int lda, long long sa, const void *B, cudaDataType bt,
                                          int ldb, long long sb, const void *beta, void *C,
                                          cudaDataType ct, int ldc, long long sc, int batch,
                                          cublasComputeType_t compute, cublasGemmAlgo_t algo) {
    if (batch < 0)
        return CUBLAS_STATUS_INVALID_VALUE;
    for (int i = 0; i < batch; i++) {
        cublasStatus_t s = cublasGemmEx(
            h, ta, tb, m, n, k, alpha, (const char *)A + i * sa * (long long)type_size(at), at, lda,
            (const char *)B + i * sb * (long long)type_size(bt), bt, ldb, beta,
            (char *)C + i * sc * (long long)type_size(ct), ct, ldc, compute, algo);
        if (s != CUBLAS_STATUS_SUCCESS)
            return s;
    }
    return CUBLAS_STATUS_SUCCESS;
}

} // extern "C"
