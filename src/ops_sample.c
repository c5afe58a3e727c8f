/* ops_sample.c — one_hot and multinomial, built from existing kernels (arange, eq, matmul,
 * random, sort), so every backend with those has them. */
#include "tide_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* t's values as a malloc'd array of host doubles: an internal copy (not a user transfer), for
 * the checks */
static tide_status host_values(tide_ctx *ctx, const char *op, const tide_tensor *t, double **out) {
    tide_tensor *c = NULL;
    TIDE_TRY(tide_cast_contiguous(ctx, op, t, TIDE_DTYPE_F64, &c));
    tide_status st = tide_host_copy(op, c, (void **)out);
    tide_tensor_release(c);
    return st == TIDE_OK ? st : tide_err_op(st, op);
}

/* out[..., c] = (t[...] == c) for c in [0, n), int64; n < 0: max(t) + 1 */
tide_status tide_one_hot(tide_ctx *ctx, const tide_tensor *t, int64_t n, tide_tensor **out) {
    static const char op[] = "one_hot";
    if (t->dtype != TIDE_DTYPE_I64 && t->dtype != TIDE_DTYPE_I32)
        return tide_seterr(TIDE_EDTYPE, "%s: classes must be an int64 tensor, got %s", op,
                           tide_dtype_name(t->dtype));
    if (t->ndim >= TIDE_MAX_DIMS)
        return tide_seterr(TIDE_ESHAPE, "%s: a %d-d input would give %d dims; at most %d", op,
                           t->ndim, t->ndim + 1, TIDE_MAX_DIMS);
    double *v = NULL;
    TIDE_TRY(host_values(ctx, op, t, &v));
    int64_t count = tide_tensor_numel(t), mx = -1;
    for (int64_t i = 0; i < count; i++)
        mx = v[i] > (double)mx ? (int64_t)v[i] : mx;
    if (n < 0) {
        if (count == 0) {
            free(v);
            return tide_seterr(TIDE_EINVAL,
                               "%s: cannot infer the number of classes of an empty "
                               "tensor; give it",
                               op);
        }
        n = mx + 1;
    }
    tide_status st = TIDE_OK;
    for (int64_t i = 0; i < count && st == TIDE_OK; i++)
        if (v[i] < 0 || v[i] >= (double)n)
            st = tide_seterr(TIDE_EINDEX,
                             "%s: class %lld is out of range for %lld classes; classes are "
                             "1-based: use 1..%lld",
                             op, (long long)v[i] + 1, (long long)n, (long long)n);
    free(v);
    if (st != TIDE_OK)
        return st;
    tide_tensor *cls = NULL, *col = NULL, *eq = NULL, *r = NULL;
    st = tide_arange(ctx, t->storage->dev, t->dtype, 0, (double)n, 1, &cls);
    if (st == TIDE_OK)
        st = tide_tensor_unsqueeze(t, t->ndim, &col);
    if (st == TIDE_OK)
        st = tide_binary(ctx, TIDE_OP_EQ, col, cls, &eq);
    if (st == TIDE_OK)
        st = tide_tensor_to(ctx, eq, t->storage->dev, TIDE_DTYPE_I64, 0, &r);
    tide_tensor_release(cls);
    tide_tensor_release(col);
    tide_tensor_release(eq);
    if (st != TIDE_OK)
        return tide_err_op(st, op);
    *out = r;
    return TIDE_OK;
}

/* checks each row of probs (finite, >= 0, a positive sum; without replacement at least n
 * nonzero) on the host */
