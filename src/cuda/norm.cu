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

TIDE_CUDA_FLOAT_OVERLOADS(ln_rsqrt, rsqrt)

/* gw = dy * w at column j of the row at base (dy alone without a weight) */
template <int DT>
__device__ __forceinline__ typename tide_dt<DT>::C ln_gw(const typename tide_dt<DT>::T *dy,
                                                         const typename tide_dt<DT>::T *w,
                                                         int64_t base, int64_t j) {
    typedef typename tide_dt<DT>::C C;
    C                               g = (C)tide_load<DT>(dy[base + j]);
    return w ? g * (C)tide_load<DT>(w[j]) : g;
}

struct lnparams {
    uint32_t rows;
    int64_t  d;
    double   eps;
};

/* x (+ r, the add & norm's residual: NULL for layer norm) at index i, in the compute type */
template <int DT>
__device__ __forceinline__ typename tide_dt<DT>::C
           ln_in(const typename tide_dt<DT>::T *x, const typename tide_dt<DT>::T *r, int64_t i) {
               typedef typename tide_dt<DT>::C C;
               C                               v = (C)tide_load<DT>(x[i]);
               return r ? v + (C)tide_load<DT>(r[i]) : v;
}

/* y = layer_norm(x + r) over each row (r NULL: layer_norm(x)); mean and rstd, when not NULL,
 * get the row's statistics (the add & norm keeps none) */
template <int DT, int ROW_THREADS>
__global__ void k_layer_norm(lnparams p, typename tide_dt<DT>::T *y, typename tide_dt<DT>::T *mean,
                             typename tide_dt<DT>::T *rstd, const typename tide_dt<DT>::T *x,
                             const typename tide_dt<DT>::T *r, const typename tide_dt<DT>::T *w,
                             const typename tide_dt<DT>::T *b) {
    typedef typename tide_dt<DT>::C C;
    int                             lane, nthreads;
    uint32_t                        row = row_of<ROW_THREADS>(&lane, &nthreads);
    if (row >= p.rows)
        return; /* whole warps leave together: the shuffles below stay full */
    int64_t base = (int64_t)row * p.d;
    C       s = 0, v = 0;
    for (int64_t j = lane; j < p.d; j += nthreads)
        s += ln_in<DT>(x, r, base + j);
    C mu = row_sum<C, ROW_THREADS>(s) / (C)p.d;
    for (int64_t j = lane; j < p.d; j += nthreads) {
        C c = ln_in<DT>(x, r, base + j) - mu;
        v += c * c;
    }
    C rs = ln_rsqrt(row_sum<C, ROW_THREADS>(v) / (C)p.d + (C)p.eps);
    if (lane == 0 && mean) {
        mean[row] = tide_store<DT>(mu);
        rstd[row] = tide_store<DT>(rs);
    }
    for (int64_t j = lane; j < p.d; j += nthreads) {
        C h = (ln_in<DT>(x, r, base + j) - mu) * rs;
        if (w)
            h = h * (C)tide_load<DT>(w[j]);
        if (b)
            h = h + (C)tide_load<DT>(b[j]);
        y[base + j] = tide_store<DT>(h);
    }
}

/* dx = rstd * (gw - mean(gw) - xhat * mean(gw * xhat)), xhat = (x - mean) * rstd, gw = dy * w;
 * RMS norm's (CENTRED false: no mean) dx = rstd * (gw - xhat * mean(gw * xhat)), xhat = x * rstd */
template <int DT, int ROW_THREADS, bool CENTRED>
__global__ void k_norm_dx(lnparams p, typename tide_dt<DT>::T *dx,
                          const typename tide_dt<DT>::T *dy, const typename tide_dt<DT>::T *x,
                          const typename tide_dt<DT>::T *mean, const typename tide_dt<DT>::T *rstd,
                          const typename tide_dt<DT>::T *w) {
    typedef typename tide_dt<DT>::C C;
    int                             lane, nthreads;
    uint32_t                        row = row_of<ROW_THREADS>(&lane, &nthreads);
    if (row >= p.rows)
        return;
    int64_t base = (int64_t)row * p.d;
    C       mu = CENTRED ? (C)tide_load<DT>(mean[row]) : (C)0, rs = (C)tide_load<DT>(rstd[row]);
    C       a = 0, c = 0;
    for (int64_t j = lane; j < p.d; j += nthreads) {
        C g = ln_gw<DT>(dy, w, base, j);
        a += g;
        C xv = (C)tide_load<DT>(x[base + j]);
        c += g * ((CENTRED ? xv - mu : xv) * rs);
    }
    if (CENTRED)
        a = row_sum<C, ROW_THREADS>(a) / (C)p.d;
    c = row_sum<C, ROW_THREADS>(c) / (C)p.d;
    for (int64_t j = lane; j < p.d; j += nthreads) {
        C g = ln_gw<DT>(dy, w, base, j);
        C xv = (C)tide_load<DT>(x[base + j]);
        C xh = (CENTRED ? xv - mu : xv) * rs;
        dx[base + j] = tide_store<DT>(rs * ((CENTRED ? g - a : g) - xh * c));
    }
}

