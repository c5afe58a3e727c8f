/*
 * reduce.c — CPU reductions over one dim: sum mean prod max min argmax argmin.
 *
 * The iterator walks the output positions (the input with the reduced dim removed); for each
 * one a typed loop runs along the reduced dim. Sums accumulate in double (floats) or wrapping
 * int64 (integers). When the reduced dim is the outer one (a column sum, as for bias
 * gradients), sums go row by row into a block of accumulators instead, which reads memory in
 * order.
 */
#include "cpu.h"
#include <stdlib.h>
#include <string.h>

typedef struct red_arg {
    tide_op    op;
    tide_dtype adt, odt; /* input dtype, values dtype */
    int64_t    len, sd;  /* reduced dim: size and byte stride */
    int        has_vals, has_idx;
} red_arg;

/* float sums: independent double accumulators, a multiple of every SIMD width */
#define SUM_LANES 32

typedef struct acc {
    double  d;
    int64_t i; /* integer sums and products, wrapping */
    int64_t idx;
} acc;

static int is_float(tide_dtype dt) {
    return dt == TIDE_DTYPE_F32 || dt == TIDE_DTYPE_F64;
}

/* A float32 row's sum: blocks of SUM_BLOCK elements summed in float32 lanes, SUM_LANES of
 * them (each lane adds SUM_BLOCK / SUM_LANES values), then each lane's block total added to a
 * double accumulator. Converting every element to double first had cost two instructions
 * more per four elements and half PyTorch's speed (its float32 cascade sum) on data in cache;
 * a lane's float32 partial of 8 values errs by at most 8 ulp of it, the rest is summed in
 * double, so the result stays more exact than PyTorch's. */
#define SUM_BLOCK   256
#define SHORT_LANES 8
__attribute__((always_inline)) static inline double sum_f32(const float *x, int64_t len) {
    if (len < SUM_BLOCK) {
        /* a short row (a [1000, 64] sum over its last dim): 8 lanes, as zeroing and folding 32
         * (a rep stos per row) had cost more than the row itself, 9x PyTorch's time */
        double  c[SHORT_LANES];
        int64_t j = 0;
        for (int u = 0; u < SHORT_LANES; u++)
            c[u] = 0;
        for (; j + SHORT_LANES <= len; j += SHORT_LANES)
            for (int u = 0; u < SHORT_LANES; u++)
                c[u] += (double)x[j + u];
        for (; j < len; j++)
            c[0] += (double)x[j];
        for (int w = SHORT_LANES / 2; w > 0; w /= 2) /* pairwise */
            for (int u = 0; u < w; u++)
                c[u] += c[u + w];
        return c[0];
    }
    double  d[SUM_LANES] = {0};
    int64_t j = 0;
    for (; j + SUM_BLOCK <= len; j += SUM_BLOCK) {
        float c[SUM_LANES] = {0};
        for (int b = 0; b < SUM_BLOCK; b += SUM_LANES)
            for (int u = 0; u < SUM_LANES; u++)
                c[u] += x[j + b + u];
        for (int u = 0; u < SUM_LANES; u++)
            d[u] += (double)c[u];
    }
    for (; j + SUM_LANES <= len; j += SUM_LANES)
        for (int u = 0; u < SUM_LANES; u++)
            d[u] += (double)x[j + u];
    for (; j < len; j++)
        d[0] += (double)x[j];
    for (int w = SUM_LANES / 2; w > 0; w /= 2) /* pairwise */
        for (int u = 0; u < w; u++)
            d[u] += d[u + w];
    return d[0];
}

