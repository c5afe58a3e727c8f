/*
 * linalg.c — the CPU's decompositions by LAPACK (OpenBLAS ships it), the kernels of tide.linalg's
 * MATRIX rows (include/tide_kernels.def): eigh by syevd
 * (divide and conquer), the reduced SVD by gesdd, LU by getrf and its solve by getrs, Cholesky
 * by potrf, QR by geqrf and orgqr, the general eigendecomposition by geev, Bunch-Kaufman LDL^T by
 * sytrf and its solve by sytrs, and triangular solves by BLAS's trsm. One matrix of the batch at a
 * time, each call on OpenBLAS's own threads.
 *
 * LAPACK is column-major and a row-major matrix read column-major is its transpose, so no
 * input is transposed: the symmetric A read as A^T has its lower triangle where A has its upper
 * (the triangle flag flips), and the SVD of A^T = U' S V'^T is A = V' S U'^T, whose row-major
 * U and Vh are exactly the column-major V'^T and U' gesdd writes.
 */
#include "cpu.h"

#include <cblas.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* LAPACK's Fortran interface (gfortran: each character argument has a hidden length, passed
 * last) */
typedef int lapack_int;
void        dsyevd_(const char *jobz, const char *uplo, const lapack_int *n, double *a,
                    const lapack_int *lda, double *w, double *work, const lapack_int *lwork,
                    lapack_int *iwork, const lapack_int *liwork, lapack_int *info, size_t, size_t);
void        ssyevd_(const char *jobz, const char *uplo, const lapack_int *n, float *a,
                    const lapack_int *lda, float *w, float *work, const lapack_int *lwork,
                    lapack_int *iwork, const lapack_int *liwork, lapack_int *info, size_t, size_t);
void        dgesdd_(const char *jobz, const lapack_int *m, const lapack_int *n, double *a,
                    const lapack_int *lda, double *s, double *u, const lapack_int *ldu, double *vt,
                    const lapack_int *ldvt, double *work, const lapack_int *lwork, lapack_int *iwork,
                    lapack_int *info, size_t);
void        sgesdd_(const char *jobz, const lapack_int *m, const lapack_int *n, float *a,
                    const lapack_int *lda, float *s, float *u, const lapack_int *ldu, float *vt,
                    const lapack_int *ldvt, float *work, const lapack_int *lwork, lapack_int *iwork,
                    lapack_int *info, size_t);

void dgeev_(const char *jobvl, const char *jobvr, const lapack_int *n, double *a,
            const lapack_int *lda, double *wr, double *wi, double *vl, const lapack_int *ldvl,
            double *vr, const lapack_int *ldvr, double *work, const lapack_int *lwork,
            lapack_int *info, size_t, size_t);
void sgeev_(const char *jobvl, const char *jobvr, const lapack_int *n, float *a,
            const lapack_int *lda, float *wr, float *wi, float *vl, const lapack_int *ldvl,
            float *vr, const lapack_int *ldvr, float *work, const lapack_int *lwork,
            lapack_int *info, size_t, size_t);

void dgetrf_(const lapack_int *m, const lapack_int *n, double *a, const lapack_int *lda,
             lapack_int *ipiv, lapack_int *info);
void sgetrf_(const lapack_int *m, const lapack_int *n, float *a, const lapack_int *lda,
             lapack_int *ipiv, lapack_int *info);
void dgetrs_(const char *trans, const lapack_int *n, const lapack_int *nrhs, const double *a,
             const lapack_int *lda, const lapack_int *ipiv, double *b, const lapack_int *ldb,
             lapack_int *info, size_t);
void sgetrs_(const char *trans, const lapack_int *n, const lapack_int *nrhs, const float *a,
             const lapack_int *lda, const lapack_int *ipiv, float *b, const lapack_int *ldb,
             lapack_int *info, size_t);
void dgeqrf_(const lapack_int *m, const lapack_int *n, double *a, const lapack_int *lda,
             double *tau, double *work, const lapack_int *lwork, lapack_int *info);
void sgeqrf_(const lapack_int *m, const lapack_int *n, float *a, const lapack_int *lda, float *tau,
             float *work, const lapack_int *lwork, lapack_int *info);
void dorgqr_(const lapack_int *m, const lapack_int *n, const lapack_int *k, double *a,
             const lapack_int *lda, const double *tau, double *work, const lapack_int *lwork,
             lapack_int *info);
void sorgqr_(const lapack_int *m, const lapack_int *n, const lapack_int *k, float *a,
             const lapack_int *lda, const float *tau, float *work, const lapack_int *lwork,
             lapack_int *info);
void dpotrf_(const char *uplo, const lapack_int *n, double *a, const lapack_int *lda,
             lapack_int *info, size_t);
void spotrf_(const char *uplo, const lapack_int *n, float *a, const lapack_int *lda,
             lapack_int *info, size_t);
