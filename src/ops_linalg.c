/* ops_linalg.c — matmul with torch.matmul's semantics, lowered to one batched gemm
 * out[B, M, N] = a[B, M, K] @ b[B, K, N] on the backend; and the C API of the decompositions a
 * backend may have a solver for (eigh, svd, qr, LU, Cholesky, LDL^T: kernel rows, LAPACK on the
 * CPU). */
#include "tide_impl.h"

#include <string.h>

/* Views t (already expanded to batch dims + 2 matrix dims) as [B, R, C] with one batch stride;
 * false when its batch dims cannot be merged into one stride (then the caller copies). */
static bool batch_view(const tide_kview *t, tide_kview *v) {
    int     nb = t->ndim - 2;
    int64_t B = 1, bstride = 0;
    bool    first = true;
    for (int i = nb - 1; i >= 0; i--) {
        if (t->shape[i] == 1)
            continue;
        if (first) {
            bstride = t->strides[i];
            first = false;
        } else if (t->strides[i] != bstride * B) {
            return false;
        }
        B *= t->shape[i];
    }
    /* a run of stride-0 dims merges as stride 0 */
    if (bstride == 0 && !first) {
        for (int i = 0; i < nb; i++)
            if (t->shape[i] != 1 && t->strides[i] != 0)
                return false;
    }
    v->data = t->data;
    v->dtype = t->dtype;
    v->ndim = 3;
    v->shape[0] = B;
    v->strides[0] = first ? 0 : bstride;
    v->shape[1] = t->shape[nb];
    v->strides[1] = t->strides[nb];
    v->shape[2] = t->shape[nb + 1];
    v->strides[2] = t->strides[nb + 1];
    return true;
}

/* with mixed stride-0 and real batch dims: materialise the expanded operand */
static tide_status flat_operand(tide_ctx *ctx, const tide_tensor *t, int n, const int64_t *shape,
                                tide_tensor **keep, tide_kview *v) {
    tide_kview e = tide_kview_expand(t, n, shape);
    if (batch_view(&e, v))
        return TIDE_OK;
    tide_tensor *ex, *c;
    TIDE_TRY(tide_tensor_expand(t, n, shape, &ex));
    tide_status st = tide_clone_for(ctx, "matmul", ex, &c);
    tide_tensor_release(ex);
    if (st != TIDE_OK)
        return st;
    *keep = c;
    e = tide_kview_of(c);
    batch_view(&e, v);
    return TIDE_OK;
}

