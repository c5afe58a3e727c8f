/*
 * matmul.c — batched gemm on the CPU: oneDNN or OpenBLAS for float32, OpenBLAS for float64, a
 * plain loop for integers.
 *
 * BLAS takes a row-major matrix either as is or transposed, with any leading dimension, so a
 * 2-D slice with a unit stride in either dim goes to BLAS without a copy (a.t() @ b costs
 * nothing extra). Anything else (stride 0 from expand, two non-unit strides) is first copied
 * to a contiguous buffer. OpenBLAS (its OpenMP build) threads on the pool tide's kernels use;
 * no BLAS call is made from inside an OpenMP region, where it would run on one thread.
 *
 * oneDNN's sgemm (Debian libdnnl, already linked for convolutions; the same OpenMP pool) runs
 * the products of a training step a third faster than OpenBLAS 0.3.21's on these machines (2
 * threads, AVX-512: [128, 784] @ [784, 256]^T 190 us against 261, [1024, 64]^T @ [1024, 256] 119
 * against 247, 1024^3 equal); OpenBLAS keeps the small products its small-matrix kernels do
 * better (64^3: 3.2 us against 5.8). The split is by work: DNNL_SGEMM_MIN multiply-adds.
 */
#include "cpu.h"
#include <cblas.h>
#ifdef TIDE_HAVE_DNNL
#include <dnnl.h>
#define DNNL_SGEMM_MIN ((int64_t)1 << 19)
#endif
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Weak: a BLAS other than OpenBLAS links too, and then cpu_blas_core says it cannot tell. */
#pragma weak openblas_get_corename

const char *cpu_blas_core(void) {
    return openblas_get_corename ? openblas_get_corename() : NULL;
}

/* OpenBLAS's pthreads build keeps a thread count of its own */
#pragma weak openblas_set_num_threads
void         cpu_blas_set_threads(int n) {
            if (openblas_set_num_threads)
        openblas_set_num_threads(n);
}

/* How BLAS can read a rows x cols matrix with element strides sr, sc: returns 0 when it needs
 * a copy. Strides of size-1 dims do not matter. */
static int blas_layout(int64_t rows, int64_t cols, int64_t sr, int64_t sc, int *trans,
                       int64_t *ld) {
    int64_t r1 = rows > 1 ? rows : 1, c1 = cols > 1 ? cols : 1;
    if ((cols == 1 || sc == 1) && (rows == 1 || sr >= c1)) {
        *trans = 0;
        *ld = rows == 1 ? c1 : sr;
        return 1;
    }
    if ((rows == 1 || sr == 1) && (cols == 1 || sc >= r1)) {
        *trans = 1;
        *ld = cols == 1 ? r1 : sc;
        return 1;
    }
    return 0;
}

/* one matrix operand of one batch, ready for BLAS (possibly a packed copy in buf) */
typedef struct operand {
    const void *p;
    int         trans;
    int64_t     ld;
} operand;

static void pack(const char *src, int64_t rows, int64_t cols, int64_t sr, int64_t sc, size_t es,
                 char *dst) {
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < cols; j++)
            memcpy(dst + (size_t)(i * cols + j) * es, src + (i * sr + j * sc) * (int64_t)es, es);
}

static operand prepare(const tide_kview *v, int64_t b, size_t es, char *buf) {
    int64_t     rows = v->shape[1], cols = v->shape[2];
    const char *p = (const char *)v->data + b * v->strides[0] * (int64_t)es;
    operand     o;
    if (blas_layout(rows, cols, v->strides[1], v->strides[2], &o.trans, &o.ld)) {
        o.p = p;
        return o;
    }
    pack(p, rows, cols, v->strides[1], v->strides[2], es, buf);
    o.p = buf;
    o.trans = 0;
    o.ld = cols > 1 ? cols : 1;
    return o;
}

/* integer gemm: i-k-j order so the inner loop runs along rows of b and out; ACC(o, x, y) adds
 * one product: wrapping sums for integers, "or" of "and"s for bool (as the CUDA kernel) */
#define WRAP_ACC(T, o, x, y) ((T)((uint64_t)(o) + (x) * (y)))
#define BOOL_ACC(T, o, x, y) ((T)((o) | ((x) & (y))))
#define INT_GEMM(T, ACC)                                                                           \
    do {                                                                                           \
        for (int64_t bi = 0; bi < B; bi++) {                                                       \
            const char *pa = (const char *)a->data + bi * a->strides[0] * (int64_t)es;             \
            const char *pb = (const char *)bm->data + bi * bm->strides[0] * (int64_t)es;           \
            T          *po = (T *)out->data + bi * M * N;                                          \
            for (int64_t i = 0; i < M * N; i++)                                                    \
                po[i] = 0;                                                                         \
            for (int64_t i = 0; i < M; i++)                                                        \
                for (int64_t k = 0; k < K; k++) {                                                  \
                    uint64_t x =                                                                   \
                        (uint64_t) *                                                               \
                        (const T *)(pa + (i * a->strides[1] + k * a->strides[2]) * (int64_t)es);   \
                    for (int64_t j = 0; j < N; j++) {                                              \
                        uint64_t y = (uint64_t) *                                                  \
                                     (const T *)(pb + (k * bm->strides[1] + j * bm->strides[2]) *  \
                                                          (int64_t)es);                            \
                        po[i * N + j] = ACC(T, po[i * N + j], x, y);                               \
                    }                                                                              \
                }                                                                                  \
        }                                                                                          \
    } while (0)