void dsytrf_(const char *uplo, const lapack_int *n, double *a, const lapack_int *lda,
             lapack_int *ipiv, double *work, const lapack_int *lwork, lapack_int *info, size_t);
void ssytrf_(const char *uplo, const lapack_int *n, float *a, const lapack_int *lda,
             lapack_int *ipiv, float *work, const lapack_int *lwork, lapack_int *info, size_t);
void dsytrs_(const char *uplo, const lapack_int *n, const lapack_int *nrhs, const double *a,
             const lapack_int *lda, const lapack_int *ipiv, double *b, const lapack_int *ldb,
             lapack_int *info, size_t);
void ssytrs_(const char *uplo, const lapack_int *n, const lapack_int *nrhs, const float *a,
             const lapack_int *lda, const lapack_int *ipiv, float *b, const lapack_int *ldb,
             lapack_int *info, size_t);

/* LAPACK counts in int: a dimension beyond it has no call */
static tide_status fits_int(const char *op, int64_t n) {
    if (n > INT32_MAX / 8)
        return tide_seterr(TIDE_ENOTSUP, "%s: a %lld-sized matrix is beyond LAPACK's int sizes", op,
                           (long long)n);
    return TIDE_OK;
}

static tide_status failed(const char *op, lapack_int info) {
    if (info < 0) /* an argument LAPACK refused: tide's bug */
        return tide_seterr(TIDE_EBACKEND, "%s: LAPACK refused argument %d", op, (int)-info);
    return tide_seterr(TIDE_EINVAL,
                       "%s: the solver did not converge (LAPACK info %d): the input has NaN or "
                       "inf, or is too ill-conditioned",
                       op, (int)info);
}

/* float32 or float64, else the dtype named */
#define BY_DTYPE(op, dt, call_d, call_s)                                                           \
    ((dt) == TIDE_DTYPE_F64 ? (call_d)                                                             \
     : (dt) == TIDE_DTYPE_F32                                                                      \
         ? (call_s)                                                                                \
         : tide_seterr(TIDE_ENOTSUP, "%s: no CPU kernel for %s", op, tide_dtype_name(dt)))

/* LAPACK's iterative solvers (syevd, gesdd) may refuse a NaN or inf, or never converge on
 * one (a hang under the sanitizer build): the input is checked first, as PyTorch's message
 * says */
#define DEFINE_FINITE(T, P)                                                                        \
    static tide_status finite_##P(const char *op, const T *a, int64_t n) {                         \
        for (int64_t i = 0; i < n; i++)                                                            \
            if (!(a[i] - a[i] == 0))                                                               \
                return tide_seterr(TIDE_EINVAL,                                                    \
                                   "%s: the input has NaN or inf, for which the solver does not "  \
                                   "converge; check it (isfinite) before the call",                \
                                   op);                                                            \
        return TIDE_OK;                                                                            \
    }
DEFINE_FINITE(double, d)
DEFINE_FINITE(float, s)

