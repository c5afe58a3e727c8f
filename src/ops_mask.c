/* ops_mask.c — masked_fill, masked_select, tril/triu, flip and roll, built from the kernels of
 * where, index_select, arange and copy (so every backend with those has them). */
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

/* a copy of a with the dims where flip[d] reversed and those where shift[d] (in [0, size)) is
 * nonzero rolled, by the copy entry alone: a flipped dim is read with a negative stride (the
 * backends' iterators walk int64 strides), a rolled dim splits into the part that wraps to the
 * front and the rest, so k rolled dims take 2^k block copies (an index_select per dim cost
 * roll 35x PyTorch's time) */
static tide_status shift_dims(tide_ctx *ctx, const char *op, const tide_tensor *a, const bool *flip,
                              const int64_t *shift, tide_tensor **out) {
    tide_device       *dev = a->storage->dev;
    tide_entry_copy_fn fn;
    TIDE_TRY(tide_entry_copy(dev, op, &fn));
    tide_tensor *r;
    TIDE_TRY(tide_tensor_alloc(ctx, op, dev, a->dtype, a->ndim, a->shape, &r));
    if (tide_tensor_numel(a) == 0) { /* nothing to move (and no memory to point into) */
        *out = r;
        return TIDE_OK;
    }
    tide_kview src = tide_kview_of(a), dst = tide_kview_of(r);
    int64_t    es = (int64_t)tide_dtype_size(a->dtype);
    int        rolled[TIDE_MAX_DIMS], k = 0;
    for (int d = 0; d < a->ndim; d++) {
        if (flip[d] && a->shape[d] > 1) {
            src.data = (char *)src.data + (a->shape[d] - 1) * src.strides[d] * es;
            src.strides[d] = -src.strides[d];
        }
        if (shift[d])
            rolled[k++] = d;
    }
    /* the innermost rolled dim's rows, each copied a few elements on from its source, ran 6x
     * slower than a plain copy (the stores alias the next loads modulo 4 KiB): where the dim
     * outside it is whole and dense with it, the rows' moves run as one block spanning both,
     * which writes the rows' first m elements wrong, and the parts that wrap (copied after it:
     * the innermost dim's bit is the highest) write them right */
    int inner = k ? rolled[k - 1] : 0;
    int merge = k && inner > 0 && !shift[inner - 1] && a->shape[inner - 1] > 1 &&
                src.strides[inner - 1] == a->shape[inner] * src.strides[inner];
    tide_status st = TIDE_OK;
    for (uint32_t part = 0; st == TIDE_OK && part < 1u << k; part++) {
        tide_kview s = src, o = dst;
        for (int j = 0; j < k; j++) {
            int     d = rolled[j];
            int64_t n = a->shape[d], m = shift[d];
            if (part >> j & 1) { /* a's last m elements of d go to the front */
                s.data = (char *)s.data + (n - m) * s.strides[d] * es;
                s.shape[d] = o.shape[d] = m;
            } else { /* the others move m places on */
                o.data = (char *)o.data + m * o.strides[d] * es;
                s.shape[d] = o.shape[d] = n - m;
                if (d == inner && merge) {
                    s.shape[d] = o.shape[d] = a->shape[d - 1] * n - m;
                    s.shape[d - 1] = o.shape[d - 1] = 1;
                }
            }
        }
        st = fn(dev, &o, &s);
    }
    if (st != TIDE_OK) {
        tide_tensor_release(r);
        return tide_err_op(st, op);
    }
    *out = r;
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
    int64_t none[TIDE_MAX_DIMS] = {0};
    return shift_dims(ctx, op, a, seen, none, out);
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
    if (ndims > TIDE_MAX_DIMS)
        return tide_seterr(TIDE_EINVAL, "roll: %d dims given, at most %d", ndims, TIDE_MAX_DIMS);
    int64_t shift[TIDE_MAX_DIMS] = {0};
    bool    none[TIDE_MAX_DIMS] = {0};
    for (int i = 0; i < ndims; i++) {
        int d = dims[i];
        TIDE_TRY(tide_norm_dim(op, &d, a->ndim));
        int64_t n = a->shape[d]; /* a dim named twice rolls by the sum, as PyTorch's */
        if (n > 0)
            shift[d] = ((shift[d] + shifts[i] % n) % n + n) % n;
    }
    return shift_dims(ctx, op, a, none, shift, out);
}
