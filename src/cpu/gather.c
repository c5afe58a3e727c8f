/*
 * gather.c — CPU gather, scatter / scatter_add and sort.
 *
 * gather and scatter walk the index's shape with an odometer: element i of the index names, at
 * dim, the position in the indexed side; the other side is read or written at i's coordinates.
 * Serial: scatter's duplicates then land in index order (the last write wins, sums are ordered).
 */
#include "cpu.h"
#include <omp.h>

#include <stdlib.h>
#include <string.h>

/* ---- gather / scatter --------------------------------------------------------------------- */

/* calls step(y offset, x offset) in bytes for each element of index, in row-major order: y is
 * walked at the index's coordinates, x at the same coordinates but index's value at dim. The
 * offsets of the dims before the last are summed once a row, the last dim stepped by its
 * strides (a sum over every dim for each element cost gather 13x PyTorch's time). */
#define WALK_INDEX(index, y, x, dim, BODY)                                                         \
    do {                                                                                           \
        int     nd_ = (index)->ndim, last_ = nd_ - 1;                                              \
        int64_t n_ = 1, c_[TIDE_MAX_DIMS] = {0};                                                   \
        for (int d_ = 0; d_ < nd_; d_++)                                                           \
            n_ *= (index)->shape[d_];                                                              \
        if (n_ == 0)                                                                               \
            break;                                                                                 \
        size_t  ys_ = cpu_dtype_size((y)->dtype), xs_ = cpu_dtype_size((x)->dtype);                \
        int64_t len_ = (index)->shape[last_], ysl_ = (y)->strides[last_];                          \
        int64_t isl_ = (index)->strides[last_], xsl_ = last_ == (dim) ? 0 : (x)->strides[last_];   \
        int64_t xsd_ = (x)->strides[dim];                                                          \
        const int64_t *ix_ = (const int64_t *)(index)->data;                                       \
        for (int64_t r_ = 0; r_ < n_ / len_; r_++) {                                               \
            int64_t yb_ = 0, xb_ = 0, ib_ = 0;                                                     \
            for (int d_ = 0; d_ < last_; d_++) {                                                   \
                yb_ += c_[d_] * (y)->strides[d_];                                                  \
                ib_ += c_[d_] * (index)->strides[d_];                                              \
                if (d_ != (dim))                                                                   \
                    xb_ += c_[d_] * (x)->strides[d_];                                              \
            }                                                                                      \
            for (int64_t k_ = 0; k_ < len_; k_++) {                                                \
                int64_t yo = (yb_ + k_ * ysl_) * (int64_t)ys_;                                     \
                int64_t xo = (xb_ + k_ * xsl_ + ix_[ib_ + k_ * isl_] * xsd_) * (int64_t)xs_;       \
                BODY;                                                                              \
            }                                                                                      \
            for (int d_ = last_ - 1; d_ >= 0; d_--) {                                              \
                if (++c_[d_] < (index)->shape[d_])                                                 \
                    break;                                                                         \
                c_[d_] = 0;                                                                        \
            }                                                                                      \
        }                                                                                          \
    } while (0)

/* one element moved: 4 and 8 bytes as one load and store (a memcpy call each was most of it) */
static inline void move_elem(char *dst, const char *src, size_t es) {
    if (es == 4)
        memcpy(dst, src, 4);
    else if (es == 8)
        memcpy(dst, src, 8);
    else
        memcpy(dst, src, es);
}

static tide_status check_views(const char *name, const tide_kview *index, int ndim, int dim) {
    if (index->dtype != TIDE_DTYPE_I64)
        return tide_seterr(TIDE_EINVAL, "%s: cpu kernel needs an int64 index", name);
    if (index->ndim != ndim || dim < 0 || dim >= ndim)
        return tide_seterr(TIDE_EINVAL, "%s: cpu kernel got index of %d dims for %d (dim %d)", name,
                           index->ndim, ndim, dim);
    return TIDE_OK;
}

tide_status cpu_gather(tide_device *dev, const tide_kview *out, const tide_kview *a, int dim,
                       const tide_kview *index) {
    (void)dev;
    TIDE_TRY(check_views("gather", index, a->ndim, dim));
    if (out->dtype != a->dtype)
        return tide_seterr(TIDE_EINVAL, "gather: cpu kernel needs out and a of one dtype");
    size_t es = cpu_dtype_size(a->dtype);
    WALK_INDEX(index, out, a, dim,
               move_elem((char *)out->data + yo, (const char *)a->data + xo, es));
    return TIDE_OK;
}

