/* tensor.c — tensor geometry: accessors, views (share storage), copies on one device, element
 * access. Uses storage.c (headers and buffers) and shape.c; transfers between devices are
 * transfer.c's, which uses this file (never the other way). */
#include "tide_impl.h"
#include "dtype_convert.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- accessors ---------------------------------------------------------------------------- */

int tide_tensor_ndim(const tide_tensor *t) {
    return t->ndim;
}
const int64_t *tide_tensor_shape(const tide_tensor *t) {
    return t->shape;
}
const int64_t *tide_tensor_strides(const tide_tensor *t) {
    return t->strides;
}
int64_t tide_tensor_offset(const tide_tensor *t) {
    return t->offset;
}
int64_t tide_tensor_numel(const tide_tensor *t) {
    return tide_shape_count(t->ndim, t->shape);
}
tide_dtype tide_tensor_dtype(const tide_tensor *t) {
    return t->dtype;
}
tide_device *tide_tensor_device(const tide_tensor *t) {
    return t->storage->dev;
}
tide_ctx *tide_tensor_ctx(const tide_tensor *t) {
    return t->storage->ctx;
}
void *tide_tensor_data(const tide_tensor *t) {
    /* every host access to the data comes through here (kernel views, the binding, DLPack) */
    if (atomic_load_explicit(&t->storage->in_flight, memory_order_acquire))
        tide_storage_settle(t->storage);
    char   *base = t->storage->data;
    int64_t bytes;
    /* A zero-byte storage has no memory (NULL), and NULL + 0 is undefined behaviour in C; an
     * empty view with huge sizes may carry an offset whose byte count does not fit in int64
     * (tensors with elements never do). Either way no element is there: the base is returned. */
    if (!base || __builtin_mul_overflow(t->offset, (int64_t)tide_dtype_size(t->dtype), &bytes))
        return base;
    return base + bytes;
}
size_t tide_tensor_nbytes(const tide_tensor *t) {
    return (size_t)tide_tensor_numel(t) * tide_dtype_size(t->dtype);
}
int tide_tensor_same_storage(const tide_tensor *a, const tide_tensor *b) {
    return a->storage == b->storage;
}

int tide_tensor_is_sole_owner(const tide_tensor *t) {
    return atomic_load_explicit(&t->refs, memory_order_relaxed) == 1 &&
           atomic_load_explicit(&t->storage->refs, memory_order_relaxed) == 1 &&
           !t->storage->external;
}

int tide_tensor_is_contiguous(const tide_tensor *t) {
    return tide_shape_is_contiguous(t->ndim, t->shape, t->strides);
}

/* ---- kernel views ------------------------------------------------------------------------- */

tide_kview tide_kview_of(const tide_tensor *t) {
    tide_kview v;
    v.data = tide_tensor_data(t);
    v.dtype = t->dtype;
    v.ndim = t->ndim;
    /* whole arrays (entries past ndim are unused): fixed-size copies compile to a few moves,
     * where a loop of ndim became two memcpy calls, on every op */
    memcpy(v.shape, t->shape, sizeof v.shape);
    memcpy(v.strides, t->strides, sizeof v.strides);
    return v;
}

tide_status tide_contiguous_all(tide_ctx *ctx, int n, const tide_tensor *const *in,
                                tide_tensor **out) {
    for (int i = 0; i < n; i++)
        out[i] = NULL;
    for (int i = 0; i < n; i++) {
        if (!in[i])
            continue;
        tide_status st = tide_tensor_contiguous(ctx, in[i], &out[i]);
        if (st != TIDE_OK) {
            tide_release_all(i, out);
            return st;
        }
    }
    return TIDE_OK;
}

void tide_release_all(int n, tide_tensor **t) {
    for (int i = 0; i < n; i++) {
        tide_tensor_release(t[i]);
        t[i] = NULL;
    }
}

