/*
 * linalg.c — the CPU's decompositions by LAPACK (OpenBLAS ships it): eigh by syevd
 * (divide and conquer), the reduced SVD by gesdd. One matrix of the batch at a time, each call
 * on OpenBLAS's own threads.
 *
 * LAPACK is column-major and a row-major matrix read column-major is its transpose, so no
 * input is transposed: the symmetric A read as A^T has its lower triangle where A has its upper
 * (the triangle flag flips), and the SVD of A^T = U' S V'^T is A = V' S U'^T, whose row-major
 * U and Vh are exactly the column-major V'^T and U' gesdd writes.
 */
#include "cpu.h"

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

/* the same code for float and double: T the element type, P the LAPACK prefix */
#define DEFINE_EIGH(T, P)                                                                          \
    static tide_status eigh_##P(const tide_kview *w, const tide_kview *v, const tide_kview *a,     \
                                int upper) {                                                       \
        lapack_int  n = (lapack_int)a->shape[a->ndim - 1], lwork = -1, liwork = -1, info = 0;      \
        int64_t     batch = tide_kview_numel(a) / ((int64_t)n * n);                                \
        T           wq;                                                                            \
        lapack_int  iq;                                                                            \
        const char *uplo = upper ? "L" : "U"; /* A read column-major is A^T */                     \
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

tide_status cpu_eigh(tide_device *dev, const tide_kview *w, const tide_kview *v,
                     const tide_kview *a, int upper) {
    (void)dev;
    TIDE_TRY(fits_int("linalg.eigh", a->shape[a->ndim - 1]));
    if (a->dtype == TIDE_DTYPE_F64)
        return eigh_d(w, v, a, upper);
    if (a->dtype == TIDE_DTYPE_F32)
        return eigh_s(w, v, a, upper);
    return tide_seterr(TIDE_ENOTSUP, "linalg.eigh: no CPU kernel for %s",
                       tide_dtype_name(a->dtype));
}

tide_status cpu_svd(tide_device *dev, const tide_kview *u, const tide_kview *s,
                    const tide_kview *vh, const tide_kview *a) {
    (void)dev;
    TIDE_TRY(fits_int("linalg.svd", a->shape[a->ndim - 1]));
    TIDE_TRY(fits_int("linalg.svd", a->shape[a->ndim - 2]));
    if (a->dtype == TIDE_DTYPE_F64)
        return svd_d(u, s, vh, a);
    if (a->dtype == TIDE_DTYPE_F32)
        return svd_s(u, s, vh, a);
    return tide_seterr(TIDE_ENOTSUP, "linalg.svd: no CPU kernel for %s", tide_dtype_name(a->dtype));
}
