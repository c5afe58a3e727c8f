/*
 * kernels.c — the rows of include/tide_kernels.def and their one dispatch, tide_kernel_run:
 * every check a row implies (devices, dtypes, shapes, parameters), the contiguous views, the
 * outputs, and the single "not implemented on <device>" answer for a backend without the row.
 * A kernel added to the table needs nothing here.
 */
#include "tide_impl.h"
#include "window_size.h"
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the rows ----------------------------------------------------------------------------- */

#define T(name, shape)                                                                             \
    { #name, TIDE_KSHAPE_##shape, 0, 0, 0, 1, NULL }
#define T_OPT(name, shape)                                                                         \
    { #name, TIDE_KSHAPE_##shape, 1, 0, 0, 1, NULL }
#define T_INOUT(name, shape)                                                                       \
    { #name, TIDE_KSHAPE_##shape, 0, 1, 0, 1, NULL }
#define T_INOUT_OPT(name, shape)                                                                   \
    { #name, TIDE_KSHAPE_##shape, 1, 1, 0, 1, NULL }
#define T_INDEX(name, shape)                                                                       \
    { #name, TIDE_KSHAPE_##shape, 0, 0, 1, 1, NULL }
#define T_WIDE(name, width)                                                                        \
    { #name, TIDE_KSHAPE_ROWS, 0, 0, 0, (width), NULL }
/* m along the row's dim: a count, or k (width 0: the third parameter) */
#define ALONG_1 1
#define ALONG_k 0
#define T_ALONG(name, m)                                                                           \
    { #name, TIDE_KSHAPE_ALONG, 0, 0, 0, ALONG_##m, NULL }
#define T_INDEX_ALONG(name, m)                                                                     \
    { #name, TIDE_KSHAPE_ALONG, 0, 0, 1, ALONG_##m, NULL }
/* a MATRIX tensor: input 1's batch dims, then its extents, kept as written ("n, n") */
#define T_MAT(name, ...)                                                                           \
    { #name, TIDE_KSHAPE_MATRIX, 0, 0, 0, 1, #__VA_ARGS__ }
#define T_OPT_MAT(name, ...)                                                                       \
    { #name, TIDE_KSHAPE_MATRIX, 1, 0, 0, 1, #__VA_ARGS__ }
#define T_INDEX_MAT(name, ...)                                                                     \
    { #name, TIDE_KSHAPE_MATRIX, 0, 0, 1, 1, #__VA_ARGS__ }
#define P_REAL(name)                                                                               \
    { #name, TIDE_KPARAM_FLOAT, -HUGE_VAL, HUGE_VAL }
#define P_FLAG(name)                                                                               \
    { #name, TIDE_KPARAM_INT, 0, 1 }
#define P_INT(name, min)                                                                           \
    { #name, TIDE_KPARAM_INT, (min), HUGE_VAL }
#define P_INT_IN(name, min, max)                                                                   \
    { #name, TIDE_KPARAM_INT, (min), (max) }
#define P_FLOAT(name, min)                                                                         \
    { #name, TIDE_KPARAM_FLOAT, (min), HUGE_VAL }
#define P_FLOAT_IN(name, min, max)                                                                 \
    { #name, TIDE_KPARAM_FLOAT, (min), (max) }
#define IN(...)  __VA_ARGS__
#define OUT(...) __VA_ARGS__
#define PAR(...) __VA_ARGS__

/* per row: its inputs, outputs and parameters as arrays, each after a placeholder element (C11
 * has no empty initializer, and an in-place row has no outputs, an ELEMENTWISE row may have no
 * parameters) */
#define K(NAME, name, kind, dtypes, cpu, cuda, ins, outs, pars)                                    \
    static const tide_kernel_tensor_info name##_in[] = {                                           \
        {NULL, TIDE_KSHAPE_ROWS, 0, 0, 0, 1, NULL}, ins};                                          \
    static const tide_kernel_tensor_info name##_out[] = {                                          \
        {NULL, TIDE_KSHAPE_ROWS, 0, 0, 0, 1, NULL}, outs};                                         \
    static const tide_kernel_param_info name##_par[] = {{NULL, TIDE_KPARAM_INT, 0, 0}, pars};
#include "tide_kernels.def"
#undef K

/* a row's name: its lua name, but a MATRIX row is torch.linalg's op, linalg.<lua name> */
#define NAME_PREFIX_ROWS        ""
#define NAME_PREFIX_PROJ        ""
#define NAME_PREFIX_PACKED      ""
#define NAME_PREFIX_ELEMENTWISE ""
#define NAME_PREFIX_WINDOW      ""
#define NAME_PREFIX_MATRIX      "linalg."

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])) - 1) /* the placeholder not counted */
static const tide_kernel_info table[TIDE_KERNEL_COUNT] = {
#define K(NAME, name, kind, dtypes, ...)                                                           \
    [TIDE_K_##NAME] = {NAME_PREFIX_##kind #name,                                                   \
                       TIDE_KERNEL_##kind,                                                         \
                       (dtypes),                                                                   \
                       COUNT(name##_in),                                                           \
                       COUNT(name##_out),                                                          \
                       COUNT(name##_par),                                                          \
                       name##_in + 1,                                                              \
                       name##_out + 1,                                                             \
                       name##_par + 1},
#include "tide_kernels.def"
#undef K
};

/* a row must fit the call's fixed arrays, and a kind that reads d from the first parameter must
 * have one: checked when the table is compiled */
#define K(NAME, name, kind, ...)                                                                   \
    _Static_assert(COUNT(name##_in) >= 1 && COUNT(name##_in) <= TIDE_KERNEL_MAX_TENSORS &&         \
                       COUNT(name##_out) <= TIDE_KERNEL_MAX_TENSORS &&                             \
                       COUNT(name##_par) <= TIDE_KERNEL_MAX_PARAMS &&                              \
                       COUNT(name##_par) >= (TIDE_KERNEL_##kind == TIDE_KERNEL_ELEMENTWISE ||      \
                                                     TIDE_KERNEL_##kind == TIDE_KERNEL_MATRIX      \
                                                 ? 0                                               \
                                             : TIDE_KERNEL_##kind == TIDE_KERNEL_ROWS ? 1          \
                                                                                      : 2),        \
                   #name ": too many tensors or parameters for tide_kernel_call, or too few "      \
                         "parameters for its kind (d, and PROJ's n or PACKED's heads)");
#include "tide_kernels.def"
#undef K

const tide_kernel_info *tide_kernel_info_of(tide_kernel k) {
    return (unsigned)k < TIDE_KERNEL_COUNT ? &table[k] : NULL;
}

int tide_kernel_find(const char *name) {
    for (int k = 0; k < TIDE_KERNEL_COUNT; k++)
        if (strcmp(table[k].name, name) == 0)
            return k;
    return -1;
}

/* ---- checks ------------------------------------------------------------------------------- */

static tide_status check_dtype(const tide_kernel_info *r, tide_dtype dt) {
    if (r->dtypes & (1u << dt))
        return TIDE_OK;
    char   list[120] = "";
    size_t n = 0;
    for (int d = 0; d < TIDE_DTYPE_COUNT; d++)
        if (r->dtypes & (1u << d))
            n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", n ? " or " : "",
                                  tide_dtype_name((tide_dtype)d));
    return tide_seterr(TIDE_EDTYPE, "%s: %s must be %s, got %s; convert it with :float()", r->name,
                       r->in[0].name, list, tide_dtype_name(dt));
}

static tide_status check_params(const tide_kernel_info *r, const tide_kernel_scalar *p) {
    for (int i = 0; i < r->nparams; i++) {
        const tide_kernel_param_info *pi = &r->params[i];
        double                        v = pi->type == TIDE_KPARAM_INT ? (double)p[i].i : p[i].f;
        if (isnan(v))
            return tide_seterr(TIDE_EINVAL, "%s: %s is NaN; give a number", r->name, pi->name);
        if (pi->type == TIDE_KPARAM_INT && pi->max < HUGE_VAL && !(v >= pi->min && v <= pi->max))
            return tide_seterr(TIDE_EINVAL, "%s: %s = %lld must be in %.17g..%.17g", r->name,
                               pi->name, (long long)p[i].i, pi->min, pi->max);
        if (pi->type == TIDE_KPARAM_FLOAT && pi->max < HUGE_VAL && !(v >= pi->min && v <= pi->max))
            return tide_seterr(TIDE_EINVAL, "%s: %s = %g must be in %g..%g", r->name, pi->name, v,
                               pi->min, pi->max);
        if (!(v >= pi->min)) { /* NaN too */
            if (pi->type == TIDE_KPARAM_INT)
                return tide_seterr(TIDE_EINVAL, "%s: %s = %lld must be >= %g", r->name, pi->name,
                                   (long long)p[i].i, pi->min);
            return tide_seterr(TIDE_EINVAL, "%s: %s = %g must be >= %g", r->name, pi->name, v,
                               pi->min);
        }
    }
    return TIDE_OK;
}

/* ---- the WINDOW kind ---------------------------------------------------------------------- */

/* a WINDOW row's shapes, from input 1 and the parameters: the images, the windows and the
 * columns as stored (folded: [C * kh * kw, N, L]) */
typedef struct window_shapes {
    int64_t image[4], pooled[4], columns[3];
    int     folded;
} window_shapes;

static bool is_window_class(tide_kernel_shape s) {
    return s == TIDE_KSHAPE_IMAGE || s == TIDE_KSHAPE_POOLED || s == TIDE_KSHAPE_COLUMNS;
}

static const int64_t *window_shape(const window_shapes *ws, tide_kernel_shape s, int *ndim) {
    *ndim = s == TIDE_KSHAPE_COLUMNS ? 3 : 4;
    return s == TIDE_KSHAPE_IMAGE ? ws->image : s == TIDE_KSHAPE_POOLED ? ws->pooled : ws->columns;
}

/* tensor t (named what) in window class s: exactly its shape */
static tide_status check_window_tensor(const tide_kernel_info *r, const char *what,
                                       const tide_tensor *t, const window_shapes *ws,
                                       tide_kernel_shape s) {
    int            nd;
    const int64_t *want = window_shape(ws, s, &nd);
    bool           ok = t->ndim == nd;
    for (int k = 0; ok && k < nd; k++)
        ok = t->shape[k] == want[k];
    if (ok)
        return TIDE_OK;
    char sb[200], sw[200];
    tide_shape_fmt(sb, sizeof sb, t->ndim, t->shape);
    tide_shape_fmt(sw, sizeof sw, nd, want);
    if (r->in[0].shape == TIDE_KSHAPE_COLUMNS && t->ndim == 3 && what == r->in[0].name)
        return tide_seterr(TIDE_ESHAPE, "%s: %s of shape %s must be %s for C, H, W and the window",
                           r->name, what, sb, sw);
    return tide_seterr(TIDE_ESHAPE, "%s: %s of shape %s must be %s, as %s", r->name, what, sb, sw,
                       r->in[0].name);
}

static bool has_class(const tide_kernel_info *r, tide_kernel_shape s) {
    for (int i = 0; i < r->nin; i++)
        if (r->in[i].shape == s)
            return true;
    for (int i = 0; i < r->nout; i++)
        if (r->out[i].shape == s)
            return true;
    return false;
}

/* the sizes of a WINDOW row's call (tide_kernels.def's header: where each comes from), checked:
 * input 1's rank, a window that fits the padded image, pooling's padding at most half the
 * kernel, every shape's size within 64 bits; input 1 COLUMNS must fit the sizes given */
static tide_status window_sizes(const tide_kernel_info *r, const tide_tensor *x,
                                const tide_kernel_scalar *p, window_shapes *ws) {
    tide_kernel_shape c1 = r->in[0].shape;
    int               nd = c1 == TIDE_KSHAPE_COLUMNS ? 3 : 4;
    if (x->ndim != nd) {
        char sb[200];
        tide_shape_fmt(sb, sizeof sb, x->ndim, x->shape);
        return tide_seterr(TIDE_ESHAPE, "%s: %s must be %d-d %s, got shape %s", r->name,
                           r->in[0].name, nd,
                           c1 == TIDE_KSHAPE_IMAGE    ? "[N, C, H, W]"
                           : c1 == TIDE_KSHAPE_POOLED ? "[N, C, OH, OW]"
                                                      : "columns [N, C*kh*kw, OH*OW]",
                           sb);
    }
    int64_t N, C, H, W, OH, OW, kk = 1;
    ws->folded = 0;
    if (c1 == TIDE_KSHAPE_POOLED) {
        N = x->shape[0], C = x->shape[1], OH = x->shape[2], OW = x->shape[3];
        H = p[0].i, W = p[1].i;
    } else {
        int  kh = (int)p[0].i, kw = (int)p[1].i, sh = (int)p[2].i, sw = (int)p[3].i;
        int  ph = (int)p[4].i, pw = (int)p[5].i, dh = (int)p[6].i, dw = (int)p[7].i;
        bool pool = has_class(r, TIDE_KSHAPE_POOLED);
        ws->folded = !pool && p[8].i;
        if (c1 == TIDE_KSHAPE_IMAGE)
            N = x->shape[0], C = x->shape[1], H = x->shape[2], W = x->shape[3];
        else
            N = x->shape[ws->folded ? 1 : 0], C = p[9].i, H = p[10].i, W = p[11].i;
        if (H > INT64_MAX / 4 || W > INT64_MAX / 4) /* no tensor is that large; keeps H + 2p */
            return tide_seterr(TIDE_ESHAPE, "%s: input size %lldx%lld is too large", r->name,
                               (long long)H, (long long)W);
        if (pool && (ph > kh / 2 || pw > kw / 2))
            return tide_seterr(TIDE_EINVAL,
                               "%s: padding %dx%d must be at most half the kernel %dx%d", r->name,
                               ph, pw, kh, kw);
        OH = tide_window_out_size(H, kh, sh, ph, dh, pool && p[8].i);
        OW = tide_window_out_size(W, kw, sw, pw, dw, pool && p[8].i);
        if (OH < 1 || OW < 1)
            return tide_seterr(TIDE_ESHAPE,
                               "%s: kernel %dx%d (dilation %dx%d) is larger than the padded input "
                               "%lldx%lld; use a smaller kernel or more padding",
                               r->name, kh, kw, dh, dw, (long long)(H + 2 * (int64_t)ph),
                               (long long)(W + 2 * (int64_t)pw));
        kk = (int64_t)kh * kw;
    }
    int64_t  rows = 0, L = 0, numel = 0, rdims[2] = {C, kk}, ldims[2] = {OH, OW};
    int64_t *shapes[3] = {ws->image, ws->pooled, ws->columns};
    bool     fits =
        tide_shape_numel(2, rdims, &rows) == TIDE_OK && tide_shape_numel(2, ldims, &L) == TIDE_OK;
    int64_t image[4] = {N, C, H, W}, pooled[4] = {N, C, OH, OW};
    int64_t columns[3] = {ws->folded ? rows : N, ws->folded ? N : rows, L};
    memcpy(ws->image, image, sizeof image);
    memcpy(ws->pooled, pooled, sizeof pooled);
    memcpy(ws->columns, columns, sizeof columns);
    for (int k = 0; k < 3 && fits; k++)
        fits = tide_shape_numel(k == 2 ? 3 : 4, shapes[k], &numel) == TIDE_OK;
    if (!fits)
        return tide_seterr(TIDE_ESHAPE,
                           "%s: %lld channels of %lldx%lld, %lld taps and %lldx%lld windows give "
                           "more elements than fit in 64 bits; use less padding",
                           r->name, (long long)C, (long long)H, (long long)W, (long long)kk,
                           (long long)OH, (long long)OW);
    return c1 == TIDE_KSHAPE_COLUMNS ? check_window_tensor(r, r->in[0].name, x, ws, c1) : TIDE_OK;
}

/* ---- the MATRIX kind ---------------------------------------------------------------------- */

/* a MATRIX row's sizes from input 1 [..., m, n]: its nb batch dims (batch matrices), m, n,
 * k = min(m, n), and rhs, which the first tensor that has it sets (-1 before) */
typedef struct matrix_sizes {
    int     nb;
    int64_t batch, m, n, k, rhs;
} matrix_sizes;

static bool is_matrix_class(tide_kernel_shape s) {
    return s == TIDE_KSHAPE_MATRIX || s == TIDE_KSHAPE_INFO;
}

/* tensor ti's extents after the batch dims, as its row lists them (m, n, k, rhs, a count, or
 * an integer parameter's name), into ext[*ne]: -1 for rhs not yet set */
static tide_status matrix_extents(const tide_kernel_info *r, const tide_kernel_tensor_info *ti,
                                  const matrix_sizes *ms, const tide_kernel_scalar *p, int64_t *ext,
                                  int *ne) {
    const char *s = ti->shape == TIDE_KSHAPE_MATRIX ? ti->dims : "";
    for (*ne = 0; *s && *ne < TIDE_MAX_DIMS; s += strspn(s, ", ")) {
        size_t  len = strcspn(s, ", ");
        int64_t v = -2; /* none yet */
        if (*s >= '0' && *s <= '9')
            v = strtoll(s, NULL, 10);
        else if (len == 1 && (*s == 'm' || *s == 'n' || *s == 'k'))
            v = *s == 'm' ? ms->m : *s == 'n' ? ms->n : ms->k;
        else if (len == 3 && strncmp(s, "rhs", 3) == 0)
            v = ms->rhs;
        for (int i = 0; v == -2 && i < r->nparams; i++)
            if (strlen(r->params[i].name) == len && strncmp(r->params[i].name, s, len) == 0)
                v = p[i].i;
        if (v == -2) /* the row's own mistake: the spec that walks the rows meets it */
            return tide_seterr(TIDE_EINVAL,
                               "%s: %s's extent %.*s is not m, n, k, rhs, a count or "
                               "a parameter",
                               r->name, ti->name, (int)len, s);
        ext[(*ne)++] = v;
        s += len;
    }
    return TIDE_OK;
}

/* tensor t, the row's tensor ti, in its MATRIX class: input 1's batch dims, then its extents;
 * the first with rhs sets it */
static tide_status check_matrix_tensor(const tide_kernel_info *r, const tide_kernel_tensor_info *ti,
                                       const tide_tensor *x, const tide_tensor *t, matrix_sizes *ms,
                                       const tide_kernel_scalar *p) {
    int64_t ext[TIDE_MAX_DIMS];
    int     ne, nb = ms->nb;
    TIDE_TRY(matrix_extents(r, ti, ms, p, ext, &ne));
    bool ok = t->ndim == nb + ne && memcmp(t->shape, x->shape, (size_t)nb * sizeof *x->shape) == 0;
    for (int i = 0; ok && i < ne; i++)
        ok = ext[i] < 0 || t->shape[nb + i] == ext[i];
    for (int i = 0; ok && i < ne; i++)
        if (ext[i] < 0)
            ms->rhs = t->shape[nb + i];
    if (ok)
        return TIDE_OK;
    char sb[200], sw[200];
    tide_shape_fmt(sb, sizeof sb, t->ndim, t->shape);
    if (ti == &r->in[0]) /* its own extents: n, n is a square */
        return tide_seterr(TIDE_ESHAPE, "%s: %s of shape %s must be [..., %s]", r->name, ti->name,
                           sb, ti->dims);
    size_t k = (size_t)snprintf(sw, sizeof sw, "[");
    for (int i = 0; i < nb + ne && k < sizeof sw; i++) {
        int64_t v = i < nb ? x->shape[i] : ext[i - nb];
        k += v < 0 ? (size_t)snprintf(sw + k, sizeof sw - k, "%srhs", i ? ", " : "")
                   : (size_t)snprintf(sw + k, sizeof sw - k, "%s%lld", i ? ", " : "", (long long)v);
    }
    if (k < sizeof sw)
        snprintf(sw + k, sizeof sw - k, "]");
    return tide_seterr(TIDE_ESHAPE, "%s: %s of shape %s must be %s: [..., %s] with %s's batch dims",
                       r->name, ti->name, sb, sw, ti->shape == TIDE_KSHAPE_MATRIX ? ti->dims : "",
                       r->in[0].name);
}

/* input 1's batch dims and extents (a matrix or a batch of them), and its own shape checked
 * against its row's extents (n, n: square) */
static tide_status matrix_sizes_of(const tide_kernel_info *r, const tide_tensor *x,
                                   const tide_kernel_scalar *p, matrix_sizes *ms) {
    if (x->ndim < 2) {
        char sb[200];
        tide_shape_fmt(sb, sizeof sb, x->ndim, x->shape);
        return tide_seterr(TIDE_ESHAPE,
                           "%s: %s of shape %s must be a matrix or a batch of matrices [..., %s]",
                           r->name, r->in[0].name, sb, r->in[0].dims);
    }
    ms->nb = x->ndim - 2;
    ms->m = x->shape[ms->nb];
    ms->n = x->shape[ms->nb + 1];
    ms->k = ms->m < ms->n ? ms->m : ms->n;
    ms->rhs = -1;
    if (tide_shape_numel(ms->nb, x->shape, &ms->batch) != TIDE_OK)
        return tide_err_op(TIDE_ESHAPE, r->name);
    return check_matrix_tensor(r, &r->in[0], x, x, ms, p);
}

/* output i of a MATRIX row: input 1's batch dims, then its extents; int64 for indices, int32
 * for an INFO output */
static tide_status matrix_alloc(tide_ctx *ctx, const tide_kernel_info *r, int i,
                                const tide_tensor *x, const matrix_sizes *ms,
                                const tide_kernel_scalar *p, tide_tensor **o) {
    const tide_kernel_tensor_info *ti = &r->out[i];
    int64_t                        ext[TIDE_MAX_DIMS], shape[TIDE_MAX_DIMS];
    int                            ne;
    TIDE_TRY(matrix_extents(r, ti, ms, p, ext, &ne));
    if (ms->nb + ne > TIDE_MAX_DIMS)
        return tide_seterr(TIDE_ESHAPE,
                           "%s: %s would have %d dims, more than %d; give fewer "
                           "batch dims",
                           r->name, ti->name, ms->nb + ne, TIDE_MAX_DIMS);
    memcpy(shape, x->shape, (size_t)ms->nb * sizeof *shape);
    memcpy(shape + ms->nb, ext, (size_t)ne * sizeof *shape);
    tide_dtype dt = ti->index                       ? TIDE_DTYPE_I64
                    : ti->shape == TIDE_KSHAPE_INFO ? TIDE_DTYPE_I32
                                                    : x->dtype;
    return tide_tensor_alloc(ctx, r->name, x->storage->dev, dt, ms->nb + ne, shape, o);
}

/* input i (not the first) against the first: device, dtype, shape class */
static tide_status check_input(const tide_kernel_info *r, int i, const tide_tensor *x,
                               const tide_tensor *t, int64_t rows, int64_t d, int64_t n,
                               int64_t channels, bool wide, const window_shapes *ws,
                               matrix_sizes *ms, const tide_kernel_scalar *p) {
    const char *what = r->in[i].name;
    TIDE_TRY(tide_check_same_device(r->name, x, t));
    tide_kernel_shape cls = r->in[i].shape;
    if (cls == TIDE_KSHAPE_OFFSETS) {
        if (t->dtype == TIDE_DTYPE_I64 && t->ndim == 1 && t->shape[0] >= 1)
            return TIDE_OK;
        char so[200];
        tide_shape_fmt(so, sizeof so, t->ndim, t->shape);
        return tide_seterr(t->dtype == TIDE_DTYPE_I64 ? TIDE_ESHAPE : TIDE_EDTYPE,
                           "%s: %s must be a 1-D int64 tensor of offsets, got %s %s", r->name, what,
                           tide_dtype_name(t->dtype), so);
    }
    if (r->in[i].index && t->dtype != TIDE_DTYPE_I64)
        return tide_seterr(TIDE_EDTYPE, "%s: %s must be an int64 tensor of indices, got %s",
                           r->name, what, tide_dtype_name(t->dtype));
    if (!r->in[i].index && t->dtype != x->dtype)
        return tide_seterr(TIDE_EDTYPE, "%s: %s must have %s's dtype %s, got %s", r->name, what,
                           r->in[0].name, tide_dtype_name(x->dtype), tide_dtype_name(t->dtype));
    if (is_window_class(cls))
        return check_window_tensor(r, what, t, ws, cls);
    if (is_matrix_class(cls))
        return check_matrix_tensor(r, &r->in[i], x, t, ms, p);
    bool ok = cls == TIDE_KSHAPE_ROWS || cls == TIDE_KSHAPE_NROWS ? t->ndim == x->ndim
              : cls == TIDE_KSHAPE_STATS                          ? tide_tensor_numel(t) == rows
              : cls == TIDE_KSHAPE_NMAT     ? t->ndim == 2 && t->shape[0] == n && t->shape[1] == d
              : cls == TIDE_KSHAPE_NCOLS    ? tide_tensor_numel(t) == n
              : cls == TIDE_KSHAPE_CHANNELS ? tide_tensor_numel(t) == channels
                                            : tide_tensor_numel(t) == d;
    int  last = x->ndim - 1, w = r->in[i].width;
    for (int k = 0; ok && cls == TIDE_KSHAPE_ROWS && k < x->ndim; k++)
        ok = wide && k == last ? t->shape[k] % w == 0 && t->shape[k] / w == d
                               : t->shape[k] == x->shape[k];
    for (int k = 0; ok && cls == TIDE_KSHAPE_NROWS && k < x->ndim; k++)
        ok = t->shape[k] == (k == last ? n : x->shape[k]);
    if (ok)
        return TIDE_OK;
    char sb[200], sx[200]; /* the messages only */
    tide_shape_fmt(sb, sizeof sb, t->ndim, t->shape);
    tide_shape_fmt(sx, sizeof sx, x->ndim, x->shape);
    if (cls == TIDE_KSHAPE_ROWS && wide)
        return tide_seterr(TIDE_ESHAPE,
                           "%s: %s of shape %s must have %s's shape %s but %d * d = %lld in "
                           "its last dim",
                           r->name, what, sb, r->in[0].name, sx, w, (long long)(w * d));
    if (cls == TIDE_KSHAPE_ROWS)
        return tide_seterr(TIDE_ESHAPE, "%s: %s of shape %s must have %s's shape %s", r->name, what,
                           sb, r->in[0].name, sx);
    if (cls == TIDE_KSHAPE_NROWS)
        return tide_seterr(TIDE_ESHAPE,
                           "%s: %s of shape %s must have %s's shape %s but n = %lld in its "
                           "last dim",
                           r->name, what, sb, r->in[0].name, sx, (long long)n);
    if (cls == TIDE_KSHAPE_STATS)
        return tide_seterr(TIDE_ESHAPE, "%s: %s of shape %s must hold %lld values (one per row)",
                           r->name, what, sb, (long long)rows);
    if (cls == TIDE_KSHAPE_NMAT)
        return tide_seterr(TIDE_ESHAPE, "%s: %s of shape %s must be [n, d] = [%lld, %lld]", r->name,
                           what, sb, (long long)n, (long long)d);
    if (cls == TIDE_KSHAPE_NCOLS)
        return tide_seterr(TIDE_ESHAPE, "%s: %s of shape %s must hold n = %lld elements", r->name,
                           what, sb, (long long)n);
    if (cls == TIDE_KSHAPE_CHANNELS)
        return tide_seterr(TIDE_ESHAPE,
                           "%s: %s of shape %s must hold %lld elements (one per "
                           "channel)",
                           r->name, what, sb, (long long)channels);
    return tide_seterr(TIDE_ESHAPE, "%s: %s of shape %s must hold d = %lld elements", r->name, what,
                       sb, (long long)d);
}

/* the kernel's view of a contiguous tensor in its shape class: a matrix [r, c] or a vector [c] */
static tide_kview class_view(const tide_tensor *t, const tide_kernel_tensor_info *ti, int64_t rows,
                             int64_t d, int64_t n, int64_t channels, const window_shapes *ws) {
    tide_kview        v = tide_kview_of(t);
    tide_kernel_shape s = ti->shape;
    if (is_matrix_class(s)) /* in its own shape */
        return v;
    if (is_window_class(s)) { /* 4-d, or 3-d columns; folded ones seen as [N, C*kh*kw, L] */
        if (s == TIDE_KSHAPE_COLUMNS && ws->folded) {
            int64_t n0 = v.shape[0], s0 = v.strides[0];
            v.shape[0] = v.shape[1], v.strides[0] = v.strides[1];
            v.shape[1] = n0, v.strides[1] = s0;
        }
        return v;
    }
    int64_t r = s == TIDE_KSHAPE_NMAT ? n : rows;
    int64_t c = s == TIDE_KSHAPE_STATS                             ? rows
                : s == TIDE_KSHAPE_NROWS || s == TIDE_KSHAPE_NCOLS ? n
                : s == TIDE_KSHAPE_CHANNELS                        ? channels
                : s == TIDE_KSHAPE_ROWS                            ? ti->width * d
                                                                   : d;
    if (s == TIDE_KSHAPE_OFFSETS)
        c = tide_tensor_numel(t);
    if (s == TIDE_KSHAPE_ALONG) /* m * inner a row (the kernel runs for rows > 0) */
        c = tide_tensor_numel(t) / rows;
    if (s == TIDE_KSHAPE_ROWS || s == TIDE_KSHAPE_NMAT || s == TIDE_KSHAPE_NROWS ||
        s == TIDE_KSHAPE_ALONG) {
        v.ndim = 2;
        v.shape[0] = r;
        v.shape[1] = c;
        v.strides[0] = c;
        v.strides[1] = 1;
    } else {
        v.ndim = 1;
        v.shape[0] = c;
        v.strides[0] = 1;
    }
    return v;
}

/* a PACKED row's input 1: [N, heads * d] (no product formed: it could overflow) */
static tide_status check_packed(const tide_kernel_info *r, const tide_tensor *x, int64_t d,
                                int64_t heads) {
    if (x->ndim == 2 && x->shape[1] % heads == 0 && x->shape[1] / heads == d)
        return TIDE_OK;
    char sx[200];
    tide_shape_fmt(sx, sizeof sx, x->ndim, x->shape);
    return tide_seterr(TIDE_ESHAPE,
                       "%s: %s of shape %s must be [N, heads * d] with heads = %lld "
                       "and d = %lld",
                       r->name, r->in[0].name, sx, (long long)heads, (long long)d);
}

/* a PACKED row's offsets t (contiguous, int64 [B + 1]): from 0 up to x's N tokens, never
 * decreasing. Read on the host here, once for every backend, so that kernels may index with
 * them: rows or none (a bad offsets tensor is refused for an empty q too) */
static tide_status check_offsets(const tide_kernel_info *r, int i, const tide_tensor *x,
                                 const tide_tensor *t) {
    int64_t *o = NULL;
    TIDE_TRY(tide_host_copy(r->name, t, (void **)&o));
    int64_t     nseq = t->shape[0] - 1, tokens = x->shape[0];
    tide_status st = TIDE_OK;
    if (o[0] != 0 || o[nseq] != tokens)
        st = tide_seterr(TIDE_EINVAL,
                         "%s: %s must run from 0 to the %lld tokens of %s, got %lld to "
                         "%lld",
                         r->name, r->in[i].name, (long long)tokens, r->in[0].name, (long long)o[0],
                         (long long)o[nseq]);
    for (int64_t b = 0; b < nseq && st == TIDE_OK; b++)
        if (o[b + 1] < o[b])
            st = tide_seterr(TIDE_EINVAL, "%s: %s must not decrease, got %lld then %lld", r->name,
                             r->in[i].name, (long long)o[b], (long long)o[b + 1]);
    free(o);
    return st;
}

/* an inout input is written where it lies: a copy would leave the caller's tensor as it was */
static tide_status check_inout(const tide_kernel_info *r, int i, const tide_tensor *t) {
    if (tide_tensor_is_contiguous(t))
        return TIDE_OK;
    return tide_seterr(TIDE_EINVAL,
                       "%s: %s is written in place and must be contiguous; give a contiguous "
                       "tensor (t:contiguous()) and use the one it returns",
                       r->name, r->in[i].name);
}

/* whether row r has a T_WIDE tensor (a recurrent cell's gates): its ROWS tensors then share
 * input 1's shape but the last dim, width * d */
static bool is_wide(const tide_kernel_info *r) {
    for (int i = 0; i < r->nin; i++)
        if (r->in[i].width != 1)
            return true;
    for (int i = 0; i < r->nout; i++)
        if (r->out[i].width != 1 && r->out[i].shape == TIDE_KSHAPE_ROWS)
            return true;
    return false;
}

/* whether row r has an ALONG output (sort's selections): it runs along a dim of input 1 */
static bool has_along(const tide_kernel_info *r) {
    for (int i = 0; i < r->nout; i++)
        if (r->out[i].shape == TIDE_KSHAPE_ALONG)
            return true;
    return false;
}

/* the dim of x an ALONG row runs along: len = d / inner elements with inner after it (the
 * innermost such dim), its k at most len; *dim = -1 when there is none (an error) */
static tide_status along_dim(const tide_kernel_info *r, const tide_tensor *x, int64_t d,
                             const tide_kernel_scalar *p, int *dim) {
    int64_t inner = p[1].i, after = 1;
    if (d % inner)
        return tide_seterr(TIDE_EINVAL, "%s: inner = %lld does not divide d = %lld", r->name,
                           (long long)inner, (long long)d);
    int64_t len = d / inner;
    if (r->nparams > 2 && p[2].i > len)
        return tide_seterr(TIDE_EINVAL, "%s: %s = %lld must be at most d / inner = %lld", r->name,
                           r->params[2].name, (long long)p[2].i, (long long)len);
    *dim = x->ndim - 1;
    for (; *dim >= 0 && !(after == inner && x->shape[*dim] == len); (*dim)--)
        after *= x->shape[*dim];
    if (*dim >= 0)
        return TIDE_OK;
    char sb[200];
    tide_shape_fmt(sb, sizeof sb, x->ndim, x->shape);
    return tide_seterr(TIDE_ESHAPE,
                       "%s: %s of shape %s has no dim of d / inner = %lld elements with inner = "
                       "%lld after it",
                       r->name, r->in[0].name, sb, (long long)len, (long long)inner);
}

/* ---- the one dispatch --------------------------------------------------------------------- */

tide_status tide_kernel_run(tide_ctx *ctx, tide_kernel k, const tide_tensor *const *in,
                            const tide_kernel_scalar *params, const int *want, tide_tensor **out) {
    const tide_kernel_info *r = tide_kernel_info_of(k);
    if (!r)
        return tide_seterr(TIDE_EINVAL, "kernel: no kernel %d", (int)k);
    const char        *op = r->name;
    const tide_tensor *x = in[0];
    if (!x)
        return tide_seterr(TIDE_EINVAL, "%s: %s is required", op, r->in[0].name);
    TIDE_TRY(check_dtype(r, x->dtype));
    TIDE_TRY(check_params(r, params));
    /* params[0] is d; PROJ: params[1] is n, and d is input 1's last dim; PACKED: params[1] is
     * heads, input 1 [N, heads * d]; ELEMENTWISE: d is 1; WINDOW and MATRIX: no d (0) */
    bool          proj = r->kind == TIDE_KERNEL_PROJ, wide = is_wide(r);
    bool          window = r->kind == TIDE_KERNEL_WINDOW, matrix = r->kind == TIDE_KERNEL_MATRIX;
    int64_t       d = r->kind == TIDE_KERNEL_ELEMENTWISE ? 1 : window || matrix ? 0 : params[0].i;
    int64_t       numel = tide_tensor_numel(x), n = proj ? params[1].i : 0, w1 = r->in[0].width;
    int64_t       last = x->ndim ? x->shape[x->ndim - 1] : 1;
    window_shapes ws;
    matrix_sizes  ms;
    memset(&ws, 0, sizeof ws);
    memset(&ms, 0, sizeof ms);
    if (window)
        TIDE_TRY(window_sizes(r, x, params, &ws));
    else if (matrix)
        TIDE_TRY(matrix_sizes_of(r, x, params, &ms));
    else if (r->kind == TIDE_KERNEL_PACKED)
        TIDE_TRY(check_packed(r, x, d, params[1].i));
    else if (wide && (last % w1 != 0 || last / w1 != d || x->ndim == 0)) {
        char sb[200]; /* (w1 * d in floating point: d is the caller's, and may be huge) */
        tide_shape_fmt(sb, sizeof sb, x->ndim, x->shape);
        return tide_seterr(TIDE_ESHAPE,
                           "%s: %s of shape %s must have %lld * d = %.0f elements in its last "
                           "dim",
                           op, r->in[0].name, sb, (long long)w1, (double)w1 * (double)d);
    } else if (proj ? x->ndim == 0 || x->shape[x->ndim - 1] != d : numel % d != 0) {
        char sb[200];
        tide_shape_fmt(sb, sizeof sb, x->ndim, x->shape);
        return tide_seterr(TIDE_ESHAPE,
                           proj ? "%s: %s of shape %s must have d = %lld elements in its last dim"
                                : "%s: %s of shape %s does not split into rows of d = %lld "
                                  "elements",
                           op, r->in[0].name, sb, (long long)d);
    }
    /* WINDOW: a row per plane (N * C); MATRIX: per matrix */
    int64_t rows = window   ? ws.image[0] * ws.image[1]
                   : matrix ? ms.batch
                   : wide   ? numel / last
                            : numel / d;
    int64_t channels = 0;
    if (has_class(
            r,
            TIDE_KSHAPE_CHANNELS)) { /* [rows, C, inner]: inner, the second parameter, divides d */
        int64_t inner = params[1].i;
        if (d % inner)
            return tide_seterr(TIDE_EINVAL, "%s: inner = %lld does not divide d = %lld", op,
                               (long long)inner, (long long)d);
        channels = d / inner;
    }
    int along = -1; /* an ALONG row's dim */
    if (has_along(r))
        TIDE_TRY(along_dim(r, x, d, params, &along));
    for (int i = 1; i < r->nin; i++) {
        if (!in[i] && !r->in[i].optional)
            return tide_seterr(TIDE_EINVAL, "%s: %s is required", op, r->in[i].name);
        if (in[i])
            TIDE_TRY(check_input(r, i, x, in[i], rows, d, n, channels, wide, &ws, &ms, params));
    }
    for (int i = 0; i < r->nin; i++)
        if (in[i] && r->in[i].inout)
            TIDE_TRY(check_inout(r, i, in[i]));
    tide_device *dev = x->storage->dev;
    /* the one answer for a backend without the row, before anything is allocated */
    const tide_kernel_fn *table_of = dev->backend->kernels;
    tide_kernel_fn        fn = table_of && (int)k < dev->backend->nkernels ? table_of[k] : NULL;
    TIDE_TRY(tide_backend_need(fn != NULL, op, dev));

    tide_tensor *c[TIDE_KERNEL_MAX_TENSORS] = {NULL}, *o[TIDE_KERNEL_MAX_TENSORS] = {NULL};
    TIDE_TRY(tide_contiguous_all(ctx, r->nin, in, c));
    tide_status st = TIDE_OK;
    for (int i = 1; i < r->nin && st == TIDE_OK; i++)
        if (c[i] && r->in[i].shape == TIDE_KSHAPE_OFFSETS)
            st = check_offsets(r, i, x, c[i]);
    for (int i = 0; i < r->nout && st == TIDE_OK; i++) {
        if (r->out[i].optional && want && !want[i])
            continue;
        tide_kernel_shape s = r->out[i].shape;
        if (is_matrix_class(s)) {
            st = matrix_alloc(ctx, r, i, x, &ms, params, &o[i]);
            continue;
        }
        int64_t len = s == TIDE_KSHAPE_STATS      ? rows
                      : s == TIDE_KSHAPE_NCOLS    ? n
                      : s == TIDE_KSHAPE_CHANNELS ? channels
                                                  : d;
        int64_t shape[TIDE_MAX_DIMS];
        memcpy(shape, x->shape, sizeof shape);
        if (s == TIDE_KSHAPE_NROWS)
            shape[x->ndim - 1] = n;
        if (s == TIDE_KSHAPE_ROWS && wide)
            shape[x->ndim - 1] = r->out[i].width * d;
        if (s == TIDE_KSHAPE_ALONG)
            shape[along] = r->out[i].width ? r->out[i].width : params[2].i;
        tide_dtype dt = r->out[i].index ? TIDE_DTYPE_I64 : x->dtype;
        int        nd = 0;
        if (is_window_class(s)) {
            const int64_t *ws_shape = window_shape(&ws, s, &nd);
            memcpy(shape, ws_shape, (size_t)nd * sizeof(int64_t));
        }
        st = is_window_class(s) ? tide_tensor_alloc(ctx, op, dev, dt, nd, shape, &o[i])
             : s == TIDE_KSHAPE_ROWS || s == TIDE_KSHAPE_NROWS || s == TIDE_KSHAPE_ALONG
                 ? tide_tensor_alloc(ctx, op, dev, dt, x->ndim, shape, &o[i])
                 : tide_tensor_alloc(ctx, op, dev, dt, 1, &len, &o[i]);
    }
    /* a MATRIX row's kernel runs when its first output has elements (matrices of 0 x n have
     * no work) */
    bool run = matrix ? o[0] && tide_tensor_numel(o[0]) > 0 : rows > 0;
    if (st == TIDE_OK && run) {
        tide_kview       iv[TIDE_KERNEL_MAX_TENSORS], ov[TIDE_KERNEL_MAX_TENSORS];
        tide_kernel_call call;
        memset(&call, 0, sizeof call);
        call.kernel = k;
        call.dtype = x->dtype;
        call.rows = rows;
        call.d = d;
        call.n = n;
        for (int i = 0; i < r->nin; i++)
            if (c[i]) {
                iv[i] = class_view(c[i], &r->in[i], rows, d, n, channels, &ws);
                call.in[i] = &iv[i];
            }
        for (int i = 0; i < r->nout; i++)
            if (o[i]) {
                ov[i] = class_view(o[i], &r->out[i], rows, d, n, channels, &ws);
                call.out[i] = &ov[i];
            }
        for (int i = 0; i < r->nparams; i++)
            call.p[i] = params[i];
        st = fn(dev, &call);
    } else if (st == TIDE_OK) { /* no rows: sums over the rows are 0, a solver's status too */
        for (int i = 0; i < r->nout && st == TIDE_OK; i++)
            if (o[i] &&
                (r->out[i].shape == TIDE_KSHAPE_COLS || r->out[i].shape == TIDE_KSHAPE_NCOLS ||
                 r->out[i].shape == TIDE_KSHAPE_CHANNELS || r->out[i].shape == TIDE_KSHAPE_INFO))
                st = tide_fill_for(ctx, op, o[i], tide_scalar_f(0));
    }
    tide_release_all(r->nin, c);
    if (st != TIDE_OK) {
        tide_release_all(r->nout, o);
        return tide_err_op(st, op);
    }
    for (int i = 0; i < r->nin; i++)
        if (in[i] && r->in[i].inout && run)
            tide_mark_written((tide_tensor *)in[i]); /* the caller's own: tide_kernel_run's rule */
    for (int i = 0; i < r->nout; i++)
        out[i] = o[i];
    return TIDE_OK;
}