/* one reduction along the dim; T the input type, FLT whether it is floating */
#define RED_LOOP(T, FLT)                                                                           \
    do {                                                                                           \
        const char *q = pa;                                                                        \
        switch (ra->op) {                                                                          \
        case TIDE_OP_SUM:                                                                          \
        case TIDE_OP_MEAN:                                                                         \
            if (FLT) {                                                                             \
                double sum = 0;                                                                    \
                if (ra->sd == sizeof(T) && ra->adt == TIDE_DTYPE_F32) {                            \
                    sum = sum_f32((const float *)q, len);                                          \
                } else if (ra->sd == sizeof(T)) { /* SUM_LANES chains hide the add latency */      \
                    const T *x = (const T *)q;                                                     \
                    double   c[SUM_LANES] = {0};                                                   \
                    int64_t  j = 0;                                                                \
                    for (; j + SUM_LANES <= len; j += SUM_LANES)                                   \
                        for (int u = 0; u < SUM_LANES; u++)                                        \
                            c[u] += (double)x[j + u];                                              \
                    for (; j < len; j++)                                                           \
                        c[0] += (double)x[j];                                                      \
                    for (int w = SUM_LANES / 2; w > 0; w /= 2) /* pairwise */                      \
                        for (int u = 0; u < w; u++)                                                \
                            c[u] += c[u + w];                                                      \
                    sum = c[0];                                                                    \
                } else {                                                                           \
                    for (int64_t j = 0; j < len; j++, q += ra->sd)                                 \
                        sum += (double)*(const T *)q;                                              \
                }                                                                                  \
                r.d = sum;                                                                         \
            } else {                                                                               \
                uint64_t sum = 0;                                                                  \
                for (int64_t j = 0; j < len; j++, q += ra->sd)                                     \
                    sum += (uint64_t)(int64_t) * (const T *)q;                                     \
                r.i = (int64_t)sum;                                                                \
                r.d = (double)r.i;                                                                 \
            }                                                                                      \
            break;                                                                                 \
        case TIDE_OP_PROD:                                                                         \
            if (FLT &&                                                                             \
                ra->sd == sizeof(T)) { /* SUM_LANES chains, as the sums' (one: 9x PyTorch) */      \
                const T *x = (const T *)q;                                                         \
                double   c[SUM_LANES];                                                             \
                int64_t  j = 0;                                                                    \
                for (int u = 0; u < SUM_LANES; u++)                                                \
                    c[u] = 1;                                                                      \
                for (; j + SUM_LANES <= len; j += SUM_LANES)                                       \
                    for (int u = 0; u < SUM_LANES; u++)                                            \
                        c[u] *= (double)x[j + u];                                                  \
                for (; j < len; j++)                                                               \
                    c[0] *= (double)x[j];                                                          \
                for (int w = SUM_LANES / 2; w > 0; w /= 2)                                         \
                    for (int u = 0; u < w; u++)                                                    \
                        c[u] *= c[u + w];                                                          \
                r.d = c[0];                                                                        \
            } else if (FLT) {                                                                      \
                double pr = 1;                                                                     \
                for (int64_t j = 0; j < len; j++, q += ra->sd)                                     \
                    pr *= (double)*(const T *)q;                                                   \
                r.d = pr;                                                                          \
            } else {                                                                               \
                uint64_t pr = 1;                                                                   \
                for (int64_t j = 0; j < len; j++, q += ra->sd)                                     \
                    pr *= (uint64_t)(int64_t) * (const T *)q;                                      \
                r.i = (int64_t)pr;                                                                 \
                r.d = (double)r.i;                                                                 \
            }                                                                                      \
            break;                                                                                 \
        default: { /* max min argmax argmin: first extreme wins; a NaN beats everything */         \
            int is_max = ra->op == TIDE_OP_MAX || ra->op == TIDE_OP_ARGMAX;                        \
            if (ra->sd == sizeof(T) && len >= EXT_LANES) {                                         \
                int64_t *at = ra->has_idx ? &r.idx : NULL;                                         \
                T        ext = is_max ? EXT_NAME(T, max)((const T *)q, len, at)                    \
                                      : EXT_NAME(T, min)((const T *)q, len, at);                   \
                r.d = (double)ext;                                                                 \
                r.i = FLT ? 0 : (int64_t)ext; /* a NaN or inf does not convert (UB) */             \
                break;                                                                             \
            }                                                                                      \
            T       best = *(const T *)q;                                                          \
            int64_t bi = 0;                                                                        \
            q += ra->sd;                                                                           \
            for (int64_t j = 1; j < len && best == best; j++, q += ra->sd) {                       \
                T v = *(const T *)q;                                                               \
                if (v != v || (is_max ? v > best : v < best)) {                                    \
                    best = v;                                                                      \
                    bi = j;                                                                        \
                }                                                                                  \
            }                                                                                      \
            r.d = (double)best;                                                                    \
            /* r.i is read for integer inputs only: a NaN or inf does not convert (UB) */          \
            r.i = FLT ? 0 : (int64_t)best;                                                         \
            r.idx = bi;                                                                            \
            break;                                                                                 \
        }                                                                                          \
        }                                                                                          \
    } while (0)

