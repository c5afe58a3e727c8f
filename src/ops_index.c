/* ops_index.c — index_select, index_add_, cat and softmax. */
#include "tide_impl.h"

#include <stdlib.h>
#include <string.h>

/* index as a contiguous 1-D int64 tensor whose values lie in [0, size) */
static tide_status prepare_index(tide_ctx *ctx, const char *op, const tide_tensor *index, int dim,
                                 int64_t size, tide_tensor **out) {
    if (index->dtype != TIDE_DTYPE_I64 && index->dtype != TIDE_DTYPE_I32)
        return tide_seterr(TIDE_EDTYPE, "%s: index must be int64 or int32, got %s", op,
                           tide_dtype_name(index->dtype));
    if (index->ndim != 1)
        return tide_seterr(TIDE_ESHAPE, "%s: index must be 1-d, got %d-d", op, index->ndim);
    return tide_index_prepare(ctx, op, index, dim, size, out);
}

tide_status tide_index_select(tide_ctx *ctx, const tide_tensor *a, int dim,
                              const tide_tensor *index, tide_tensor **out) {
    static const char op[] = "index_select";
    TIDE_TRY(tide_check_same_device(op, a, index));
    if (*out)
        TIDE_TRY(tide_check_same_device(op, a, *out));
    if (a->ndim == 0)
        return tide_seterr(TIDE_ESHAPE, "index_select: cannot index a 0-d tensor");
    TIDE_TRY(tide_norm_dim(op, &dim, a->ndim));
    tide_tensor *ix;
    TIDE_TRY(prepare_index(ctx, op, index, dim, a->shape[dim], &ix));
    int64_t shape[TIDE_MAX_DIMS];
    memcpy(shape, a->shape, sizeof shape);
    shape[dim] = ix->shape[0];
    return tide_pick_into(ctx, op, a->storage->dev->backend->index_select, a, dim, ix, a->ndim,
                          shape, out);
}

tide_status tide_index_add_(tide_ctx *ctx, tide_tensor *dst, int dim, const tide_tensor *index,
                            const tide_tensor *src) {
    static const char op[] = "index_add_";
    TIDE_TRY(tide_check_same_device(op, dst, index));
    TIDE_TRY(tide_check_same_device(op, dst, src));
    if (dst->ndim == 0)
        return tide_seterr(TIDE_ESHAPE, "index_add_: cannot index a 0-d tensor");
    TIDE_TRY(tide_check_writable(op, dst));
    TIDE_TRY(tide_norm_dim(op, &dim, dst->ndim));
    if (index->ndim != 1)
        return tide_seterr(TIDE_ESHAPE, "%s: index must be 1-d, got %d-d", op, index->ndim);
    bool ok = src->ndim == dst->ndim;
    for (int i = 0; ok && i < dst->ndim; i++)
        ok = src->shape[i] == (i == dim ? index->shape[0] : dst->shape[i]);
    if (!ok) {
        tide_shape_strs sh = tide_shapes_fmt(src->ndim, src->shape, dst->ndim, dst->shape);
        return tide_seterr(TIDE_ESHAPE,
                           "%s: source of shape %s does not fit a destination of shape %s with "
                           "%lld indices at dim %d",
                           op, sh.a, sh.b, (long long)index->shape[0], dim + 1);
    }
    if (tide_dtype_is_float(src->dtype) && !tide_dtype_is_float(dst->dtype))
        return tide_seterr(TIDE_EDTYPE, "%s: cannot add %s values into a %s tensor in place", op,
                           tide_dtype_name(src->dtype), tide_dtype_name(dst->dtype));
    tide_tensor *ix;
    TIDE_TRY(prepare_index(ctx, op, index, dim, dst->shape[dim], &ix));
    tide_device            *dev = dst->storage->dev;
    tide_entry_index_add_fn fn = dev->backend->index_add;
    tide_tensor            *cs = NULL;
    /* a source sharing dst's memory (t:index_add_(1, {1, 1}, t)) is read from a copy */
    tide_status st = tide_source_for(ctx, op, fn != NULL, tide_tensor_numel(src), src, dst, &cs);
    if (cs) {
        tide_kview dv = tide_kview_of(dst), iv = tide_kview_of(ix), sv = tide_kview_of(cs);
        st = fn(dev, &dv, dim, &iv, &sv);
        if (st != TIDE_OK)
            st = tide_err_op(st, op);
    }
    return tide_written_through(st, dst, cs, ix);
}

/* PyTorch's legacy rule: a 1-D empty tensor ([0], what torch.tensor({}) makes) joins a list of
 * any shape, left out but for its dtype (scripts start an accumulator with one) */
static bool legacy_empty(const tide_tensor *t) {
    return t->ndim == 1 && t->shape[0] == 0;
}

int tide_cat_reference(int n, const tide_tensor *const *ts) {
    int ref = 0;
    while (ref < n - 1 && legacy_empty(ts[ref]))
        ref++;
    return ref;
}

