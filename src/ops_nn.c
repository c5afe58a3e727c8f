/* ops_nn.c — convolution and pooling helpers: im2col, col2im, maxpool2d and its gradient, the
 * C API of the WINDOW kernel rows (unfold2d, fold2d, max_pool2d, max_pool2d_backward): each checks
 * its arguments with its own messages and runs its row (src/kernels.c: the sizes, the outputs);
 * and conv2d by the backend's own convolution. */
#include "tide_impl.h"
#include "window_size.h"
#include <stdio.h>

/* validates g and writes its dilation 0 (a geometry from before dilation existed) as 1 */
static tide_status check_geom(const char *op, tide_conv_geom *g) {
    g->dh = g->dh == 0 ? 1 : g->dh;
    g->dw = g->dw == 0 ? 1 : g->dw;
    if (g->kh <= 0 || g->kw <= 0 || g->sh <= 0 || g->sw <= 0 || g->ph < 0 || g->pw < 0 ||
        g->dh < 0 || g->dw < 0)
        return tide_seterr(TIDE_EINVAL,
                           "%s: kernel %dx%d, stride %dx%d, padding %dx%d, dilation %dx%d: "
                           "kernel, stride and dilation must be positive and padding non-negative",
                           op, g->kh, g->kw, g->sh, g->sw, g->ph, g->pw, g->dh, g->dw);
    return TIDE_OK;
}

static tide_status out_size(const char *op, int64_t H, int64_t W, tide_conv_geom g, int64_t *OH,
                            int64_t *OW) {
    if (H > INT64_MAX / 4 || W > INT64_MAX / 4) /* no tensor is that large; keeps eh, ew exact */
        return tide_seterr(TIDE_ESHAPE, "%s: input size %lldx%lld is too large", op, (long long)H,
                           (long long)W);
    int64_t eh = H + 2 * (int64_t)g.ph, ew = W + 2 * (int64_t)g.pw;
    /* the span of the dilated kernel */
    int64_t kh = (int64_t)g.dh * (g.kh - 1) + 1, kw = (int64_t)g.dw * (g.kw - 1) + 1;
    if (eh < kh || ew < kw) {
        char dil[48] = "";
        if (g.dh != 1 || g.dw != 1)
            snprintf(dil, sizeof dil, " (dilation %dx%d)", g.dh, g.dw);
        return tide_seterr(TIDE_ESHAPE,
                           "%s: kernel %dx%d%s is larger than the padded input %lldx%lld; use a "
                           "smaller kernel or more padding",
                           op, g.kh, g.kw, dil, (long long)eh, (long long)ew);
    }
    *OH = (eh - kh) / g.sh + 1;
    *OW = (ew - kw) / g.sw + 1;
    return TIDE_OK;
}

static tide_status check_4d(const char *op, const tide_tensor *t, const char *what) {
    if (t->ndim != 4) {
        char sb[200];
        tide_shape_fmt(sb, sizeof sb, t->ndim, t->shape);
        return tide_seterr(TIDE_ESHAPE, "%s: %s must be 4-d [N, C, H, W], got shape %s", op, what,
                           sb);
    }
    if (!tide_dtype_is_float(t->dtype))
        return tide_seterr(TIDE_EDTYPE, "%s: %s must be floating point, got %s", op, what,
                           tide_dtype_name(t->dtype));
    return TIDE_OK;
}

static tide_status fail(tide_status st, const char *op, tide_tensor **out) {
    tide_tensor_release(*out);
    *out = NULL;
    return tide_err_op(st, op);
}

/* the window rows' parameters kh..dw, then the flag (ceil_mode or folded) */
static void window_params(tide_kernel_scalar *p, tide_conv_geom g, int flag) {
    int v[8] = {g.kh, g.kw, g.sh, g.sw, g.ph, g.pw, g.dh, g.dw};
    for (int i = 0; i < 8; i++)
        p[i].i = v[i];
    p[8].i = flag;
}