tide_kview tide_kview_expand(const tide_tensor *t, int ndim, const int64_t *shape) {
    tide_kview v;
    v.data = tide_tensor_data(t);
    v.dtype = t->dtype;
    v.ndim = ndim;
    int shift = ndim - t->ndim;
    for (int i = 0; i < ndim; i++) {
        int j = i - shift;
        v.shape[i] = shape[i];
        v.strides[i] = (j < 0 || (t->shape[j] == 1 && shape[i] != 1)) ? 0 : t->strides[j];
    }
    return v;
}

/* ---- copies ------------------------------------------------------------------------------- */

/* dst <- src on one device, same shape (src may be a broadcast kview) */
static tide_status copy_kv(const char *op, tide_device *dev, const tide_kview *dst,
                           const tide_kview *src) {
    if (tide_kview_numel(dst) == 0)
        return TIDE_OK;
    tide_entry_copy_fn fn;
    TIDE_TRY(tide_entry_copy(dev, op, &fn));
    tide_status st = fn(dev, dst, src);
    return st == TIDE_OK ? st : tide_err_op(st, op);
}

static tide_status copy_as(tide_ctx *ctx, const char *op, const tide_tensor *t, tide_dtype dt,
                           tide_tensor **out) {
    tide_tensor *r;
    tide_device *dev = t->storage->dev;
    TIDE_TRY(tide_tensor_alloc(ctx, op, dev, dt, t->ndim, t->shape, &r));
    tide_kview  dv = tide_kview_of(r), sv = tide_kview_of(t);
    tide_status st = copy_kv(op, dev, &dv, &sv);
    if (st != TIDE_OK) {
        tide_tensor_release(r);
        return st;
    }
    *out = r;
    return TIDE_OK;
}

tide_status tide_tensor_clone(tide_ctx *ctx, const tide_tensor *t, tide_tensor **out) {
    return copy_as(ctx, "clone", t, t->dtype, out);
}

tide_status tide_clone_for(tide_ctx *ctx, const char *op, const tide_tensor *t, tide_tensor **out) {
    return copy_as(ctx, op, t, t->dtype, out);
}

tide_status tide_tensor_contiguous(tide_ctx *ctx, const tide_tensor *t, tide_tensor **out) {
    if (tide_tensor_is_contiguous(t)) {
        tide_tensor_retain((tide_tensor *)t);
        *out = (tide_tensor *)t;
        return TIDE_OK;
    }
    return copy_as(ctx, "contiguous", t, t->dtype, out);
}

tide_status tide_cast(tide_ctx *ctx, const char *op, const tide_tensor *t, tide_dtype dt,
                      tide_tensor **out) {
    if (t->dtype == dt) {
        tide_tensor_retain((tide_tensor *)t);
        *out = (tide_tensor *)t;
        return TIDE_OK;
    }
    return copy_as(ctx, op, t, dt, out);
}

tide_status tide_cast_contiguous(tide_ctx *ctx, const char *op, const tide_tensor *t, tide_dtype dt,
                                 tide_tensor **out) {
    tide_tensor *c = NULL;
    TIDE_TRY(tide_cast(ctx, op, t, dt, &c));
    tide_status st = tide_tensor_contiguous(ctx, c, out);
    tide_tensor_release(c);
    return st;
}

void tide_out_failed(tide_tensor **out, bool created) {
    if (!*out)
        return;
    if (created) {
        tide_tensor_release(*out);
        *out = NULL;
    } else {
        /* the output given was counted as written by tide_prepare_out: a failed op wrote
         * nothing (every tensor stays as it was, its version included) */
        atomic_fetch_sub_explicit(&(*out)->storage->version, 1, memory_order_relaxed);
    }
}

tide_status tide_check_writable(const char *op, const tide_tensor *t) {
    /* an empty tensor receives nothing (its huge dims may have stride 0: see
     * tide_contiguous_strides) */
    for (int i = 0; i < t->ndim && tide_tensor_numel(t); i++)
        if (t->strides[i] == 0 && t->shape[i] > 1)
            return tide_seterr(TIDE_EINVAL,
                               "%s: the output tensor is an expanded view (stride 0 at dim %d), "
                               "so several results would land on one element; call :clone() "
                               "first",
                               op, i + 1);
    return TIDE_OK;
}