tide_status tide_cat(tide_ctx *ctx, int n, const tide_tensor *const *ts, int dim,
                     tide_tensor **out) {
    static const char op[] = "cat";
    if (n <= 0)
        return tide_seterr(TIDE_EINVAL, "cat: expected a non-empty list of tensors");
    int                ref = tide_cat_reference(n, ts);
    const tide_tensor *t0 = ts[ref];
    if (t0->ndim == 0)
        return tide_seterr(TIDE_ESHAPE, "cat: cannot concatenate 0-d tensors; use stack");
    TIDE_TRY(tide_norm_dim(op, &dim, t0->ndim));
    tide_dtype dt = t0->dtype;
    int64_t    total = 0;
    for (int k = 0; k < n; k++) {
        const tide_tensor *t = ts[k];
        TIDE_TRY(tide_check_same_device(op, t0, t));
        if (k != ref && legacy_empty(t) && t0->ndim != 1) {
            dt = tide_promote(dt, t->dtype);
            continue;
        }
        bool ok = t->ndim == t0->ndim;
        for (int i = 0; ok && i < t0->ndim; i++)
            ok = i == dim || t->shape[i] == t0->shape[i];
        if (!ok) {
            tide_shape_strs sh = tide_shapes_fmt(t0->ndim, t0->shape, t->ndim, t->shape);
            return tide_seterr(TIDE_ESHAPE,
                               "cat: tensor %d has shape %s, which does not fit tensor %d's %s: "
                               "sizes must match except in dim %d",
                               k + 1, sh.b, ref + 1, sh.a, dim + 1);
        }
        dt = tide_promote(dt, t->dtype);
        total += t->shape[dim];
    }
    if (*out)
        TIDE_TRY(tide_check_same_device(op, t0, *out));
    int64_t shape[TIDE_MAX_DIMS];
    memcpy(shape, t0->shape, sizeof shape);
    shape[dim] = total;
    int64_t numel;
    if (tide_shape_numel(t0->ndim, shape, &numel) != TIDE_OK)
        return tide_err_op(TIDE_ESHAPE, op);
    bool created;
    TIDE_TRY(tide_prepare_out(ctx, op, t0->storage->dev, dt, t0->ndim, shape, out, &created));
    int64_t     at = 0;
    tide_status st = TIDE_OK;
    for (int k = 0; k < n && st == TIDE_OK; k++) {
        if (ts[k]->ndim != t0->ndim) /* a legacy empty one */
            continue;
        tide_tensor *part;
        st = tide_tensor_narrow(*out, dim, at, ts[k]->shape[dim], &part);
        if (st == TIDE_OK) {
            st = tide_copy_into(ctx, part, ts[k]);
            tide_tensor_release(part);
        }
        at += ts[k]->shape[dim];
    }
    if (st != TIDE_OK) {
        tide_out_failed(out, created);
        return tide_err_op(st, op);
    }
    return TIDE_OK;
}

/* Checked on the caller's tensors (cat would name the unsqueezed shapes), then each is
 * unsqueezed at dim and the views are concatenated. */
tide_status tide_stack(tide_ctx *ctx, int n, const tide_tensor *const *ts, int dim,
                       tide_tensor **out) {
    static const char op[] = "stack";
    if (n <= 0)
        return tide_seterr(TIDE_EINVAL, "stack: expected a non-empty list of tensors");
    const tide_tensor *t0 = ts[0];
    if (t0->ndim >= TIDE_MAX_DIMS)
        return tide_seterr(TIDE_ESHAPE,
                           "stack: tensors of %d dims would give %d; tide supports "
                           "at most %d",
                           t0->ndim, t0->ndim + 1, TIDE_MAX_DIMS);
    TIDE_TRY(tide_norm_dim(op, &dim, t0->ndim + 1));
    for (int k = 1; k < n; k++) {
        const tide_tensor *t = ts[k];
        TIDE_TRY(tide_check_same_device(op, t0, t));
        bool same = t->ndim == t0->ndim;
        for (int i = 0; same && i < t0->ndim; i++)
            same = t->shape[i] == t0->shape[i];
        if (!same) {
            tide_shape_strs sh = tide_shapes_fmt(t0->ndim, t0->shape, t->ndim, t->shape);
            return tide_seterr(TIDE_ESHAPE,
                               "stack: tensors must have the same shape; tensor 1 has shape %s, "
                               "tensor %d has shape %s",
                               sh.a, k + 1, sh.b);
        }
    }
    if (*out)
        TIDE_TRY(tide_check_same_device(op, t0, *out));
    const tide_tensor **views = calloc((size_t)n, sizeof *views);
    if (!views)
        return tide_seterr(TIDE_ENOMEM, "stack: out of host memory");
    tide_status st = TIDE_OK;
    for (int k = 0; k < n && st == TIDE_OK; k++) {
        tide_tensor *v = NULL;
        st = tide_tensor_unsqueeze(ts[k], dim, &v);
        views[k] = v;
    }
    if (st == TIDE_OK)
        st = tide_cat(ctx, n, views, dim, out);
    for (int k = 0; k < n; k++)
        tide_tensor_release((tide_tensor *)views[k]);
    free(views);
    if (st != TIDE_OK && strncmp(tide_errmsg(), "tide: cat: ", 11) == 0)
        st = tide_seterr(st, "stack: %s", tide_errmsg() + 11);
    return st == TIDE_OK ? st : tide_err_op(st, op);
}

