/* ops_gather.c — gather, scatter, scatter_add (PyTorch's, index of the input's rank); sort:
 * ops_select.c. */
#include "tide_impl.h"

#include <stdlib.h>
#include <string.h>

/* index as a contiguous int64 tensor of its own shape whose values lie in [0, size), so a bad
 * index changes nothing */
static tide_status checked_index(tide_ctx *ctx, const char *op, const tide_tensor *index, int dim,
                                 int64_t size, tide_tensor **out) {
    if (index->dtype != TIDE_DTYPE_I64 && index->dtype != TIDE_DTYPE_I32)
        return tide_seterr(TIDE_EDTYPE, "%s: index must be an int64 or int32 tensor, got %s", op,
                           tide_dtype_name(index->dtype));
    return tide_index_prepare(ctx, op, index, dim, size, out);
}

/* PyTorch's rule: index has the rank of `of` and is no larger than it in each dim (but dim
 * itself, when skip_dim) */
static tide_status check_fits(const char *op, const tide_tensor *index, const tide_tensor *of,
                              const char *what, int dim, bool skip_dim) {
    bool ok = index->ndim == of->ndim || (index->ndim <= 1 && of->ndim <= 1);
    for (int i = 0; ok && i < index->ndim && index->ndim == of->ndim; i++)
        ok = (skip_dim && i == dim) || index->shape[i] <= of->shape[i];
    if (ok)
        return TIDE_OK;
    tide_shape_strs sh = tide_shapes_fmt(index->ndim, index->shape, of->ndim, of->shape);
    return tide_seterr(TIDE_ESHAPE,
                       "%s: index of shape %s does not fit %s of shape %s: it needs the same "
                       "number of dims and sizes no larger%s",
                       op, sh.a, what, sh.b, skip_dim ? " (except in dim)" : "");
}

tide_status tide_gather(tide_ctx *ctx, const tide_tensor *a, int dim, const tide_tensor *index,
                        tide_tensor **out) {
    static const char op[] = "gather";
    TIDE_TRY(tide_check_same_device(op, a, index));
    if (*out)
        TIDE_TRY(tide_check_same_device(op, a, *out));
    TIDE_TRY(tide_norm_dim_0d(op, &dim, a->ndim));
    TIDE_TRY(check_fits(op, index, a, "the input", dim, true));
    tide_tensor *ix;
    TIDE_TRY(checked_index(ctx, op, index, dim, a->ndim ? a->shape[dim] : 1, &ix));
    return tide_pick_into(ctx, op, a->storage->dev->backend->gather, a, dim, ix, index->ndim,
                          index->shape, out);
}

tide_status tide_scatter_(tide_ctx *ctx, tide_tensor *dst, int dim, const tide_tensor *index,
                          const tide_tensor *src, int accumulate) {
    static const char *const names[] = {"scatter_", "scatter_add_", "scatter_reduce_",
                                        "scatter_reduce_"};
    if (accumulate < TIDE_SCATTER_WRITE || accumulate > TIDE_SCATTER_AMIN)
        return tide_seterr(TIDE_EINVAL, "scatter_: mode %d is not a tide_scatter_mode", accumulate);
    const char *op = names[accumulate];
    TIDE_TRY(tide_check_same_device(op, dst, index));
    TIDE_TRY(tide_check_same_device(op, dst, src));
    TIDE_TRY(tide_norm_dim_0d(op, &dim, dst->ndim));
    TIDE_TRY(check_fits(op, index, dst, "self", dim, true));
    if (src->ndim > 0)
        TIDE_TRY(check_fits(op, index, src, "src", dim, false));
    /* check_fits compares sizes only at one rank: a 0-d index beside a 1-d src reads src[0] */
    if (src->ndim > 0 && tide_tensor_numel(src) < tide_tensor_numel(index))
        return tide_seterr(TIDE_ESHAPE,
                           "%s: src has %lld elements but the index needs %lld; give src at "
                           "least as many elements as the index, or a number",
                           op, (long long)tide_tensor_numel(src),
                           (long long)tide_tensor_numel(index));
    if (tide_dtype_is_float(src->dtype) && !tide_dtype_is_float(dst->dtype))
        return tide_seterr(TIDE_EDTYPE, "%s: cannot write %s values into a %s tensor in place", op,
                           tide_dtype_name(src->dtype), tide_dtype_name(dst->dtype));
    TIDE_TRY(tide_check_writable(op, dst));
    tide_tensor *ix;
    TIDE_TRY(checked_index(ctx, op, index, dim, dst->ndim ? dst->shape[dim] : 1, &ix));
    tide_device          *dev = dst->storage->dev;
    tide_entry_scatter_fn fn = dev->backend->scatter;
    tide_tensor          *cs = NULL;
    tide_status st = tide_source_for(ctx, op, fn != NULL, tide_tensor_numel(ix), src, dst, &cs);
    if (cs) {
        tide_kview dv = tide_kview_1d(dst), iv = tide_kview_1d(ix), sv = tide_kview_1d(cs);
        if (cs->ndim == 0) { /* a number: the same value for every index */
            sv.ndim = iv.ndim;
            for (int i = 0; i < iv.ndim; i++) {
                sv.shape[i] = iv.shape[i];
                sv.strides[i] = 0;
            }
        }
        st = fn(dev, &dv, dim, &iv, &sv, accumulate);
        if (st != TIDE_OK)
            st = tide_err_op(st, op);
    }
    return tide_written_through(st, dst, cs, ix);
}