static tide_status check_probs(tide_ctx *ctx, const char *op, const tide_tensor *p, int64_t n,
                               int replacement) {
    double *v = NULL;
    TIDE_TRY(host_values(ctx, op, p, &v));
    int64_t     k = p->shape[p->ndim - 1], rows = k ? tide_tensor_numel(p) / k : 0;
    tide_status st = TIDE_OK;
    for (int64_t r = 0; r < rows && st == TIDE_OK; r++) {
        double  sum = 0;
        int64_t nonzero = 0;
        for (int64_t j = 0; j < k; j++) {
            double x = v[r * k + j];
            if (!isfinite(x) || x < 0) {
                st =
                    tide_seterr(TIDE_EINVAL,
                                "%s: probabilities must be finite and non-negative, got %g", op, x);
                break;
            }
            sum += x;
            nonzero += x > 0;
        }
        if (st == TIDE_OK && sum <= 0)
            st = tide_seterr(TIDE_EINVAL, "%s: the probabilities of row %lld sum to 0", op,
                             (long long)r + 1);
        if (st == TIDE_OK && !replacement && n > nonzero)
            st = tide_seterr(TIDE_EINVAL,
                             "%s: cannot draw %lld samples without replacement from %lld "
                             "categories of nonzero probability (row %lld); pass "
                             "{replacement = true}",
                             op, (long long)n, (long long)nonzero, (long long)r + 1);
    }
    free(v);
    return st;
}

/* with replacement, for p2 [b, k]: the count of each row's cumulative sums <= u * total is the
 * drawn category. The sums come from the cumsum kernel, one pass (a matmul with a k x k triangle
 * of ones had needed k^2 elements: 1.6 GB and 16 s for 20,000 categories, and more memory than
 * the host had for a 50,257-token vocabulary); the counts from the draws in chunks of samples,
 * each comparing at most DRAW_CELLS cells. u [b, n] is drawn whole, as before, so a seed gives
 * the same u. */
#define DRAW_CELLS ((int64_t)1 << 20) /* a bool and, summed, an int64 copy: 9 MB */
static tide_status with_replacement(tide_ctx *ctx, const tide_tensor *p2, int64_t n,
                                    tide_tensor **out) {
    static const char op[] = "multinomial";
    tide_device      *dev = p2->storage->dev;
    int64_t           b = p2->shape[0], k = p2->shape[1];
    int64_t tshape[3] = {b, 1, 1}, ushape[3] = {b, n, 1}, cshape[3] = {b, 1, k}, oshape[2] = {b, n};
    tide_dtype   sum_dt = p2->dtype == TIDE_DTYPE_F64 ? TIDE_DTYPE_F64 : TIDE_DTYPE_F32;
    tide_tensor *pc = NULL, *cdf = NULL, *tot = NULL, *t3 = NULL, *u = NULL, *ut = NULL, *c3 = NULL,
                *r = NULL;
    tide_status st = tide_cast_contiguous(ctx, op, p2, sum_dt, &pc);
    if (st == TIDE_OK) {
        const tide_tensor *in[1] = {pc};
        tide_kernel_scalar par[2] = {{.i = k}, {.i = 1}};
        st = tide_kernel_run(ctx, TIDE_K_CUMSUM, in, par, NULL, &cdf);
    }
    if (st == TIDE_OK)
        st = tide_tensor_narrow(cdf, 1, k - 1, 1, &tot);
    if (st == TIDE_OK)
        st = tide_tensor_view(tot, 3, tshape, &t3);
    if (st == TIDE_OK)
        st = tide_tensor_random(ctx, dev, p2->dtype, 3, ushape, TIDE_RANDOM_UNIFORM, 0, 1, &u);
    if (st == TIDE_OK)
        st = tide_binary(ctx, TIDE_OP_MUL, u, t3, &ut);
    if (st == TIDE_OK)
        st = tide_tensor_view(cdf, 3, cshape, &c3);
    if (st == TIDE_OK)
        st = tide_tensor_empty(ctx, dev, TIDE_DTYPE_I64, 2, oshape, &r);
    int64_t chunk = DRAW_CELLS / (b * k) > 1 ? DRAW_CELLS / (b * k) : 1;
    for (int64_t s0 = 0; st == TIDE_OK && s0 < n; s0 += chunk) {
        int64_t      m = n - s0 < chunk ? n - s0 : chunk;
        tide_tensor *uc = NULL, *ge = NULL, *cnt = NULL, *last = NULL, *rc = NULL;
        st = tide_tensor_narrow(ut, 1, s0, m, &uc);
        if (st == TIDE_OK)
            st = tide_binary(ctx, TIDE_OP_GE, uc, c3, &ge);
        if (st == TIDE_OK)
            st = tide_reduce(ctx, TIDE_OP_SUM, ge, 2, 0, &cnt, NULL);
        if (st == TIDE_OK) /* rounding at the top end: never past the last category */
            st = tide_clamp(ctx, cnt, tide_scalar_i(0), tide_scalar_i(k - 1), &last);
        if (st == TIDE_OK)
            st = tide_tensor_narrow(r, 1, s0, m, &rc);
        if (st == TIDE_OK)
            st = tide_tensor_copy_(ctx, rc, last);
        tide_tensor *chunk_all[] = {uc, ge, cnt, last, rc};
        for (size_t i = 0; i < sizeof chunk_all / sizeof *chunk_all; i++)
            tide_tensor_release(chunk_all[i]);
    }
    tide_tensor *all[] = {pc, cdf, tot, t3, u, ut, c3};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        tide_tensor_release(all[i]);
    if (st != TIDE_OK) {
        tide_tensor_release(r);
        return st;
    }
    *out = r;
    return TIDE_OK;
}