tide_status tide_prepare_out(tide_ctx *ctx, const char *op, tide_device *dev, tide_dtype dt,
                             int ndim, const int64_t *shape, tide_tensor **out, bool *created) {
    tide_tensor *o = *out;
    if (!o) {
        TIDE_TRY(tide_tensor_alloc(ctx, op, dev, dt, ndim, shape, out));
        *created = true;
        return TIDE_OK;
    }
    *created = false;
    TIDE_TRY(tide_check_writable(op, o));
    if (o->storage->dev != dev)
        return tide_seterr(TIDE_EDEVICE,
                           "%s: expected all tensors on the same device, found %s and %s; move "
                           "one with :to(\"%s\")",
                           op, dev->name, o->storage->dev->name, o->storage->dev->name);
    if (o->dtype != dt)
        return tide_seterr(TIDE_EDTYPE,
                           "%s: the result has dtype %s but the output tensor is %s; use a %s "
                           "output or cast with :to()",
                           op, tide_dtype_name(dt), tide_dtype_name(o->dtype), tide_dtype_name(dt));
    bool same = o->ndim == ndim;
    for (int i = 0; same && i < ndim; i++)
        same = o->shape[i] == shape[i];
    if (!same) {
        tide_shape_strs sh = tide_shapes_fmt(ndim, shape, o->ndim, o->shape);
        return tide_seterr(TIDE_ESHAPE,
                           "%s: the result has shape %s but the output tensor has shape %s; an "
                           "in-place op cannot change its tensor's shape",
                           op, sh.a, sh.b);
    }
    /* every op writing into a given tensor passes here, once its checks are done: the one
     * place that counts in-place writes for autograd (fill_, random_, index_add_ and set count
     * their own) */
    tide_mark_written(o);
    return TIDE_OK;
}

/* ---- views -------------------------------------------------------------------------------- */

/* wraps a negative dim from the end, checked against n dims of an ndim-d tensor; 1-based in
 * the message */
static tide_status wrap_dim(const char *op, int *dim, int ndim, int n) {
    int d = *dim < 0 ? *dim + n : *dim;
    if (d < 0 || d >= n)
        return tide_seterr(TIDE_EINDEX,
                           "%s: dim %d out of range for a %d-d tensor; use 1 to %d (or -%d to -1)",
                           op, *dim < 0 ? *dim : *dim + 1, ndim, n, n);
    *dim = d;
    return TIDE_OK;
}

tide_status tide_norm_dim(const char *op, int *dim, int ndim) {
    return wrap_dim(op, dim, ndim, ndim);
}

tide_status tide_norm_dim_0d(const char *op, int *dim, int ndim) {
    return wrap_dim(op, dim, ndim, ndim ? ndim : 1);
}

static tide_status infer_shape(const char *op, const tide_tensor *t, int ndim, const int64_t *in,
                               int64_t *shape) {
    TIDE_TRY(tide_shape_check_ndim(op, ndim));
    int64_t numel = tide_tensor_numel(t), known = 1;
    int     infer = -1;
    bool    zero = false; /* a 0 size: the others may be huge, their product is 0 (any order) */
    for (int i = 0; i < ndim; i++)
        zero = zero || in[i] == 0;
    for (int i = 0; i < ndim; i++) {
        shape[i] = in[i];
        if (in[i] == -1) {
            if (infer >= 0)
                return tide_seterr(TIDE_ESHAPE, "%s: only one size may be -1", op);
            infer = i;
        } else if (in[i] < 0) {
            return tide_seterr(TIDE_ESHAPE, "%s: invalid size %lld at dim %d", op, (long long)in[i],
                               i + 1);
        } else if (!zero && __builtin_mul_overflow(known, in[i], &known)) {
            return tide_seterr(TIDE_ESHAPE, "%s: shape has more elements than fit in 64 bits", op);
        }
    }
    if (zero)
        known = 0;
    if (infer >= 0) {
        if (known == 0 || numel % known != 0) {
            tide_shape_strs sh = tide_shapes_fmt(ndim, in, t->ndim, t->shape);
            return tide_seterr(TIDE_ESHAPE,
                               "%s: shape %s is invalid for a tensor of shape %s (%lld elements)",
                               op, sh.a, sh.b, (long long)numel);
        }
        shape[infer] = numel / known;
        known = numel;
    }
    if (known != numel) {
        tide_shape_strs sh = tide_shapes_fmt(ndim, in, t->ndim, t->shape);
        return tide_seterr(TIDE_ESHAPE,
                           "%s: shape %s is invalid for a tensor of shape %s (%lld elements)", op,
                           sh.a, sh.b, (long long)numel);
    }
    return TIDE_OK;
}

