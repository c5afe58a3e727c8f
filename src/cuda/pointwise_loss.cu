/*
 * pointwise_loss.cu — the pointwise losses and their gradients over the rows of a contiguous
 * [rows, d] view: the kernel rows pointwise_loss and pointwise_loss_backward of
 * include/tide_kernels.def, the math of src/pointwise_loss_math.h (the CPU's too).
 *
 * A row's sum (nn's reductions: one row of numel elements) is cut into blocks fixed by d alone,
 * each block's threads summing in double and reducing through shared memory, then one thread
 * per row adds its blocks in order: the same bits every run, no atomics. "none" (d = 1) and the
 * gradients are one thread per element, grid-stride.
 */
#include "map.cuh"
#include "pointwise_loss_math.h"
#include "rows.cuh"

/* ---- kernels ------------------------------------------------------------------------------ */

__device__ __forceinline__ float loss_of(int k, float x, float t, float b) {
    return tide_loss_f(k, x, t, b);
}
__device__ __forceinline__ double loss_of(int k, double x, double t, double b) {
    return tide_loss_d(k, x, t, b);
}
__device__ __forceinline__ float grad_of(int k, float x, float t, float b, float n, float g) {
    return tide_loss_grad_f(k, x, t, b, n, g);
}
__device__ __forceinline__ double grad_of(int k, double x, double t, double b, double n, double g) {
    return tide_loss_grad_d(k, x, t, b, n, g);
}
__device__ __forceinline__ float grad_target_of(int k, float x, float t, float b, float n,
                                                float g) {
    return tide_loss_grad_target_f(k, x, t, b, n, g);
}
__device__ __forceinline__ double grad_target_of(int k, double x, double t, double b, double n,
                                                 double g) {
    return tide_loss_grad_target_d(k, x, t, b, n, g);
}

struct loss_args {
    int64_t rows, d;
    int     kind, nb; /* nb: the blocks of a row */
    double  beta, scale;
};

/* y[i] = scale * loss of element i (d = 1: each element its own row) */
template <typename T> __global__ void k_loss_each(loss_args a, T *y, const T *x, const T *t) {
    T beta = (T)a.beta, scale = (T)a.scale;
    for (int64_t i = TIDE_GTID; i < a.rows; i += TIDE_GSTRIDE)
        y[i] = loss_of(a.kind, x[i], t[i], beta) * scale;
}

/* block (b, r): the sum of block b of row r (rows r, r + gridDim.y, ...) in double, into
 * part[r * nb + b]; with one block a row (part NULL), y[r] = scale * the sum */
template <typename T>
__global__ void k_loss_sum(loss_args a, double *part, T *y, const T *x, const T *t) {
    T beta = (T)a.beta;
    for (int64_t r = blockIdx.y; r < a.rows; r += gridDim.y) {
        int64_t  j0 = a.d * blockIdx.x / a.nb, j1 = a.d * (blockIdx.x + 1) / a.nb;
        const T *xr = x + r * a.d, *tr = t + r * a.d;
        double   s = 0;
        for (int64_t j = j0 + threadIdx.x; j < j1; j += blockDim.x)
            s += (double)loss_of(a.kind, xr[j], tr[j], beta);
        s = block_reduce<double, false>(s);
        if (threadIdx.x == 0) {
            if (part)
                part[r * a.nb + blockIdx.x] = s;
            else
                y[r] = (T)(s * a.scale);
        }
    }
}

/* y[r] = scale * row r's nb block sums, added in order */
template <typename T> __global__ void k_loss_finish(loss_args a, T *y, const double *part) {
    for (int64_t r = TIDE_GTID; r < a.rows; r += TIDE_GSTRIDE) {
        double s = 0;
        for (int b = 0; b < a.nb; b++)
            s += part[r * a.nb + b];
        y[r] = (T)(s * a.scale);
    }
}

/* gx, gt (either NULL) for every element, g one per row */
template <typename T>
__global__ void k_loss_grad(loss_args a, T *gx, T *gt, const T *x, const T *t, const T *g) {
    T       beta = (T)a.beta, norm = (T)a.scale;
    int64_t n = a.rows * a.d;
    for (int64_t i = TIDE_GTID; i < n; i += TIDE_GSTRIDE) {
        T gv = g[a.d == 1 ? i : a.rows == 1 ? 0 : i / a.d];
        if (gx)
            gx[i] = grad_of(a.kind, x[i], t[i], beta, norm, gv);
        if (gt)
            gt[i] = grad_target_of(a.kind, x[i], t[i], beta, norm, gv);
    }
}