/* softmax along dim of a contiguous tensor of `shape` as the rows' [rows, len, inner] lines:
 * p = {d = len * inner, inner, log} */
static void softmax_params(int ndim, const int64_t *shape, int dim, int log,
                           tide_kernel_scalar p[3]) {
    int64_t inner = 1;
    for (int k = dim + 1; k < ndim; k++)
        inner *= shape[k];
    p[0].i = shape[dim] * inner;
    p[1].i = inner;
    p[2].i = log;
}

/* the kernel row softmax (include/tide_kernels.def) over a float copy of an integer a; its
 * result is the op's, or is copied into a given *out */
tide_status tide_softmax(tide_ctx *ctx, const tide_tensor *a, int dim, int log, tide_tensor **out) {
    const char *op = log ? "log_softmax" : "softmax";
    if (*out)
        TIDE_TRY(tide_check_same_device(op, a, *out));
    if (a->ndim == 0)
        return tide_seterr(TIDE_ESHAPE, "%s: needs at least 1 dim, got a 0-d tensor", op);
    TIDE_TRY(tide_norm_dim(op, &dim, a->ndim));
    tide_device *dev = a->storage->dev;
    tide_dtype   dt = tide_dtype_is_float(a->dtype) ? a->dtype : tide_default_float();
    bool         created = false;
    if (*out || tide_tensor_numel(a) == 0) {
        TIDE_TRY(tide_prepare_out(ctx, op, dev, dt, a->ndim, a->shape, out, &created));
        if (tide_tensor_numel(a) == 0)
            return TIDE_OK;
    }
    tide_tensor       *ca = NULL, *y = NULL;
    tide_kernel_scalar p[3];
    softmax_params(a->ndim, a->shape, dim, log, p);
    tide_status st = tide_cast(ctx, op, a, dt, &ca);
    if (st == TIDE_OK) {
        const tide_tensor *in[1] = {ca};
        st = tide_kernel_run(ctx, TIDE_K_SOFTMAX, in, p, NULL, &y);
    }
    tide_tensor_release(ca);
    if (st == TIDE_OK && !*out) {
        *out = y;
        return TIDE_OK;
    }
    if (st == TIDE_OK)
        st = tide_copy_into(ctx, *out, y);
    tide_tensor_release(y);
    if (st != TIDE_OK) {
        tide_out_failed(out, created);
        return tide_err_op(st, op);
    }
    return TIDE_OK;
}

/* the kernel row softmax_backward, after the checks of its own (a float dtype, one shape) */
tide_status tide_softmax_backward(tide_ctx *ctx, const tide_tensor *y, const tide_tensor *g,
                                  int dim, int log, tide_tensor **dx) {
    const char *op = log ? "log_softmax_backward" : "softmax_backward";
    TIDE_TRY(tide_check_same_device(op, y, g));
    if (!tide_dtype_is_float(y->dtype) || g->dtype != y->dtype)
        return tide_seterr(TIDE_EDTYPE, "%s: y and g must share a float dtype, got %s and %s", op,
                           tide_dtype_name(y->dtype), tide_dtype_name(g->dtype));
    bool same = y->ndim == g->ndim;
    for (int d = 0; same && d < y->ndim; d++)
        same = y->shape[d] == g->shape[d];
    if (!same) {
        tide_shape_strs sh = tide_shapes_fmt(y->ndim, y->shape, g->ndim, g->shape);
        return tide_seterr(TIDE_ESHAPE, "%s: y %s and g %s must have one shape", op, sh.a, sh.b);
    }
    if (y->ndim == 0)
        return tide_seterr(TIDE_ESHAPE, "%s: needs at least 1 dim, got a 0-d tensor", op);
    TIDE_TRY(tide_norm_dim(op, &dim, y->ndim));
    if (tide_tensor_numel(y) == 0)
        return tide_tensor_alloc(ctx, op, y->storage->dev, y->dtype, y->ndim, y->shape, dx);
    tide_kernel_scalar p[3];
    softmax_params(y->ndim, y->shape, dim, log, p);
    const tide_tensor *in[2] = {y, g};
    tide_status        st = tide_kernel_run(ctx, TIDE_K_SOFTMAX_BACKWARD, in, p, NULL, dx);
    return st == TIDE_OK ? st : tide_err_op(st, op);
}