/* the same code for float and double: T the element type, P the LAPACK prefix */
#define DEFINE_EIGH(T, P)                                                                          \
    static tide_status eigh_##P(const tide_kview *w, const tide_kview *v, const tide_kview *a,     \
                                int upper) {                                                       \
        lapack_int  n = (lapack_int)a->shape[a->ndim - 1], lwork = -1, liwork = -1, info = 0;      \
        int64_t     batch = tide_kview_numel(a) / ((int64_t)n * n);                                \
        T           wq;                                                                            \
        lapack_int  iq;                                                                            \
        const char *uplo = upper ? "L" : "U"; /* A read column-major is A^T */                     \
        TIDE_TRY(finite_##P("linalg.eigh", (const T *)a->data, batch *n *n));                      \
        P##syevd_("V", uplo, &n, NULL, &n, NULL, &wq, &lwork, &iq, &liwork, &info, 1, 1);          \
        if (info != 0)                                                                             \
            return failed("linalg.eigh", info);                                                    \
        lwork = (lapack_int)wq;                                                                    \
        liwork = iq;                                                                               \
        T          *buf = malloc(sizeof(T) * ((size_t)n * n + (size_t)lwork));                     \
        lapack_int *iwork = malloc(sizeof(lapack_int) * (size_t)liwork);                           \
        if (!buf || !iwork) {                                                                      \
            free(buf);                                                                             \
            free(iwork);                                                                           \
            return tide_seterr(TIDE_ENOMEM, "linalg.eigh: no memory for LAPACK's workspace");      \
        }                                                                                          \
        T          *work = buf + (size_t)n * n;                                                    \
        tide_status st = TIDE_OK;                                                                  \
        for (int64_t b = 0; b < batch && st == TIDE_OK; b++) {                                     \
            const T *ab = (const T *)a->data + b * n * n;                                          \
            T       *wb = (T *)w->data + b * n, *vb = (T *)v->data + b * n * n;                    \
            memcpy(buf, ab, sizeof(T) * (size_t)n * n);                                            \
            P##syevd_("V", uplo, &n, buf, &n, wb, work, &lwork, iwork, &liwork, &info, 1, 1);      \
            if (info != 0) {                                                                       \
                st = failed("linalg.eigh", info);                                                  \
                break;                                                                             \
            }                                                                                      \
            /* eigenvector j is column j of the column-major result: row-major v[i][j] */          \
            for (lapack_int i = 0; i < n; i++)                                                     \
                for (lapack_int j = 0; j < n; j++)                                                 \
                    vb[(int64_t)i * n + j] = buf[(int64_t)j * n + i];                              \
        }                                                                                          \
        free(buf);                                                                                 \
        free(iwork);                                                                               \
        return st;                                                                                 \
    }

#define DEFINE_SVD(T, P)                                                                           \
    static tide_status svd_##P(const tide_kview *u, const tide_kview *s, const tide_kview *vh,     \
                               const tide_kview *a) {                                              \
        /* the column-major A^T: n x m with leading dimension n */                                 \
        lapack_int m = (lapack_int)a->shape[a->ndim - 1], n = (lapack_int)a->shape[a->ndim - 2];   \
        lapack_int k = m < n ? m : n, lwork = -1, info = 0;                                        \
        int64_t    batch = tide_kview_numel(a) / ((int64_t)m * n);                                 \
        T          wq;                                                                             \
        lapack_int ldvt = k;                                                                       \
        TIDE_TRY(finite_##P("linalg.svd", (const T *)a->data, batch *m *n));                       \
        P##gesdd_("S", &m, &n, NULL, &m, NULL, NULL, &m, NULL, &ldvt, &wq, &lwork, NULL, &info,    \
                  1);                                                                              \
        if (info != 0)                                                                             \
            return failed("linalg.svd", info);                                                     \
        lwork = (lapack_int)wq;                                                                    \
        T          *buf = malloc(sizeof(T) * ((size_t)m * n + (size_t)lwork));                     \
        lapack_int *iwork = malloc(sizeof(lapack_int) * 8 * (size_t)k);                            \
        if (!buf || !iwork) {                                                                      \
            free(buf);                                                                             \
            free(iwork);                                                                           \
            return tide_seterr(TIDE_ENOMEM, "linalg.svd: no memory for LAPACK's workspace");       \
        }                                                                                          \
        T          *work = buf + (size_t)m * n;                                                    \
        tide_status st = TIDE_OK;                                                                  \
        for (int64_t b = 0; b < batch; b++) {                                                      \
            memcpy(buf, (const T *)a->data + b * m * n, sizeof(T) * (size_t)m * n);                \
            /* A^T = U' S V'^T: row-major Vh [k, rows of A^T] is U' as written, row-major U        \
             * [cols of A^T, k] is V'^T as written */                                              \
            P##gesdd_("S", &m, &n, buf, &m, (T *)s->data + b * k, (T *)vh->data + b * k * m, &m,   \
                      (T *)u->data + b * n * k, &ldvt, work, &lwork, iwork, &info, 1);             \
            if (info != 0) {                                                                       \
                st = failed("linalg.svd", info);                                                   \
                break;                                                                             \
            }                                                                                      \
        }                                                                                          \
        free(buf);                                                                                 \
        free(iwork);                                                                               \
        return st;                                                                                 \
    }

DEFINE_EIGH(double, d)
DEFINE_EIGH(float, s)
DEFINE_SVD(double, d)
DEFINE_SVD(float, s)

/* the kernels of the rows (include/tide_kernels.def), which check dtypes and shapes: a
 * matrix of the batch at a time */
tide_status cpu_eigh(tide_device *dev, const tide_kernel_call *c) {
    (void)dev;
    const tide_kview *a = c->in[0];
    int               upper = (int)c->p[0].i;
    TIDE_TRY(fits_int("linalg.eigh", a->shape[a->ndim - 1]));
    return BY_DTYPE("linalg.eigh", a->dtype, eigh_d(c->out[0], c->out[1], a, upper),
                    eigh_s(c->out[0], c->out[1], a, upper));
}

tide_status cpu_svd(tide_device *dev, const tide_kernel_call *c) {
    (void)dev;
    const tide_kview *a = c->in[0], *u = c->out[0], *s = c->out[1], *vh = c->out[2];
    TIDE_TRY(fits_int("linalg.svd", a->shape[a->ndim - 1]));
    TIDE_TRY(fits_int("linalg.svd", a->shape[a->ndim - 2]));
    return BY_DTYPE("linalg.svd", a->dtype, svd_d(u, s, vh, a), svd_s(u, s, vh, a));
}

/* ---- LU, Cholesky, triangular solves ------------------------------------------------------- */