/* block (blockIdx.x, blockIdx.y): columns blockIdx.x * blockDim.x.., rows of block blockIdx.y of
 * nb; pw[blk * d + j] = sum of dy * xhat, pb[blk * d + j] = sum of dy (either may be NULL);
 * xhat = (x - mean) * rstd, or x * rstd when mean is NULL (RMS norm) */
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
        C m = mean ? (C)tide_load<DT>(mean[r]) : (C)0;
        sw += g * (((C)tide_load<DT>(x[r * p.d + j]) - m) * (C)tide_load<DT>(rstd[r]));
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

/* the row layer_norm: in x, weight|NULL, bias|NULL; out y, mean, rstd; p d, eps */
template <int DT>
static tide_status layer_norm_run(tide_device *, cudaStream_t stream, lnparams p,
                                  const tide_kernel_call *c) {
    typedef typename tide_dt<DT>::T T;
    const T                        *pw = c->in[1] ? (const T *)c->in[1]->data : NULL;
    const T                        *pb = c->in[2] ? (const T *)c->in[2]->data : NULL;
    launch_rows(stream, p.rows, p.d, k_layer_norm<DT, 32>, k_layer_norm<DT, 0>, p,
                (T *)c->out[0]->data, (T *)c->out[1]->data, (T *)c->out[2]->data,
                (const T *)c->in[0]->data, (const T *)NULL, pw, pb);
    TIDE_CUDA_LAUNCHED(k_layer_norm);
    return TIDE_OK;
}

/* the blocks of rows the parameters' partial sums come from: a function of rows and d only */
static int ln_blocks(int64_t rows, int64_t d) {
    int64_t cap = ((int64_t)1 << 22) / d, n = rows < 256 ? rows : 256;
    n = n > cap ? cap : n;
    return n < 1 ? 1 : (int)n;
}

/* dweight = the sum of dy * xhat over the rows and dbias = the sum of dy (either NULL): partial
 * sums per block of rows, then the blocks added in order; mean NULL for RMS norm's xhat */
