/*
 * softmax.c — CPU softmax / log_softmax and their gradient along one dim of views of any
 * strides, line by line (cpu_softmax_dim, cpu_softmax_backward_dim). half.c widens float16 and
 * bfloat16 through them; softmax_rows.c serves the kernel rows with them.
 */
#include "cpu.h"
#include "scalar_math.h"
#include "vec_math.h"

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

tide_status cpu_softmax_dim(tide_device *dev, const tide_kview *out, const tide_kview *a, int dim,
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

tide_status cpu_softmax_backward_dim(tide_device *dev, const tide_kview *dx, const tide_kview *y,
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