#define SCATTER_ADD(T)                                                                             \
    WALK_INDEX(index, src, dst, dim,                                                               \
               *(T *)((char *)dst->data + xo) += *(const T *)((const char *)src->data + yo))

/* signed integers wrap as two's complement (PyTorch's result): the sum is taken in the unsigned
 * type U, where overflow is defined, and converted back */
#define SCATTER_ADD_WRAP(T, U)                                                                     \
    WALK_INDEX(index, src, dst, dim, {                                                             \
        T *d_ = (T *)((char *)dst->data + xo);                                                     \
        *d_ = (T)((U)*d_ + (U) * (const T *)((const char *)src->data + yo));                       \
    })

tide_status cpu_scatter(tide_device *dev, const tide_kview *dst, int dim, const tide_kview *index,
                        const tide_kview *src, int accumulate) {
    (void)dev;
    const char *name = accumulate ? "scatter_add_" : "scatter_";
    TIDE_TRY(check_views(name, index, dst->ndim, dim));
    if (src->dtype != dst->dtype || src->ndim != dst->ndim)
        return tide_seterr(TIDE_EINVAL, "%s: cpu kernel needs src and dst of one dtype", name);
    if (!accumulate) {
        size_t es = cpu_dtype_size(dst->dtype);
        WALK_INDEX(index, src, dst, dim,
                   move_elem((char *)dst->data + xo, (const char *)src->data + yo, es));
        return TIDE_OK;
    }
    switch (dst->dtype) {
    case TIDE_DTYPE_F32:
        SCATTER_ADD(float);
        break;
    case TIDE_DTYPE_F64:
        SCATTER_ADD(double);
        break;
    case TIDE_DTYPE_I32:
        SCATTER_ADD_WRAP(int32_t, uint32_t);
        break;
    case TIDE_DTYPE_I64:
        SCATTER_ADD_WRAP(int64_t, uint64_t);
        break;
    case TIDE_DTYPE_U8:
        SCATTER_ADD(uint8_t);
        break;
    case TIDE_DTYPE_BOOL: /* a sum of bools is an or */
        WALK_INDEX(index, src, dst, dim,
                   *((uint8_t *)dst->data + xo) |= *((const uint8_t *)src->data + yo));
        break;
    default:
        return cpu_notsup(name, dst->dtype);
    }
    return TIDE_OK;
}

/* ---- sort --------------------------------------------------------------------------------- */

typedef struct sort_key {
    double  d; /* the value, for float dtypes */
    int64_t i; /* the value, for integer dtypes (exact beyond 2^53) */
    int64_t at;
} sort_key;

/* the order of two keys' values, ascending (NaN largest): < 0, 0 (equal, or both NaN) or > 0 */
static int float_order(const sort_key *a, const sort_key *b) {
    int an = a->d != a->d, bn = b->d != b->d;
    if (an != bn)
        return an - bn;
    if (an || a->d == b->d)
        return 0;
    return a->d < b->d ? -1 : 1;
}

static int int_order(const sort_key *a, const sort_key *b) {
    return (a->i > b->i) - (a->i < b->i);
}

/* a strictly before b by value (ascending, or descending when desc) */
static inline int key_before(const sort_key *a, const sort_key *b, int isf, int desc) {
    int o = isf ? float_order(a, b) : int_order(a, b);
    return desc ? o > 0 : o < 0;
}

/* A stable merge sort of the keys (a run of 16 by insertion, then merges), its comparison
 * inlined: qsort's comparator call per comparison took most of a row's sort. Equal keys keep
 * their order, which is their position: the same order as cmp_* give. tmp: n keys. */
