/* ops_mask.c — masked_fill, masked_select, tril/triu, flip and roll, built from the kernels of
 * where, index_select and arange (so every backend with those has them). */
#include "tide_impl.h"

#include <stdlib.h>
#include <string.h>

static tide_status check_mask(const char *op, const tide_tensor *mask) {
    if (mask->dtype != TIDE_DTYPE_BOOL)
        return tide_seterr(TIDE_EDTYPE,
                           "%s: mask must be a bool tensor, got %s; make one with a "
                           "comparison or :bool()",
                           op, tide_dtype_name(mask->dtype));
    return TIDE_OK;
}

/* out = mask ? value : a; mask broadcasts to a's shape (not beyond); value 0-d */
tide_status tide_masked_fill(tide_ctx *ctx, const tide_tensor *a, const tide_tensor *mask,
                             const tide_tensor *value, tide_tensor **out) {
    static const char op[] = "masked_fill";
    TIDE_TRY(tide_check_same_device(op, a, mask));
    TIDE_TRY(check_mask(op, mask));
    if (value->ndim != 0)
        return tide_seterr(TIDE_ESHAPE, "%s: value must be a number or a 0-d tensor, got %d dims",
                           op, value->ndim);
    int     bn;
    int64_t bs[TIDE_MAX_DIMS];
    TIDE_TRY(tide_broadcast_shape(op, a->ndim, a->shape, mask->ndim, mask->shape, &bn, bs));
    /* out of place, the result has the broadcast shape of a and mask (PyTorch's); in place
     * (*out is a), the mask must broadcast to a's */
    bool same = bn == a->ndim || *out == NULL;
    for (int i = 0; same && *out != NULL && i < bn; i++)
        same = bs[i] == a->shape[i];
    if (!same) {
        tide_shape_strs sh = tide_shapes_fmt(mask->ndim, mask->shape, a->ndim, a->shape);
        return tide_seterr(TIDE_ESHAPE, "%s: mask of shape %s does not broadcast to the shape %s",
                           op, sh.a, sh.b);
    }
    tide_tensor *v = NULL;
    TIDE_TRY(tide_tensor_to(ctx, value, a->storage->dev, a->dtype, 0, &v));
    tide_status st = tide_where(ctx, mask, v, a, out);
    tide_tensor_release(v);
    if (st != TIDE_OK && strncmp(tide_errmsg(), "tide: where: ", 13) == 0)
        st = tide_seterr(st, "%s: %s", op, tide_errmsg() + 13);
    return st;
}

/* t's elements, contiguous, as a malloc'd host array: an internal copy (not a user transfer,
 * as index_select's range check), for values that decide a result's size */
tide_status tide_read_host(tide_ctx *ctx, const char *op, const tide_tensor *t, void **out) {
    tide_tensor *c = NULL;
    TIDE_TRY(tide_tensor_contiguous(ctx, t, &c));
    tide_status st = tide_host_copy(op, c, out);
    tide_tensor_release(c);
    return st;
}

/* the mask's positions are counted on the host (the result's size depends on them, as in
 * PyTorch, which synchronizes too); *positions (may be NULL) gets them, 0-based, int64, on a's
 * device: the gradient scatters back through them */