/* the C API's checks (their messages name op, im2col_folded included), then the row unfold2d */
static tide_status im2col_impl(tide_ctx *ctx, const char *op, const tide_tensor *input,
                               tide_conv_geom g, bool folded, tide_tensor **out) {
    TIDE_TRY(check_geom(op, &g));
    TIDE_TRY(check_4d(op, input, "input"));
    int64_t C = input->shape[1], OH = 0, OW = 0;
    TIDE_TRY(out_size(op, input->shape[2], input->shape[3], g, &OH, &OW));
    /* C*kh*kw and OH*OW overflow-checked (a huge padding makes OH*OW wrap) */
    int64_t rows = 0, ncols = 0, rdims[3] = {C, g.kh, g.kw}, cdims[2] = {OH, OW};
    if (tide_shape_numel(3, rdims, &rows) != TIDE_OK ||
        tide_shape_numel(2, cdims, &ncols) != TIDE_OK)
        return tide_seterr(TIDE_ESHAPE,
                           "im2col: %lld channels, kernel %dx%d and %lldx%lld output positions "
                           "give more elements than fit in 64 bits; use less padding",
                           (long long)C, g.kh, g.kw, (long long)OH, (long long)OW);
    const tide_tensor *in[1] = {input};
    tide_kernel_scalar p[9];
    window_params(p, g, folded);
    return tide_kernel_run(ctx, TIDE_K_UNFOLD2D, in, p, NULL, out);
}

tide_status tide_im2col(tide_ctx *ctx, const tide_tensor *input, tide_conv_geom g,
                        tide_tensor **out) {
    return im2col_impl(ctx, "im2col", input, g, false, out);
}

tide_status tide_im2col_folded(tide_ctx *ctx, const tide_tensor *input, tide_conv_geom g,
                               tide_tensor **out) {
    return im2col_impl(ctx, "im2col_folded", input, g, true, out);
}

static tide_status col2im_impl(tide_ctx *ctx, const char *op, const tide_tensor *cols, int64_t C,
                               int64_t H, int64_t W, tide_conv_geom g, bool folded,
                               tide_tensor **out) {
    int r = folded ? 0 : 1; /* the dim of cols holding rows */
    TIDE_TRY(check_geom(op, &g));
    if (C <= 0 || H <= 0 || W <= 0)
        return tide_seterr(TIDE_EINVAL, "%s: C, H, W must be positive, got %lld, %lld, %lld", op,
                           (long long)C, (long long)H, (long long)W);
    int64_t OH = 0, OW = 0;
    TIDE_TRY(out_size(op, H, W, g, &OH, &OW));
    /* overflow-checked C*kh*kw and OH*OW: sizes that do not fit no columns tensor can match */
    int64_t rows = 0, ncols = 0, rdims[3] = {C, g.kh, g.kw}, cdims[2] = {OH, OW}, numel;
    int64_t odims[3] = {C, H, W};
    bool    fits = tide_shape_numel(3, rdims, &rows) == TIDE_OK &&
                tide_shape_numel(2, cdims, &ncols) == TIDE_OK &&
                tide_shape_numel(3, odims, &numel) == TIDE_OK;
    if (!fits || cols->ndim != 3 || cols->shape[r] != rows || cols->shape[2] != ncols) {
        char sb[200];
        tide_shape_fmt(sb, sizeof sb, cols->ndim, cols->shape);
        if (!fits)
            return tide_seterr(TIDE_ESHAPE,
                               "%s: C=%lld, %lldx%lld input, kernel %dx%d give more elements "
                               "than fit in 64 bits; columns have shape %s",
                               op, (long long)C, (long long)H, (long long)W, g.kh, g.kw, sb);
        return tide_seterr(TIDE_ESHAPE,
                           folded
                               ? "%s: columns of shape %s do not fit [%lld, N, %lld] for C=%lld, "
                                 "%lldx%lld input, kernel %dx%d"
                               : "%s: columns of shape %s do not fit [N, %lld, %lld] for C=%lld, "
                                 "%lldx%lld input, kernel %dx%d",
                           op, sb, (long long)rows, (long long)ncols, (long long)C, (long long)H,
                           (long long)W, g.kh, g.kw);
    }
    if (!tide_dtype_is_float(cols->dtype))
        return tide_seterr(TIDE_EDTYPE, "%s: columns must be floating point, got %s", op,
                           tide_dtype_name(cols->dtype));
    const tide_tensor *in[1] = {cols};
    tide_kernel_scalar p[12];
    window_params(p, g, folded);
    p[9].i = C, p[10].i = H, p[11].i = W;
    return tide_kernel_run(ctx, TIDE_K_FOLD2D, in, p, NULL, out);
}

