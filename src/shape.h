/*
 * shape.h — shapes, strides and kernel views as plain geometry (shape.c): the helpers that
 * storage.c, tensor.c and transfer.c share. Core only; depends on backend.h's tide_kview alone.
 */
#ifndef TIDE_SHAPE_H
#define TIDE_SHAPE_H

#include "backend.h"

/* "[2, 3]" into buf */
void tide_shape_fmt(char *buf, size_t n, int ndim, const int64_t *shape);
/* two shapes formatted for one message: a and b */
typedef struct {
    char a[200], b[200];
} tide_shape_strs;
tide_shape_strs tide_shapes_fmt(int an, const int64_t *as, int bn, const int64_t *bs);
/* TIDE_ESHAPE naming op unless 0 <= ndim <= TIDE_MAX_DIMS */
tide_status tide_shape_check_ndim(const char *op, int ndim);
/* the element count, overflow-checked (a zero size makes any other sizes legal) */
tide_status tide_shape_numel(int ndim, const int64_t *shape, int64_t *numel);
/* the element count of a shape already checked */
int64_t tide_shape_count(int ndim, const int64_t *shape);
/* row-major strides in elements (see shape.c for shapes with a zero size) */
void tide_contiguous_strides(int ndim, const int64_t *shape, int64_t *strides);
/* the strides are row-major for the shape (size-1 dims aside), or it has no element */
bool tide_shape_is_contiguous(int ndim, const int64_t *shape, const int64_t *strides);
/* x reads memory that o writes, in another layout (a:add_(a:t()), a:add_(a[1])): an
 * elementwise kernel writing o would read elements it has already written, so the caller
 * reads x from a copy. Same layout (a:add_(a)) or disjoint memory is no overlap. */
bool tide_kview_overlap(const tide_kview *x, const tide_kview *o);

#endif /* TIDE_SHAPE_H */