/* ---- launchers ---------------------------------------------------------------------------- */

/* the blocks a row of d is summed in: at most 256, of at least 4096 elements (a function of d
 * only, so the bits do not depend on the launch) */
static int loss_blocks(int64_t d) {
    int64_t n = (d + 4095) / 4096;
    return n > 256 ? 256 : (int)n;
}

#define LOSS_THREADS 256

template <typename T>
static tide_status loss_run(tide_device *dev, cudaStream_t stream, loss_args a,
                            const tide_kernel_call *c) {
    const T *x = (const T *)c->in[0]->data, *t = (const T *)c->in[1]->data;
    T       *y = (T *)c->out[0]->data;
    if (a.d == 1) {
        TIDE_LAUNCH(k_loss_each<T>, tide_map_grid(a.rows), TIDE_CUDA_THREADS, 0, stream, a, y, x,
                    t);
        TIDE_CUDA_LAUNCHED(k_loss_each);
        return TIDE_OK;
    }
    double *part = NULL;
    size_t  bytes = a.nb > 1 ? (size_t)a.rows * a.nb * sizeof(double) : 0;
    if (bytes)
        TIDE_TRY(tide_cuda_alloc(dev, bytes, (void **)&part));
    dim3 grid((unsigned)a.nb, (unsigned)(a.rows < 65535 ? a.rows : 65535));
    TIDE_LAUNCH(k_loss_sum<T>, grid, LOSS_THREADS, 0, stream, a, part, y, x, t);
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess && part) {
        TIDE_LAUNCH(k_loss_finish<T>, tide_map_grid(a.rows), TIDE_CUDA_THREADS, 0, stream, a, y,
                    (const double *)part);
        e = cudaGetLastError();
    }
    if (part)
        tide_cuda_free(dev, part, bytes); /* reuse is ordered on the stream */
    if (e != cudaSuccess)
        return tide_cuda_fail(e, "k_loss_sum<<<>>>", __FILE__, __LINE__);
    return TIDE_OK;
}

template <typename T>
static tide_status loss_grad_run(tide_device *, cudaStream_t stream, loss_args a,
                                 const tide_kernel_call *c) {
    T *gx = c->out[0] ? (T *)c->out[0]->data : NULL, *gt = c->out[1] ? (T *)c->out[1]->data : NULL;
    if (!gx && !gt)
        return TIDE_OK;
    TIDE_LAUNCH(k_loss_grad<T>, tide_map_grid(a.rows * a.d), TIDE_CUDA_THREADS, 0, stream, a, gx,
                gt, (const T *)c->in[0]->data, (const T *)c->in[1]->data,
                (const T *)c->in[2]->data);
    TIDE_CUDA_LAUNCHED(k_loss_grad);
    return TIDE_OK;
}

typedef tide_status (*loss_run_fn)(tide_device *dev, cudaStream_t stream, loss_args a,
                                   const tide_kernel_call *c);
/* p: d, kind, beta, scale (both rows) */
static tide_status loss_entry(tide_device *dev, const char *name, const tide_kernel_call *c,
                              loss_run_fn f32, loss_run_fn f64) {
    if (c->dtype != TIDE_DTYPE_F32 && c->dtype != TIDE_DTYPE_F64)
        return tide_cuda_notsup(name, c->dtype);
    cudaStream_t stream = NULL;
    TIDE_TRY(tide_cuda_enter(dev, &stream));
    loss_args a = {c->rows, c->d, (int)c->p[1].i, loss_blocks(c->d), c->p[2].f, c->p[3].f};
    return c->dtype == TIDE_DTYPE_F32 ? f32(dev, stream, a, c) : f64(dev, stream, a, c);
}

extern "C" tide_status tide_cuda_pointwise_loss(tide_device *dev, const tide_kernel_call *c) {
    return loss_entry(dev, "pointwise_loss", c, loss_run<float>, loss_run<double>);
}

extern "C" tide_status tide_cuda_pointwise_loss_backward(tide_device            *dev,
                                                         const tide_kernel_call *c) {
    return loss_entry(dev, "pointwise_loss_backward", c, loss_grad_run<float>,
                      loss_grad_run<double>);
}
