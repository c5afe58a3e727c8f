/*
 * index.c — CPU softmax / log_softmax and their gradient, index_select, index_add and where.
 *
 * index_select and index_add work slice by slice: slice j of the result is a copy (or add) of
 * slice index[j] of the source. Where every slice is one dense block in both (a batch gathered
 * from a dataset, an embedding lookup), index_select copies each with memcpy; other layouts
 * reuse the elementwise kernels' strided copy and add.
 */
#include "cpu.h"
#include "scalar_math.h"
#include "vec_math.h"
#include <string.h>

/* ---- softmax ------------------------------------------------------------------------------ */

typedef struct sm_arg {
    tide_dtype dt;
    int64_t    len, so, sa; /* the dim: size, byte strides in out and a */
    int        log;
} sm_arg;

/* max first so exp never overflows; the sum accumulates in double */
#define SOFTMAX_LOOP(T, EXP, LOG)                                                                  \
    do {                                                                                           \
        const char *pa = p[1];                                                                     \
        char       *po = p[0];                                                                     \
        T           mx = -INFINITY;                                                                \
        for (int64_t j = 0; j < len; j++) {                                                        \
            T v = *(const T *)(pa + j * sm->sa);                                                   \
            if (v > mx || v != v)                                                                  \
                mx = v;                                                                            \
        }                                                                                          \
        double sum = 0;                                                                            \
        for (int64_t j = 0; j < len; j++) {                                                        \
            T e = EXP(*(const T *)(pa + j * sm->sa) - mx);                                         \
            sum += e;                                                                              \
            if (!sm->log)                                                                          \
                *(T *)(po + j * sm->so) = e;                                                       \
        }                                                                                          \
        if (sm->log) {                                                                             \
            T lse = (T)LOG(sum);                                                                   \
            for (int64_t j = 0; j < len; j++)                                                      \
                *(T *)(po + j * sm->so) = *(const T *)(pa + j * sm->sa) - mx - lse;                \
        } else {                                                                                   \
            T inv = (T)(1.0 / sum);                                                                \
            for (int64_t j = 0; j < len; j++)                                                      \
                *(T *)(po + j * sm->so) *= inv;                                                    \
        }                                                                                          \
    } while (0)

/* rows contiguous along the dim, float32: one SIMD loop each (vec_math.h's exp) */
CPU_HOT static void sm_rows_f32(char *po, char *pa, const int64_t *s, int64_t n, const sm_arg *sm) {
    for (int64_t i = 0; i < n; i++, po += s[0], pa += s[1])
        cpu_softmax_row_f32((float *)po, (const float *)pa, sm->len, sm->log);
}

static void sm_row(char **p, const int64_t *s, int64_t n, int64_t index, void *arg) {
    (void)index;
    const sm_arg *sm = arg;
    int64_t       len = sm->len;
    if (sm->dt == TIDE_DTYPE_F32 && sm->sa == sizeof(float) && sm->so == sizeof(float)) {
        sm_rows_f32(p[0], p[1], s, n, sm);
        return;
    }
    for (int64_t i = 0; i < n; i++, p[0] += s[0], p[1] += s[1]) {
        if (sm->dt == TIDE_DTYPE_F32)
            SOFTMAX_LOOP(float, tide_exp_f, tide_log_d);
        else
            SOFTMAX_LOOP(double, tide_exp_d, tide_log_d);
    }
}

