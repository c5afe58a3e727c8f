/* index_common.c — what the indexing ops share (ops_index.c: index_select, index_add_;
 * ops_gather.c: gather, scatter_): the index check, the pick into a prepared output, the
 * source read by a kernel that writes its destination. Neither ops file calls the other. */
#include "tide_impl.h"

#include <stdlib.h>

/* t's expanded dims (stride 0 over several elements) narrowed to 1, the elements it holds once
 * each; *out NULL when it has none */
static tide_status unexpanded(const tide_tensor *t, tide_tensor **out) {
    tide_tensor *cur = NULL;
    for (int d = 0; d < t->ndim; d++) {
        if (t->strides[d] != 0 || t->shape[d] <= 1)
            continue;
        tide_tensor *next = NULL;
        tide_status  st = tide_tensor_narrow(cur ? cur : t, d, 0, 1, &next);
        tide_tensor_release(cur);
        if (st != TIDE_OK)
            return st;
        cur = next;
    }
    *out = cur;
    return TIDE_OK;
}

tide_status tide_index_prepare(tide_ctx *ctx, const char *op, const tide_tensor *index, int dim,
                               int64_t size, tide_tensor **out) {
    /* an expanded index (t[{rows}] = src scatters the rows' positions expanded over the row) is
     * cast and checked once a position and expanded again: the kernels see its stride 0 */
    tide_tensor *base = NULL, *ix = NULL;
    TIDE_TRY(unexpanded(index, &base));
    tide_status st = tide_cast_contiguous(ctx, op, base ? base : index, TIDE_DTYPE_I64, &ix);
    bool        expanded = base != NULL;
    tide_tensor_release(base);
    TIDE_TRY(st);
    int64_t  n = tide_tensor_numel(ix);
    int64_t *vals = (int64_t *)tide_tensor_data(ix), *host = NULL;
    if (ix->storage->dev->type != TIDE_DEVICE_CPU && n) {
        st = tide_host_copy(op, ix, (void **)&host);
        if (st != TIDE_OK)
            st = tide_err_op(st, op);
        vals = host;
    }
    for (int64_t i = 0; st == TIDE_OK && i < n; i++)
        if (vals[i] < 0 || vals[i] >= size)
            /* worded as the binding words a bad index given as a table */
            st = tide_seterr(TIDE_EINDEX,
                             "%s: index %lld is out of range for dim %d of size %lld; indices are "
                             "1-based: use 1..%lld",
                             op, tide_index_1based(vals[i], index->dtype), dim + 1, (long long)size,
                             (long long)size);
    free(host);
    if (st == TIDE_OK && expanded) {
        tide_tensor *e = NULL;
        st = tide_tensor_expand(ix, index->ndim, index->shape, &e);
        tide_tensor_release(ix);
        ix = e;
    }
    if (st != TIDE_OK) {
        tide_tensor_release(ix);
        return st;
    }
    *out = ix;
    return TIDE_OK;
}

tide_kview tide_kview_1d(const tide_tensor *t) {
    tide_kview v = tide_kview_of(t);
    if (v.ndim == 0) {
        v.ndim = 1;
        v.shape[0] = 1;
        v.strides[0] = 1;
    }
    return v;
}

tide_status tide_pick_into(tide_ctx *ctx, const char *op, tide_pick_fn fn, const tide_tensor *a,
                           int dim, tide_tensor *ix, int ndim, const int64_t *shape,
                           tide_tensor **out) {
    tide_device *dev = a->storage->dev;
    bool         created;
    tide_status  st = tide_prepare_out(ctx, op, dev, a->dtype, ndim, shape, out, &created);
    if (st == TIDE_OK && tide_tensor_numel(*out) > 0) {
        st = tide_backend_need(fn != NULL, op, dev);
        if (st == TIDE_OK) {
            tide_kview ov = tide_kview_1d(*out), av = tide_kview_1d(a), iv = tide_kview_1d(ix);
            st = fn(dev, &ov, &av, dim, &iv);
            if (st != TIDE_OK)
                st = tide_err_op(st, op);
        }
        if (st != TIDE_OK)
            tide_out_failed(out, created);
    }
    tide_tensor_release(ix);
    return st;
}

tide_status tide_source_for(tide_ctx *ctx, const char *op, bool have, int64_t n,
                            const tide_tensor *src, const tide_tensor *dst, tide_tensor **out) {
    if (n == 0)
        return TIDE_OK;
    TIDE_TRY(tide_backend_need(have, op, dst->storage->dev));
    tide_tensor *cs = NULL;
    TIDE_TRY(tide_cast(ctx, op, src, dst->dtype, &cs));
    if (cs->storage == dst->storage) {
        tide_tensor *copy = NULL;
        tide_status  st = tide_clone_for(ctx, op, cs, &copy);
        tide_tensor_release(cs);
        TIDE_TRY(st);
        cs = copy;
    }
    *out = cs;
    return TIDE_OK;
}

tide_status tide_written_through(tide_status st, tide_tensor *dst, tide_tensor *cs,
                                 tide_tensor *ix) {
    tide_tensor_release(cs);
    tide_tensor_release(ix);
    if (st == TIDE_OK)
        tide_mark_written(dst);
    return st;
}