/* strides for viewing t as shape without copying (PyTorch's computeStride); false if none */
static bool view_strides(const tide_tensor *t, int ndim, const int64_t *shape, int64_t *st) {
    if (tide_tensor_is_contiguous(t) || t->ndim == 0 || tide_tensor_numel(t) == 0) {
        tide_contiguous_strides(ndim, shape, st);
        return true;
    }
    int     vd = ndim - 1;
    int64_t chunk = t->strides[t->ndim - 1], tn = 1, vn = 1;
    for (int td = t->ndim - 1; td >= 0; td--) {
        tn *= t->shape[td];
        if (td == 0 || (t->shape[td - 1] != 1 && t->strides[td - 1] != tn * chunk)) {
            while (vd >= 0 && (vn < tn || shape[vd] == 1)) {
                st[vd] = vn * chunk;
                vn *= shape[vd];
                vd--;
            }
            if (vn != tn)
                return false;
            if (td > 0) {
                chunk = t->strides[td - 1];
                tn = vn = 1;
            }
        }
    }
    return vd == -1;
}

tide_status tide_tensor_view(const tide_tensor *t, int ndim, const int64_t *in, tide_tensor **out) {
    int64_t shape[TIDE_MAX_DIMS], st[TIDE_MAX_DIMS];
    TIDE_TRY(infer_shape("view", t, ndim, in, shape));
    if (!view_strides(t, ndim, shape, st)) {
        char sb[200], tb[200], tsb[200];
        tide_shape_fmt(sb, sizeof sb, ndim, shape);
        tide_shape_fmt(tb, sizeof tb, t->ndim, t->shape);
        tide_shape_fmt(tsb, sizeof tsb, t->ndim, t->strides);
        return tide_seterr(TIDE_ESHAPE,
                           "view: a tensor of shape %s with strides %s cannot be viewed as %s "
                           "without a copy; use reshape (it copies) or call :contiguous() first",
                           tb, tsb, sb);
    }
    return tide_view_make(t, ndim, shape, st, t->offset, out);
}

/* t's bytes read as dtype dt (PyTorch's view(dtype)): the same sizes and strides when the
 * element sizes agree; otherwise the last dim (stride 1) is split or joined, PyTorch's
 * conditions and messages for the rest */