tide_status tide_masked_select(tide_ctx *ctx, const tide_tensor *a, const tide_tensor *mask,
                               tide_tensor **out, tide_tensor **positions) {
    static const char op[] = "masked_select";
    TIDE_TRY(tide_check_same_device(op, a, mask));
    TIDE_TRY(check_mask(op, mask));
    int     bn;
    int64_t bs[TIDE_MAX_DIMS], total = 1;
    TIDE_TRY(tide_broadcast_shape(op, a->ndim, a->shape, mask->ndim, mask->shape, &bn, bs));
    /* (a 0 anywhere makes it 0, however large the other dims: no product overflows) */
    if (tide_shape_numel(bn, bs, &total) != TIDE_OK)
        return tide_err_op(TIDE_ESHAPE, op);
    tide_device *dev = a->storage->dev, *host = NULL;
    tide_tensor *me = NULL, *posd = NULL, *ae = NULL, *flat = NULL;
    uint8_t     *m = NULL;
    int64_t     *pos = NULL, n = 0;
    tide_status  st = tide_device_get_index(TIDE_DEVICE_CPU, 0, &host);
    if (st == TIDE_OK)
        st = tide_tensor_expand(mask, bn, bs, &me);
    if (st == TIDE_OK)
        st = tide_read_host(ctx, op, me, (void **)&m);
    if (st == TIDE_OK) {
        for (int64_t i = 0; i < total; i++)
            n += m[i] != 0;
        pos = malloc((size_t)(n ? n : 1) * sizeof *pos);
        if (!pos)
            st = tide_seterr(TIDE_ENOMEM, "%s: out of host memory", op);
    }
    if (st == TIDE_OK) {
        for (int64_t i = 0, k = 0; i < total; i++)
            if (m[i])
                pos[k++] = i;
        st = tide_tensor_alloc(ctx, op, dev, TIDE_DTYPE_I64, 1, &n, &posd);
    }
    if (st == TIDE_OK)
        st = tide_copy_bytes(dev, tide_tensor_data(posd), host, pos, (size_t)n * sizeof *pos, 0);
    if (st == TIDE_OK)
        st = tide_tensor_expand(a, bn, bs, &ae);
    if (st == TIDE_OK)
        st = tide_tensor_reshape(ctx, ae, 1, &total, &flat);
    if (st == TIDE_OK)
        st = tide_index_select(ctx, flat, 0, posd, out);
    free(m);
    free(pos);
    tide_tensor_release(me);
    tide_tensor_release(ae);
    tide_tensor_release(flat);
    if (st == TIDE_OK && positions)
        *positions = posd;
    else
        tide_tensor_release(posd);
    return st == TIDE_OK ? st : tide_err_op(st, op);
}

/* tril (upper = 0): keep j - i <= k; triu: keep j - i >= k, over the last two dims */
tide_status tide_tri(tide_ctx *ctx, const tide_tensor *a, int64_t k, int upper, tide_tensor **out) {
    const char *op = upper ? "triu" : "tril";
    if (a->ndim < 2)
        return tide_seterr(TIDE_ESHAPE, "%s: needs a tensor of at least 2 dims, got %d", op,
                           a->ndim);
    tide_device *dev = a->storage->dev;
    int64_t n = a->shape[a->ndim - 2], m = a->shape[a->ndim - 1], col[2] = {n, 1}, row[2] = {1, m};
    tide_tensor *ri = NULL, *ci = NULL, *rv = NULL, *cv = NULL, *d = NULL, *mask = NULL,
                *zero = NULL;
    tide_status st = tide_arange(ctx, dev, TIDE_DTYPE_I64, 0, (double)n, 1, &ri);
    if (st == TIDE_OK)
        st = tide_arange(ctx, dev, TIDE_DTYPE_I64, 0, (double)m, 1, &ci);
    if (st == TIDE_OK)
        st = tide_tensor_view(ri, 2, col, &rv);
    if (st == TIDE_OK)
        st = tide_tensor_view(ci, 2, row, &cv);
    if (st == TIDE_OK)
        st = tide_binary(ctx, TIDE_OP_SUB, cv, rv, &d);
    if (st == TIDE_OK)
        st = tide_binary_scalar_x(ctx, upper ? TIDE_OP_GE : TIDE_OP_LE, d, tide_scalar_i(k), 0,
                                  &mask);
    if (st == TIDE_OK)
        st = tide_tensor_full(ctx, dev, a->dtype, 0, NULL, tide_scalar_i(0), &zero);
    if (st == TIDE_OK)
        st = tide_where(ctx, mask, a, zero, out);
    tide_tensor *all[] = {ri, ci, rv, cv, d, mask, zero};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        tide_tensor_release(all[i]);
    return st == TIDE_OK ? st : tide_err_op(st, op);
}

