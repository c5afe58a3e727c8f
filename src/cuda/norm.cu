/*
 * norm.cu — layer norm, RMS norm and their gradients over the rows of a contiguous [rows, d]
 * view: the kernel rows layer_norm, rms_norm and their _backward of include/tide_kernels.def.
 *
 * A warp per row for rows up to 1024 long, a block per row beyond (as softmax.cu). The mean and
 * the variance take two passes (the mean, then the centred squares), accumulated in float for
 * float32/float16/bfloat16 and double for float64. The parameters' gradients are summed without
 * atomics, so every run gives the same bits: each block of rows writes its partial sums per
 * column, then one thread per column adds the blocks in order.
 */
#include "map.cuh"
#include "rows.cuh"

/* ---- kernels ------------------------------------------------------------------------------ */

__device__ __forceinline__ float ln_rsqrt(float v) {
    return 1.0f / tide_sqrt_f(v);
}
__device__ __forceinline__ double ln_rsqrt(double v) {
    return 1.0 / tide_sqrt_d(v);
}

struct lnparams {
    uint32_t rows;
    int64_t  d;
    double   eps;
};

/* the row this thread group handles (a warp, or the block) and the lane in it */
template <int ROW_THREADS> __device__ __forceinline__ uint32_t ln_row(int *lane, int *nthreads) {
    *lane = ROW_THREADS == 32 ? threadIdx.x % 32 : threadIdx.x;
    *nthreads = ROW_THREADS == 32 ? 32 : blockDim.x;
    uint32_t per_block = ROW_THREADS == 32 ? blockDim.x / 32 : 1;
    return blockIdx.x * per_block + (ROW_THREADS == 32 ? threadIdx.x / 32 : 0);
}

template <int DT, int ROW_THREADS>
__global__ void k_layer_norm(lnparams p, typename tide_dt<DT>::T *y, typename tide_dt<DT>::T *mean,
                             typename tide_dt<DT>::T *rstd, const typename tide_dt<DT>::T *x,
                             const typename tide_dt<DT>::T *w, const typename tide_dt<DT>::T *b) {
    typedef typename tide_dt<DT>::C C;
    __shared__ C                    sh[32];
    int                             lane, nthreads;
    uint32_t                        row = ln_row<ROW_THREADS>(&lane, &nthreads);
    if (row >= p.rows)
        return; /* whole warps leave together: the shuffles below stay full */
    const typename tide_dt<DT>::T *xr = x + (int64_t)row * p.d;
    typename tide_dt<DT>::T       *yr = y + (int64_t)row * p.d;
    C                              s = 0, v = 0;
    for (int64_t j = lane; j < p.d; j += nthreads)
        s += (C)tide_load<DT>(xr[j]);
    C mu = row_sum<C, ROW_THREADS>(s, sh) / (C)p.d;
    for (int64_t j = lane; j < p.d; j += nthreads) {
        C c = (C)tide_load<DT>(xr[j]) - mu;
        v += c * c;
    }
    C rs = ln_rsqrt(row_sum<C, ROW_THREADS>(v, sh) / (C)p.d + (C)p.eps);
    if (lane == 0) {
        mean[row] = tide_store<DT>(mu);
        rstd[row] = tide_store<DT>(rs);
    }
    for (int64_t j = lane; j < p.d; j += nthreads) {
        C h = ((C)tide_load<DT>(xr[j]) - mu) * rs;
        if (w)
            h = h * (C)tide_load<DT>(w[j]);
        if (b)
            h = h + (C)tide_load<DT>(b[j]);
        yr[j] = tide_store<DT>(h);
    }
}