tide_status cpu_matmul(tide_device *dev, const tide_kview *out, const tide_kview *a,
                       const tide_kview *bm) {
    (void)dev;
    if (a->ndim != 3 || bm->ndim != 3 || out->ndim != 3)
        return tide_seterr(TIDE_EINVAL, "matmul: cpu kernel needs 3-d views [B, M, K] @ [B, K, N]");
    int64_t B = out->shape[0], M = out->shape[1], N = out->shape[2], K = a->shape[2];
    if (a->shape[0] != B || bm->shape[0] != B || a->shape[1] != M || bm->shape[1] != K ||
        bm->shape[2] != N)
        return tide_seterr(TIDE_ESHAPE,
                           "matmul: cpu kernel got [%lld, %lld, %lld] @ [%lld, %lld, %lld] -> "
                           "[%lld, %lld, %lld]",
                           (long long)a->shape[0], (long long)a->shape[1], (long long)a->shape[2],
                           (long long)bm->shape[0], (long long)bm->shape[1],
                           (long long)bm->shape[2], (long long)B, (long long)M, (long long)N);
    if (a->dtype != bm->dtype || out->dtype != a->dtype)
        return tide_seterr(TIDE_EDTYPE, "matmul: cpu kernel needs one dtype for a, b and out");
    if (!cpu_is_contiguous(out))
        return tide_seterr(TIDE_EINVAL, "matmul: cpu kernel needs a contiguous out");
    tide_dtype dt = a->dtype;
    size_t     es = cpu_dtype_size(dt);
    if (B == 0 || M == 0 || N == 0)
        return TIDE_OK;
    if (dt == TIDE_DTYPE_I32 || dt == TIDE_DTYPE_I64 || dt == TIDE_DTYPE_U8 ||
        dt == TIDE_DTYPE_BOOL) {
        if (dt == TIDE_DTYPE_I32)
            INT_GEMM(int32_t, WRAP_ACC);
        else if (dt == TIDE_DTYPE_I64)
            INT_GEMM(int64_t, WRAP_ACC);
        else if (dt == TIDE_DTYPE_U8)
            INT_GEMM(uint8_t, WRAP_ACC);
        else
            INT_GEMM(uint8_t, BOOL_ACC);
        return TIDE_OK;
    }
    if (dt != TIDE_DTYPE_F32 && dt != TIDE_DTYPE_F64)
        return cpu_notsup("matmul", dt);
    if (K == 0) {
        memset(out->data, 0, (size_t)(B * M * N) * es);
        return TIDE_OK;
    }
    if (M > INT32_MAX || N > INT32_MAX || K > INT32_MAX || a->strides[1] > INT32_MAX ||
        a->strides[2] > INT32_MAX || bm->strides[1] > INT32_MAX || bm->strides[2] > INT32_MAX)
        return tide_seterr(TIDE_ENOTSUP,
                           "matmul: [%lld, %lld] @ [%lld, %lld] exceeds BLAS's 32-bit sizes ; "
                           "split the product into smaller blocks",
                           (long long)M, (long long)K, (long long)K, (long long)N);
    /* scratch for operands BLAS cannot read in place, reused across the batch */
    int     trans;
    int64_t ld;
    int     need_a = !blas_layout(M, K, a->strides[1], a->strides[2], &trans, &ld);
    int     need_b = !blas_layout(K, N, bm->strides[1], bm->strides[2], &trans, &ld);
    char   *bufa = need_a ? malloc((size_t)(M * K) * es) : NULL;
    char   *bufb = need_b ? malloc((size_t)(K * N) * es) : NULL;
    if ((need_a && !bufa) || (need_b && !bufb)) {
        free(bufa);
        free(bufb);
        return tide_seterr(TIDE_ENOMEM, "matmul: out of memory for a packed operand copy");
    }
    for (int64_t b = 0; b < B; b++) {
        operand              oa = prepare(a, b, es, bufa), ob = prepare(bm, b, es, bufb);
        char                *po = (char *)out->data + (size_t)(b * M * N) * es;
        enum CBLAS_TRANSPOSE ta = oa.trans ? CblasTrans : CblasNoTrans;
        enum CBLAS_TRANSPOSE tb = ob.trans ? CblasTrans : CblasNoTrans;
        if (dt == TIDE_DTYPE_F32) {
#ifdef TIDE_HAVE_DNNL
            /* (a failure, which needs a broken install, falls back to OpenBLAS) */
            if (M * N * K >= DNNL_SGEMM_MIN &&
                dnnl_sgemm(oa.trans ? 'T' : 'N', ob.trans ? 'T' : 'N', M, N, K, 1.0f, oa.p, oa.ld,
                           ob.p, ob.ld, 0.0f, (float *)po, N) == dnnl_success)
                continue;
#endif
            cblas_sgemm(CblasRowMajor, ta, tb, (int)M, (int)N, (int)K, 1.0f, oa.p, (int)oa.ld, ob.p,
                        (int)ob.ld, 0.0f, (float *)po, (int)N);
        } else
            cblas_dgemm(CblasRowMajor, ta, tb, (int)M, (int)N, (int)K, 1.0, oa.p, (int)oa.ld, ob.p,
                        (int)ob.ld, 0.0, (double *)po, (int)N);
    }
    free(bufa);
    free(bufb);
    return TIDE_OK;
}
