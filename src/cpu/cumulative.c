/*
 * cumulative.c — the CPU kernel rows cumprod, cummax (with min: cummin) and logcumsumexp of
 * include/tide_kernels.def: each row of a contiguous [rows, len * inner] view scanned along len,
 * as cumsum is (scan.c). PyTorch's CPU loops: float32 products and log-sum-exps in a float64
 * accumulator (its acc type), integer products wrapping in their own width, a running max or min
 * with PyTorch's NaN and tie rules. Rows run in parallel, each in order: the same bits on any
 * number of threads.
 */
#include "cpu.h"
#include <math.h>
#include <stdlib.h>

/* PyTorch's _log_add_exp_helper(x, acc): the larger plus log1p(exp(smaller - larger)); a NaN
 * passes, and two equal infinities give x (-inf + -inf is -inf, not NaN) */
static inline double log_add_exp(double x, double acc) {
    double lo = isnan(acc) ? acc : acc < x ? acc : x;
    double hi = isnan(acc) ? acc : x < acc ? acc : x;
    if (lo != hi || isfinite(lo))
        return log1p(exp(lo - hi)) + hi;
    return x;
}

#define TIMES(a, b)         ((a) * (b))
#define LOG_ADD_EXP(a, b)   log_add_exp((b), (a))
#define FLOAT_NAN(v)        ((v) != (v))
#define NEVER_NAN(v)        ((void)(v), 0)
#define FOLD_INIT_PROD      1
#define FOLD_INIT_LOGSUMEXP (-INFINITY)

/* one row [len, inner] folded along len from INIT by STEP(acc, x): acc holds inner running
 * values of the accumulator type A */
#define FOLD_ROW(NAME, T, A, INIT, STEP)                                                           \
    CPU_HOT static void NAME(void *yv, const void *xv, void *accv, int64_t len, int64_t inner) {   \
        T       *y = yv;                                                                           \
        const T *x = xv;                                                                           \
        A       *acc = accv;                                                                       \
        if (inner == 1) { /* along the last dim: the running value in a register */                \
            A a = (A)(INIT);                                                                       \
            for (int64_t i = 0; i < len; i++) {                                                    \
                a = (A)STEP(a, (A)x[i]);                                                           \
                y[i] = (T)a;                                                                       \
            }                                                                                      \
            return;                                                                                \
        }                                                                                          \
        for (int64_t k = 0; k < inner; k++)                                                        \
            acc[k] = (A)(INIT);                                                                    \
        for (int64_t i = 0; i < len; i++)                                                          \
            for (int64_t k = 0; k < inner; k++) {                                                  \
                acc[k] = (A)STEP(acc[k], (A)x[i * inner + k]);                                     \
                y[i * inner + k] = (T)acc[k];                                                      \
            }                                                                                      \
    }
FOLD_ROW(cumprod_f32, float, double, FOLD_INIT_PROD, TIMES)
FOLD_ROW(cumprod_f64, double, double, FOLD_INIT_PROD, TIMES)
FOLD_ROW(cumprod_i32, int32_t, uint32_t, FOLD_INIT_PROD, TIMES)
FOLD_ROW(cumprod_i64, int64_t, uint64_t, FOLD_INIT_PROD, TIMES)
FOLD_ROW(logcumsumexp_f32, float, double, FOLD_INIT_LOGSUMEXP, LOG_ADD_EXP)
FOLD_ROW(logcumsumexp_f64, double, double, FOLD_INIT_LOGSUMEXP, LOG_ADD_EXP)

/* PyTorch's cummax_cummin_helper: a NaN takes over where it appears (each later NaN too), else
 * an element >= the running max (<= the min) does: among equal values the later index. y (the
 * values) may be NULL; ix gets 1-based indices. acc: inner values, at: inner indices */
#define EXTREME_ROW(NAME, T, ISNAN)                                                                \
    CPU_HOT static void NAME(void *yv, int64_t *ix, const void *xv, void *accv, int64_t *at,       \
                             int64_t len, int64_t inner, int min) {                                \
        T       *y = yv, *acc = accv;                                                              \
        const T *x = xv;                                                                           \
        if (inner == 1 && len > 0) { /* along the last dim: the running pair in registers */       \
            T       m = x[0];                                                                      \
            int64_t a = 0;                                                                         \
            for (int64_t i = 0; i < len; i++) {                                                    \
                T v = x[i];                                                                        \
                if (ISNAN(v) || (!ISNAN(m) && (min ? v <= m : v >= m))) {                          \
                    m = v;                                                                         \
                    a = i;                                                                         \
                }                                                                                  \
                if (y)                                                                             \
                    y[i] = m;                                                                      \
                ix[i] = a + 1;                                                                     \
            }                                                                                      \
            return;                                                                                \
        }                                                                                          \
        for (int64_t i = 0; i < len; i++)                                                          \
            for (int64_t k = 0; k < inner; k++) {                                                  \
                T v = x[i * inner + k];                                                            \
                if (i == 0 || ISNAN(v) || (!ISNAN(acc[k]) && (min ? v <= acc[k] : v >= acc[k]))) { \
                    acc[k] = v;                                                                    \
                    at[k] = i;                                                                     \
                }                                                                                  \
                if (y)                                                                             \
                    y[i * inner + k] = acc[k];                                                     \
                ix[i * inner + k] = at[k] + 1;                                                     \
            }                                                                                      \
    }