/* dx = rstd * (gw - mean(gw) - xhat * mean(gw * xhat)), xhat = (x - mean) * rstd, gw = dy * w */
template <int DT, int ROW_THREADS>
__global__ void
k_layer_norm_dx(lnparams p, typename tide_dt<DT>::T *dx, const typename tide_dt<DT>::T *dy,
                const typename tide_dt<DT>::T *x, const typename tide_dt<DT>::T *mean,
                const typename tide_dt<DT>::T *rstd, const typename tide_dt<DT>::T *w) {
    typedef typename tide_dt<DT>::C C;
    __shared__ C                    sh[32];
    int                             lane, nthreads;
    uint32_t                        row = ln_row<ROW_THREADS>(&lane, &nthreads);
    if (row >= p.rows)
        return;
    int64_t base = (int64_t)row * p.d;
    C       mu = (C)tide_load<DT>(mean[row]), rs = (C)tide_load<DT>(rstd[row]);
    C       a = 0, c = 0;
    for (int64_t j = lane; j < p.d; j += nthreads) {
        C g = (C)tide_load<DT>(dy[base + j]);
        if (w)
            g = g * (C)tide_load<DT>(w[j]);
        a += g;
        c += g * (((C)tide_load<DT>(x[base + j]) - mu) * rs);
    }
    a = row_sum<C, ROW_THREADS>(a, sh) / (C)p.d;
    c = row_sum<C, ROW_THREADS>(c, sh) / (C)p.d;
    for (int64_t j = lane; j < p.d; j += nthreads) {
        C g = (C)tide_load<DT>(dy[base + j]);
        if (w)
            g = g * (C)tide_load<DT>(w[j]);
        C xh = ((C)tide_load<DT>(x[base + j]) - mu) * rs;
        dx[base + j] = tide_store<DT>(rs * (g - a - xh * c));
    }
}

/* block (blockIdx.x, blockIdx.y): columns blockIdx.x * blockDim.x.., rows of block blockIdx.y of
 * nb; pw[blk * d + j] = sum of dy * xhat, pb[blk * d + j] = sum of dy (either may be NULL) */
template <int DT>
__global__ void
k_layer_norm_partials(lnparams p, int nb, typename tide_dt<DT>::C *pw, typename tide_dt<DT>::C *pb,
                      const typename tide_dt<DT>::T *dy, const typename tide_dt<DT>::T *x,
                      const typename tide_dt<DT>::T *mean, const typename tide_dt<DT>::T *rstd) {
    typedef typename tide_dt<DT>::C C;
    int64_t                         j = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= p.d)
        return;
    int64_t r0 = (int64_t)p.rows * blockIdx.y / nb, r1 = (int64_t)p.rows * (blockIdx.y + 1) / nb;
    C       sw = 0, sb = 0;
    for (int64_t r = r0; r < r1; r++) {
        C g = (C)tide_load<DT>(dy[r * p.d + j]);
        sb += g;
        sw += g * (((C)tide_load<DT>(x[r * p.d + j]) - (C)tide_load<DT>(mean[r])) *
                   (C)tide_load<DT>(rstd[r]));
    }
    if (pw)
        pw[blockIdx.y * p.d + j] = sw;
    if (pb)
        pb[blockIdx.y * p.d + j] = sb;
}

/* out[j] = the nb partials of column j, added in order */
template <int DT>
__global__ void k_layer_norm_sum(int64_t d, int nb, typename tide_dt<DT>::T *out,
                                 const typename tide_dt<DT>::C *part) {
    typedef typename tide_dt<DT>::C C;
    int64_t                         j = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= d)
        return;
    C s = 0;
    for (int k = 0; k < nb; k++)
        s += part[k * d + j];
    out[j] = tide_store<DT>(s);
}

/* ---- launchers ---------------------------------------------------------------------------- */