tide_status tide_col2im(tide_ctx *ctx, const tide_tensor *cols, int64_t C, int64_t H, int64_t W,
                        tide_conv_geom g, tide_tensor **out) {
    return col2im_impl(ctx, "col2im", cols, C, H, W, g, false, out);
}

tide_status tide_col2im_folded(tide_ctx *ctx, const tide_tensor *cols, int64_t C, int64_t H,
                               int64_t W, tide_conv_geom g, tide_tensor **out) {
    return col2im_impl(ctx, "col2im_folded", cols, C, H, W, g, true, out);
}

int64_t tide_pool_out_size(int64_t size, int k, int s, int p, int d, int ceil_mode) {
    return tide_window_out_size(size, k, s, p, d, ceil_mode);
}

tide_status tide_maxpool2d(tide_ctx *ctx, const tide_tensor *input, tide_conv_geom g,
                           tide_tensor **out, tide_tensor **indices) {
    tide_pool_geom p = {g.kh, g.kw, g.sh, g.sw, g.ph, g.pw, 1, 1, 0};
    return tide_maxpool2d_ex(ctx, input, p, out, indices);
}

tide_status tide_maxpool2d_ex(tide_ctx *ctx, const tide_tensor *input, tide_pool_geom g,
                              tide_tensor **out, tide_tensor **indices) {
    static const char op[] = "maxpool2d";
    tide_conv_geom    cg = {g.kh, g.kw, g.sh, g.sw, g.ph, g.pw, 1, 1};
    TIDE_TRY(check_geom(op, &cg));
    if (g.dh <= 0 || g.dw <= 0)
        return tide_seterr(TIDE_EINVAL, "maxpool2d: dilation %dx%d must be positive", g.dh, g.dw);
    TIDE_TRY(check_4d(op, input, "input"));
    if (g.ph > g.kh / 2 || g.pw > g.kw / 2)
        return tide_seterr(TIDE_EINVAL,
                           "maxpool2d: padding %dx%d must be at most half the kernel %dx%d", g.ph,
                           g.pw, g.kh, g.kw);
    int64_t H = input->shape[2], W = input->shape[3];
    if (H > INT64_MAX / 4 || W > INT64_MAX / 4)
        return tide_seterr(TIDE_ESHAPE, "%s: input size %lldx%lld is too large", op, (long long)H,
                           (long long)W);
    int64_t OH = tide_window_out_size(H, g.kh, g.sh, g.ph, g.dh, g.ceil_mode),
            OW = tide_window_out_size(W, g.kw, g.sw, g.pw, g.dw, g.ceil_mode);
    if (OH < 1 || OW < 1)
        return tide_seterr(TIDE_ESHAPE,
                           "%s: kernel %dx%d (dilation %dx%d) is larger than the padded input "
                           "%lldx%lld; use a smaller kernel or more padding",
                           op, g.kh, g.kw, g.dh, g.dw, (long long)(H + 2 * g.ph),
                           (long long)(W + 2 * g.pw));
    const tide_tensor *in[1] = {input};
    tide_kernel_scalar p[9];
    tide_conv_geom     w = {g.kh, g.kw, g.sh, g.sw, g.ph, g.pw, g.dh, g.dw};
    tide_tensor       *o[2];
    window_params(p, w, g.ceil_mode != 0);
    TIDE_TRY(tide_kernel_run(ctx, TIDE_K_MAX_POOL2D, in, p, NULL, o));
    *out = o[0];
    if (indices)
        *indices = o[1];
    else
        tide_tensor_release(o[1]);
    return TIDE_OK;
}