tide_status tide_tensor_view_dtype(const tide_tensor *t, tide_dtype dt, tide_tensor **out) {
    int64_t     os = (int64_t)tide_dtype_size(t->dtype), ns = (int64_t)tide_dtype_size(dt);
    const char *from = tide_dtype_name(t->dtype), *to = tide_dtype_name(dt);
    tide_status st;
    if (os == ns) {
        TIDE_TRY(tide_view_make(t, t->ndim, t->shape, t->strides, t->offset, out));
        (*out)->dtype = dt;
        return TIDE_OK;
    }
    if (t->ndim == 0)
        return tide_seterr(TIDE_EINVAL,
                           "view: a 0-d tensor cannot be viewed as %s from %s (different "
                           "element sizes); reshape it to 1 dim first",
                           to, from);
    int     last = t->ndim - 1;
    int64_t shape[TIDE_MAX_DIMS], strides[TIDE_MAX_DIMS];
    if (t->strides[last] != 1 && t->shape[last] > 1)
        return tide_seterr(TIDE_EINVAL,
                           "view: the last dim's stride must be 1 to view %s as %s (different "
                           "element sizes), got %lld; call :contiguous() first",
                           from, to, (long long)t->strides[last]);
    /* every size, stride and the offset in bytes must fall on whole elements of dt */
    if ((t->shape[last] * os) % ns)
        return tide_seterr(TIDE_EINVAL,
                           "view: the last dim's size must be divisible by %lld to view %s as %s "
                           "(different element sizes), got %lld",
                           (long long)(ns / os), from, to, (long long)t->shape[last]);
    if ((t->offset * os) % ns)
        return tide_seterr(TIDE_EINVAL,
                           "view: the storage offset must be divisible by %lld to view %s as %s "
                           "(different element sizes), got %lld",
                           (long long)(ns / os), from, to, (long long)t->offset);
    for (int i = 0; i < last; i++)
        if ((t->strides[i] * os) % ns)
            return tide_seterr(TIDE_EINVAL,
                               "view: the stride of dim %d must be divisible by %lld to view %s "
                               "as %s (different element sizes), got %lld",
                               i + 1, (long long)(ns / os), from, to, (long long)t->strides[i]);
    /* from_blob data need not be aligned to the larger element */
    if (((uintptr_t)t->storage->data + (uintptr_t)(t->offset * os)) % (uintptr_t)ns)
        return tide_seterr(TIDE_EINVAL,
                           "view: the data is not aligned to %s's %lld bytes; view a copy "
                           "(:clone()) instead",
                           to, (long long)ns);
    for (int i = 0; i < last; i++) {
        shape[i] = t->shape[i];
        strides[i] = t->strides[i] * os / ns;
    }
    shape[last] = t->shape[last] * os / ns;
    strides[last] = 1;
    st = tide_view_make(t, t->ndim, shape, strides, t->offset * os / ns, out);
    if (st == TIDE_OK)
        (*out)->dtype = dt;
    return st;
}

tide_status tide_tensor_reshape(tide_ctx *ctx, const tide_tensor *t, int ndim, const int64_t *in,
                                tide_tensor **out) {
    int64_t shape[TIDE_MAX_DIMS], st[TIDE_MAX_DIMS];
    TIDE_TRY(infer_shape("reshape", t, ndim, in, shape));
    if (view_strides(t, ndim, shape, st))
        return tide_view_make(t, ndim, shape, st, t->offset, out);
    tide_tensor *c;
    TIDE_TRY(copy_as(ctx, "reshape", t, t->dtype, &c));
    tide_contiguous_strides(ndim, shape, st);
    tide_status s = tide_view_make(c, ndim, shape, st, 0, out);
    tide_tensor_release(c);
    return s;
}

tide_status tide_tensor_permute(const tide_tensor *t, const int *perm, tide_tensor **out) {
    int64_t shape[TIDE_MAX_DIMS], st[TIDE_MAX_DIMS];
    bool    seen[TIDE_MAX_DIMS] = {false};
    for (int i = 0; i < t->ndim; i++) {
        int d = perm[i];
        TIDE_TRY(tide_norm_dim_0d("permute", &d, t->ndim));
        if (seen[d])
            return tide_seterr(TIDE_EINVAL,
                               "permute: dim %d appears twice; give each of the %d dims once",
                               d + 1, t->ndim);
        seen[d] = true;
        shape[i] = t->shape[d];
        st[i] = t->strides[d];
    }
    return tide_view_make(t, t->ndim, shape, st, t->offset, out);
}

tide_status tide_tensor_transpose(const tide_tensor *t, int d0, int d1, tide_tensor **out) {
    if (t->ndim < 2 && (d0 == 0 || d0 == -1) && (d1 == 0 || d1 == -1))
        return tide_view_make(t, t->ndim, t->shape, t->strides, t->offset, out);
    TIDE_TRY(tide_norm_dim_0d("transpose", &d0, t->ndim));
    TIDE_TRY(tide_norm_dim_0d("transpose", &d1, t->ndim));
    int64_t shape[TIDE_MAX_DIMS], st[TIDE_MAX_DIMS];
    memcpy(shape, t->shape, sizeof shape);
    memcpy(st, t->strides, sizeof st);
    shape[d0] = t->shape[d1];
    shape[d1] = t->shape[d0];
    st[d0] = t->strides[d1];
    st[d1] = t->strides[d0];
    return tide_view_make(t, t->ndim, shape, st, t->offset, out);
}