struct run_layer_norm {
    template <int DT>
    static tide_status run(cudaStream_t stream, lnparams p, const tide_kview *y,
                           const tide_kview *mean, const tide_kview *rstd, const tide_kview *x,
                           const tide_kview *w, const tide_kview *b) {
        typedef typename tide_dt<DT>::T T;
        T       *py = (T *)y->data, *pm = (T *)mean->data, *ps = (T *)rstd->data;
        const T *px = (const T *)x->data, *pw = w ? (const T *)w->data : NULL,
                *pb = b ? (const T *)b->data : NULL;
        if (p.d <= 1024) {
            unsigned per_block = TIDE_CUDA_THREADS / 32;
            unsigned blocks = (unsigned)((p.rows + per_block - 1) / per_block);
            void (*warp_per_row)(lnparams, T *, T *, T *, const T *, const T *, const T *) =
                k_layer_norm<DT, 32>;
            TIDE_LAUNCH(warp_per_row, blocks, TIDE_CUDA_THREADS, 0, stream, p, py, pm, ps, px, pw,
                        pb);
            TIDE_CUDA_LAUNCHED(k_layer_norm);
        } else {
            void (*block_per_row)(lnparams, T *, T *, T *, const T *, const T *, const T *) =
                k_layer_norm<DT, 0>;
            TIDE_LAUNCH(block_per_row, p.rows, 512, 0, stream, p, py, pm, ps, px, pw, pb);
            TIDE_CUDA_LAUNCHED(k_layer_norm);
        }
        return TIDE_OK;
    }
};

/* the blocks of rows the parameters' partial sums come from: a function of rows and d only */
static int ln_blocks(int64_t rows, int64_t d) {
    int64_t cap = ((int64_t)1 << 22) / d, n = rows < 256 ? rows : 256;
    n = n > cap ? cap : n;
    return n < 1 ? 1 : (int)n;
}

struct run_layer_norm_backward {
    template <int DT>
    static tide_status run(tide_device *dev, cudaStream_t stream, lnparams p, const tide_kview *dx,
                           const tide_kview *dweight, const tide_kview *dbias, const tide_kview *dy,
                           const tide_kview *x, const tide_kview *mean, const tide_kview *rstd,
                           const tide_kview *w) {
        typedef typename tide_dt<DT>::T T;
        typedef typename tide_dt<DT>::C C;
        const T *pdy = (const T *)dy->data, *px = (const T *)x->data, *pm = (const T *)mean->data,
                *ps = (const T *)rstd->data, *pw = w ? (const T *)w->data : NULL;
        if (dx) {
            T *pdx = (T *)dx->data;
            if (p.d <= 1024) {
                unsigned per_block = TIDE_CUDA_THREADS / 32;
                unsigned blocks = (unsigned)((p.rows + per_block - 1) / per_block);
                void (*warp_per_row)(lnparams, T *, const T *, const T *, const T *, const T *,
                                     const T *) = k_layer_norm_dx<DT, 32>;
                TIDE_LAUNCH(warp_per_row, blocks, TIDE_CUDA_THREADS, 0, stream, p, pdx, pdy, px, pm,
                            ps, pw);
                TIDE_CUDA_LAUNCHED(k_layer_norm_dx);
            } else {
                void (*block_per_row)(lnparams, T *, const T *, const T *, const T *, const T *,
                                      const T *) = k_layer_norm_dx<DT, 0>;
                TIDE_LAUNCH(block_per_row, p.rows, 512, 0, stream, p, pdx, pdy, px, pm, ps, pw);
                TIDE_CUDA_LAUNCHED(k_layer_norm_dx);
            }
        }
        if (!dweight && !dbias)
            return TIDE_OK;
        int    nb = ln_blocks(p.rows, p.d);
        size_t bytes = (size_t)2 * nb * p.d * sizeof(C);
        C     *part = NULL;
        TIDE_TRY_ST(tide_cuda_alloc(dev, bytes, (void **)&part));
        C   *partw = dweight ? part : NULL, *partb = dbias ? part + (int64_t)nb * p.d : NULL;
        dim3 grid((unsigned)((p.d + TIDE_CUDA_THREADS - 1) / TIDE_CUDA_THREADS), (unsigned)nb);
        void (*partials)(lnparams, int, C *, C *, const T *, const T *, const T *, const T *) =
            k_layer_norm_partials<DT>;
        TIDE_LAUNCH(partials, grid, TIDE_CUDA_THREADS, 0, stream, p, nb, partw, partb, pdy, px, pm,
                    ps);
        cudaError_t e = cudaGetLastError();
        void (*sum)(int64_t, int, T *, const C *) = k_layer_norm_sum<DT>;
        if (e == cudaSuccess && dweight) {
            TIDE_LAUNCH(sum, tide_cuda_blocks(p.d), TIDE_CUDA_THREADS, 0, stream, p.d, nb,
                        (T *)dweight->data, partw);
            e = cudaGetLastError();
        }
        if (e == cudaSuccess && dbias) {
            TIDE_LAUNCH(sum, tide_cuda_blocks(p.d), TIDE_CUDA_THREADS, 0, stream, p.d, nb,
                        (T *)dbias->data, partb);
            e = cudaGetLastError();
        }
        tide_cuda_free(dev, part, bytes); /* reuse is ordered on the stream */
        if (e != cudaSuccess)
            return tide_cuda_fail(e, "k_layer_norm_partials<<<>>>", __FILE__, __LINE__);
        return TIDE_OK;
    }
};