tide_status cpu_softmax(tide_device *dev, const tide_kview *out, const tide_kview *a, int dim,
                        int log) {
    (void)dev;
    const char *name = log ? "log_softmax" : "softmax";
    if (a->dtype != TIDE_DTYPE_F32 && a->dtype != TIDE_DTYPE_F64)
        return cpu_notsup(name, a->dtype);
    if (out->dtype != a->dtype)
        return tide_seterr(TIDE_EDTYPE, "%s: cpu kernel needs out and input of one dtype", name);
    if (dim < 0 || dim >= a->ndim)
        return tide_seterr(TIDE_EINVAL, "%s: dim %d out of range for %d dims (cpu kernel)", name,
                           dim, a->ndim);
    size_t     es = cpu_dtype_size(a->dtype);
    sm_arg     sm = {a->dtype, a->shape[dim], out->strides[dim] * (int64_t)es,
                     a->strides[dim] * (int64_t)es, log};
    tide_kview o1 = *out, a1 = *a;
    o1.shape[dim] = a1.shape[dim] = 1;
    o1.strides[dim] = a1.strides[dim] = 0;
    const tide_kview *v[2] = {&o1, &a1};
    cpu_iter          it;
    TIDE_TRY(cpu_iter_init(&it, name, 2, v));
    if (sm.len == 0)
        return TIDE_OK;
    cpu_iter_run(&it, CPU_PAR_GRAIN_HEAVY / sm.len + 1, sm_row, &sm);
    return TIDE_OK;
}

/* ---- softmax's gradient ------------------------------------------------------------------- */

typedef struct smb_arg {
    tide_dtype dt;
    int64_t    len, so, sy, sg; /* the dim: size, byte strides in dx, y and g */
    int        log;
} smb_arg;

/* one row: the sum first (in double), then dx in one pass */
#define SOFTMAX_BACKWARD_ROW(T, EXP)                                                               \
    do {                                                                                           \
        const char *py = p[1], *pg = p[2];                                                         \
        char       *po = p[0];                                                                     \
        double      acc = 0;                                                                       \
        if (sm->log) {                                                                             \
            for (int64_t j = 0; j < len; j++)                                                      \
                acc += *(const T *)(pg + j * sm->sg);                                              \
            T st = (T)acc;                                                                         \
            for (int64_t j = 0; j < len; j++)                                                      \
                *(T *)(po + j * sm->so) =                                                          \
                    *(const T *)(pg + j * sm->sg) - EXP(*(const T *)(py + j * sm->sy)) * st;       \
        } else {                                                                                   \
            for (int64_t j = 0; j < len; j++)                                                      \
                acc += *(const T *)(pg + j * sm->sg) * *(const T *)(py + j * sm->sy);              \
            T st = (T)acc;                                                                         \
            for (int64_t j = 0; j < len; j++)                                                      \
                *(T *)(po + j * sm->so) =                                                          \
                    *(const T *)(py + j * sm->sy) * (*(const T *)(pg + j * sm->sg) - st);          \
        }                                                                                          \
    } while (0)

/* rows contiguous along the dim, float32: SIMD loops (vec_math.h's exp for log_softmax) */
CPU_HOT static void smb_rows_f32(char **p, const int64_t *s, int64_t n, const smb_arg *sm) {
    int64_t len = sm->len;
    for (int64_t i = 0; i < n; i++) {
        float       *o = (float *)(p[0] + i * s[0]);
        const float *y = (const float *)(p[1] + i * s[1]), *g = (const float *)(p[2] + i * s[2]);
        double       acc = 0;
        if (sm->log) {
#pragma omp simd reduction(+ : acc)
            for (int64_t j = 0; j < len; j++)
                acc += g[j];
            float st = (float)acc;
            for (int64_t j = 0; j < len; j++)
                o[j] = g[j] - cpu_vexpf(y[j]) * st;
        } else {
#pragma omp simd reduction(+ : acc)
            for (int64_t j = 0; j < len; j++)
                acc += g[j] * y[j];
            float st = (float)acc;
            for (int64_t j = 0; j < len; j++)
                o[j] = y[j] * (g[j] - st);
        }
    }
}

static void smb_row(char **p, const int64_t *s, int64_t n, int64_t index, void *arg) {
    (void)index;
    const smb_arg *sm = arg;
    int64_t        len = sm->len;
    if (sm->dt == TIDE_DTYPE_F32 && sm->sy == sizeof(float) && sm->sg == sizeof(float) &&
        sm->so == sizeof(float)) {
        smb_rows_f32(p, s, n, sm);
        return;
    }
    for (int64_t i = 0; i < n; i++, p[0] += s[0], p[1] += s[1], p[2] += s[2]) {
        if (sm->dt == TIDE_DTYPE_F32)
            SOFTMAX_BACKWARD_ROW(float, tide_exp_f);
        else
            SOFTMAX_BACKWARD_ROW(double, tide_exp_d);
    }
}

