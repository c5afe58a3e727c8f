/*
 * index.c — CPU index_select, index_add and where.
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
    /* slices that are one block each (a 1-D dst: bincount's counts; rows of a matrix): the sums
     * in a loop here, in order, so duplicate indices accumulate as below; a binary op call per
     * index cost 36 ms for 10^6 one-element slices (PyTorch: 0.8) */
    int64_t inner = dense_slice_numel(dst, dim);
    if (inner >= 0 && inner == dense_slice_numel(src, dim) && src->dtype == dst->dtype) {
        size_t      es = cpu_dtype_size(dst->dtype);
        int64_t     sd = dst->strides[dim] * (int64_t)es, ss = src->strides[dim] * (int64_t)es;
        char       *pd = dst->data;
        const char *ps = src->data;
/* (integers wrap, as the binary add's: in unsigned arithmetic, no signed overflow) */
#define IADD_LOOP(T, U)                                                                            \
    for (int64_t j = 0; j < n; j++) {                                                              \
        T       *d = (T *)(pd + index_at(index, j) * sd);                                          \
        const T *x = (const T *)(ps + j * ss);                                                     \
        for (int64_t q = 0; q < inner; q++)                                                        \
            d[q] = (T)((U)d[q] + (U)x[q]);                                                         \
    }                                                                                              \
    return TIDE_OK;
        switch (dst->dtype) {
        case TIDE_DTYPE_F32:
            IADD_LOOP(float, float)
        case TIDE_DTYPE_F64:
            IADD_LOOP(double, double)
        case TIDE_DTYPE_I64:
            IADD_LOOP(int64_t, uint64_t)
        case TIDE_DTYPE_I32:
            IADD_LOOP(int32_t, uint32_t)
        default:
            break;
        }
#undef IADD_LOOP
    }
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

/* contiguous rows (the common case: a mask of the operands' own shape): both sides read, one
 * select a lane, which vectorizes (a read under the condition would not). XS and YS are the
 * operands' element strides, 1 or 0: a number broadcast (where(m, 0, y), masked_fill's value),
 * which the element-wise loop below had read with a branch the mask's randomness mispredicted
 * (where(m, 0, y) of a million floats took 2.9 ms against 0.33 with two tensors) */
#define WHERE_CONTIG(T, XS, YS)                                                                    \
    do {                                                                                           \
        T             *o = (T *)p[0];                                                              \
        const uint8_t *c = (const uint8_t *)p[1];                                                  \
        const T       *x = (const T *)p[2], *y = (const T *)p[3];                                  \
        for (int64_t i = 0; i < n; i++) {                                                          \
            T xv = x[i * (XS)], yv = y[i * (YS)];                                                  \
            o[i] = c[i] ? xv : yv;                                                                 \
        }                                                                                          \
    } while (0)
#define WHERE_CONTIG_BY_STRIDES(T)                                                                 \
    do {                                                                                           \
        if (s[2] && s[3])                                                                          \
            WHERE_CONTIG(T, 1, 1);                                                                 \
        else if (s[3])                                                                             \
            WHERE_CONTIG(T, 0, 1);                                                                 \
        else if (s[2])                                                                             \
            WHERE_CONTIG(T, 1, 0);                                                                 \
        else                                                                                       \
            WHERE_CONTIG(T, 0, 0);                                                                 \
    } while (0)

/* one operand's row into out's: a fill when its stride is 0 (a masked_fill's value), a move */
#define PICK_LOOP(T)                                                                               \
    do {                                                                                           \
        if (s[0] == (int64_t)sizeof(T) && s[k] == 0) {                                             \
            T *o = (T *)p[0], v = *(const T *)p[k];                                                \
            for (int64_t i = 0; i < n; i++)                                                        \
                o[i] = v;                                                                          \
        } else {                                                                                   \
            char *po = p[0], *pk = p[k];                                                           \
            for (int64_t i = 0; i < n; i++, po += s[0], pk += s[k])                                \
                *(T *)po = *(const T *)pk;                                                         \
        }                                                                                          \
    } while (0)

CPU_HOT static void where_row(char **p, const int64_t *s, int64_t n, int64_t index, void *arg) {
    (void)index;
    size_t es = *(const size_t *)arg;
    /* one condition for the whole row (a mask spread along it: masked_fill_ of whole rows, as
     * subscripts.lua's writes of rows): the row of one operand, nothing when out is that
     * operand; an element-wise select cost such a masked_fill_ 0.7 ms a million elements */
    if (s[1] == 0) {
        int k = *(const uint8_t *)p[1] ? 2 : 3;
        if (p[0] == p[k] && s[0] == s[k])
            return;
        CPU_BY_SIZE(es, PICK_LOOP)
        return;
    }
    if (s[0] == (int64_t)es && s[1] == 1 && (s[2] == (int64_t)es || s[2] == 0) &&
        (s[3] == (int64_t)es || s[3] == 0)) {
        CPU_BY_SIZE(es, WHERE_CONTIG_BY_STRIDES)
        return;
    }
    CPU_BY_SIZE(es, WHERE_LOOP)
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