static tide_status ln_check(const char *name, const tide_kview *x, int64_t rows) {
    if (rows > INT32_MAX)
        return tide_cuda_seterr(TIDE_ENOTSUP, "%s: more than 2^31 rows on cuda", name);
    if (x->dtype != TIDE_DTYPE_F32 && x->dtype != TIDE_DTYPE_F64)
        return tide_cuda_notsup(name, x->dtype);
    return TIDE_OK;
}

/* the row layer_norm: in x, weight|NULL, bias|NULL; out y, mean, rstd; p d, eps */
extern "C" tide_status tide_cuda_layer_norm(tide_device *dev, const tide_kernel_call *c) {
    TIDE_TRY_ST(ln_check("layer_norm", c->in[0], c->rows));
    cudaStream_t stream = NULL;
    TIDE_TRY_ST(tide_cuda_enter(dev, &stream));
    lnparams p = {(uint32_t)c->rows, c->d, c->p[1].f};
    TIDE_CUDA_DISPATCH_FLOAT(c->dtype, run_layer_norm, stream, p, c->out[0], c->out[1], c->out[2],
                             c->in[0], c->in[1], c->in[2]);
    return tide_cuda_notsup("layer_norm", c->dtype);
}

/* the row layer_norm_backward: in x, dy, mean, rstd, weight|NULL; out dx, dweight, dbias (each
 * NULL when not wanted); p d */
extern "C" tide_status tide_cuda_layer_norm_backward(tide_device *dev, const tide_kernel_call *c) {
    TIDE_TRY_ST(ln_check("layer_norm_backward", c->in[0], c->rows));
    cudaStream_t stream = NULL;
    TIDE_TRY_ST(tide_cuda_enter(dev, &stream));
    lnparams p = {(uint32_t)c->rows, c->d, 0};
    TIDE_CUDA_DISPATCH_FLOAT(c->dtype, run_layer_norm_backward, dev, stream, p, c->out[0],
                             c->out[1], c->out[2], c->in[1], c->in[0], c->in[2], c->in[3],
                             c->in[4]);
    return tide_cuda_notsup("layer_norm_backward", c->dtype);
}

/* ---- RMS norm (the rows rms_norm, rms_norm_backward of include/tide_kernels.def) ---------- */

/* y = x * rstd * w, rstd = 1 / sqrt(mean(x^2) + eps) */
template <int DT, int ROW_THREADS>
__global__ void k_rms_norm(lnparams p, typename tide_dt<DT>::T *y, typename tide_dt<DT>::T *rstd,
                           const typename tide_dt<DT>::T *x, const typename tide_dt<DT>::T *w) {
    typedef typename tide_dt<DT>::C C;
    __shared__ C                    sh[32];
    int                             lane, nthreads;
    uint32_t                        row = ln_row<ROW_THREADS>(&lane, &nthreads);
    if (row >= p.rows)
        return;
    const typename tide_dt<DT>::T *xr = x + (int64_t)row * p.d;
    typename tide_dt<DT>::T       *yr = y + (int64_t)row * p.d;
    C                              v = 0;
    for (int64_t j = lane; j < p.d; j += nthreads) {
        C a = (C)tide_load<DT>(xr[j]);
        v += a * a;
    }
    C rs = ln_rsqrt(row_sum<C, ROW_THREADS>(v, sh) / (C)p.d + (C)p.eps);
    if (lane == 0)
        rstd[row] = tide_store<DT>(rs);
    for (int64_t j = lane; j < p.d; j += nthreads) {
        C h = (C)tide_load<DT>(xr[j]) * rs;
        if (w)
            h = h * (C)tide_load<DT>(w[j]);
        yr[j] = tide_store<DT>(h);
    }
}