tide_status tide_tensor_narrow(const tide_tensor *t, int dim, int64_t start, int64_t length,
                               tide_tensor **out) {
    if (t->ndim == 0)
        return tide_seterr(TIDE_ESHAPE, "narrow: cannot narrow a 0-d tensor");
    TIDE_TRY(tide_norm_dim_0d("narrow", &dim, t->ndim));
    int64_t size = t->shape[dim];
    if (start < 0)
        start += size;
    if (start < 0 || start > size || length < 0 || length > size - start)
        return tide_seterr(TIDE_EINDEX,
                           "narrow: start %lld, length %lld out of range for dim %d of size %lld",
                           (long long)(start < INT64_MAX ? start + 1 : start), (long long)length,
                           dim + 1, (long long)size);
    int64_t shape[TIDE_MAX_DIMS];
    memcpy(shape, t->shape, sizeof shape);
    shape[dim] = length;
    return tide_view_make(t, t->ndim, shape, t->strides, t->offset + start * t->strides[dim], out);
}

tide_status tide_tensor_select(const tide_tensor *t, int dim, int64_t index, tide_tensor **out) {
    if (t->ndim == 0)
        return tide_seterr(TIDE_ESHAPE, "select: cannot select from a 0-d tensor");
    TIDE_TRY(tide_norm_dim_0d("select", &dim, t->ndim));
    int64_t size = t->shape[dim];
    if (index < -size || index >= size)
        return tide_seterr(TIDE_EINDEX,
                           "select: index %lld out of range for dim %d of size %lld; use 1 to "
                           "%lld (or -%lld to -1)",
                           (long long)(index < 0 ? index : index + 1), dim + 1, (long long)size,
                           (long long)size, (long long)size);
    if (index < 0)
        index += size;
    int64_t shape[TIDE_MAX_DIMS], st[TIDE_MAX_DIMS];
    int     n = 0;
    for (int i = 0; i < t->ndim; i++)
        if (i != dim) {
            shape[n] = t->shape[i];
            st[n++] = t->strides[i];
        }
    return tide_view_make(t, n, shape, st, t->offset + index * t->strides[dim], out);
}

tide_status tide_tensor_diagonal(const tide_tensor *t, int64_t offset, int d1, int d2,
                                 tide_tensor **out) {
    if (t->ndim < 2)
        return tide_seterr(TIDE_ESHAPE, "diagonal: needs a tensor with at least 2 dims, got %d",
                           t->ndim);
    TIDE_TRY(tide_norm_dim_0d("diagonal", &d1, t->ndim));
    TIDE_TRY(tide_norm_dim_0d("diagonal", &d2, t->ndim));
    if (d1 == d2)
        return tide_seterr(TIDE_EINVAL, "diagonal: dim1 and dim2 must differ, got %d twice",
                           d1 + 1);
    int64_t r = t->shape[d1], c = t->shape[d2], len, start = t->offset;
    if (offset >= 0) { /* rows 0.., columns offset.. */
        len = offset < c ? (r < c - offset ? r : c - offset) : 0;
        if (len > 0)
            start += offset * t->strides[d2];
    } else { /* rows -offset.., columns 0.. (offset is compared, never negated: INT64_MIN) */
        len = offset > -r ? (r + offset < c ? r + offset : c) : 0;
        if (len > 0)
            start -= offset * t->strides[d1];
    }
    int64_t shape[TIDE_MAX_DIMS], st[TIDE_MAX_DIMS];
    int     n = 0;
    for (int i = 0; i < t->ndim; i++)
        if (i != d1 && i != d2) {
            shape[n] = t->shape[i];
            st[n++] = t->strides[i];
        }
    shape[n] = len;
    st[n++] = t->strides[d1] + t->strides[d2];
    return tide_view_make(t, n, shape, st, start, out);
}

