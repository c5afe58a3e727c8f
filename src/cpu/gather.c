/*
 * gather.c — CPU gather and scatter / scatter_add (sort: select.c).
 *
 * gather and scatter walk the index's shape with an odometer: element i of the index names, at
 * dim, the position in the indexed side; the other side is read or written at i's coordinates.
 * Serial: scatter's duplicates then land in index order (the last write wins, sums are ordered).
 */
#include "cpu.h"

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

/* PyTorch's scatter_reduce amax and amin: a NaN from src replaces, a NaN in dst stays (no
 * comparison with it holds), a tie keeps dst */
#define SCATTER_PICK(T, BETTER)                                                                    \
    WALK_INDEX(index, src, dst, dim, {                                                             \
        T *d_ = (T *)((char *)dst->data + xo);                                                     \
        T  s_ = *(const T *)((const char *)src->data + yo);                                        \
        if (s_ != s_ || BETTER(s_, *d_))                                                           \
            *d_ = s_;                                                                              \
    })
#define ABOVE(a, b) ((a) > (b))
#define BELOW(a, b) ((a) < (b))
#define SCATTER_PICK_ALL(BETTER)                                                                   \
    switch (dst->dtype) {                                                                          \
    case TIDE_DTYPE_F32:                                                                           \
        SCATTER_PICK(float, BETTER);                                                               \
        break;                                                                                     \
    case TIDE_DTYPE_F64:                                                                           \
        SCATTER_PICK(double, BETTER);                                                              \
        break;                                                                                     \
    case TIDE_DTYPE_I32:                                                                           \
        SCATTER_PICK(int32_t, BETTER);                                                             \
        break;                                                                                     \
    case TIDE_DTYPE_I64:                                                                           \
        SCATTER_PICK(int64_t, BETTER);                                                             \
        break;                                                                                     \
    case TIDE_DTYPE_U8:                                                                            \
    case TIDE_DTYPE_BOOL:                                                                          \
        SCATTER_PICK(uint8_t, BETTER);                                                             \
        break;                                                                                     \
    default:                                                                                       \
        return cpu_notsup("scatter_reduce_", dst->dtype);                                          \
    }

/* scatter_ of whole rows: the index expanded along the last dim (stride 0: t[{rows}] = src) and
 * that dim dense in dst and src, so each row is one memcpy, in the walk's order (the walk
 * moves an element at a time); 0 when the layout is another. One thread: two, each owning a
 * range of dst's positions, took 2.5x as long for 500 rows of 4 KB on a shared 2-core machine. */
static int scatter_rows(const tide_kview *dst, int dim, const tide_kview *index,
                        const tide_kview *src) {
    int last = index->ndim - 1;
    if (last == dim || index->strides[last] != 0 || dst->strides[last] != 1 ||
        src->strides[last] != 1)
        return 0;
    int64_t rows = 1, c[TIDE_MAX_DIMS] = {0};
    for (int d = 0; d < last; d++)
        rows *= index->shape[d];
    size_t         es = cpu_dtype_size(dst->dtype), bytes = (size_t)index->shape[last] * es;
    const int64_t *ix = (const int64_t *)index->data;
    for (int64_t r = 0; r < rows && bytes; r++) {
        int64_t so = 0, io = 0, dof = 0;
        for (int d = 0; d < last; d++) {
            so += c[d] * src->strides[d];
            io += c[d] * index->strides[d];
            if (d != dim)
                dof += c[d] * dst->strides[d];
        }
        dof += ix[io] * dst->strides[dim];
        memcpy((char *)dst->data + dof * (int64_t)es, (const char *)src->data + so * (int64_t)es,
               bytes);
        for (int d = last - 1; d >= 0 && ++c[d] == index->shape[d]; d--)
            c[d] = 0;
    }
    return 1;
}

tide_status cpu_scatter(tide_device *dev, const tide_kview *dst, int dim, const tide_kview *index,
                        const tide_kview *src, int accumulate) {
    (void)dev;
    const char *name = accumulate ? "scatter_add_" : "scatter_";
    TIDE_TRY(check_views(name, index, dst->ndim, dim));
    if (src->dtype != dst->dtype || src->ndim != dst->ndim)
        return tide_seterr(TIDE_EINVAL, "%s: cpu kernel needs src and dst of one dtype", name);
    if (!accumulate && scatter_rows(dst, dim, index, src))
        return TIDE_OK;
    if (!accumulate) {
        size_t es = cpu_dtype_size(dst->dtype);
        WALK_INDEX(index, src, dst, dim,
                   move_elem((char *)dst->data + xo, (const char *)src->data + yo, es));
        return TIDE_OK;
    }
    if (accumulate == TIDE_SCATTER_AMAX) {
        SCATTER_PICK_ALL(ABOVE)
        return TIDE_OK;
    }
    if (accumulate == TIDE_SCATTER_AMIN) {
        SCATTER_PICK_ALL(BELOW)
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