tide_status tide_maxpool2d_backward(tide_ctx *ctx, const tide_tensor *grad_out,
                                    const tide_tensor *indices, int64_t H, int64_t W,
                                    tide_tensor **grad_in) {
    static const char op[] = "maxpool2d_backward";
    TIDE_TRY(tide_check_same_device(op, grad_out, indices));
    TIDE_TRY(check_4d(op, grad_out, "grad_out"));
    if (indices->dtype != TIDE_DTYPE_I64)
        return tide_seterr(TIDE_EDTYPE, "%s: indices must be int64, got %s", op,
                           tide_dtype_name(indices->dtype));
    bool ok = indices->ndim == 4;
    for (int i = 0; ok && i < 4; i++)
        ok = indices->shape[i] == grad_out->shape[i];
    if (!ok) {
        tide_shape_strs sh =
            tide_shapes_fmt(grad_out->ndim, grad_out->shape, indices->ndim, indices->shape);
        return tide_seterr(TIDE_ESHAPE, "%s: grad_out %s and indices %s must have one shape", op,
                           sh.a, sh.b);
    }
    if (H <= 0 || W <= 0)
        return tide_seterr(TIDE_EINVAL, "%s: H and W must be positive, got %lld and %lld", op,
                           (long long)H, (long long)W);
    const tide_tensor *in[2] = {grad_out, indices};
    tide_kernel_scalar p[2] = {{.i = H}, {.i = W}};
    return tide_kernel_run(ctx, TIDE_K_MAX_POOL2D_BACKWARD, in, p, NULL, grad_in);
}

/* the rows relu_backward, gelu_backward and relu_backward_ (include/tide_kernels.def) */
tide_status tide_relu_backward(tide_ctx *ctx, const tide_tensor *grad_out, const tide_tensor *input,
                               tide_tensor **grad_in) {
    const tide_tensor *in[] = {grad_out, input};
    return tide_kernel_run(ctx, TIDE_K_RELU_BACKWARD, in, NULL, NULL, grad_in);
}

/* elementwise, so the kernel may write the gradient it reads; an expanded gradient (elements
 * shared, each write all of them) is refused by the row: it is not contiguous */
tide_status tide_relu_backward_(tide_ctx *ctx, tide_tensor *grad_out, const tide_tensor *input) {
    const tide_tensor *in[] = {grad_out, input};
    return tide_kernel_run(ctx, TIDE_K_RELU_BACKWARD_, in, NULL, NULL, NULL);
}

tide_status tide_gelu_backward(tide_ctx *ctx, const tide_tensor *grad_out, const tide_tensor *input,
                               tide_tensor **grad_in) {
    const tide_tensor *in[] = {grad_out, input};
    return tide_kernel_run(ctx, TIDE_K_GELU_BACKWARD, in, NULL, NULL, grad_in);
}

/* ---- conv2d by the backend's own convolution ---------------------------------------------- */

/* checks conv2d's tensors against g and groups; gives the output's shape */
static tide_status conv_check(const char *op, const tide_tensor *input, const tide_tensor *weight,
                              const tide_tensor *bias, tide_conv_geom *g, int groups,
                              int64_t oshape[4]) {
    TIDE_TRY(check_geom(op, g));
    TIDE_TRY(check_4d(op, input, "input"));
    TIDE_TRY(tide_check_same_device(op, input, weight));
    if (bias)
        TIDE_TRY(tide_check_same_device(op, input, bias));
    char si[200], sw[200];
    tide_shape_fmt(si, sizeof si, input->ndim, input->shape);
    tide_shape_fmt(sw, sizeof sw, weight->ndim, weight->shape);
    if (groups < 1 || weight->ndim != 4 || weight->shape[0] % groups != 0 ||
        weight->shape[1] * groups != input->shape[1] || weight->shape[2] != g->kh ||
        weight->shape[3] != g->kw)
        return tide_seterr(TIDE_ESHAPE,
                           "%s: weight %s does not fit input %s, kernel %dx%d and groups %d "
                           "(expected [O, C/groups, kh, kw] with O divisible by groups)",
                           op, sw, si, g->kh, g->kw, groups);
    if (weight->dtype != input->dtype || (bias && bias->dtype != input->dtype))
        return tide_seterr(TIDE_EDTYPE, "%s: input, weight and bias must share one dtype", op);
    if (bias && (bias->ndim != 1 || bias->shape[0] != weight->shape[0]))
        return tide_seterr(TIDE_ESHAPE, "%s: bias must have shape [%lld]", op,
                           (long long)weight->shape[0]);
    int64_t OH = 0, OW = 0;
    TIDE_TRY(out_size(op, input->shape[2], input->shape[3], *g, &OH, &OW));
    oshape[0] = input->shape[0];
    oshape[1] = weight->shape[0];
    oshape[2] = OH;
    oshape[3] = OW;
    return TIDE_OK;
}