tide_status cpu_softmax_backward(tide_device *dev, const tide_kview *dx, const tide_kview *y,
                                 const tide_kview *g, int dim, int log) {
    (void)dev;
    const char *name = log ? "log_softmax_backward" : "softmax_backward";
    if (y->dtype != TIDE_DTYPE_F32 && y->dtype != TIDE_DTYPE_F64)
        return cpu_notsup(name, y->dtype);
    if (dx->dtype != y->dtype || g->dtype != y->dtype)
        return tide_seterr(TIDE_EDTYPE, "%s: cpu kernel needs dx, y and g of one dtype", name);
    if (dim < 0 || dim >= y->ndim)
        return tide_seterr(TIDE_EINVAL, "%s: dim %d out of range for %d dims (cpu kernel)", name,
                           dim, y->ndim);
    int64_t es = (int64_t)cpu_dtype_size(y->dtype);
    smb_arg sm = {
        y->dtype, y->shape[dim], dx->strides[dim] * es, y->strides[dim] * es, g->strides[dim] * es,
        log};
    tide_kview o1 = *dx, y1 = *y, g1 = *g;
    o1.shape[dim] = y1.shape[dim] = g1.shape[dim] = 1;
    o1.strides[dim] = y1.strides[dim] = g1.strides[dim] = 0;
    const tide_kview *v[3] = {&o1, &y1, &g1};
    cpu_iter          it;
    TIDE_TRY(cpu_iter_init(&it, name, 3, v));
    if (sm.len == 0)
        return TIDE_OK;
    cpu_iter_run(&it, (log ? CPU_PAR_GRAIN_HEAVY : CPU_PAR_GRAIN) / sm.len + 1, smb_row, &sm);
    return TIDE_OK;
}

/* ---- index_select / index_add ------------------------------------------------------------- */

static int64_t index_at(const tide_kview *index, int64_t j) {
    const char *p =
        (const char *)index->data + j * index->strides[0] * (int64_t)cpu_dtype_size(index->dtype);
    return index->dtype == TIDE_DTYPE_I32 ? *(const int32_t *)p : *(const int64_t *)p;
}

/* the view of slice i along dim */
static tide_kview slice(const tide_kview *v, int dim, int64_t i) {
    tide_kview s = *v;
    s.data = (char *)v->data + i * v->strides[dim] * (int64_t)cpu_dtype_size(v->dtype);
    s.shape[dim] = 1;
    return s;
}

/* every index checked before anything is written, so a failed call changes nothing */
static tide_status check_index(const char *name, const tide_kview *index, int dim, int ndim,
                               int64_t size) {
    if (index->ndim != 1 || (index->dtype != TIDE_DTYPE_I64 && index->dtype != TIDE_DTYPE_I32))
        return tide_seterr(TIDE_EINVAL, "%s: cpu kernel needs a 1-d int64 index", name);
    if (dim < 0 || dim >= ndim)
        return tide_seterr(TIDE_EINVAL, "%s: dim %d out of range for %d dims (cpu kernel)", name,
                           dim, ndim);
    for (int64_t j = 0; j < index->shape[0]; j++) {
        int64_t k = index_at(index, j);
        if (k < 0 || k >= size)
            return tide_seterr(TIDE_EINDEX,
                               "%s: index %lld out of range for dim %d of size %lld ; indices "
                               "go from 1 to %lld",
                               name, (long long)((uint64_t)k + 1u), dim + 1, (long long)size,
                               (long long)size);
    }
    return TIDE_OK;
}

/* the elements of one slice along dim when every slice of v is one dense block in row-major
 * order, else -1 */
static int64_t dense_slice_numel(const tide_kview *v, int dim) {
    int64_t expect = 1;
    for (int d = v->ndim - 1; d >= 0; d--) {
        if (d == dim || v->shape[d] == 1)
            continue;
        if (v->strides[d] != expect)
            return -1;
        expect *= v->shape[d];
    }
    return expect;
}