/* a row-major r x c matrix into column-major (its transpose, row-major), and back */
#define DEFINE_TRANSPOSE(T, P)                                                                     \
    static void transpose_##P(T *dst, const T *src, int64_t r, int64_t c) {                        \
        for (int64_t i = 0; i < r; i++)                                                            \
            for (int64_t j = 0; j < c; j++)                                                        \
                dst[j * r + i] = src[i * c + j];                                                   \
    }
DEFINE_TRANSPOSE(double, d)
DEFINE_TRANSPOSE(float, s)

#define DEFINE_LU(T, P)                                                                            \
    /* a [..., m, n]: getrf factors an m x n matrix, k = min(m, n) pivots */                       \
    static tide_status lu_factor_##P(const tide_kview *lu, const tide_kview *piv,                  \
                                     const tide_kview *a) {                                        \
        lapack_int  m = (lapack_int)a->shape[a->ndim - 2], info = 0;                               \
        lapack_int  n = (lapack_int)a->shape[a->ndim - 1], k = m < n ? m : n;                      \
        int64_t     batch = tide_kview_numel(a) / ((int64_t)m * n);                                \
        T          *buf = malloc(sizeof(T) * (size_t)m * n);                                       \
        lapack_int *ip = malloc(sizeof(lapack_int) * (size_t)k);                                   \
        if (!buf || !ip) {                                                                         \
            free(buf);                                                                             \
            free(ip);                                                                              \
            return tide_seterr(TIDE_ENOMEM, "linalg.lu_factor: no memory for LAPACK");             \
        }                                                                                          \
        tide_status st = TIDE_OK;                                                                  \
        for (int64_t b = 0; b < batch; b++) {                                                      \
            transpose_##P(buf, (const T *)a->data + b * m * n, m, n);                              \
            P##getrf_(&m, &n, buf, &m, ip, &info);                                                 \
            if (info < 0) { /* > 0: a zero pivot, still a factorisation */                         \
                st = failed("linalg.lu_factor", info);                                             \
                break;                                                                             \
            }                                                                                      \
            transpose_##P((T *)lu->data + b * m * n, buf, n, m);                                   \
            for (lapack_int i = 0; i < k; i++)                                                     \
                ((int64_t *)piv->data)[b * k + i] = ip[i];                                         \
        }                                                                                          \
        free(buf);                                                                                 \
        free(ip);                                                                                  \
        return st;                                                                                 \
    }                                                                                              \
    /* the solve from a pivoted factorisation f (getrf's LU, or sytrf's LD when ldl) and its       \
     * 1-based pivots: getrs or sytrs on each matrix of the batch, transposed in and out */        \
    static tide_status pivoted_solve_##P(const tide_kview *x, const tide_kview *f,                 \
                                         const tide_kview *piv, const tide_kview *b, int ldl) {    \
        const char *who = ldl ? "linalg.ldl_solve" : "linalg.lu_solve";                            \
        lapack_int  n = (lapack_int)f->shape[f->ndim - 1];                                         \
        lapack_int  k = (lapack_int)b->shape[b->ndim - 1], info = 0;                               \
        int64_t     batch = tide_kview_numel(f) / ((int64_t)n * n);                                \
        T          *buf = malloc(sizeof(T) * ((size_t)n * n + (size_t)n * k));                     \
        lapack_int *ip = malloc(sizeof(lapack_int) * (size_t)n);                                   \
        if (!buf || !ip) {                                                                         \
            free(buf);                                                                             \
            free(ip);                                                                              \
            return tide_seterr(TIDE_ENOMEM, "%s: no memory for LAPACK", who);                      \
        }                                                                                          \
        T          *rhs = buf + (size_t)n * n;                                                     \
        tide_status st = TIDE_OK;                                                                  \
        for (int64_t m = 0; m < batch; m++) {                                                      \
            transpose_##P(buf, (const T *)f->data + m * n * n, n, n);                              \
            transpose_##P(rhs, (const T *)b->data + m * n * k, n, k);                              \
            for (lapack_int i = 0; i < n; i++)                                                     \
                ip[i] = (lapack_int)((const int64_t *)piv->data)[m * n + i];                       \
            if (ldl)                                                                               \
                P##sytrs_("L", &n, &k, buf, &n, ip, rhs, &n, &info, 1);                            \
            else                                                                                   \
                P##getrs_("N", &n, &k, buf, &n, ip, rhs, &n, &info, 1);                            \
            if (info != 0) {                                                                       \
                st = failed(who, info);                                                            \
                break;                                                                             \
            }                                                                                      \
            transpose_##P((T *)x->data + m * n * k, rhs, k, n);                                    \
        }                                                                                          \
        free(buf);                                                                                 \
        free(ip);                                                                                  \
        return st;                                                                                 \
    }                                                                                              \
    static tide_status lu_solve_##P(const tide_kview *x, const tide_kview *lu,                     \
                                    const tide_kview *piv, const tide_kview *b) {                  \
        return pivoted_solve_##P(x, lu, piv, b, 0);                                                \
    }                                                                                              \
    /* A's row-major lower triangle is the column-major upper one: potrf("U") writes U with        \
     * A = U^T U there, which read row-major is L with A = L L^T */                                \
    static tide_status cholesky_##P(const tide_kview *l, const tide_kview *a) {                    \
        lapack_int n = (lapack_int)a->shape[a->ndim - 1], info = 0;                                \
        int64_t    batch = tide_kview_numel(a) / ((int64_t)n * n);                                 \
        for (int64_t m = 0; m < batch; m++) {                                                      \
            T *lm = (T *)l->data + m * n * n;                                                      \
            memcpy(lm, (const T *)a->data + m * n * n, sizeof(T) * (size_t)n * n);                 \
            P##potrf_("U", &n, lm, &n, &info, 1);                                                  \
            if (info > 0 && a->ndim > 2)                                                           \
                return tide_seterr(TIDE_EINVAL,                                                    \
                                   "linalg.cholesky: the matrix is not positive-definite (its "    \
                                   "leading minor of order %d is not positive) (batch element "    \
                                   "%lld)",                                                        \
                                   (int)info, (long long)m + 1);                                   \
            if (info > 0)                                                                          \
                return tide_seterr(TIDE_EINVAL,                                                    \
                                   "linalg.cholesky: the matrix is not positive-definite (its "    \
                                   "leading minor of order %d is not positive)",                   \
                                   (int)info);                                                     \
            if (info < 0)                                                                          \
                return failed("linalg.cholesky", info);                                            \
            for (lapack_int i = 0; i < n; i++) /* the upper half held A's values */                \
                for (lapack_int j = i + 1; j < n; j++)                                             \
                    lm[(int64_t)i * n + j] = 0;                                                    \
        }                                                                                          \
        return TIDE_OK;                                                                            \
    }                                                                                              \
    static tide_status solve_triangular_##P(const tide_kview *x, const tide_kview *a,              \
                                            const tide_kview *b, int upper, int unit) {            \
        int64_t n = a->shape[a->ndim - 1], k = b->shape[b->ndim - 1];                              \
        int64_t batch = tide_kview_numel(a) / (n * n);                                             \
        memcpy(x->data, b->data, sizeof(T) * (size_t)(batch * n * k));                             \
        for (int64_t m = 0; m < batch; m++)                                                        \
            cblas_##P##trsm(CblasRowMajor, CblasLeft, upper ? CblasUpper : CblasLower,             \
                            CblasNoTrans, unit ? CblasUnit : CblasNonUnit, (int)n, (int)k, 1,      \
                            (const T *)a->data + m * n * n, (int)n, (T *)x->data + m * n * k,      \
                            (int)k);                                                               \
        return TIDE_OK;                                                                            \
    }