/* dx = rstd * (gw - xhat * mean(gw * xhat)), xhat = x * rstd, gw = dy * w */
template <int DT, int ROW_THREADS>
__global__ void k_rms_norm_dx(lnparams p, typename tide_dt<DT>::T *dx,
                              const typename tide_dt<DT>::T *dy, const typename tide_dt<DT>::T *x,
                              const typename tide_dt<DT>::T *rstd,
                              const typename tide_dt<DT>::T *w) {
    typedef typename tide_dt<DT>::C C;
    __shared__ C                    sh[32];
    int                             lane, nthreads;
    uint32_t                        row = ln_row<ROW_THREADS>(&lane, &nthreads);
    if (row >= p.rows)
        return;
    int64_t base = (int64_t)row * p.d;
    C       rs = (C)tide_load<DT>(rstd[row]), a = 0;
    for (int64_t j = lane; j < p.d; j += nthreads) {
        C g = (C)tide_load<DT>(dy[base + j]);
        if (w)
            g = g * (C)tide_load<DT>(w[j]);
        a += g * ((C)tide_load<DT>(x[base + j]) * rs);
    }
    a = row_sum<C, ROW_THREADS>(a, sh) / (C)p.d;
    for (int64_t j = lane; j < p.d; j += nthreads) {
        C g = (C)tide_load<DT>(dy[base + j]);
        if (w)
            g = g * (C)tide_load<DT>(w[j]);
        dx[base + j] = tide_store<DT>(rs * (g - (C)tide_load<DT>(x[base + j]) * rs * a));
    }
}

/* pw[blk * d + j] = the sum of dy * xhat over block blk's rows (as k_layer_norm_partials) */
template <int DT>
__global__ void k_rms_norm_partials(lnparams p, int nb, typename tide_dt<DT>::C *pw,
                                    const typename tide_dt<DT>::T *dy,
                                    const typename tide_dt<DT>::T *x,
                                    const typename tide_dt<DT>::T *rstd) {
    typedef typename tide_dt<DT>::C C;
    int64_t                         j = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= p.d)
        return;
    int64_t r0 = (int64_t)p.rows * blockIdx.y / nb, r1 = (int64_t)p.rows * (blockIdx.y + 1) / nb;
    C       sw = 0;
    for (int64_t r = r0; r < r1; r++)
        sw += (C)tide_load<DT>(dy[r * p.d + j]) *
              ((C)tide_load<DT>(x[r * p.d + j]) * (C)tide_load<DT>(rstd[r]));
    pw[blockIdx.y * p.d + j] = sw;
}

struct run_rms_norm {
    template <int DT>
    static tide_status run(cudaStream_t stream, lnparams p, const tide_kernel_call *c) {
        typedef typename tide_dt<DT>::T T;
        T                              *py = (T *)c->out[0]->data, *ps = (T *)c->out[1]->data;
        const T *px = (const T *)c->in[0]->data, *pw = c->in[1] ? (const T *)c->in[1]->data : NULL;
        if (p.d <= 1024) {
            unsigned per_block = TIDE_CUDA_THREADS / 32;
            unsigned blocks = (unsigned)((p.rows + per_block - 1) / per_block);
            void (*warp_per_row)(lnparams, T *, T *, const T *, const T *) = k_rms_norm<DT, 32>;
            TIDE_LAUNCH(warp_per_row, blocks, TIDE_CUDA_THREADS, 0, stream, p, py, ps, px, pw);
        } else {
            void (*block_per_row)(lnparams, T *, T *, const T *, const T *) = k_rms_norm<DT, 0>;
            TIDE_LAUNCH(block_per_row, p.rows, 512, 0, stream, p, py, ps, px, pw);
        }
        TIDE_CUDA_LAUNCHED(k_rms_norm);
        return TIDE_OK;
    }
};