EXTREME_ROW(cummax_f32, float, FLOAT_NAN)
EXTREME_ROW(cummax_f64, double, FLOAT_NAN)
EXTREME_ROW(cummax_i32, int32_t, NEVER_NAN)
EXTREME_ROW(cummax_i64, int64_t, NEVER_NAN)

typedef void (*fold_fn)(void *y, const void *x, void *acc, int64_t len, int64_t inner);
typedef void (*extreme_fn)(void *y, int64_t *ix, const void *x, void *acc, int64_t *at, int64_t len,
                           int64_t inner, int min);

/* the rows of call c, in parallel, each with its own scratch of 16 bytes a column: a fold (fold
 * set) or a running extreme */
static tide_status scan_rows(const char *op, const tide_kernel_call *c, fold_fn fold,
                             extreme_fn extreme) {
    int64_t rows = c->rows, d = c->d, inner = c->p[1].i;
    if (d % inner)
        return tide_seterr(TIDE_EINVAL, "%s: inner %lld does not divide the row's %lld", op,
                           (long long)inner, (long long)d);
    int64_t len = d / inner;
    size_t  es = cpu_dtype_size(c->dtype);
    int     par = rows > 1 && rows * d >= CPU_PAR_GRAIN, failed = 0;
    int     min = extreme ? (int)c->p[2].i : 0;
#pragma omp parallel if (par) reduction(| : failed)
    {
        uint64_t *acc = malloc((size_t)inner * 2 * sizeof *acc);
        if (!acc)
            failed = 1;
#pragma omp for schedule(static)
        for (int64_t r = 0; r < rows; r++) {
            if (!acc)
                continue;
            size_t      off = (size_t)(r * d);
            const void *x = (const char *)c->in[0]->data + off * es;
            if (fold) {
                fold((char *)c->out[0]->data + off * es, x, acc, len, inner);
            } else {
                void *y = c->out[0] ? (char *)c->out[0]->data + off * es : NULL;
                extreme(y, (int64_t *)c->out[1]->data + off, x, acc, (int64_t *)(acc + inner), len,
                        inner, min);
            }
        }
        free(acc);
    }
    if (failed)
        return tide_seterr(TIDE_ENOMEM, "%s: out of host memory for %lld running values", op,
                           (long long)inner);
    return TIDE_OK;
}

/* call: in x; out y; p d, inner */
tide_status cpu_cumprod(tide_device *dev, const tide_kernel_call *c) {
    (void)dev;
    switch (c->dtype) {
    case TIDE_DTYPE_F32:
        return scan_rows("cumprod", c, cumprod_f32, NULL);
    case TIDE_DTYPE_F64:
        return scan_rows("cumprod", c, cumprod_f64, NULL);
    case TIDE_DTYPE_I32:
        return scan_rows("cumprod", c, cumprod_i32, NULL);
    case TIDE_DTYPE_I64:
        return scan_rows("cumprod", c, cumprod_i64, NULL);
    default:
        return cpu_notsup("cumprod", c->dtype);
    }
}

/* call: in x; out values (optional), indices; p d, inner, min */
tide_status cpu_cummax(tide_device *dev, const tide_kernel_call *c) {
    (void)dev;
    switch (c->dtype) {
    case TIDE_DTYPE_F32:
        return scan_rows("cummax", c, NULL, cummax_f32);
    case TIDE_DTYPE_F64:
        return scan_rows("cummax", c, NULL, cummax_f64);
    case TIDE_DTYPE_I32:
        return scan_rows("cummax", c, NULL, cummax_i32);
    case TIDE_DTYPE_I64:
        return scan_rows("cummax", c, NULL, cummax_i64);
    default:
        return cpu_notsup("cummax", c->dtype);
    }
}

/* call: in x; out y; p d, inner */
tide_status cpu_logcumsumexp(tide_device *dev, const tide_kernel_call *c) {
    (void)dev;
    switch (c->dtype) {
    case TIDE_DTYPE_F32:
        return scan_rows("logcumsumexp", c, logcumsumexp_f32, NULL);
    case TIDE_DTYPE_F64:
        return scan_rows("logcumsumexp", c, logcumsumexp_f64, NULL);
    default:
        return cpu_notsup("logcumsumexp", c->dtype);
    }
}