tide_status tide_tensor_unfold(const tide_tensor *t, int dim, int64_t size, int64_t step,
                               tide_tensor **out) {
    if (t->ndim == 0 || t->ndim >= TIDE_MAX_DIMS)
        return tide_seterr(TIDE_ESHAPE, "unfold: needs a tensor of 1 to %d dims, got %d",
                           TIDE_MAX_DIMS - 1, t->ndim);
    TIDE_TRY(tide_norm_dim_0d("unfold", &dim, t->ndim));
    int64_t len = t->shape[dim];
    if (size < 0 || size > len)
        return tide_seterr(TIDE_EINVAL,
                           "unfold: size %lld does not fit dim %d of size %lld; use 0 to %lld",
                           (long long)size, dim + 1, (long long)len, (long long)len);
    if (step < 1)
        return tide_seterr(TIDE_EINVAL, "unfold: step must be >= 1, got %lld", (long long)step);
    int64_t shape[TIDE_MAX_DIMS], st[TIDE_MAX_DIMS];
    for (int i = 0; i < t->ndim; i++) {
        shape[i] = t->shape[i];
        st[i] = t->strides[i];
    }
    shape[dim] = (len - size) / step + 1;
    st[dim] = t->strides[dim] * step;
    shape[t->ndim] = size;
    st[t->ndim] = t->strides[dim];
    return tide_view_make(t, t->ndim + 1, shape, st, t->offset, out);
}

/* any geometry over t's storage (PyTorch's as_strided): sizes and strides >= 0, offset in
 * elements from the storage's start; every element it reaches lies in the storage */
tide_status tide_tensor_as_strided(const tide_tensor *t, int ndim, const int64_t *shape,
                                   const int64_t *strides, int64_t offset, tide_tensor **out) {
    if (ndim < 0 || ndim > TIDE_MAX_DIMS)
        return tide_seterr(TIDE_ESHAPE, "as_strided: %d dims; tide supports 0 to %d", ndim,
                           TIDE_MAX_DIMS);
    if (offset < 0)
        return tide_seterr(TIDE_EINVAL, "as_strided: storage offset must be >= 0, got %lld",
                           (long long)offset);
    int64_t last = offset; /* the furthest element reached; none when a size is 0 */
    bool    empty = false;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 0 || strides[i] < 0)
            return tide_seterr(TIDE_EINVAL,
                               "as_strided: dim %d has size %lld and stride %lld; both must be "
                               ">= 0",
                               i + 1, (long long)shape[i], (long long)strides[i]);
        int64_t reach;
        if (shape[i] == 0)
            empty = true;
        else if (__builtin_mul_overflow(shape[i] - 1, strides[i], &reach) ||
                 __builtin_add_overflow(last, reach, &last))
            return tide_seterr(TIDE_EINVAL, "as_strided: the geometry's reach overflows");
    }
    int64_t elems = (int64_t)(t->storage->nbytes / tide_dtype_size(t->dtype));
    if (!empty && last >= elems)
        return tide_seterr(TIDE_EINVAL,
                           "as_strided: the geometry reaches element %lld of a storage of %lld "
                           "elements; give sizes, strides and an offset within it",
                           (long long)last + 1, (long long)elems);
    return tide_view_make(t, ndim, shape, strides, offset, out);
}

tide_status tide_tensor_unsqueeze(const tide_tensor *t, int dim, tide_tensor **out) {
    if (t->ndim >= TIDE_MAX_DIMS)
        return tide_seterr(TIDE_ESHAPE,
                           "unsqueeze: tensor already has %d dims, the most tide "
                           "supports",
                           TIDE_MAX_DIMS);
    int n = t->ndim + 1, d = dim < 0 ? dim + n : dim;
    if (d < 0 || d >= n)
        return tide_seterr(TIDE_EINDEX,
                           "unsqueeze: dim %d out of range for a %d-d tensor; use 1 to %d (or "
                           "-%d to -1)",
                           dim < 0 ? dim : dim + 1, t->ndim, n, n);
    int64_t shape[TIDE_MAX_DIMS], st[TIDE_MAX_DIMS];
    for (int i = 0, j = 0; i < n; i++) {
        if (i == d) {
            shape[i] = 1;
            /* a size-1 dim's stride is free: size * stride when it fits (host strides need
             * only their reach to fit), else the next dim's */
            st[i] = 1;
            if (d < t->ndim && __builtin_mul_overflow(t->shape[d], t->strides[d], &st[i]))
                st[i] = t->strides[d];
        } else {
            shape[i] = t->shape[j];
            st[i] = t->strides[j++];
        }
    }
    return tide_view_make(t, n, shape, st, t->offset, out);
}