/* The extreme of a contiguous row: one SIMD reduction (the loop above is one compare chain:
 * an int64 max of a million took 4x a float32's) and a NaN flag, then, when the index is wanted
 * or the value is a NaN (the row's first) or 0 (the first of -0 and +0, as above), a scan for
 * its first occurrence, which *at gets (integers have no NaN and one 0) */
#define EXT_LANES          16 /* the shortest row worth it */
#define EXT_CHAINS         32
#define EXT_NAME(T, which) ext_##which##_##T
#define EXT_FN(T, which, BETTER, SIMD)                                                             \
    __attribute__((always_inline)) static inline T EXT_NAME(T, which)(const T *x, int64_t len,     \
                                                                      int64_t *at) {               \
        /* EXT_CHAINS independent running extremes (one had waited on each compare's latency:      \
         * a float32 max took twice a min the compiler happened to unroll) */                      \
        T       lane[EXT_CHAINS];                                                                  \
        int     lane_nan[EXT_CHAINS] = {0};                                                        \
        int64_t j0 = 0;                                                                            \
        for (int u = 0; u < EXT_CHAINS; u++)                                                       \
            lane[u] = x[0];                                                                        \
        for (; j0 + EXT_CHAINS <= len; j0 += EXT_CHAINS)                                           \
            for (int u = 0; u < EXT_CHAINS; u++) {                                                 \
                T v = x[j0 + u];                                                                   \
                lane[u] = BETTER(v, lane[u]) ? v : lane[u];                                        \
                lane_nan[u] |= v != v;                                                             \
            }                                                                                      \
        T   best = lane[0];                                                                        \
        int nan = 0;                                                                               \
        for (int u = 0; u < EXT_CHAINS; u++) {                                                     \
            best = BETTER(lane[u], best) ? lane[u] : best;                                         \
            nan |= lane_nan[u];                                                                    \
        }                                                                                          \
        _Pragma(SIMD) for (int64_t j = j0; j < len; j++) {                                         \
            best = BETTER(x[j], best) ? x[j] : best;                                               \
            nan |= x[j] != x[j];                                                                   \
        }                                                                                          \
        if (!at && !nan && best != 0)                                                              \
            return best;                                                                           \
        int64_t j = 0;                                                                             \
        while (j < len - 1 && (nan ? x[j] == x[j] : x[j] != best))                                 \
            j++;                                                                                   \
        if (at)                                                                                    \
            *at = j;                                                                               \
        return x[j];                                                                               \
    }
#define EXT_GT(a, b) ((a) > (b))
#define EXT_LT(a, b) ((a) < (b))
#define EXT_MAX      "omp simd reduction(max : best) reduction(| : nan)"
#define EXT_MIN      "omp simd reduction(min : best) reduction(| : nan)"
EXT_FN(float, max, EXT_GT, EXT_MAX)
EXT_FN(float, min, EXT_LT, EXT_MIN)
EXT_FN(double, max, EXT_GT, EXT_MAX)
EXT_FN(double, min, EXT_LT, EXT_MIN)
EXT_FN(int32_t, max, EXT_GT, EXT_MAX)
EXT_FN(int32_t, min, EXT_LT, EXT_MIN)
EXT_FN(int64_t, max, EXT_GT, EXT_MAX)
EXT_FN(int64_t, min, EXT_LT, EXT_MIN)
EXT_FN(uint8_t, max, EXT_GT, EXT_MAX)
EXT_FN(uint8_t, min, EXT_LT, EXT_MIN)