DEFINE_LU(double, d)
DEFINE_LU(float, s)

/* QR: a transposed into column-major (geqrf works on A itself), its reflectors formed into c
 * columns of Q by orgqr in the same buffer (m x max(n, c): the complete Q of a tall A has more
 * columns than A), R read off the upper triangle first */
#define DEFINE_QR(T, P)                                                                            \
    static tide_status qr_##P(const tide_kview *q, const tide_kview *r, const tide_kview *a) {     \
        lapack_int m = (lapack_int)a->shape[a->ndim - 2], n = (lapack_int)a->shape[a->ndim - 1];   \
        lapack_int c = (lapack_int)q->shape[q->ndim - 1], k = m < n ? m : n, info = 0;             \
        lapack_int cols = n > c ? n : c, lwork = -1;                                               \
        int64_t    batch = tide_kview_numel(q) / ((int64_t)m * c); /* q has elements, a may not */ \
        T          wq[2];                                                                          \
        P##geqrf_(&m, &n, NULL, &m, NULL, &wq[0], &lwork, &info);                                  \
        if (info == 0)                                                                             \
            P##orgqr_(&m, &c, &k, NULL, &m, NULL, &wq[1], &lwork, &info);                          \
        if (info != 0)                                                                             \
            return failed("linalg.qr", info);                                                      \
        lwork = (lapack_int)(wq[0] > wq[1] ? wq[0] : wq[1]);                                       \
        if (lwork < 1)                                                                             \
            lwork = 1;                                                                             \
        T *buf = malloc(sizeof(T) * ((size_t)m * cols + (size_t)k + (size_t)lwork));               \
        if (!buf)                                                                                  \
            return tide_seterr(TIDE_ENOMEM, "linalg.qr: no memory for LAPACK's workspace");        \
        T          *tau = buf + (size_t)m * cols, *work = tau + k;                                 \
        tide_status st = TIDE_OK;                                                                  \
        for (int64_t b = 0; b < batch; b++) {                                                      \
            T *qb = (T *)q->data + b * m * c;                                                      \
            T *rb = n > 0 ? (T *)r->data + b * c * n : NULL; /* R [c, 0] has no data */            \
            if (n > 0) /* a of no columns has no data (a complete Q of it is I) */                 \
                transpose_##P(buf, (const T *)a->data + b * m * n, m, n);                          \
            P##geqrf_(&m, &n, buf, &m, tau, work, &lwork, &info);                                  \
            if (info != 0) {                                                                       \
                st = failed("linalg.qr", info);                                                    \
                break;                                                                             \
            }                                                                                      \
            for (lapack_int i = 0; i < c; i++) /* R [c, n]: rows past k are zero */                \
                for (lapack_int j = 0; j < n; j++)                                                 \
                    rb[(int64_t)i * n + j] = j >= i && i < k ? buf[(int64_t)j * m + i] : 0;        \
            P##orgqr_(&m, &c, &k, buf, &m, tau, work, &lwork, &info);                              \
            if (info != 0) {                                                                       \
                st = failed("linalg.qr", info);                                                    \
                break;                                                                             \
            }                                                                                      \
            transpose_##P(qb, buf, c, m);                                                          \
        }                                                                                          \
        free(buf);                                                                                 \
        return st;                                                                                 \
    }