tide_status cpu_index_select(tide_device *dev, const tide_kview *out, const tide_kview *a, int dim,
                             const tide_kview *index) {
    TIDE_TRY(check_index("index_select", index, dim, a->ndim,
                         dim >= 0 && dim < a->ndim ? a->shape[dim] : 0));
    int64_t n = index->shape[0];
    if (out->ndim != a->ndim || out->shape[dim] != n)
        return tide_seterr(TIDE_ESHAPE, "index_select: cpu kernel got a wrong output shape");
    /* a batch gathered from a dataset: each slice is one block in both, so one memcpy each
     * (a strided copy per slice costs far more than the copy for rows of a few KB) */
    int64_t inner = dense_slice_numel(a, dim);
    if (inner >= 0 && inner == dense_slice_numel(out, dim) && a->dtype == out->dtype) {
        size_t      es = cpu_dtype_size(a->dtype), bytes = (size_t)inner * es;
        int64_t     sa = a->strides[dim] * (int64_t)es, so = out->strides[dim] * (int64_t)es;
        char       *po = out->data;
        const char *pa = a->data;
        int         par = n > 1 && n * inner >= CPU_PAR_GRAIN;
#pragma omp parallel for schedule(static) if (par)
        for (int64_t j = 0; j < n; j++)
            memcpy(po + j * so, pa + index_at(index, j) * sa, bytes);
        return TIDE_OK;
    }
    for (int64_t j = 0; j < n; j++) {
        int64_t    k = index_at(index, j);
        tide_kview so = slice(out, dim, j), sa = slice(a, dim, k);
        TIDE_TRY(cpu_copy(dev, &so, &sa));
    }
    return TIDE_OK;
}

tide_status cpu_index_add(tide_device *dev, const tide_kview *dst, int dim, const tide_kview *index,
                          const tide_kview *src) {
    TIDE_TRY(check_index("index_add_", index, dim, dst->ndim,
                         dim >= 0 && dim < dst->ndim ? dst->shape[dim] : 0));
    int64_t n = index->shape[0];
    if (src->ndim != dst->ndim || src->shape[dim] != n)
        return tide_seterr(TIDE_ESHAPE, "index_add_: cpu kernel got a wrong source shape");
    /* in order, so duplicate indices accumulate */
    for (int64_t j = 0; j < n; j++) {
        int64_t    k = index_at(index, j);
        tide_kview sd = slice(dst, dim, k), ss = slice(src, dim, j);
        TIDE_TRY(cpu_binary(dev, TIDE_OP_ADD, &sd, &sd, &ss));
    }
    return TIDE_OK;
}

/* ---- where -------------------------------------------------------------------------------- */

#define WHERE_LOOP(T)                                                                              \
    do {                                                                                           \
        char *po = p[0], *pc = p[1], *pa = p[2], *pb = p[3];                                       \
        for (int64_t i = 0; i < n; i++, po += s[0], pc += s[1], pa += s[2], pb += s[3])            \
            *(T *)po = *(const uint8_t *)pc ? *(const T *)pa : *(const T *)pb;                     \
    } while (0)

static void where_row(char **p, const int64_t *s, int64_t n, int64_t index, void *arg) {
    (void)index;
    CPU_BY_SIZE(*(const size_t *)arg, WHERE_LOOP)
}

tide_status cpu_where(tide_device *dev, const tide_kview *out, const tide_kview *cond,
                      const tide_kview *a, const tide_kview *b) {
    (void)dev;
    if (cond->dtype != TIDE_DTYPE_BOOL && cond->dtype != TIDE_DTYPE_U8)
        return tide_seterr(TIDE_EDTYPE, "where: cpu kernel needs a bool condition");
    if (a->dtype != out->dtype || b->dtype != out->dtype)
        return tide_seterr(TIDE_EDTYPE, "where: cpu kernel needs a, b and out of one dtype");
    const tide_kview *v[4] = {out, cond, a, b};
    cpu_iter          it;
    TIDE_TRY(cpu_iter_init(&it, "where", 4, v));
    size_t es = cpu_dtype_size(out->dtype);
    cpu_iter_run(&it, CPU_PAR_GRAIN, where_row, &es);
    return TIDE_OK;
}