tide_status tide_conv2d(tide_ctx *ctx, const tide_tensor *input, const tide_tensor *weight,
                        const tide_tensor *bias, tide_conv_geom g, int groups, tide_tensor **out) {
    static const char op[] = "conv2d";
    int64_t           shape[4];
    TIDE_TRY(conv_check(op, input, weight, bias, &g, groups, shape));
    tide_device         *dev = input->storage->dev;
    tide_entry_conv2d_fn fn;
    TIDE_TRY(tide_entry_conv2d(dev, op, &fn));
    const tide_tensor *in[3] = {input, weight, bias};
    tide_tensor       *c[3];
    TIDE_TRY(tide_contiguous_all(ctx, 3, in, c));
    tide_status st = tide_tensor_alloc(ctx, op, dev, input->dtype, 4, shape, out);
    if (st == TIDE_OK && tide_tensor_numel(*out) > 0) {
        tide_kview ov = tide_kview_of(*out), xv = tide_kview_of(c[0]), wv = tide_kview_of(c[1]);
        tide_kview bv = bias ? tide_kview_of(c[2]) : ov;
        st = fn(dev, &ov, &xv, &wv, bias ? &bv : NULL, g, groups);
        if (st != TIDE_OK)
            st = fail(st, op, out);
    }
    for (int i = 0; i < 3; i++)
        tide_tensor_release(c[i]);
    return st;
}

tide_status tide_conv2d_backward(tide_ctx *ctx, const tide_tensor *grad_out,
                                 const tide_tensor *input, const tide_tensor *weight,
                                 tide_conv_geom g, int groups, tide_tensor **grad_input,
                                 tide_tensor **grad_weight, tide_tensor **grad_bias) {
    static const char op[] = "conv2d_backward";
    int64_t           shape[4];
    TIDE_TRY(conv_check(op, input, weight, NULL, &g, groups, shape));
    TIDE_TRY(tide_check_same_device(op, input, grad_out));
    bool fits = grad_out->ndim == 4 && grad_out->dtype == input->dtype;
    for (int d = 0; fits && d < 4; d++)
        fits = grad_out->shape[d] == shape[d];
    if (!fits) {
        char sb[200];
        tide_shape_fmt(sb, sizeof sb, grad_out->ndim, grad_out->shape);
        return tide_seterr(TIDE_ESHAPE,
                           "%s: grad_out %s %s must be [%lld, %lld, %lld, %lld] of the input's "
                           "dtype",
                           op, sb, tide_dtype_name(grad_out->dtype), (long long)shape[0],
                           (long long)shape[1], (long long)shape[2], (long long)shape[3]);
    }
    tide_device                  *dev = input->storage->dev;
    tide_entry_conv2d_backward_fn fn;
    TIDE_TRY(tide_entry_conv2d_backward(dev, op, &fn));
    const tide_tensor *in[3] = {grad_out, input, weight};
    tide_tensor       *c[3], *r[3] = {NULL, NULL, NULL};
    tide_tensor      **outs[3] = {grad_input, grad_weight, grad_bias};
    int64_t            bshape[1] = {weight->shape[0]};
    TIDE_TRY(tide_contiguous_all(ctx, 3, in, c));
    tide_status st = TIDE_OK;
    for (int i = 0; i < 3 && st == TIDE_OK; i++)
        if (outs[i])
            st = tide_tensor_alloc(ctx, op, dev, input->dtype, i == 2 ? 1 : 4,
                                   i == 0   ? input->shape
                                   : i == 1 ? weight->shape
                                            : bshape,
                                   &r[i]);
    if (st == TIDE_OK && tide_tensor_numel(c[0]) > 0 && tide_tensor_numel(c[1]) > 0) {
        tide_kview gv = tide_kview_of(c[0]), xv = tide_kview_of(c[1]), wv = tide_kview_of(c[2]);
        tide_kview rv[3];
        for (int i = 0; i < 3; i++)
            if (r[i])
                rv[i] = tide_kview_of(r[i]);
        st = fn(dev, r[0] ? &rv[0] : NULL, r[1] ? &rv[1] : NULL, r[2] ? &rv[2] : NULL, &gv, &xv,
                &wv, g, groups);
    } else if (st == TIDE_OK) { /* an empty batch: zero gradients */
        for (int i = 0; i < 3 && st == TIDE_OK; i++)
            if (r[i])
                st = tide_fill_(ctx, r[i], 0);
    }
    for (int i = 0; i < 3; i++) {
        tide_tensor_release(c[i]);
        if (st != TIDE_OK)
            tide_tensor_release(r[i]);
        else if (outs[i])
            *outs[i] = r[i];
    }
    return st == TIDE_OK ? TIDE_OK : tide_err_op(st, op);
}