DEFINE_QR(double, d)
DEFINE_QR(float, s)

/* LDL^T with uplo "L" as PyTorch calls it. Unlike the symmetric solvers above, the triangle
 * cannot flip: sytrf("U") on A^T is the U D U^T factorisation, pivoting from the last column,
 * not the transpose of the "L" one. So A goes in column-major (transposed) and LD comes back
 * the same way, its upper half (A's values, left by sytrf) zeroed. */
#define DEFINE_LDL(T, P)                                                                           \
    static tide_status ldl_factor_##P(const tide_kview *ld, const tide_kview *piv,                 \
                                      const tide_kview *info, const tide_kview *a) {               \
        lapack_int n = (lapack_int)a->shape[a->ndim - 1], lwork = -1, st_info = 0;                 \
        int64_t    batch = tide_kview_numel(a) / ((int64_t)n * n);                                 \
        T          wq;                                                                             \
        P##sytrf_("L", &n, NULL, &n, NULL, &wq, &lwork, &st_info, 1);                              \
        if (st_info != 0)                                                                          \
            return failed("linalg.ldl_factor", st_info);                                           \
        lwork = (lapack_int)wq > 1 ? (lapack_int)wq : 1;                                           \
        T          *buf = malloc(sizeof(T) * ((size_t)n * n + (size_t)lwork));                     \
        lapack_int *ip = malloc(sizeof(lapack_int) * (size_t)n);                                   \
        if (!buf || !ip) {                                                                         \
            free(buf);                                                                             \
            free(ip);                                                                              \
            return tide_seterr(TIDE_ENOMEM,                                                        \
                               "linalg.ldl_factor: no memory for LAPACK's workspace");             \
        }                                                                                          \
        T          *work = buf + (size_t)n * n;                                                    \
        tide_status st = TIDE_OK;                                                                  \
        for (int64_t b = 0; b < batch; b++) {                                                      \
            T *lb = (T *)ld->data + b * n * n;                                                     \
            transpose_##P(buf, (const T *)a->data + b * n * n, n, n);                              \
            P##sytrf_("L", &n, buf, &n, ip, work, &lwork, &st_info, 1);                            \
            if (st_info < 0) { /* > 0: a zero on D's diagonal, still a factorisation */            \
                st = failed("linalg.ldl_factor", st_info);                                         \
                break;                                                                             \
            }                                                                                      \
            for (lapack_int i = 0; i < n; i++)                                                     \
                for (lapack_int j = 0; j < n; j++)                                                 \
                    lb[(int64_t)i * n + j] = j <= i ? buf[(int64_t)j * n + i] : 0;                 \
            for (lapack_int i = 0; i < n; i++)                                                     \
                ((int64_t *)piv->data)[b * n + i] = ip[i];                                         \
            ((int32_t *)info->data)[b] = (int32_t)st_info;                                         \
        }                                                                                          \
        free(buf);                                                                                 \
        free(ip);                                                                                  \
        return st;                                                                                 \
    }                                                                                              \
    static tide_status ldl_solve_##P(const tide_kview *x, const tide_kview *ld,                    \
                                     const tide_kview *piv, const tide_kview *b) {                 \
        return pivoted_solve_##P(x, ld, piv, b, 1);                                                \
    }
DEFINE_LDL(double, d)
DEFINE_LDL(float, s)

/* the pivots [..., n] (1-based) a pivoted solve trusts (a bad one sends getrs or sytrs out of
 * bounds), as lu_factor or ldl_factor (by) write them: LU's in 1..n; LDL's k in 1..n for a 1x1
 * block, -k on both rows of a 2x2 one */
