/* ops_select.c — sort, topk and kthvalue (with the medians): each row along a dim in the order of
 * a stable sort (NaN largest), all of it, its first k or one element, through the kernel rows
 * sort, topk and kthvalue (include/tide_kernels.def; the last two select without sorting). A
 * device without topk or kthvalue gets sort's answer, narrowed or gathered. */
#include "tide_impl.h"

/* a's shape with n at dim (a 0-d a: none) */
static int shape_with(const tide_tensor *a, int dim, int64_t n, int64_t *shape) {
    for (int d = 0; d < a->ndim; d++)
        shape[d] = d == dim ? n : a->shape[d];
    return a->ndim;
}

/* whether a's device has the kernel row k */
static bool has_row(const tide_tensor *a, tide_kernel k) {
    const tide_backend *b = a->storage->dev->backend;
    return b->kernels && (int)k < b->nkernels && b->kernels[k];
}

/* runs row k over a's lines along dim (p: its parameters after d and inner, which are set here)
 * into new values and indices with out_len at dim; with nothing to order (the row's d is at
 * least 1) they are made here, empty */
static tide_status run_row(tide_ctx *ctx, const char *op, tide_kernel k, const tide_tensor *a,
                           int dim, int64_t out_len, tide_kernel_scalar *p, tide_tensor **values,
                           tide_tensor **indices) {
    tide_tensor *o[2] = {NULL, NULL};
    if (tide_tensor_numel(a) > 0 && out_len > 0) {
        int64_t inner = 1;
        for (int d = dim + 1; d < a->ndim; d++)
            inner *= a->shape[d];
        p[0].i = (a->ndim ? a->shape[dim] : 1) * inner;
        p[1].i = inner;
        const tide_tensor *in[1] = {a};
        TIDE_TRY(tide_kernel_run(ctx, k, in, p, NULL, o));
    } else {
        tide_device *dev = a->storage->dev;
        int64_t      shape[TIDE_MAX_DIMS];
        int          nd = shape_with(a, dim, out_len, shape);
        TIDE_TRY(tide_tensor_alloc(ctx, op, dev, a->dtype, nd, shape, &o[0]));
        tide_status st = tide_tensor_alloc(ctx, op, dev, TIDE_DTYPE_I64, nd, shape, &o[1]);
        if (st != TIDE_OK) {
            tide_tensor_release(o[0]);
            return st;
        }
    }
    *values = o[0];
    *indices = o[1];
    return TIDE_OK;
}

tide_status tide_sort(tide_ctx *ctx, const tide_tensor *a, int dim, int descending,
                      tide_tensor **values, tide_tensor **indices) {
    static const char op[] = "sort";
    TIDE_TRY(tide_norm_dim_0d(op, &dim, a->ndim));
    tide_kernel_scalar p[3] = {{0}, {0}, {.i = descending != 0}};
    return run_row(ctx, op, TIDE_K_SORT, a, dim, a->ndim ? a->shape[dim] : 1, p, values, indices);
}

/* t narrowed to [start, start + n) at dim, contiguous; t released */
static tide_status narrowed(tide_ctx *ctx, tide_tensor *t, int dim, int64_t start, int64_t n,
                            tide_tensor **out) {
    tide_tensor *view = NULL;
    tide_status  st = tide_tensor_narrow(t, dim, start, n, &view);
    if (st == TIDE_OK)
        st = tide_tensor_contiguous(ctx, view, out);
    tide_tensor_release(view);
    tide_tensor_release(t);
    return st;
}

/* sort's values and indices at dim narrowed to [start, start + n) */
static tide_status sorted_narrow(tide_ctx *ctx, const tide_tensor *a, int dim, int desc,
                                 int64_t start, int64_t n, tide_tensor **values,
                                 tide_tensor **indices) {
    tide_tensor *sv = NULL, *si = NULL, *v = NULL;
    TIDE_TRY(tide_sort(ctx, a, dim, desc, &sv, &si));
    tide_status st = narrowed(ctx, sv, dim, start, n, &v);
    if (st != TIDE_OK) {
        tide_tensor_release(si);
        return st;
    }
    st = narrowed(ctx, si, dim, start, n, indices);
    if (st != TIDE_OK) {
        tide_tensor_release(v);
        return st;
    }
    *values = v;
    return TIDE_OK;
}

/* a 0-d a is one element: the first of its order, and its median (PyTorch's, for any k) */
tide_status tide_topk(tide_ctx *ctx, const tide_tensor *a, int dim, int64_t k, int largest,
                      tide_tensor **values, tide_tensor **indices) {
    static const char op[] = "topk";
    TIDE_TRY(tide_norm_dim_0d(op, &dim, a->ndim));
    int64_t len = a->ndim ? a->shape[dim] : 1;
    if (k < 0 || k > len)
        return tide_seterr(TIDE_EINVAL,
                           "%s: k = %lld is out of range for dim %d of size %lld; use 0..%lld", op,
                           (long long)k, dim + 1, (long long)len, (long long)len);
    if (a->ndim == 0)
        return tide_sort(ctx, a, dim, largest, values, indices);
    if (!has_row(a, TIDE_K_TOPK))
        return sorted_narrow(ctx, a, dim, largest, 0, k, values, indices);
    tide_kernel_scalar p[4] = {{0}, {0}, {.i = k}, {.i = largest != 0}};
    return run_row(ctx, op, TIDE_K_TOPK, a, dim, k, p, values, indices);
}