/* ---- layer norm: the kernel rows layer_norm, layer_norm_backward (src/kernels.c) ----------- */

tide_status tide_linear(tide_ctx *ctx, const tide_tensor *x, const tide_tensor *weight,
                        const tide_tensor *bias, tide_act act, tide_tensor **y) {
    if (!x || !weight || weight->ndim != 2)
        return tide_seterr(TIDE_EINVAL, "linear: x and a 2-D weight [n, d] are required");
    const tide_tensor *in[3] = {x, weight, bias};
    tide_kernel_scalar p[3] = {{.i = weight->shape[1]}, {.i = weight->shape[0]}, {.i = act}};
    return tide_kernel_run(ctx, TIDE_K_LINEAR, in, p, NULL, y);
}

tide_status tide_attention(tide_ctx *ctx, const tide_tensor *q, const tide_tensor *k,
                           const tide_tensor *v, const tide_tensor *offsets, int64_t heads,
                           double scale, tide_tensor **out) {
    int64_t width = q && q->ndim == 2 ? q->shape[1] : 0;
    if (heads < 1 || width % heads != 0 || width == 0)
        return tide_seterr(TIDE_EINVAL,
                           "attention: q must be [N, heads * d] with heads = %lld dividing its "
                           "%lld features",
                           (long long)heads, (long long)width);
    const tide_tensor *in[4] = {q, k, v, offsets};
    /* no dropout (its seed unused) */
    tide_kernel_scalar p[5] = {
        {.i = width / heads}, {.i = heads}, {.f = scale}, {.f = 0}, {.i = 0}};
    return tide_kernel_run(ctx, TIDE_K_ATTENTION, in, p, NULL, out);
}

tide_status tide_layer_norm(tide_ctx *ctx, const tide_tensor *x, const tide_tensor *weight,
                            const tide_tensor *bias, int64_t d, double eps, tide_tensor **y,
                            tide_tensor **mean, tide_tensor **rstd) {
    const tide_tensor *in[3] = {x, weight, bias};
    tide_kernel_scalar p[2] = {{.i = d}, {.f = eps}};
    tide_tensor       *out[3];
    TIDE_TRY(tide_kernel_run(ctx, TIDE_K_LAYER_NORM, in, p, NULL, out));
    *y = out[0];
    *mean = out[1];
    *rstd = out[2];
    return TIDE_OK;
}

tide_status tide_layer_norm_backward(tide_ctx *ctx, const tide_tensor *dy, const tide_tensor *x,
                                     const tide_tensor *mean, const tide_tensor *rstd,
                                     const tide_tensor *weight, int64_t d, tide_tensor **dx,
                                     tide_tensor **dweight, tide_tensor **dbias) {
    const tide_tensor *in[5] = {x, dy, mean, rstd, weight};
    tide_kernel_scalar p[1] = {{.i = d}};
    int                want[3] = {dx != NULL, dweight != NULL, dbias != NULL};
    tide_tensor       *out[3];
    TIDE_TRY(tide_kernel_run(ctx, TIDE_K_LAYER_NORM_BACKWARD, in, p, want, out));
    tide_tensor **dst[3] = {dx, dweight, dbias};
    tide_status   st = TIDE_OK;
    for (int i = 1; i < 3; i++) /* the parameters' gradients in weight's shape */
        if (out[i] && weight && st == TIDE_OK) {
            tide_tensor *v = NULL;
            st = tide_tensor_view(out[i], weight->ndim, weight->shape, &v);
            if (st == TIDE_OK) {
                tide_tensor_release(out[i]);
                out[i] = v;
            }
        }
    if (st != TIDE_OK) {
        tide_release_all(3, out);
        return tide_err_op(st, "layer_norm_backward");
    }
    for (int i = 0; i < 3; i++)
        if (dst[i])
            *dst[i] = out[i];
    return TIDE_OK;
}