static tide_status pivots_valid(const char *op, const char *by, const tide_kview *piv, int ldl) {
    int64_t        n = piv->shape[piv->ndim - 1], total = tide_kview_numel(piv);
    const int64_t *p = (const int64_t *)piv->data;
    for (int64_t m = 0; m < (n ? total / n : 0); m++) {
        const int64_t *pm = p + m * n;
        for (int64_t j = 0; j < n; j += ldl && pm[j] < 0 ? 2 : 1)
            if (pm[j] == 0 || pm[j] > n || pm[j] < (ldl ? -n : 1) ||
                (pm[j] < 0 && (j + 1 == n || pm[j + 1] != pm[j])))
                return tide_seterr(TIDE_EINVAL,
                                   "%s: pivots hold %lld at %lld (matrix %lld of the batch), which "
                                   "%s does not give; pass %s's own pivots",
                                   op, (long long)pm[j], (long long)j + 1, (long long)m + 1, by,
                                   by);
    }
    return TIDE_OK;
}

/* q's columns c: k = min(m, n) (the reduced QR) or m (the complete one); orgqr forms from k
 * reflectors any count up to m */
tide_status cpu_qr(tide_device *dev, const tide_kernel_call *c) {
    (void)dev;
    const tide_kview *a = c->in[0], *q = c->out[0], *r = c->out[1];
    int64_t           m = a->shape[a->ndim - 2], n = a->shape[a->ndim - 1], k = m < n ? m : n;
    if (c->p[0].i < k || c->p[0].i > m)
        return tide_seterr(TIDE_EINVAL, "linalg.qr: c = %lld must be in min(m, n)..m = %lld..%lld",
                           (long long)c->p[0].i, (long long)k, (long long)m);
    TIDE_TRY(fits_int("linalg.qr", n));
    TIDE_TRY(fits_int("linalg.qr", m));
    return BY_DTYPE("linalg.qr", a->dtype, qr_d(q, r, a), qr_s(q, r, a));
}

tide_status cpu_lu_factor(tide_device *dev, const tide_kernel_call *c) {
    (void)dev;
    const tide_kview *a = c->in[0], *lu = c->out[0], *pivots = c->out[1];
    TIDE_TRY(fits_int("linalg.lu_factor", a->shape[a->ndim - 1]));
    TIDE_TRY(fits_int("linalg.lu_factor", a->shape[a->ndim - 2]));
    return BY_DTYPE("linalg.lu_factor", a->dtype, lu_factor_d(lu, pivots, a),
                    lu_factor_s(lu, pivots, a));
}

tide_status cpu_lu_solve(tide_device *dev, const tide_kernel_call *c) {
    (void)dev;
    const tide_kview *lu = c->in[0], *pivots = c->in[1], *b = c->in[2], *x = c->out[0];
    TIDE_TRY(fits_int("linalg.lu_solve", lu->shape[lu->ndim - 1]));
    TIDE_TRY(fits_int("linalg.lu_solve", b->shape[b->ndim - 1]));
    TIDE_TRY(pivots_valid("linalg.lu_solve", "lu_factor", pivots, 0));
    return BY_DTYPE("linalg.lu_solve", lu->dtype, lu_solve_d(x, lu, pivots, b),
                    lu_solve_s(x, lu, pivots, b));
}

tide_status cpu_cholesky(tide_device *dev, const tide_kernel_call *c) {
    (void)dev;
    const tide_kview *a = c->in[0], *l = c->out[0];
    TIDE_TRY(fits_int("linalg.cholesky", a->shape[a->ndim - 1]));
    return BY_DTYPE("linalg.cholesky", a->dtype, cholesky_d(l, a), cholesky_s(l, a));
}

tide_status cpu_solve_triangular(tide_device *dev, const tide_kernel_call *c) {
    (void)dev;
    const tide_kview *a = c->in[0], *b = c->in[1], *x = c->out[0];
    int               upper = (int)c->p[0].i, unit = (int)c->p[1].i;
    TIDE_TRY(fits_int("linalg.solve_triangular", a->shape[a->ndim - 1]));
    TIDE_TRY(fits_int("linalg.solve_triangular", b->shape[b->ndim - 1]));
    return BY_DTYPE("linalg.solve_triangular", a->dtype, solve_triangular_d(x, a, b, upper, unit),
                    solve_triangular_s(x, a, b, upper, unit));
}

tide_status cpu_ldl_factor(tide_device *dev, const tide_kernel_call *c) {
    (void)dev;
    const tide_kview *a = c->in[0], *ld = c->out[0], *pivots = c->out[1], *info = c->out[2];
    TIDE_TRY(fits_int("linalg.ldl_factor", a->shape[a->ndim - 1]));
    return BY_DTYPE("linalg.ldl_factor", a->dtype, ldl_factor_d(ld, pivots, info, a),
                    ldl_factor_s(ld, pivots, info, a));
}

