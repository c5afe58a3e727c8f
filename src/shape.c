/* shape.c — the geometry of shapes, strides and kernel views, with no tensor or storage in
 * sight: what storage.c, tensor.c and transfer.c share, so that none of them needs another for
 * it. */
#include "shape.h"

#include <stdio.h>
#include <string.h>

void tide_shape_fmt(char *buf, size_t n, int ndim, const int64_t *shape) {
    size_t k = (size_t)snprintf(buf, n, "[");
    for (int i = 0; i < ndim && k < n; i++)
        k += (size_t)snprintf(buf + k, n - k, "%s%lld", i ? ", " : "", (long long)shape[i]);
    if (k < n)
        snprintf(buf + k, n - k, "]");
}

tide_shape_strs tide_shapes_fmt(int an, const int64_t *as, int bn, const int64_t *bs) {
    tide_shape_strs s;
    tide_shape_fmt(s.a, sizeof s.a, an, as);
    tide_shape_fmt(s.b, sizeof s.b, bn, bs);
    return s;
}

/* The element count of a shape. A zero anywhere makes it 0 whatever the other sizes (PyTorch
 * allows torch.zeros(0, 2**32, 2**32)), so the check does not depend on the order of the dims:
 * a permuted shape is valid exactly when the original was. */
tide_status tide_shape_numel(int ndim, const int64_t *shape, int64_t *numel) {
    int64_t n = 1;
    for (int i = 0; i < ndim; i++)
        if (shape[i] < 0)
            return tide_seterr(TIDE_ESHAPE, "negative size %lld at dim %d", (long long)shape[i],
                               i + 1);
    for (int i = 0; i < ndim; i++)
        if (shape[i] == 0) {
            *numel = 0;
            return TIDE_OK;
        }
    for (int i = 0; i < ndim; i++) {
        if (__builtin_mul_overflow(n, shape[i], &n)) {
            char sb[200];
            tide_shape_fmt(sb, sizeof sb, ndim, shape);
            return tide_seterr(TIDE_ESHAPE, "shape %s has more elements than fit in 64 bits", sb);
        }
    }
    *numel = n;
    return TIDE_OK;
}

/* the element count of a valid shape: its product fits unless a size is 0, checked first */
int64_t tide_shape_count(int ndim, const int64_t *shape) {
    for (int i = 0; i < ndim; i++)
        if (shape[i] == 0)
            return 0;
    int64_t n = 1;
    for (int i = 0; i < ndim; i++)
        n *= shape[i];
    return n;
}

/* Row-major strides, in elements. Every tensor keeps its reach (the sum over dims of (size - 1)
 * * stride, ignoring size-0 dims) within int64, so that the offsets views compute never
 * overflow. A tensor with elements always fits; one with a zero size may have other sizes whose
 * product does not: the dims from the one whose reach would overflow leftwards get stride 0
 * (the tensor has no element for them to address). */
void tide_contiguous_strides(int ndim, const int64_t *shape, int64_t *strides) {
    int64_t s = 1;
    for (int i = ndim - 1; i >= 0; i--) {
        if (s && __builtin_mul_overflow(s, shape[i] ? shape[i] : 1, &strides[i]))
            s = 0;
        int64_t next = s ? strides[i] : 0;
        strides[i] = s;
        s = next;
    }
}

bool tide_shape_is_contiguous(int ndim, const int64_t *shape, const int64_t *strides) {
    if (tide_shape_count(ndim, shape) == 0)
        return true; /* before the product below, which a zero size's neighbours may overflow */
    int64_t s = 1;
    for (int i = ndim - 1; i >= 0; i--) {
        if (shape[i] != 1 && strides[i] != s)
            return false;
        s *= shape[i];
    }
    return true;
}

/* the bytes [lo, hi) that v's elements cover */
static void kview_span(const tide_kview *v, uintptr_t *lo, uintptr_t *hi) {
    int64_t first = 0, last = 0;
    for (int i = 0; i < v->ndim; i++) {
        int64_t reach = (v->shape[i] - 1) * v->strides[i];
        if (reach < 0)
            first += reach;
        else
            last += reach;
    }
    int64_t es = (int64_t)tide_dtype_size(v->dtype);
    *lo = (uintptr_t)v->data + (uintptr_t)(first * es);
    *hi = (uintptr_t)v->data + (uintptr_t)((last + 1) * es);
}

bool tide_kview_overlap(const tide_kview *x, const tide_kview *o) {
    if (tide_kview_numel(x) == 0 || tide_kview_numel(o) == 0)
        return false;
    uintptr_t xlo, xhi, olo, ohi;
    kview_span(x, &xlo, &xhi);
    kview_span(o, &olo, &ohi);
    if (xhi <= olo || ohi <= xlo)
        return false;
    bool same = x->data == o->data && x->dtype == o->dtype && x->ndim == o->ndim;
    for (int i = 0; same && i < x->ndim; i++)
        same = x->shape[i] == o->shape[i] && (x->strides[i] == o->strides[i] || x->shape[i] == 1);
    return !same;
}

int64_t tide_kview_numel(const tide_kview *v) {
    return tide_shape_count(v->ndim, v->shape);
}

bool tide_kview_is_contiguous(const tide_kview *v) {
    return tide_shape_is_contiguous(v->ndim, v->shape, v->strides);
}

tide_status tide_shape_check_ndim(const char *op, int ndim) {
    if (ndim < 0 || ndim > TIDE_MAX_DIMS)
        return tide_seterr(TIDE_ESHAPE, "%s: %d dims given; tide supports 0 to %d", op, ndim,
                           TIDE_MAX_DIMS);
    return TIDE_OK;
}