CPU_HOT static acc reduce_one(const red_arg *ra, const char *pa) {
    acc     r = {0, 0, 0};
    int64_t len = ra->len;
    switch (ra->adt) {
    case TIDE_DTYPE_F32:
        RED_LOOP(float, 1);
        break;
    case TIDE_DTYPE_F64:
        RED_LOOP(double, 1);
        break;
    case TIDE_DTYPE_I32:
        RED_LOOP(int32_t, 0);
        break;
    case TIDE_DTYPE_I64:
        RED_LOOP(int64_t, 0);
        break;
    default:
        RED_LOOP(uint8_t, 0);
        break;
    }
    return r;
}

/* writes one result: integers exactly when both sides are integers */
static void store(const red_arg *ra, char *po, acc r) {
    int int_result = !is_float(ra->adt) && ra->op != TIDE_OP_MEAN;
    if (ra->op == TIDE_OP_MEAN)
        r.d = is_float(ra->adt) ? r.d / (double)ra->len : (double)r.i / (double)ra->len;
    if (int_result && ra->odt == TIDE_DTYPE_I64)
        *(int64_t *)po = r.i;
    else if (int_result && ra->odt == TIDE_DTYPE_I32)
        *(int32_t *)po = (int32_t)r.i;
    else if (int_result && ra->odt == TIDE_DTYPE_U8)
        *(uint8_t *)po = (uint8_t)r.i;
    else if (int_result && ra->odt == TIDE_DTYPE_BOOL)
        *(uint8_t *)po = r.i != 0;
    else
        tide_store_d(ra->odt, po, r.d);
}

/* p[0] values (or indices when there are no values), p[1] input, p[2] indices */
static void red_row(char **p, const int64_t *s, int64_t n, int64_t index, void *arg) {
    (void)index;
    const red_arg *ra = arg;
    for (int64_t i = 0; i < n; i++) {
        acc r = reduce_one(ra, p[1] + i * s[1]);
        if (ra->has_vals)
            store(ra, p[0] + i * s[0], r);
        if (ra->has_idx)
            *(int64_t *)(p[2] + i * s[2]) = r.idx;
    }
}

/* column sums: accumulators for a block of output positions, input read row by row */
#define COL_BLOCK 512
CPU_HOT static void colsum_row(char **p, const int64_t *s, int64_t n, int64_t index, void *arg) {
    (void)index;
    const red_arg *ra = arg;
    for (int64_t i0 = 0; i0 < n; i0 += COL_BLOCK) {
        int64_t m = n - i0 < COL_BLOCK ? n - i0 : COL_BLOCK;
        double  sum[COL_BLOCK];
        memset(sum, 0, sizeof(double) * (size_t)m);
        const char *base = p[1] + i0 * s[1];
        for (int64_t j = 0; j < ra->len; j++, base += ra->sd) {
            if (ra->adt == TIDE_DTYPE_F32) {
                if (s[1] == 4) {
                    const float *x = (const float *)base;
                    for (int64_t i = 0; i < m; i++)
                        sum[i] += x[i];
                } else {
                    for (int64_t i = 0; i < m; i++)
                        sum[i] += *(const float *)(base + i * s[1]);
                }
            } else {
                for (int64_t i = 0; i < m; i++)
                    sum[i] += *(const double *)(base + i * s[1]);
            }
        }
        for (int64_t i = 0; i < m; i++) {
            acc r = {sum[i], 0, 0};
            store(ra, p[0] + (i0 + i) * s[0], r);
        }
    }
}

/* column maxima and minima (values only, float): a block of running extremes, the input read
 * row by row, as colsum_row; a NaN sticks (v > NaN is false), the first of equal values stays */