tide_status tide_matmul(tide_ctx *ctx, const tide_tensor *a, const tide_tensor *b,
                        tide_tensor **out) {
    static const char name[] = "matmul";
    TIDE_TRY(tide_check_same_device(name, a, b));
    if (*out)
        TIDE_TRY(tide_check_same_device(name, a, *out));
    if (a->ndim == 0 || b->ndim == 0)
        return tide_seterr(TIDE_ESHAPE,
                           "matmul: both arguments need at least 1 dim, got %d-d and %d-d; use "
                           "mul for scalars",
                           a->ndim, b->ndim);
    tide_device *dev = a->storage->dev;
    tide_dtype   cdt = tide_promote(a->dtype, b->dtype);

    /* operands as matrices: a 1-D a is a row [1, K], a 1-D b a column [K, 1] */
    int64_t M = a->ndim == 1 ? 1 : a->shape[a->ndim - 2], K = a->shape[a->ndim - 1];
    int64_t Kb = b->ndim == 1 ? b->shape[0] : b->shape[b->ndim - 2];
    int64_t N = b->ndim == 1 ? 1 : b->shape[b->ndim - 1];
    if (K != Kb) {
        tide_shape_strs sh = tide_shapes_fmt(a->ndim, a->shape, b->ndim, b->shape);
        return tide_seterr(TIDE_ESHAPE,
                           "matmul: shapes %s and %s do not fit: the first has %lld columns, the "
                           "second %lld rows",
                           sh.a, sh.b, (long long)K, (long long)Kb);
    }
    int     abn = a->ndim > 2 ? a->ndim - 2 : 0, bbn = b->ndim > 2 ? b->ndim - 2 : 0, nb;
    int64_t batch[TIDE_MAX_DIMS];
    if (tide_broadcast_shape(name, abn, a->shape, bbn, b->shape, &nb, batch) != TIDE_OK) {
        tide_shape_strs sh = tide_shapes_fmt(a->ndim, a->shape, b->ndim, b->shape);
        return tide_seterr(TIDE_ESHAPE,
                           "matmul: shapes %s and %s do not fit: their batch dims (all but the "
                           "last two) cannot be broadcast; make them equal or 1",
                           sh.a, sh.b);
    }
    if (nb + 2 > TIDE_MAX_DIMS)
        return tide_seterr(TIDE_ESHAPE, "matmul: result would have more than %d dims",
                           TIDE_MAX_DIMS);

    /* result shape: batch, then M unless a was 1-D, then N unless b was 1-D */
    int64_t rshape[TIDE_MAX_DIMS];
    int     rn = 0;
    for (int i = 0; i < nb; i++)
        rshape[rn++] = batch[i];
    if (a->ndim > 1)
        rshape[rn++] = M;
    if (b->ndim > 1)
        rshape[rn++] = N;
    int64_t numel;
    if (tide_shape_numel(rn, rshape, &numel) != TIDE_OK)
        return tide_err_op(TIDE_ESHAPE, name);
    bool created;
    TIDE_TRY(tide_prepare_out(ctx, name, dev, cdt, rn, rshape, out, &created));
    if (numel == 0)
        return TIDE_OK;
    if (K == 0) { /* empty inner dim: sums of nothing (an output given was counted above) */
        tide_status st = tide_fill_for(ctx, name, *out, tide_scalar_i(0));
        if (st != TIDE_OK)
            tide_out_failed(out, created);
        return st;
    }
    tide_entry_matmul_fn fn;
    tide_status          st = tide_entry_matmul(dev, name, &fn);
    if (st != TIDE_OK) {
        tide_out_failed(out, created);
        return st;
    }

    tide_tensor *ca = NULL, *cb = NULL, *ma = NULL, *mb = NULL, *ka = NULL, *kb = NULL;
    tide_tensor *res = NULL;
    st = tide_cast(ctx, name, a, cdt, &ca);
    if (st == TIDE_OK)
        st = tide_cast(ctx, name, b, cdt, &cb);
    if (st == TIDE_OK)
        st = a->ndim == 1 ? tide_tensor_unsqueeze(ca, 0, &ma)
                          : tide_tensor_view(ca, ca->ndim, ca->shape, &ma);
    if (st == TIDE_OK)
        st = b->ndim == 1 ? tide_tensor_unsqueeze(cb, 1, &mb)
                          : tide_tensor_view(cb, cb->ndim, cb->shape, &mb);
    int64_t ash[TIDE_MAX_DIMS], bsh[TIDE_MAX_DIMS];
    memcpy(ash, batch, (size_t)nb * sizeof *batch);
    memcpy(bsh, batch, (size_t)nb * sizeof *batch);
    ash[nb] = M, ash[nb + 1] = K;
    bsh[nb] = K, bsh[nb + 1] = N;
    tide_kview av, bv;
    if (st == TIDE_OK)
        st = flat_operand(ctx, ma, nb + 2, ash, &ka, &av);
    if (st == TIDE_OK)
        st = flat_operand(ctx, mb, nb + 2, bsh, &kb, &bv);
    /* the backend writes a contiguous [B, M, N]; a strided given output gets a copy */
    if (st == TIDE_OK) {
        if (tide_tensor_is_contiguous(*out)) {
            tide_tensor_retain(*out);
            res = *out;
        } else {
            st = tide_tensor_alloc(ctx, name, dev, cdt, rn, rshape, &res);
        }
    }
    if (st == TIDE_OK) {
        tide_kview ov = tide_kview_of(res);
        ov.ndim = 3;
        ov.shape[0] = numel / (M * N);
        ov.shape[1] = M;
        ov.shape[2] = N;
        tide_contiguous_strides(3, ov.shape, ov.strides);
        /* one shared right operand and stacked rows on the left: a single [B*M, K] gemm */
        if (ov.shape[0] > 1 && bv.strides[0] == 0 && av.strides[0] == M * av.strides[1]) {
            av.shape[1] *= av.shape[0];
            ov.shape[1] *= ov.shape[0];
            av.shape[0] = ov.shape[0] = bv.shape[0] = 1;
            tide_contiguous_strides(3, ov.shape, ov.strides);
        }
        st = fn(dev, &ov, &av, &bv);
        if (st == TIDE_OK && res != *out)
            st = tide_copy_into(ctx, *out, res);
    }
    tide_tensor *tmp[] = {ca, cb, ma, mb, ka, kb, res};
    for (size_t i = 0; i < sizeof tmp / sizeof *tmp; i++)
        tide_tensor_release(tmp[i]);
    if (st != TIDE_OK) {
        tide_out_failed(out, created);
        return tide_err_op(st, name);
    }
    return TIDE_OK;
}