/* with replacement: with_replacement above. Without: the n largest keys
 * log(u) / p (exponential races: a category's chance to come next is its share of what is
 * left), 0 probabilities getting -inf. u comes from the context's generator. */
tide_status tide_multinomial(tide_ctx *ctx, const tide_tensor *probs, int64_t n, int replacement,
                             tide_tensor **out) {
    static const char op[] = "multinomial";
    if (probs->ndim != 1 && probs->ndim != 2)
        return tide_seterr(TIDE_ESHAPE, "%s: probabilities must be 1-d or 2-d, got %d dims", op,
                           probs->ndim);
    if (!tide_dtype_is_float(probs->dtype))
        return tide_seterr(TIDE_EDTYPE, "%s: probabilities must be a float tensor, got %s", op,
                           tide_dtype_name(probs->dtype));
    int64_t k = probs->shape[probs->ndim - 1], b = probs->ndim == 2 ? probs->shape[0] : 1;
    if (k == 0)
        return tide_seterr(TIDE_EINVAL, "%s: no categories to draw from", op);
    if (n <= 0)
        return tide_seterr(TIDE_EINVAL, "%s: the number of samples must be positive, got %lld", op,
                           (long long)n);
    TIDE_TRY(check_probs(ctx, op, probs, n, replacement));
    tide_device *dev = probs->storage->dev;
    tide_dtype   dt = probs->dtype;
    int64_t      shape2[2] = {b, k}, oshape[2] = {b, n};
    tide_tensor *p2 = NULL, *r = NULL;
    tide_status  st = tide_tensor_reshape(ctx, probs, 2, shape2, &p2);
    if (st == TIDE_OK && replacement)
        st = with_replacement(ctx, p2, n, &r);
    else if (st == TIDE_OK) {
        tide_tensor *u = NULL, *lu = NULL, *keys = NULL, *sv = NULL, *si = NULL, *top = NULL;
        st = tide_tensor_random(ctx, dev, dt, 2, shape2, TIDE_RANDOM_UNIFORM, 0, 1, &u);
        if (st == TIDE_OK)
            st = tide_unary(ctx, TIDE_OP_LOG, u, NULL, &lu);
        if (st == TIDE_OK)
            st = tide_binary(ctx, TIDE_OP_DIV, lu, p2, &keys);
        if (st == TIDE_OK)
            st = tide_sort(ctx, keys, 1, 1, &sv, &si);
        if (st == TIDE_OK)
            st = tide_tensor_narrow(si, 1, 0, n, &top);
        if (st == TIDE_OK)
            st = tide_tensor_contiguous(ctx, top, &r);
        tide_tensor *all[] = {u, lu, keys, sv, si, top};
        for (size_t i = 0; i < sizeof all / sizeof *all; i++)
            tide_tensor_release(all[i]);
    }
    tide_tensor_release(p2);
    if (st == TIDE_OK && probs->ndim == 1) {
        tide_tensor *v = NULL;
        st = tide_tensor_view(r, 1, &oshape[1], &v);
        tide_tensor_release(r);
        r = v;
    }
    if (st != TIDE_OK) {
        tide_tensor_release(r);
        return tide_err_op(st, op);
    }
    *out = r;
    return TIDE_OK;
}