struct run_rms_norm_backward {
    template <int DT>
    static tide_status run(tide_device *dev, cudaStream_t stream, lnparams p,
                           const tide_kernel_call *c) {
        typedef typename tide_dt<DT>::T T;
        typedef typename tide_dt<DT>::C C;
        const T *px = (const T *)c->in[0]->data, *pdy = (const T *)c->in[1]->data,
                *ps = (const T *)c->in[2]->data, *pw = c->in[3] ? (const T *)c->in[3]->data : NULL;
        if (c->out[0]) {
            T *pdx = (T *)c->out[0]->data;
            if (p.d <= 1024) {
                unsigned per_block = TIDE_CUDA_THREADS / 32;
                unsigned blocks = (unsigned)((p.rows + per_block - 1) / per_block);
                void (*warp_per_row)(lnparams, T *, const T *, const T *, const T *, const T *) =
                    k_rms_norm_dx<DT, 32>;
                TIDE_LAUNCH(warp_per_row, blocks, TIDE_CUDA_THREADS, 0, stream, p, pdx, pdy, px, ps,
                            pw);
            } else {
                void (*block_per_row)(lnparams, T *, const T *, const T *, const T *, const T *) =
                    k_rms_norm_dx<DT, 0>;
                TIDE_LAUNCH(block_per_row, p.rows, 512, 0, stream, p, pdx, pdy, px, ps, pw);
            }
            TIDE_CUDA_LAUNCHED(k_rms_norm_dx);
        }
        if (!c->out[1])
            return TIDE_OK;
        int    nb = ln_blocks(p.rows, p.d);
        size_t bytes = (size_t)nb * p.d * sizeof(C);
        C     *part = NULL;
        TIDE_TRY_ST(tide_cuda_alloc(dev, bytes, (void **)&part));
        dim3 grid((unsigned)((p.d + TIDE_CUDA_THREADS - 1) / TIDE_CUDA_THREADS), (unsigned)nb);
        void (*partials)(lnparams, int, C *, const T *, const T *, const T *) =
            k_rms_norm_partials<DT>;
        TIDE_LAUNCH(partials, grid, TIDE_CUDA_THREADS, 0, stream, p, nb, part, pdy, px, ps);
        cudaError_t e = cudaGetLastError();
        void (*sum)(int64_t, int, T *, const C *) = k_layer_norm_sum<DT>;
        if (e == cudaSuccess) {
            TIDE_LAUNCH(sum, tide_cuda_blocks(p.d), TIDE_CUDA_THREADS, 0, stream, p.d, nb,
                        (T *)c->out[1]->data, part);
            e = cudaGetLastError();
        }
        tide_cuda_free(dev, part, bytes); /* reuse is ordered on the stream */
        if (e != cudaSuccess)
            return tide_cuda_fail(e, "k_rms_norm_partials<<<>>>", __FILE__, __LINE__);
        return TIDE_OK;
    }
};

extern "C" tide_status tide_cuda_rms_norm(tide_device *dev, const tide_kernel_call *c) {
    TIDE_TRY_ST(ln_check("rms_norm", c->in[0], c->rows));
    cudaStream_t stream = NULL;
    TIDE_TRY_ST(tide_cuda_enter(dev, &stream));
    lnparams p = {(uint32_t)c->rows, c->d, c->p[1].f};
    TIDE_CUDA_DISPATCH_FLOAT(c->dtype, run_rms_norm, stream, p, c);
    return tide_cuda_notsup("rms_norm", c->dtype);
}

extern "C" tide_status tide_cuda_rms_norm_backward(tide_device *dev, const tide_kernel_call *c) {
    TIDE_TRY_ST(ln_check("rms_norm_backward", c->in[0], c->rows));
    cudaStream_t stream = NULL;
    TIDE_TRY_ST(tide_cuda_enter(dev, &stream));
    lnparams p = {(uint32_t)c->rows, c->d, 0};
    TIDE_CUDA_DISPATCH_FLOAT(c->dtype, run_rms_norm_backward, dev, stream, p, c);
    return tide_cuda_notsup("rms_norm_backward", c->dtype);
}
