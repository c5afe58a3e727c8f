/*
 * window.cuh — a 2-D window sliding over [N, C, H, W] (conv.cu: im2col, col2im; pool.cu: max
 * pooling): its kernel, stride, padding and dilation, and the strides of the two sides.
 */
#ifndef TIDE_CUDA_WINDOW_CUH
#define TIDE_CUDA_WINDOW_CUH

#include "map.cuh"

struct win_geom {
    int64_t N, C, H, W, OH, OW;
    int     kh, kw, sh, sw, ph, pw, dh, dw; /* dh, dw: the dilation */
    int64_t is[4];                          /* strides of the [N, C, H, W] side */
    int64_t os[4]; /* strides of the other side: cols [N, C*kh*kw, OH*OW] (3 used) or [N,C,OH,OW] */
};

/* img's sizes and strides, other's strides and g's window (a tide_conv_geom or tide_pool_geom:
 * the same first eight fields; dilation 0 reads as 1, a geometry from before dilation existed).
 * OH and OW are left to the caller. */
template <typename G>
static win_geom win_make(const tide_kview *img, const tide_kview *other, const G &g) {
    win_geom q = win_geom();
    q.N = img->shape[0];
    q.C = img->shape[1];
    q.H = img->shape[2];
    q.W = img->shape[3];
    q.kh = g.kh;
    q.kw = g.kw;
    q.sh = g.sh;
    q.sw = g.sw;
    q.ph = g.ph;
    q.pw = g.pw;
    q.dh = g.dh == 0 ? 1 : g.dh;
    q.dw = g.dw == 0 ? 1 : g.dw;
    for (int d = 0; d < 4; d++) {
        q.is[d] = img->strides[d];
        q.os[d] = d < other->ndim ? other->strides[d] : 0;
    }
    return q;
}

#endif /* TIDE_CUDA_WINDOW_CUH */