/* ---- decompositions by the backend's own solver ------------------------------------------- */

/* Each is a MATRIX row of include/tide_kernels.def: the op's own checks (and messages) here,
 * then tide_kernel_run, which checks the row's shapes again, makes the outputs and answers
 * TIDE_ENOTSUP for a device without the kernel. */

/* a float32 / float64 matrix or batch of them ([..., m, n], square when square) */
static tide_status decomposable(const char *op, const tide_tensor *a, bool square) {
    if (a->dtype != TIDE_DTYPE_F32 && a->dtype != TIDE_DTYPE_F64)
        return tide_seterr(TIDE_EDTYPE, "%s: needs float32 or float64, got %s", op,
                           tide_dtype_name(a->dtype));
    if (a->ndim < 2)
        return tide_seterr(TIDE_ESHAPE, "%s: expected a matrix or a batch of matrices, got %d dims",
                           op, a->ndim);
    if (square && a->shape[a->ndim - 1] != a->shape[a->ndim - 2])
        return tide_seterr(TIDE_ESHAPE, "%s: expected square matrices, got %lld x %lld", op,
                           (long long)a->shape[a->ndim - 2], (long long)a->shape[a->ndim - 1]);
    return TIDE_OK;
}

tide_status tide_linalg_eigh(tide_ctx *ctx, const tide_tensor *a, int upper, tide_tensor **w,
                             tide_tensor **v) {
    TIDE_TRY(decomposable("linalg.eigh", a, true));
    tide_kernel_scalar p[1] = {{.i = upper != 0}};
    tide_tensor       *out[2];
    TIDE_TRY(tide_kernel_run(ctx, TIDE_K_LINALG_EIGH, &a, p, NULL, out));
    *w = out[0];
    *v = out[1];
    return TIDE_OK;
}

tide_status tide_linalg_eig(tide_ctx *ctx, const tide_tensor *a, tide_tensor **w, tide_tensor **v) {
    TIDE_TRY(decomposable("linalg.eig", a, true));
    int          want[2] = {1, v != NULL};
    tide_tensor *out[2];
    TIDE_TRY(tide_kernel_run(ctx, TIDE_K_LINALG_EIG, &a, NULL, want, out));
    *w = out[0];
    if (v)
        *v = out[1];
    return TIDE_OK;
}

tide_status tide_linalg_svd(tide_ctx *ctx, const tide_tensor *a, tide_tensor **u, tide_tensor **s,
                            tide_tensor **vh) {
    TIDE_TRY(decomposable("linalg.svd", a, false));
    tide_tensor *out[3];
    TIDE_TRY(tide_kernel_run(ctx, TIDE_K_LINALG_SVD, &a, NULL, NULL, out));
    *u = out[0];
    *s = out[1];
    *vh = out[2];
    return TIDE_OK;
}

/* b [..., n, k] against a [..., n, n]: the same batch dims and n */
static tide_status same_system(const char *op, const tide_tensor *a, const tide_tensor *b) {
    if (b->ndim != a->ndim || b->shape[b->ndim - 2] != a->shape[a->ndim - 1] ||
        memcmp(a->shape, b->shape, (size_t)(a->ndim - 2) * sizeof *a->shape) != 0)
        return tide_seterr(TIDE_ESHAPE, "%s: b must be [..., %lld, k] with a's batch dims", op,
                           (long long)a->shape[a->ndim - 1]);
    if (b->dtype != a->dtype)
        return tide_seterr(TIDE_EDTYPE, "%s: a is %s, b %s: convert one", op,
                           tide_dtype_name(a->dtype), tide_dtype_name(b->dtype));
    if (b->storage->dev != a->storage->dev)
        return tide_seterr(TIDE_EDEVICE, "%s: a and b are on different devices", op);
    return TIDE_OK;
}

/* pivots [..., n] int64 with the factor's batch dims and n, on its device (by: the function
 * that gives them) */