tide_status tide_tensor_squeeze(const tide_tensor *t, int dim, tide_tensor **out) {
    if (dim >= 0 && t->ndim > 0)
        TIDE_TRY(tide_norm_dim_0d("squeeze", &dim, t->ndim));
    int64_t shape[TIDE_MAX_DIMS], st[TIDE_MAX_DIMS];
    int     n = 0;
    for (int i = 0; i < t->ndim; i++) {
        bool drop = t->shape[i] == 1 && (dim < 0 || dim == i);
        if (!drop) {
            shape[n] = t->shape[i];
            st[n++] = t->strides[i];
        }
    }
    return tide_view_make(t, n, shape, st, t->offset, out);
}

tide_status tide_tensor_expand(const tide_tensor *t, int ndim, const int64_t *in,
                               tide_tensor **out) {
    TIDE_TRY(tide_shape_check_ndim("expand", ndim));
    int64_t shape[TIDE_MAX_DIMS], st[TIDE_MAX_DIMS];
    int     shift = ndim - t->ndim;
    bool    ok = shift >= 0;
    for (int i = 0; ok && i < ndim; i++) {
        int j = i - shift;
        if (j < 0) {
            ok = in[i] >= 0;
            shape[i] = in[i];
            st[i] = 0;
        } else if (in[i] == -1 || in[i] == t->shape[j]) {
            shape[i] = t->shape[j];
            st[i] = t->strides[j];
        } else if (t->shape[j] == 1 && in[i] >= 0) {
            shape[i] = in[i];
            st[i] = 0;
        } else {
            ok = false;
        }
    }
    if (!ok) {
        tide_shape_strs sh = tide_shapes_fmt(t->ndim, t->shape, ndim, in);
        return tide_seterr(TIDE_ESHAPE,
                           "expand: cannot expand shape %s to %s; only size-1 dims (and new "
                           "leading dims) can grow",
                           sh.a, sh.b);
    }
    int64_t numel;
    if (tide_shape_numel(ndim, shape, &numel) != TIDE_OK)
        return tide_err_op(TIDE_ESHAPE, "expand");
    return tide_view_make(t, ndim, shape, st, t->offset, out);
}

/* ---- elements ----------------------------------------------------------------------------- */

/* the element's address, after checking the device and the index */
static tide_status elem_addr(const char *op, const tide_tensor *t, const int64_t *index, char **p) {
    if (t->storage->dev->type != TIDE_DEVICE_CPU)
        return tide_seterr(TIDE_EDEVICE,
                           "%s: tensor is on %s, its memory is not readable from the host; call "
                           ":cpu() first",
                           op, t->storage->dev->name);
    int64_t off = t->offset;
    for (int i = 0; i < t->ndim; i++) {
        if (index[i] < 0 || index[i] >= t->shape[i])
            return tide_seterr(TIDE_EINDEX, "%s: index %lld out of range for dim %d of size %lld",
                               op, (long long)index[i] + 1, i + 1, (long long)t->shape[i]);
        off += index[i] * t->strides[i];
    }
    *p = (char *)tide_tensor_data(t) + (off - t->offset) * (int64_t)tide_dtype_size(t->dtype);
    return TIDE_OK;
}

tide_status tide_tensor_get(const tide_tensor *t, const int64_t *index, double *out) {
    char *p = NULL;
    TIDE_TRY(elem_addr("get", t, index, &p));
    *out = tide_load_d(t->dtype, p);
    return TIDE_OK;
}

tide_status tide_tensor_set(tide_tensor *t, const int64_t *index, double value) {
    char *p = NULL;
    TIDE_TRY(elem_addr("set", t, index, &p));
    tide_mark_written(t);
    tide_store_d(t->dtype, p, value);
    return TIDE_OK;
}