#define COL_EXT(T, BETTER)                                                                         \
    do {                                                                                           \
        T best[COL_BLOCK];                                                                         \
        for (int64_t i = 0; i < m; i++)                                                            \
            best[i] = *(const T *)(base + i * s[1]);                                               \
        for (int64_t j = 1; j < ra->len; j++) {                                                    \
            const char *row = base + j * ra->sd;                                                   \
            if (s[1] == sizeof(T)) { /* a contiguous block: vectors */                             \
                const T *x = (const T *)row;                                                       \
                for (int64_t i = 0; i < m; i++)                                                    \
                    best[i] = (BETTER(x[i], best[i]) | (x[i] != x[i])) ? x[i] : best[i];           \
            } else {                                                                               \
                for (int64_t i = 0; i < m; i++) {                                                  \
                    T v = *(const T *)(row + i * s[1]), b = best[i];                               \
                    best[i] = (BETTER(v, b) | (v != v)) ? v : b;                                   \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
        for (int64_t i = 0; i < m; i++) {                                                          \
            acc r = {(double)best[i], 0, 0};                                                       \
            store(ra, p[0] + (i0 + i) * s[0], r);                                                  \
        }                                                                                          \
    } while (0)
CPU_HOT static void colext_row(char **p, const int64_t *s, int64_t n, int64_t index, void *arg) {
    (void)index;
    const red_arg *ra = arg;
    for (int64_t i0 = 0; i0 < n; i0 += COL_BLOCK) {
        int64_t     m = n - i0 < COL_BLOCK ? n - i0 : COL_BLOCK;
        const char *base = p[1] + i0 * s[1];
        if (ra->adt == TIDE_DTYPE_F32)
            if (ra->op == TIDE_OP_MAX)
                COL_EXT(float, EXT_GT);
            else
                COL_EXT(float, EXT_LT);
        else if (ra->op == TIDE_OP_MAX)
            COL_EXT(double, EXT_GT);
        else
            COL_EXT(double, EXT_LT);
    }
}

/* A float sum, mean, max or min of a whole contiguous row (a full reduction) in chunks of
 * RED_CHUNK elements on the threads, their results combined in order: one row had kept one
 * thread (a million floats: 0.08 ms against PyTorch's 0.03 on two). The chunks do not depend
 * on the thread count, so neither does the result. */
#define RED_CHUNK ((int64_t)1 << 15)

static int by_chunks(const red_arg *ra, const tide_kview *prim) {
    return is_float(ra->adt) && !ra->has_idx && ra->op != TIDE_OP_PROD &&
           ra->sd == (int64_t)cpu_dtype_size(ra->adt) && ra->len >= 2 * RED_CHUNK &&
           cpu_numel(prim) == 1;
}

static tide_status reduce_chunks(const red_arg *ra, const tide_kview *out, const tide_kview *a) {
    int64_t len = ra->len, nc = (len + RED_CHUNK - 1) / RED_CHUNK, es = ra->sd;
    acc    *part = malloc(sizeof(acc) * (size_t)nc);
    if (!part)
        return tide_seterr(TIDE_ENOMEM, "%s: out of host memory for %lld partial results",
                           cpu_op_name(ra->op), (long long)nc);
#pragma omp parallel for schedule(static)
    for (int64_t c = 0; c < nc; c++) {
        red_arg rc = *ra;
        rc.len = len - c * RED_CHUNK < RED_CHUNK ? len - c * RED_CHUNK : RED_CHUNK;
        part[c] = reduce_one(&rc, (const char *)a->data + c * RED_CHUNK * es);
    }
    acc r = part[0];
    int is_max = ra->op == TIDE_OP_MAX;
    for (int64_t c = 1; c < nc; c++) {
        double v = part[c].d;
        if (ra->op == TIDE_OP_SUM || ra->op == TIDE_OP_MEAN)
            r.d += v;
        else if (r.d == r.d && (v != v || (is_max ? v > r.d : v < r.d)))
            r.d = v; /* a NaN wins, else the first extreme */
    }
    free(part);
    store(ra, out->data, r);
    return TIDE_OK;
}

tide_status cpu_reduce(tide_device *dev, tide_op op, const tide_kview *out,
                       const tide_kview *indices, const tide_kview *a, int dim) {
    (void)dev;
    const char *name = cpu_op_name(op);
    if (op < TIDE_OP_SUM || op > TIDE_OP_PROD)
        return tide_seterr(TIDE_EINVAL, "%s: not a reduction (cpu kernel)", name);
    if (a->dtype == TIDE_DTYPE_F16 || a->dtype == TIDE_DTYPE_BF16 ||
        (unsigned)a->dtype >= TIDE_DTYPE_COUNT)
        return cpu_notsup(name, a->dtype);
    if (dim < 0 || dim >= a->ndim)
        return tide_seterr(TIDE_EINVAL, "%s: dim %d out of range for %d dims (cpu kernel)", name,
                           dim, a->ndim);
    int is_arg = op == TIDE_OP_ARGMAX || op == TIDE_OP_ARGMIN;
    int want_idx = is_arg || ((op == TIDE_OP_MAX || op == TIDE_OP_MIN) && indices);
    if ((is_arg && !indices) || (!is_arg && !out))
        return tide_seterr(TIDE_EINVAL, "%s: missing output (cpu kernel)", name);
    if (want_idx && indices->dtype != TIDE_DTYPE_I64)
        return tide_seterr(TIDE_EDTYPE, "%s: indices must be int64 (cpu kernel)", name);
    const tide_kview *prim = is_arg ? indices : out;
    if (prim->ndim != a->ndim || prim->shape[dim] != 1)
        return tide_seterr(TIDE_EINVAL, "%s: output must keep dim %d with size 1 (cpu kernel)",
                           name, dim);
    red_arg ra = {op,
                  a->dtype,
                  is_arg ? TIDE_DTYPE_I64 : out->dtype,
                  a->shape[dim],
                  a->strides[dim] * (int64_t)cpu_dtype_size(a->dtype),
                  !is_arg,
                  want_idx};
    if (ra.len == 0 && op != TIDE_OP_SUM && op != TIDE_OP_MEAN && op != TIDE_OP_PROD)
        return tide_seterr(TIDE_EINVAL,
                           "%s: cannot reduce over an empty dim %d; %s needs at least one "
                           "element",
                           name, dim, name);
    if (by_chunks(&ra, prim))
        return reduce_chunks(&ra, out, a);
    /* input view over the output positions: the reduced dim collapses to size 1 */
    tide_kview ain = *a;
    ain.shape[dim] = 1;
    ain.strides[dim] = 0;
    const tide_kview *v[3] = {prim, &ain, want_idx ? indices : prim};
    cpu_iter          it;
    TIDE_TRY(cpu_iter_init(&it, name, 3, v));
    int64_t grain = CPU_PAR_GRAIN / (ra.len > 0 ? ra.len : 1) + 1;
    int colsum = (op == TIDE_OP_SUM || op == TIDE_OP_MEAN) && is_float(a->dtype) && it.numel > 1 &&
                 ra.len > 1 && llabs(it.strides[1][it.ndim - 1]) < llabs(ra.sd);
    if (colsum) {
        cpu_iter_run(&it, grain, colsum_row, &ra);
        return TIDE_OK;
    }
    int colext = (op == TIDE_OP_MAX || op == TIDE_OP_MIN) && !want_idx && is_float(a->dtype) &&
                 it.numel > 1 && ra.len > 1 && llabs(it.strides[1][it.ndim - 1]) < llabs(ra.sd);
    if (colext) {
        cpu_iter_run(&it, grain, colext_row, &ra);
        return TIDE_OK;
    }
    cpu_iter_run(&it, grain, red_row, &ra);
    return TIDE_OK;
}