static tide_status pivots_fit(const char *op, const char *by, const tide_tensor *lu,
                              const tide_tensor *pivots) {
    if (pivots->dtype != TIDE_DTYPE_I64 || pivots->ndim != lu->ndim - 1 ||
        memcmp(pivots->shape, lu->shape, (size_t)pivots->ndim * sizeof *lu->shape) != 0)
        return tide_seterr(TIDE_ESHAPE, "%s: pivots must be %s's int64 [..., n]", op, by);
    return tide_check_same_device(op, lu, pivots);
}

tide_status tide_linalg_qr(tide_ctx *ctx, const tide_tensor *a, int complete, tide_tensor **q,
                           tide_tensor **r) {
    TIDE_TRY(decomposable("linalg.qr", a, false));
    int64_t            m = a->shape[a->ndim - 2], n = a->shape[a->ndim - 1];
    tide_kernel_scalar p[1] = {{.i = complete || m < n ? m : n}}; /* q's columns */
    tide_tensor       *out[2];
    TIDE_TRY(tide_kernel_run(ctx, TIDE_K_LINALG_QR, &a, p, NULL, out));
    *q = out[0];
    *r = out[1];
    return TIDE_OK;
}

tide_status tide_linalg_lu_factor(tide_ctx *ctx, const tide_tensor *a, tide_tensor **lu,
                                  tide_tensor **pivots) {
    TIDE_TRY(decomposable("linalg.lu_factor", a, false));
    tide_tensor *out[2];
    TIDE_TRY(tide_kernel_run(ctx, TIDE_K_LINALG_LU_FACTOR, &a, NULL, NULL, out));
    *lu = out[0];
    *pivots = out[1];
    return TIDE_OK;
}

tide_status tide_linalg_lu_solve(tide_ctx *ctx, const tide_tensor *lu, const tide_tensor *pivots,
                                 const tide_tensor *b, tide_tensor **x) {
    static const char op[] = "linalg.lu_solve";
    TIDE_TRY(decomposable(op, lu, true));
    TIDE_TRY(same_system(op, lu, b));
    TIDE_TRY(pivots_fit(op, "lu_factor", lu, pivots));
    const tide_tensor *in[3] = {lu, pivots, b};
    return tide_kernel_run(ctx, TIDE_K_LINALG_LU_SOLVE, in, NULL, NULL, x);
}

tide_status tide_linalg_cholesky(tide_ctx *ctx, const tide_tensor *a, tide_tensor **l) {
    TIDE_TRY(decomposable("linalg.cholesky", a, true));
    return tide_kernel_run(ctx, TIDE_K_LINALG_CHOLESKY, &a, NULL, NULL, l);
}

tide_status tide_linalg_solve_triangular(tide_ctx *ctx, const tide_tensor *a, const tide_tensor *b,
                                         int upper, int unit, tide_tensor **x) {
    static const char op[] = "linalg.solve_triangular";
    TIDE_TRY(decomposable(op, a, true));
    TIDE_TRY(same_system(op, a, b));
    const tide_tensor *in[2] = {a, b};
    tide_kernel_scalar p[2] = {{.i = upper != 0}, {.i = unit != 0}};
    return tide_kernel_run(ctx, TIDE_K_LINALG_SOLVE_TRIANGULAR, in, p, NULL, x);
}

tide_status tide_linalg_ldl_factor(tide_ctx *ctx, const tide_tensor *a, tide_tensor **ld,
                                   tide_tensor **pivots, tide_tensor **info) {
    TIDE_TRY(decomposable("linalg.ldl_factor", a, true));
    tide_tensor *out[3];
    TIDE_TRY(tide_kernel_run(ctx, TIDE_K_LINALG_LDL_FACTOR, &a, NULL, NULL, out));
    *ld = out[0];
    *pivots = out[1];
    *info = out[2];
    return TIDE_OK;
}

/* (the pivots' values, which sytrs trusts, are the kernel's to check: src/cpu/linalg.c) */
tide_status tide_linalg_ldl_solve(tide_ctx *ctx, const tide_tensor *ld, const tide_tensor *pivots,
                                  const tide_tensor *b, tide_tensor **x) {
    static const char op[] = "linalg.ldl_solve";
    TIDE_TRY(decomposable(op, ld, true));
    TIDE_TRY(same_system(op, ld, b));
    TIDE_TRY(pivots_fit(op, "ldl_factor", ld, pivots));
    const tide_tensor *in[3] = {ld, pivots, b};
    return tide_kernel_run(ctx, TIDE_K_LINALG_LDL_SOLVE, in, NULL, NULL, x);
}