/* a.index_select(dim, index) where index[i] = (start + i) mod size (arange on the device) */
static tide_status select_shifted(tide_ctx *ctx, const char *op, const tide_tensor *a, int dim,
                                  int64_t start, int64_t step, tide_tensor **out) {
    int64_t      size = a->shape[dim];
    tide_tensor *ix = NULL, *ixm = NULL;
    double       first = (double)start, last = (double)(start + step * size);
    tide_status  st =
        tide_arange(ctx, a->storage->dev, TIDE_DTYPE_I64, first, last, (double)step, &ix);
    if (st == TIDE_OK)
        st = tide_binary_scalar_x(ctx, TIDE_OP_REMAINDER, ix, tide_scalar_i(size), 0, &ixm);
    if (st == TIDE_OK)
        st = tide_index_select(ctx, a, dim, ixm, out);
    tide_tensor_release(ix);
    tide_tensor_release(ixm);
    return st == TIDE_OK ? st : tide_err_op(st, op);
}

/* a copy of a with each dim ds[i] (normalized) reversed when shifts is NULL, else rolled by
 * shifts[i] */
static tide_status shift_dims(tide_ctx *ctx, const char *op, const tide_tensor *a, int ndims,
                              const int *ds, const int64_t *shifts, tide_tensor **out) {
    tide_tensor *cur = NULL;
    tide_status  st = tide_tensor_clone(ctx, a, &cur);
    for (int i = 0; st == TIDE_OK && i < ndims; i++) {
        int64_t size = cur->shape[ds[i]];
        if (size == 0)
            continue;
        int64_t start = size - 1, step = -1;
        if (shifts) {
            start = size - ((shifts[i] % size) + size) % size;
            step = 1;
        }
        tide_tensor *next = NULL;
        st = select_shifted(ctx, op, cur, ds[i], start, step, &next);
        tide_tensor_release(cur);
        cur = next;
    }
    if (st != TIDE_OK) {
        tide_tensor_release(cur);
        return st;
    }
    *out = cur;
    return TIDE_OK;
}

/* reverses the given dims (0-based, possibly negative); a dim named twice raises */
tide_status tide_flip(tide_ctx *ctx, const tide_tensor *a, int ndims, const int *dims,
                      tide_tensor **out) {
    static const char op[] = "flip";
    int               ds[TIDE_MAX_DIMS];
    bool              seen[TIDE_MAX_DIMS] = {0};
    if (ndims > TIDE_MAX_DIMS)
        return tide_seterr(TIDE_EINVAL, "flip: %d dims given, at most %d", ndims, TIDE_MAX_DIMS);
    for (int i = 0; i < ndims; i++) {
        ds[i] = dims[i];
        TIDE_TRY(tide_norm_dim(op, &ds[i], a->ndim));
        if (seen[ds[i]])
            return tide_seterr(TIDE_EINVAL, "flip: dim %d appears more than once", ds[i] + 1);
        seen[ds[i]] = true;
    }
    return shift_dims(ctx, op, a, ndims, ds, NULL, out);
}

/* roll: element i of dim moves to i + shift (mod size); ndims 0 rolls the flattened tensor */
tide_status tide_roll(tide_ctx *ctx, const tide_tensor *a, int ndims, const int64_t *shifts,
                      const int *dims, tide_tensor **out) {
    static const char op[] = "roll";
    if (ndims == 0) {
        int64_t      total = tide_tensor_numel(a);
        tide_tensor *flat = NULL, *r = NULL;
        int          d0 = 0;
        tide_status  st = tide_tensor_reshape(ctx, a, 1, &total, &flat);
        if (st == TIDE_OK)
            st = tide_roll(ctx, flat, 1, shifts, &d0, &r);
        tide_tensor_release(flat);
        if (st == TIDE_OK) {
            st = tide_tensor_reshape(ctx, r, a->ndim, a->shape, out);
            tide_tensor_release(r);
        }
        return st;
    }
    int ds[TIDE_MAX_DIMS];
    if (ndims > TIDE_MAX_DIMS)
        return tide_seterr(TIDE_EINVAL, "roll: %d dims given, at most %d", ndims, TIDE_MAX_DIMS);
    for (int i = 0; i < ndims; i++) {
        ds[i] = dims[i];
        TIDE_TRY(tide_norm_dim(op, &ds[i], a->ndim));
    }
    return shift_dims(ctx, op, a, ndims, ds, shifts, out);
}
