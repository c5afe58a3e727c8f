/* ops_linalg.c — matmul with torch.matmul's semantics, lowered to one batched gemm
 * out[B, M, N] = a[B, M, K] @ b[B, K, N] on the backend; and the decompositions a backend may
 * have a solver for (eigh, svd, qr, LU, Cholesky, LDL^T: LAPACK on the CPU). */
#include "tide_impl.h"

#include <stdlib.h>
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

/* a's batch dims followed by the dims given (n of them) */
static int batch_shape(const tide_tensor *a, int n, const int64_t *last, int64_t *shape) {
    int nb = a->ndim - 2;
    memcpy(shape, a->shape, (size_t)nb * sizeof *shape);
    memcpy(shape + nb, last, (size_t)n * sizeof *shape);
    return nb + n;
}

/* n outputs of op, allocated with the shapes given; all or none */
static tide_status alloc_outputs(tide_ctx *ctx, const char *op, const tide_tensor *a, int n,
                                 const int    *ndims, int64_t (*shapes)[TIDE_MAX_DIMS],
                                 tide_tensor **out) {
    for (int i = 0; i < n; i++) {
        tide_status st =
            tide_tensor_alloc(ctx, op, a->storage->dev, a->dtype, ndims[i], shapes[i], &out[i]);
        if (st != TIDE_OK) {
            tide_release_all(i, out);
            return st;
        }
    }
    return TIDE_OK;
}

tide_status tide_linalg_eigh(tide_ctx *ctx, const tide_tensor *a, int upper, tide_tensor **w,
                             tide_tensor **v) {
    static const char op[] = "linalg.eigh";
    TIDE_TRY(decomposable(op, a, true));
    tide_device       *dev = a->storage->dev;
    tide_entry_eigh_fn fn;
    TIDE_TRY(tide_entry_eigh(dev, op, &fn));
    int64_t n = a->shape[a->ndim - 1], shapes[2][TIDE_MAX_DIMS], last[2] = {n, n};
    int     ndims[2] = {batch_shape(a, 1, last, shapes[0]), batch_shape(a, 2, last, shapes[1])};
    tide_tensor *c, *out[2];
    TIDE_TRY(tide_contiguous_all(ctx, 1, &a, &c));
    tide_status st = alloc_outputs(ctx, op, a, 2, ndims, shapes, out);
    if (st == TIDE_OK && tide_tensor_numel(out[1]) > 0) {
        tide_kview wv = tide_kview_of(out[0]), vv = tide_kview_of(out[1]), av = tide_kview_of(c);
        st = fn(dev, &wv, &vv, &av, upper);
        if (st != TIDE_OK) {
            tide_release_all(2, out);
            st = tide_err_op(st, op);
        }
    }
    tide_tensor_release(c);
    if (st == TIDE_OK) {
        *w = out[0];
        *v = out[1];
    }
    return st;
}

tide_status tide_linalg_eig(tide_ctx *ctx, const tide_tensor *a, tide_tensor **w, tide_tensor **v) {
    static const char op[] = "linalg.eig";
    TIDE_TRY(decomposable(op, a, true));
    tide_device      *dev = a->storage->dev;
    tide_entry_eig_fn fn;
    TIDE_TRY(tide_entry_eig(dev, op, &fn));
    int64_t n = a->shape[a->ndim - 1], shapes[2][TIDE_MAX_DIMS], lw[2] = {n, 2}, lv[3] = {n, n, 2};
    int     ndims[2] = {batch_shape(a, 2, lw, shapes[0]), batch_shape(a, 3, lv, shapes[1])};
    int     nout = v ? 2 : 1;
    tide_tensor *c, *out[2] = {NULL, NULL};
    TIDE_TRY(tide_contiguous_all(ctx, 1, &a, &c));
    tide_status st = alloc_outputs(ctx, op, a, nout, ndims, shapes, out);
    if (st == TIDE_OK && tide_tensor_numel(out[0]) > 0) {
        tide_kview wv = tide_kview_of(out[0]), av = tide_kview_of(c), vv;
        if (v)
            vv = tide_kview_of(out[1]);
        st = fn(dev, &wv, v ? &vv : NULL, &av);
        if (st != TIDE_OK) {
            tide_release_all(nout, out);
            st = tide_err_op(st, op);
        }
    }
    tide_tensor_release(c);
    if (st == TIDE_OK) {
        *w = out[0];
        if (v)
            *v = out[1];
    }
    return st;
}