tide_status cpu_ldl_solve(tide_device *dev, const tide_kernel_call *c) {
    (void)dev;
    const tide_kview *ld = c->in[0], *pivots = c->in[1], *b = c->in[2], *x = c->out[0];
    TIDE_TRY(fits_int("linalg.ldl_solve", ld->shape[ld->ndim - 1]));
    TIDE_TRY(fits_int("linalg.ldl_solve", b->shape[b->ndim - 1]));
    TIDE_TRY(pivots_valid("linalg.ldl_solve", "ldl_factor", pivots, 1));
    return BY_DTYPE("linalg.ldl_solve", ld->dtype, ldl_solve_d(x, ld, pivots, b),
                    ldl_solve_s(x, ld, pivots, b));
}

/* ---- the general eigendecomposition ------------------------------------------------------- */

/* geev on the column-major copy of each matrix (as PyTorch calls it, so the eigenvectors'
 * phases are LAPACK's own): wr and wi become w's pairs; a conjugate pair j, j + 1 (wi[j] > 0)
 * has the vectors VR[:, j] +- i VR[:, j + 1], a real eigenvalue the real VR[:, j] */
#define DEFINE_EIG(T, P)                                                                           \
    static tide_status eig_##P(const tide_kview *w, const tide_kview *v, const tide_kview *a) {    \
        lapack_int  n = (lapack_int)a->shape[a->ndim - 1], lwork = -1, info = 0, one = 1;          \
        int64_t     batch = tide_kview_numel(a) / ((int64_t)n * n);                                \
        const char *jobvr = v ? "V" : "N";                                                         \
        T           wq, vl;                                                                        \
        TIDE_TRY(finite_##P("linalg.eig", (const T *)a->data, batch *n *n));                       \
        P##geev_("N", jobvr, &n, NULL, &n, NULL, NULL, &vl, &one, NULL, &n, &wq, &lwork, &info, 1, \
                 1);                                                                               \
        if (info != 0)                                                                             \
            return failed("linalg.eig", info);                                                     \
        lwork = (lapack_int)wq;                                                                    \
        size_t nn = (size_t)n * n;                                                                 \
        T     *buf = malloc(sizeof(T) * (2 * nn + 2 * (size_t)n + (size_t)lwork));                 \
        if (!buf)                                                                                  \
            return tide_seterr(TIDE_ENOMEM, "linalg.eig: no memory for LAPACK's workspace");       \
        T          *vr = buf + nn, *wr = vr + nn, *wi = wr + n, *work = wi + n;                    \
        tide_status st = TIDE_OK;                                                                  \
        for (int64_t b = 0; b < batch; b++) {                                                      \
            transpose_##P(buf, (const T *)a->data + b * n * n, n, n);                              \
            P##geev_("N", jobvr, &n, buf, &n, wr, wi, &vl, &one, vr, &n, work, &lwork, &info, 1,   \
                     1);                                                                           \
            if (info != 0) {                                                                       \
                st = failed("linalg.eig", info);                                                   \
                break;                                                                             \
            }                                                                                      \
            T *wb = (T *)w->data + b * 2 * n;                                                      \
            for (lapack_int j = 0; j < n; j++) {                                                   \
                wb[2 * j] = wr[j];                                                                 \
                wb[2 * j + 1] = wi[j];                                                             \
            }                                                                                      \
            if (!v)                                                                                \
                continue;                                                                          \
            T *vb = (T *)v->data + b * 2 * (int64_t)nn; /* row-major [n, n, 2] */                  \
            for (lapack_int j = 0; j < n; j++) {                                                   \
                const T *re = vr + (int64_t)j * n;                                                 \
                if (wi[j] > 0 && j + 1 < n) {                                                      \
                    const T *im = re + n;                                                          \
                    for (lapack_int i = 0; i < n; i++) {                                           \
                        T *row = vb + 2 * ((int64_t)i * n + j);                                    \
                        row[0] = re[i];                                                            \
                        row[1] = im[i];                                                            \
                        row[2] = re[i];                                                            \
                        row[3] = -im[i];                                                           \
                    }                                                                              \
                    j++;                                                                           \
                    continue;                                                                      \
                }                                                                                  \
                for (lapack_int i = 0; i < n; i++) {                                               \
                    T *row = vb + 2 * ((int64_t)i * n + j);                                        \
                    row[0] = re[i];                                                                \
                    row[1] = 0;                                                                    \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
        free(buf);                                                                                 \
        return st;                                                                                 \
    }
DEFINE_EIG(double, d)
DEFINE_EIG(float, s)

tide_status cpu_eig(tide_device *dev, const tide_kernel_call *c) {
    (void)dev;
    const tide_kview *a = c->in[0], *w = c->out[0], *v = c->out[1]; /* v: NULL for none */
    TIDE_TRY(fits_int("linalg.eig", a->shape[a->ndim - 1]));
    return BY_DTYPE("linalg.eig", a->dtype, eig_d(w, v, a), eig_s(w, v, a));
}