/* the 0-based place in sorted (ascending, along dim) of each row's median (kind: TIDE_KTH_*),
 * from its count of values that are not NaN: int64, 1 at dim */
static tide_status median_places(tide_ctx *ctx, const tide_tensor *sorted, int dim, int64_t k,
                                 tide_tensor **out) {
    int64_t      n = sorted->shape[dim];
    tide_tensor *num = NULL, *ok = NULL, *t1 = NULL, *t2 = NULL, *t3 = NULL;
    tide_status  st = tide_binary(ctx, TIDE_OP_EQ, sorted, sorted, &num); /* not NaN */
    if (st == TIDE_OK)
        st = tide_reduce(ctx, TIDE_OP_SUM, num, dim, 1, &ok, NULL);
    if (st == TIDE_OK)
        st = tide_cast(ctx, "median", ok, TIDE_DTYPE_I64, &t1);
    if (st == TIDE_OK && k == TIDE_KTH_MEDIAN) {
        /* ok < n: the first NaN, at ok; else (n - 1) / 2 = ok + ((n - 1) / 2 - n) */
        st = tide_binary_scalar_x(ctx, TIDE_OP_EQ, t1, tide_scalar_i(n), 0, &t2);
        tide_tensor *w = NULL;
        if (st == TIDE_OK)
            st = tide_cast(ctx, "median", t2, TIDE_DTYPE_I64, &w);
        if (st == TIDE_OK)
            st = tide_binary_scalar_x(ctx, TIDE_OP_MUL, w, tide_scalar_i((n - 1) / 2 - n), 0, &t3);
        tide_tensor_release(w);
        if (st == TIDE_OK)
            st = tide_binary(ctx, TIDE_OP_ADD, t1, t3, out);
    } else if (st == TIDE_OK) { /* (ok - 1) / 2, 0 for ok = 0 */
        st = tide_clamp(ctx, t1, tide_scalar_i(1), tide_scalar_i(INT64_MAX), &t2);
        if (st == TIDE_OK)
            st = tide_binary_scalar_x(ctx, TIDE_OP_SUB, t2, tide_scalar_i(1), 0, &t3);
        if (st == TIDE_OK)
            st = tide_binary_scalar_x(ctx, TIDE_OP_FLOORDIV, t3, tide_scalar_i(2), 0, out);
    }
    tide_tensor *all[] = {num, ok, t1, t2, t3};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        tide_tensor_release(all[i]);
    return st;
}

/* kthvalue by sort: the k-th place narrowed, or the medians' places gathered */
static tide_status kth_by_sort(tide_ctx *ctx, const tide_tensor *a, int dim, int64_t k,
                               tide_tensor **values, tide_tensor **indices) {
    if (k >= 1)
        return sorted_narrow(ctx, a, dim, 0, k - 1, 1, values, indices);
    tide_tensor *sv = NULL, *si = NULL, *at = NULL, *v = NULL;
    tide_status  st = tide_sort(ctx, a, dim, 0, &sv, &si);
    if (st == TIDE_OK)
        st = median_places(ctx, sv, dim, k, &at);
    if (st == TIDE_OK)
        st = tide_gather(ctx, sv, dim, at, &v);
    if (st == TIDE_OK)
        st = tide_gather(ctx, si, dim, at, indices);
    tide_tensor_release(sv);
    tide_tensor_release(si);
    tide_tensor_release(at);
    if (st != TIDE_OK) {
        tide_tensor_release(v);
        return st;
    }
    *values = v;
    return TIDE_OK;
}

tide_status tide_kthvalue(tide_ctx *ctx, const tide_tensor *a, int dim, int64_t k,
                          tide_tensor **values, tide_tensor **indices) {
    static const char op[] = "kthvalue";
    TIDE_TRY(tide_norm_dim_0d(op, &dim, a->ndim));
    int64_t len = a->ndim ? a->shape[dim] : 1;
    if (len == 0)
        return tide_seterr(TIDE_EINVAL, "%s: dim %d has size 0, and it has no element to take", op,
                           dim + 1);
    if (k > len || (k < 1 && k != TIDE_KTH_MEDIAN && k != TIDE_KTH_NANMEDIAN))
        return tide_seterr(TIDE_EINVAL,
                           "%s: k = %lld is out of range for dim %d of size %lld; use 1..%lld", op,
                           (long long)k, dim + 1, (long long)len, (long long)len);
    if (a->ndim == 0)
        return tide_sort(ctx, a, dim, 0, values, indices);
    if (!has_row(a, TIDE_K_KTHVALUE))
        return kth_by_sort(ctx, a, dim, k, values, indices);
    tide_kernel_scalar p[3] = {{0}, {0}, {.i = k}};
    return run_row(ctx, op, TIDE_K_KTHVALUE, a, dim, 1, p, values, indices);
}