static void sort_keys(sort_key *k, sort_key *tmp, int64_t n, int isf, int desc) {
    enum { RUN = 16 };
    for (int64_t lo = 0; lo < n; lo += RUN) {
        int64_t hi = lo + RUN < n ? lo + RUN : n;
        for (int64_t i = lo + 1; i < hi; i++) {
            sort_key x = k[i];
            int64_t  j = i;
            for (; j > lo && key_before(&x, &k[j - 1], isf, desc); j--)
                k[j] = k[j - 1];
            k[j] = x;
        }
    }
    sort_key *src = k, *dst = tmp;
    for (int64_t w = RUN; w < n; w *= 2) {
        for (int64_t lo = 0; lo < n; lo += 2 * w) {
            int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            int64_t i = lo, j = mid, o = lo;
            while (i < mid && j < hi)
                dst[o++] = key_before(&src[j], &src[i], isf, desc) ? src[j++] : src[i++];
            while (i < mid)
                dst[o++] = src[i++];
            while (j < hi)
                dst[o++] = src[j++];
        }
        sort_key *t = src;
        src = dst;
        dst = t;
    }
    if (src != k)
        memcpy(k, src, (size_t)n * sizeof *k);
}

static int64_t load_i(tide_dtype dt, const char *p) {
    switch (dt) {
    case TIDE_DTYPE_I32:
        return *(const int32_t *)p;
    case TIDE_DTYPE_I64:
        return *(const int64_t *)p;
    default:
        return *(const uint8_t *)p;
    }
}

tide_status cpu_sort(tide_device *dev, const tide_kview *values, const tide_kview *indices,
                     const tide_kview *a, int dim, int descending) {
    (void)dev;
    tide_dtype dt = a->dtype;
    if (dt == TIDE_DTYPE_F16 || dt == TIDE_DTYPE_BF16)
        return cpu_notsup("sort", dt);
    if (dim < 0 || dim >= a->ndim || values->dtype != dt || indices->dtype != TIDE_DTYPE_I64 ||
        !tide_kview_is_contiguous(values) || !tide_kview_is_contiguous(indices))
        return tide_seterr(TIDE_EINVAL, "sort: cpu kernel got views it cannot take");
    int64_t len = a->shape[dim], outer = 1, inner = 1;
    for (int d = 0; d < dim; d++)
        outer *= a->shape[d];
    for (int d = dim + 1; d < a->ndim; d++)
        inner *= a->shape[d];
    if (len == 0 || outer * inner == 0)
        return TIDE_OK;
    /* the rows on the threads (topk and sort of a [256, 1000] batch), a key buffer each */
    int64_t rows = outer * inner;
    int     nt = rows > 1 && rows * len >= CPU_PAR_GRAIN ? omp_get_max_threads() : 1;
    nt = (int64_t)nt > rows ? (int)rows : nt;
    sort_key *all = malloc((size_t)nt * 2 * (size_t)len * sizeof *all); /* keys and merge space */
    if (!all)
        return tide_seterr(TIDE_ENOMEM, "sort: out of host memory for %lld keys", (long long)len);
    int    isf = dt == TIDE_DTYPE_F32 || dt == TIDE_DTYPE_F64;
    size_t es = cpu_dtype_size(dt);
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
    for (int64_t r = 0; r < rows; r++) {
        sort_key *keys = all + (size_t)omp_get_thread_num() * 2 * (size_t)len;
        int64_t   o = r / inner, in = r % inner;
        {
            /* the row's start in a: coordinates (o, ., in) through a's strides */
            int64_t rest = o, off = 0;
            for (int d = dim - 1; d >= 0; d--) {
                off += (rest % a->shape[d]) * a->strides[d];
                rest /= a->shape[d];
            }
            rest = in;
            for (int d = a->ndim - 1; d > dim; d--) {
                off += (rest % a->shape[d]) * a->strides[d];
                rest /= a->shape[d];
            }
            const char *row = (const char *)a->data + off * (int64_t)es;
            for (int64_t j = 0; j < len; j++) {
                const char *p = row + j * a->strides[dim] * (int64_t)es;
                keys[j].at = j;
                if (isf)
                    keys[j].d = dt == TIDE_DTYPE_F32 ? *(const float *)p : *(const double *)p;
                else
                    keys[j].i = dt == TIDE_DTYPE_BOOL ? *(const uint8_t *)p != 0 : load_i(dt, p);
            }
            sort_keys(keys, keys + len, len, isf, descending);
            int64_t base = o * len * inner + in;
            for (int64_t j = 0; j < len; j++) {
                int64_t at = base + j * inner;
                ((int64_t *)indices->data)[at] = keys[j].at;
                memcpy((char *)values->data + at * (int64_t)es,
                       row + keys[j].at * a->strides[dim] * (int64_t)es, es);
            }
        }
    }
    free(all);
    return TIDE_OK;
}