tide_status tide_linalg_svd(tide_ctx *ctx, const tide_tensor *a, tide_tensor **u, tide_tensor **s,
                            tide_tensor **vh) {
    static const char op[] = "linalg.svd";
    TIDE_TRY(decomposable(op, a, false));
    tide_device      *dev = a->storage->dev;
    tide_entry_svd_fn fn;
    TIDE_TRY(tide_entry_svd(dev, op, &fn));
    int64_t      m = a->shape[a->ndim - 2], n = a->shape[a->ndim - 1], k = m < n ? m : n;
    int64_t      shapes[3][TIDE_MAX_DIMS], lu[2] = {m, k}, ls[1] = {k}, lv[2] = {k, n};
    int          ndims[3] = {batch_shape(a, 2, lu, shapes[0]), batch_shape(a, 1, ls, shapes[1]),
                             batch_shape(a, 2, lv, shapes[2])};
    tide_tensor *c, *out[3];
    TIDE_TRY(tide_contiguous_all(ctx, 1, &a, &c));
    tide_status st = alloc_outputs(ctx, op, a, 3, ndims, shapes, out);
    if (st == TIDE_OK && tide_tensor_numel(out[1]) > 0) {
        tide_kview uv = tide_kview_of(out[0]), sv = tide_kview_of(out[1]),
                   vv = tide_kview_of(out[2]), av = tide_kview_of(c);
        st = fn(dev, &uv, &sv, &vv, &av);
        if (st != TIDE_OK) {
            tide_release_all(3, out);
            st = tide_err_op(st, op);
        }
    }
    tide_tensor_release(c);
    if (st == TIDE_OK) {
        *u = out[0];
        *s = out[1];
        *vh = out[2];
    }
    return st;
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

/* the entry run on contiguous copies of n_in inputs, into n_out new outputs (shapes and dtypes
 * given; the entry is not called when the first has no element): one body for the ones below */
typedef void (*any_fn)(void);
typedef tide_status (*kernel_call)(any_fn fn, tide_device *dev, const tide_kview *in,
                                   const tide_kview *out, const int *flags);
static tide_status run_solver(tide_ctx *ctx, const char *op, any_fn fn, kernel_call call, int n_in,
                              const tide_tensor *const *in, int n_out, const int *ndims,
                              int64_t (*shapes)[TIDE_MAX_DIMS], const tide_dtype *dts,
                              const int *flags, tide_tensor **out) {
    tide_tensor *c[3] = {NULL, NULL, NULL};
    TIDE_TRY(tide_contiguous_all(ctx, n_in, in, c));
    tide_status st = TIDE_OK;
    int         made = 0;
    for (; made < n_out && st == TIDE_OK; made++)
        st = tide_tensor_alloc(ctx, op, in[0]->storage->dev, dts[made], ndims[made], shapes[made],
                               &out[made]);
    if (st != TIDE_OK)
        made--;
    if (st == TIDE_OK && tide_tensor_numel(out[0]) > 0) {
        tide_kview iv[3], ov[3];
        for (int i = 0; i < n_in; i++)
            iv[i] = tide_kview_of(c[i]);
        for (int i = 0; i < n_out; i++)
            ov[i] = tide_kview_of(out[i]);
        st = call(fn, in[0]->storage->dev, iv, ov, flags);
        if (st != TIDE_OK)
            st = tide_err_op(st, op);
    }
    if (st != TIDE_OK)
        tide_release_all(made, out);
    tide_release_all(n_in, c);
    return st;
}

static tide_status call_lu_factor(any_fn fn, tide_device *dev, const tide_kview *in,
                                  const tide_kview *out, const int *flags) {
    (void)flags;
    return ((tide_entry_lu_factor_fn)fn)(dev, &out[0], &out[1], &in[0]);
}
static tide_status call_lu_solve(any_fn fn, tide_device *dev, const tide_kview *in,
                                 const tide_kview *out, const int *flags) {
    (void)flags;
    return ((tide_entry_lu_solve_fn)fn)(dev, &out[0], &in[0], &in[1], &in[2]);
}
static tide_status call_cholesky(any_fn fn, tide_device *dev, const tide_kview *in,
                                 const tide_kview *out, const int *flags) {
    (void)flags;
    return ((tide_entry_cholesky_fn)fn)(dev, &out[0], &in[0]);
}
static tide_status call_qr(any_fn fn, tide_device *dev, const tide_kview *in, const tide_kview *out,
                           const int *flags) {
    (void)flags;
    return ((tide_entry_qr_fn)fn)(dev, &out[0], &out[1], &in[0]);
}
static tide_status call_solve_triangular(any_fn fn, tide_device *dev, const tide_kview *in,
                                         const tide_kview *out, const int *flags) {
    return ((tide_entry_solve_triangular_fn)fn)(dev, &out[0], &in[0], &in[1], flags[0], flags[1]);
}
static tide_status call_ldl_factor(any_fn fn, tide_device *dev, const tide_kview *in,
                                   const tide_kview *out, const int *flags) {
    (void)flags;
    return ((tide_entry_ldl_factor_fn)fn)(dev, &out[0], &out[1], &out[2], &in[0]);
}
static tide_status call_ldl_solve(any_fn fn, tide_device *dev, const tide_kview *in,
                                  const tide_kview *out, const int *flags) {
    (void)flags;
    return ((tide_entry_ldl_solve_fn)fn)(dev, &out[0], &in[0], &in[1], &in[2]);
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
    static const char op[] = "linalg.qr";
    TIDE_TRY(decomposable(op, a, false));
    tide_entry_qr_fn fn;
    TIDE_TRY(tide_entry_qr(a->storage->dev, op, &fn));
    int64_t      m = a->shape[a->ndim - 2], n = a->shape[a->ndim - 1];
    int64_t      c = complete || m < n ? m : n, shapes[2][TIDE_MAX_DIMS];
    int64_t      lq[2] = {m, c}, lr[2] = {c, n};
    int          ndims[2] = {batch_shape(a, 2, lq, shapes[0]), batch_shape(a, 2, lr, shapes[1])};
    tide_dtype   dts[2] = {a->dtype, a->dtype};
    tide_tensor *out[2];
    TIDE_TRY(run_solver(ctx, op, (any_fn)fn, call_qr, 1, &a, 2, ndims, shapes, dts, NULL, out));
    *q = out[0];
    *r = out[1];
    return TIDE_OK;
}

tide_status tide_linalg_lu_factor(tide_ctx *ctx, const tide_tensor *a, tide_tensor **lu,
                                  tide_tensor **pivots) {
    static const char op[] = "linalg.lu_factor";
    TIDE_TRY(decomposable(op, a, false));
    tide_entry_lu_factor_fn fn;
    TIDE_TRY(tide_entry_lu_factor(a->storage->dev, op, &fn));
    int64_t      m = a->shape[a->ndim - 2], n = a->shape[a->ndim - 1], k = m < n ? m : n;
    int64_t      shapes[2][TIDE_MAX_DIMS], last[2] = {m, n};
    int          ndims[2] = {batch_shape(a, 2, last, shapes[0]), batch_shape(a, 1, &k, shapes[1])};
    tide_dtype   dts[2] = {a->dtype, TIDE_DTYPE_I64};
    tide_tensor *out[2];
    TIDE_TRY(
        run_solver(ctx, op, (any_fn)fn, call_lu_factor, 1, &a, 2, ndims, shapes, dts, NULL, out));
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
    tide_entry_lu_solve_fn fn;
    TIDE_TRY(tide_entry_lu_solve(lu->storage->dev, op, &fn));
    int64_t            shapes[1][TIDE_MAX_DIMS];
    int                ndims[1] = {b->ndim};
    tide_dtype         dts[1] = {b->dtype};
    const tide_tensor *in[3] = {lu, pivots, b};
    memcpy(shapes[0], b->shape, (size_t)b->ndim * sizeof *b->shape);
    return run_solver(ctx, op, (any_fn)fn, call_lu_solve, 3, in, 1, ndims, shapes, dts, NULL, x);
}

tide_status tide_linalg_cholesky(tide_ctx *ctx, const tide_tensor *a, tide_tensor **l) {
    static const char op[] = "linalg.cholesky";
    TIDE_TRY(decomposable(op, a, true));
    tide_entry_cholesky_fn fn;
    TIDE_TRY(tide_entry_cholesky(a->storage->dev, op, &fn));
    int64_t    shapes[1][TIDE_MAX_DIMS];
    int        ndims[1] = {a->ndim};
    tide_dtype dts[1] = {a->dtype};
    memcpy(shapes[0], a->shape, (size_t)a->ndim * sizeof *a->shape);
    return run_solver(ctx, op, (any_fn)fn, call_cholesky, 1, &a, 1, ndims, shapes, dts, NULL, l);
}

tide_status tide_linalg_solve_triangular(tide_ctx *ctx, const tide_tensor *a, const tide_tensor *b,
                                         int upper, int unit, tide_tensor **x) {
    static const char op[] = "linalg.solve_triangular";
    TIDE_TRY(decomposable(op, a, true));
    TIDE_TRY(same_system(op, a, b));
    tide_entry_solve_triangular_fn fn;
    TIDE_TRY(tide_entry_solve_triangular(a->storage->dev, op, &fn));
    int64_t            shapes[1][TIDE_MAX_DIMS];
    int                ndims[1] = {b->ndim}, flags[2] = {upper, unit};
    tide_dtype         dts[1] = {b->dtype};
    const tide_tensor *in[2] = {a, b};
    memcpy(shapes[0], b->shape, (size_t)b->ndim * sizeof *b->shape);
    return run_solver(ctx, op, (any_fn)fn, call_solve_triangular, 2, in, 1, ndims, shapes, dts,
                      flags, x);
}

tide_status tide_linalg_ldl_factor(tide_ctx *ctx, const tide_tensor *a, tide_tensor **ld,
                                   tide_tensor **pivots, tide_tensor **info) {
    static const char op[] = "linalg.ldl_factor";
    TIDE_TRY(decomposable(op, a, true));
    tide_entry_ldl_factor_fn fn;
    TIDE_TRY(tide_entry_ldl_factor(a->storage->dev, op, &fn));
    int64_t      n = a->shape[a->ndim - 1], shapes[3][TIDE_MAX_DIMS], last[2] = {n, n};
    int          ndims[3] = {batch_shape(a, 2, last, shapes[0]), batch_shape(a, 1, last, shapes[1]),
                             batch_shape(a, 0, last, shapes[2])};
    tide_dtype   dts[3] = {a->dtype, TIDE_DTYPE_I64, TIDE_DTYPE_I32};
    tide_tensor *out[3];
    TIDE_TRY(
        run_solver(ctx, op, (any_fn)fn, call_ldl_factor, 1, &a, 3, ndims, shapes, dts, NULL, out));
    if (n == 0) { /* 0 x 0 matrices: the entry did not run, nothing is singular */
        tide_status st = tide_fill_for(ctx, op, out[2], tide_scalar_i(0));
        if (st != TIDE_OK) {
            tide_release_all(3, out);
            return st;
        }
    }
    *ld = out[0];
    *pivots = out[1];
    *info = out[2];
    return TIDE_OK;
}

/* sytrs trusts its pivots (a row out of range: a write out of bounds), so each matrix's must
 * read as sytrf writes them: k in 1..n for a 1x1 block, -k on both rows of a 2x2 one */
static tide_status ldl_pivots_valid(tide_ctx *ctx, const char *op, const tide_tensor *pivots) {
    tide_tensor *c;
    TIDE_TRY(tide_contiguous_all(ctx, 1, &pivots, &c));
    int64_t        n = pivots->shape[pivots->ndim - 1], total = tide_tensor_numel(c);
    const int64_t *p = (const int64_t *)tide_tensor_data(c);
    int64_t       *host = NULL;
    tide_status    st = TIDE_OK;
    if (c->storage->dev->type != TIDE_DEVICE_CPU && total) {
        st = tide_host_copy(op, c, (void **)&host);
        if (st != TIDE_OK)
            st = tide_err_op(st, op);
        p = host;
    }
    for (int64_t m = 0; st == TIDE_OK && m < (n ? total / n : 0); m++) {
        const int64_t *pm = p + m * n;
        for (int64_t j = 0; j < n; j += pm[j] < 0 ? 2 : 1)
            if (pm[j] == 0 || pm[j] > n || pm[j] < -n ||
                (pm[j] < 0 && (j + 1 == n || pm[j + 1] != pm[j]))) {
                st = tide_seterr(TIDE_EINVAL,
                                 "%s: pivots hold %lld at %lld (matrix %lld of the batch), which "
                                 "ldl_factor does not give; pass ldl_factor's own pivots",
                                 op, (long long)pm[j], (long long)j + 1, (long long)m + 1);
                break;
            }
    }
    free(host);
    tide_tensor_release(c);
    return st;
}

tide_status tide_linalg_ldl_solve(tide_ctx *ctx, const tide_tensor *ld, const tide_tensor *pivots,
                                  const tide_tensor *b, tide_tensor **x) {
    static const char op[] = "linalg.ldl_solve";
    TIDE_TRY(decomposable(op, ld, true));
    TIDE_TRY(same_system(op, ld, b));
    TIDE_TRY(pivots_fit(op, "ldl_factor", ld, pivots));
    tide_entry_ldl_solve_fn fn;
    TIDE_TRY(tide_entry_ldl_solve(ld->storage->dev, op, &fn));
    TIDE_TRY(ldl_pivots_valid(ctx, op, pivots));
    int64_t            shapes[1][TIDE_MAX_DIMS];
    int                ndims[1] = {b->ndim};
    tide_dtype         dts[1] = {b->dtype};
    const tide_tensor *in[3] = {ld, pivots, b};
    memcpy(shapes[0], b->shape, (size_t)b->ndim * sizeof *b->shape);
    return run_solver(ctx, op, (any_fn)fn, call_ldl_solve, 3, in, 1, ndims, shapes, dts, NULL, x);
}