template <int DT>
static tide_status param_grads(tide_device *dev, cudaStream_t stream, const lnparams &p,
                               const tide_kview *dweight, const tide_kview *dbias,
                               const typename tide_dt<DT>::T *dy, const typename tide_dt<DT>::T *x,
                               const typename tide_dt<DT>::T *mean,
                               const typename tide_dt<DT>::T *rstd) {
    typedef typename tide_dt<DT>::T T;
    typedef typename tide_dt<DT>::C C;
    if (!dweight && !dbias)
        return TIDE_OK;
    int    nb = ln_blocks(p.rows, p.d);
    size_t bytes = (size_t)((dweight != NULL) + (dbias != NULL)) * nb * p.d * sizeof(C);
    C     *part = NULL;
    TIDE_TRY(tide_cuda_alloc(dev, bytes, (void **)&part));
    C *partw = dweight ? part : NULL,
      *partb = dbias ? part + (dweight ? (int64_t)nb * p.d : 0) : NULL;
    dim3 grid((unsigned)((p.d + TIDE_CUDA_THREADS - 1) / TIDE_CUDA_THREADS), (unsigned)nb);
    void (*partials)(lnparams, int, C *, C *, const T *, const T *, const T *, const T *) =
        k_layer_norm_partials<DT>;
    TIDE_LAUNCH(partials, grid, TIDE_CUDA_THREADS, 0, stream, p, nb, partw, partb, dy, x, mean,
                rstd);
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

/* the rows layer_norm_backward (in x, dy, mean, rstd, weight|NULL; out dx, dweight, dbias) and,
 * CENTRED false, rms_norm_backward (in x, dy, rstd, weight|NULL; out dx, dweight); each out NULL
 * when not wanted; p d */
template <bool CENTRED> struct norm_backward {
    template <int DT>
    static tide_status run(tide_device *dev, cudaStream_t stream, lnparams p,
                           const tide_kernel_call *c) {
        typedef typename tide_dt<DT>::T T;
        const int                       k = CENTRED ? 3 : 2; /* rstd's input */
        const T *px = (const T *)c->in[0]->data, *pdy = (const T *)c->in[1]->data,
                *pm = CENTRED ? (const T *)c->in[2]->data : NULL, *ps = (const T *)c->in[k]->data,
                *pw = c->in[k + 1] ? (const T *)c->in[k + 1]->data : NULL;
        if (c->out[0]) {
            launch_rows(stream, p.rows, p.d, k_norm_dx<DT, 32, CENTRED>, k_norm_dx<DT, 0, CENTRED>,
                        p, (T *)c->out[0]->data, pdy, px, pm, ps, pw);
            TIDE_CUDA_LAUNCHED(k_norm_dx);
        }
        return param_grads<DT>(dev, stream, p, c->out[1], CENTRED ? c->out[2] : NULL, pdy, px, pm,
                               ps);
    }
};

/* a kernel row of this file: run, float32 or float64 (each a launcher's instance), for c's
 * dtype; p.eps from parameter 1 when the row has it (the forward rows) */
typedef tide_status (*ln_run_fn)(tide_device *dev, cudaStream_t stream, lnparams p,
                                 const tide_kernel_call *c);
static tide_status ln_entry(tide_device *dev, const char *name, const tide_kernel_call *c,
                            double eps, ln_run_fn f32, ln_run_fn f64) {
    if (c->rows > INT32_MAX)
        return tide_cuda_seterr(TIDE_ENOTSUP, "%s: more than 2^31 rows on cuda", name);
    if (c->in[0]->dtype != TIDE_DTYPE_F32 && c->in[0]->dtype != TIDE_DTYPE_F64)
        return tide_cuda_notsup(name, c->in[0]->dtype);
    cudaStream_t stream = NULL;
    TIDE_TRY(tide_cuda_enter(dev, &stream));
    lnparams p = {(uint32_t)c->rows, c->d, eps};
    if (c->dtype == TIDE_DTYPE_F32)
        return f32(dev, stream, p, c);
    if (c->dtype == TIDE_DTYPE_F64)
        return f64(dev, stream, p, c);
    return tide_cuda_notsup(name, c->dtype);
}
#define LN_RUNS(f) f<TIDE_DTYPE_F32>, f<TIDE_DTYPE_F64>

extern "C" tide_status tide_cuda_layer_norm(tide_device *dev, const tide_kernel_call *c) {
    return ln_entry(dev, "layer_norm", c, c->p[1].f, LN_RUNS(layer_norm_run));
}

extern "C" tide_status tide_cuda_layer_norm_backward(tide_device *dev, const tide_kernel_call *c) {
    return ln_entry(dev, "layer_norm_backward", c, 0, LN_RUNS(norm_backward<true>::run));
}

/* ---- add & norm (the row add_layer_norm): y = layer_norm(x + residual), no statistics kept -- */

struct run_add_layer_norm {
    template <int DT>
    static tide_status run(cudaStream_t stream, lnparams p, const tide_kernel_call *c) {
        typedef typename tide_dt<DT>::T T;
        const T                        *pw = c->in[2] ? (const T *)c->in[2]->data : NULL;
        const T                        *pb = c->in[3] ? (const T *)c->in[3]->data : NULL;
        /* layer norm's kernel with the residual and no statistics; the sum stays in the compute
         * type (float for the half dtypes: unrounded, as the CPU's) */
        launch_rows(stream, p.rows, p.d, k_layer_norm<DT, 32>, k_layer_norm<DT, 0>, p,
                    (T *)c->out[0]->data, (T *)NULL, (T *)NULL, (const T *)c->in[0]->data,
                    (const T *)c->in[1]->data, pw, pb);
        TIDE_CUDA_LAUNCHED(k_layer_norm);
        return TIDE_OK;
    }
};

/* every float dtype (the other rows of this file: float32 and float64) */
extern "C" tide_status tide_cuda_add_layer_norm(tide_device *dev, const tide_kernel_call *c) {
    if (c->rows > INT32_MAX)
        return tide_cuda_seterr(TIDE_ENOTSUP, "add_layer_norm: more than 2^31 rows on cuda");
    cudaStream_t stream = NULL;
    TIDE_TRY(tide_cuda_enter(dev, &stream));
    lnparams p = {(uint32_t)c->rows, c->d, c->p[1].f};
    TIDE_CUDA_DISPATCH_FLOAT(c->dtype, run_add_layer_norm, stream, p, c);
    return tide_cuda_notsup("add_layer_norm", c->dtype);
}

/* ---- RMS norm (the rows rms_norm, rms_norm_backward of include/tide_kernels.def) ---------- */

/* y = x * rstd * w, rstd = 1 / sqrt(mean(x^2) + eps) */
template <int DT, int ROW_THREADS>
__global__ void k_rms_norm(lnparams p, typename tide_dt<DT>::T *y, typename tide_dt<DT>::T *rstd,
                           const typename tide_dt<DT>::T *x, const typename tide_dt<DT>::T *w) {
    typedef typename tide_dt<DT>::C C;
    int                             lane, nthreads;
    uint32_t                        row = row_of<ROW_THREADS>(&lane, &nthreads);
    if (row >= p.rows)
        return;
    const typename tide_dt<DT>::T *xr = x + (int64_t)row * p.d;
    typename tide_dt<DT>::T       *yr = y + (int64_t)row * p.d;
    C                              v = 0;
    for (int64_t j = lane; j < p.d; j += nthreads) {
        C a = (C)tide_load<DT>(xr[j]);
        v += a * a;
    }
    C rs = ln_rsqrt(row_sum<C, ROW_THREADS>(v) / (C)p.d + (C)p.eps);
    if (lane == 0)
        rstd[row] = tide_store<DT>(rs);
    for (int64_t j = lane; j < p.d; j += nthreads) {
        C h = (C)tide_load<DT>(xr[j]) * rs;
        if (w)
            h = h * (C)tide_load<DT>(w[j]);
        yr[j] = tide_store<DT>(h);
    }
}

/* the row rms_norm: in x, weight|NULL; out y, rstd; p d, eps */
template <int DT>
static tide_status rms_norm_run(tide_device *, cudaStream_t stream, lnparams p,
                                const tide_kernel_call *c) {
    typedef typename tide_dt<DT>::T T;
    T                              *py = (T *)c->out[0]->data, *ps = (T *)c->out[1]->data;
    const T *px = (const T *)c->in[0]->data, *pw = c->in[1] ? (const T *)c->in[1]->data : NULL;
    launch_rows(stream, p.rows, p.d, k_rms_norm<DT, 32>, k_rms_norm<DT, 0>, p, py, ps, px, pw);
    TIDE_CUDA_LAUNCHED(k_rms_norm);
    return TIDE_OK;
}

extern "C" tide_status tide_cuda_rms_norm(tide_device *dev, const tide_kernel_call *c) {
    return ln_entry(dev, "rms_norm", c, c->p[1].f, LN_RUNS(rms_norm_run));
}

extern "C" tide_status tide_cuda_rms_norm_backward(tide_device *dev, const tide_kernel_call *c) {
    return ln_entry(dev, "rms_norm_backward", c, 0, LN_RUNS(norm_backward<false>::run));
}

/* ---- each row's 2-norm (the row row_norm2 of include/tide_kernels.def) -------------------- */

template <int DT, int ROW_THREADS>
__global__ void k_row_norm2(uint32_t rows, int64_t d, typename tide_dt<DT>::T *out,
                            const typename tide_dt<DT>::T *x) {
    typedef typename tide_dt<DT>::C C;
    int                             lane, nthreads;
    uint32_t                        row = row_of<ROW_THREADS>(&lane, &nthreads);
    if (row >= rows)
        return;
    const typename tide_dt<DT>::T *xr = x + (int64_t)row * d;
    C                              v = 0;
    for (int64_t j = lane; j < d; j += nthreads) {
        C a = (C)tide_load<DT>(xr[j]);
        v += a * a;
    }
    v = row_sum<C, ROW_THREADS>(v);
    if (lane == 0)
        out[row] = tide_store<DT>(sqrt(v));
}

struct run_row_norm2 {
    template <int DT> static tide_status run(tide_device *dev, const tide_kernel_call *c) {
        typedef typename tide_dt<DT>::T T;
        cudaStream_t                    stream = NULL;
        TIDE_TRY(tide_cuda_enter(dev, &stream));
        launch_rows(stream, (uint32_t)c->rows, c->d, k_row_norm2<DT, 32>, k_row_norm2<DT, 0>,
                    (uint32_t)c->rows, c->d, (T *)c->out[0]->data, (const T *)c->in[0]->data);
        TIDE_CUDA_LAUNCHED(k_row_norm2);
        return TIDE_OK;
    }
};

extern "C" tide_status tide_cuda_row_norm2(tide_device *dev, const tide_kernel_call *c) {
    TIDE_CUDA_DISPATCH_FLOAT(c->dtype, run_row_norm2, dev, c);
    return tide_cuda_notsup("row_norm2", c->dtype);
}
