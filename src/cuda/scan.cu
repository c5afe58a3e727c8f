/*
 * scan.cu — running sums on CUDA: the kernel row cumsum of include/tide_kernels.def, by the
 * CPU's rule (src/cpu/scan.c): each row of [len, inner] summed along len, float32 in a double
 * accumulator, integers wrapping in their own width. The rows cumprod, cummax and logcumsumexp
 * (the CPU's src/cpu/cumulative.c) take a thread per column (row, k) whatever inner is: simple
 * and in order, the CPU's bits, but one thread walks a whole row when inner is 1.
 *
 * inner > 1: a thread per column (row, k) walks its len elements; neighbouring threads read
 * neighbouring elements. inner == 1 (along the last dim): a block per row scans it in tiles of
 * SCAN_THREADS * SCAN_ITEMS elements, in order: each thread sums its SCAN_ITEMS, a block-wide
 * scan in shared memory gives each thread what comes before it, and the tile's total carries
 * into the next.
 */
#include "common.cuh"

template <typename T> struct scan_acc { typedef T A; };
template <> struct scan_acc<float> { typedef double A; };
template <> struct scan_acc<int32_t> { typedef uint32_t A; };
template <> struct scan_acc<int64_t> { typedef uint64_t A; };

#define SCAN_THREADS 256
#define SCAN_ITEMS   4

template <typename T>
__global__ void k_cumsum_columns(T *y, const T *x, int64_t rows, int64_t len, int64_t inner) {
    typedef typename scan_acc<T>::A A;
    int64_t                         col = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (col >= rows * inner)
        return;
    int64_t  r = col / inner, k = col % inner;
    const T *xc = x + r * len * inner + k;
    T       *yc = y + r * len * inner + k;
    A        s = 0;
    for (int64_t i = 0; i < len; i++) {
        s = (A)(s + (A)xc[i * inner]);
        yc[i * inner] = (T)s;
    }
}

template <typename T> __global__ void k_cumsum_rows(T *y, const T *x, int64_t len) {
    typedef typename scan_acc<T>::A A;
    __shared__ A                    part[SCAN_THREADS];
    const T                        *xr = x + (int64_t)blockIdx.x * len;
    T                              *yr = y + (int64_t)blockIdx.x * len;
    int                             t = threadIdx.x;
    A                               carry = 0;
    for (int64_t base = 0; base < len; base += SCAN_THREADS * SCAN_ITEMS) {
        A       loc[SCAN_ITEMS];
        int64_t at = base + (int64_t)t * SCAN_ITEMS;
        A       s = 0;
        for (int j = 0; j < SCAN_ITEMS; j++) {
            s = (A)(s + (at + j < len ? (A)xr[at + j] : (A)0));
            loc[j] = s;
        }
        /* the threads' sums scanned across the block (Hillis-Steele in shared memory) */
        part[t] = s;
        __syncthreads();
        for (int o = 1; o < SCAN_THREADS; o *= 2) {
            A add = t >= o ? part[t - o] : (A)0;
            __syncthreads();
            part[t] = (A)(part[t] + add);
            __syncthreads();
        }
        A before = (A)(carry + (t > 0 ? part[t - 1] : (A)0));
        for (int j = 0; j < SCAN_ITEMS && at + j < len; j++)
            yr[at + j] = (T)(A)(before + loc[j]);
        carry = (A)(carry + part[SCAN_THREADS - 1]);
        __syncthreads(); /* part is written again by the next tile */
    }
}

template <typename T>
static tide_status cumsum_run(cudaStream_t stream, const tide_kernel_call *c, int64_t len,
                              int64_t inner) {
    T       *y = (T *)c->out[0]->data;
    const T *x = (const T *)c->in[0]->data;
    if (inner == 1) {
        void (*rows)(T *, const T *, int64_t) = k_cumsum_rows<T>;
        TIDE_LAUNCH(rows, (unsigned)c->rows, SCAN_THREADS, 0, stream, y, x, len);
        TIDE_CUDA_LAUNCHED(k_cumsum_rows);
    } else {
        void (*cols)(T *, const T *, int64_t, int64_t, int64_t) = k_cumsum_columns<T>;
        TIDE_LAUNCH(cols, tide_cuda_blocks(c->rows * inner), TIDE_CUDA_THREADS, 0, stream, y, x,
                    c->rows, len, inner);
        TIDE_CUDA_LAUNCHED(k_cumsum_columns);
    }
    return TIDE_OK;
}

/* call: in x; out y; p d, inner */
extern "C" tide_status tide_cuda_cumsum(tide_device *dev, const tide_kernel_call *c) {
    int64_t d = c->d, inner = c->p[1].i;
    if (d % inner)
        return tide_cuda_seterr(TIDE_EINVAL, "cumsum: inner %lld does not divide the row's %lld",
                                (long long)inner, (long long)d);
    /* a block per row, or a thread per column: both counts within a grid's 2^31 - 1 blocks */
    if ((inner == 1 && c->rows > INT32_MAX) || c->rows * inner / TIDE_CUDA_THREADS >= INT32_MAX)
        return tide_cuda_seterr(TIDE_ENOTSUP, "cumsum: more than 2^31 rows on cuda");
    cudaStream_t stream = NULL;
    TIDE_TRY(tide_cuda_enter(dev, &stream));
    switch (c->dtype) {
    case TIDE_DTYPE_F32:
        return cumsum_run<float>(stream, c, d / inner, inner);
    case TIDE_DTYPE_F64:
        return cumsum_run<double>(stream, c, d / inner, inner);
    case TIDE_DTYPE_I32:
        return cumsum_run<int32_t>(stream, c, d / inner, inner);
    case TIDE_DTYPE_I64:
        return cumsum_run<int64_t>(stream, c, d / inner, inner);
    default:
        return tide_cuda_notsup("cumsum", c->dtype);
    }
}

/* ---- cumprod, cummax, logcumsumexp: a thread per column -------------------------------------- */

/* PyTorch's _log_add_exp_helper(x, acc) (src/cpu/cumulative.c) */
__device__ static double log_add_exp(double x, double acc) {
    double lo = isnan(acc) ? acc : acc < x ? acc : x;
    double hi = isnan(acc) ? acc : x < acc ? acc : x;
    if (lo != hi || isfinite(lo))
        return log1p(exp(lo - hi)) + hi;
    return x;
}

struct fold_prod {
    template <typename A> __device__ static A init() {
        return (A)1;
    }
    template <typename A> __device__ static A step(A acc, A x) {
        return (A)(acc * x);
    }
};
struct fold_logsumexp {
    template <typename A> __device__ static A init() {
        return (A)-INFINITY;
    }
    template <typename A> __device__ static A step(A acc, A x) {
        return (A)log_add_exp(x, acc);
    }
};

template <typename T, typename F>
__global__ void k_fold_columns(T *y, const T *x, int64_t rows, int64_t len, int64_t inner) {
    typedef typename scan_acc<T>::A A;
    int64_t                         col = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (col >= rows * inner)
        return;
    int64_t  r = col / inner, k = col % inner;
    const T *xc = x + r * len * inner + k;
    T       *yc = y + r * len * inner + k;
    A        a = F::template init<A>();
    for (int64_t i = 0; i < len; i++) {
        a = F::template step<A>(a, (A)xc[i * inner]);
        yc[i * inner] = (T)a;
    }
}

template <typename T> __device__ static bool is_nan(T v) {
    return v != v;
}

/* PyTorch's rule (src/cpu/cumulative.c): a NaN takes over, else >= (min: <=); 1-based indices */
template <typename T>
__global__ void k_cummax_columns(T *y, int64_t *ix, const T *x, int64_t rows, int64_t len,
                                 int64_t inner, int min) {
    int64_t col = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (col >= rows * inner)
        return;
    int64_t  r = col / inner, k = col % inner, at = 0, base = r * len * inner + k;
    const T *xc = x + base;
    T        m = xc[0];
    for (int64_t i = 0; i < len; i++) {
        T v = xc[i * inner];
        if (i == 0 || is_nan(v) || (!is_nan(m) && (min ? v <= m : v >= m))) {
            m = v;
            at = i;
        }
        if (y)
            y[base + i * inner] = m;
        ix[base + i * inner] = at + 1;
    }
}

/* the checks every one of these rows makes; the column count */
static tide_status columns_of(const char *op, const tide_kernel_call *c, int64_t *len,
                              int64_t *inner) {
    *inner = c->p[1].i;
    if (c->d % *inner)
        return tide_cuda_seterr(TIDE_EINVAL, "%s: inner %lld does not divide the row's %lld", op,
                                (long long)*inner, (long long)c->d);
    if (c->rows * *inner / TIDE_CUDA_THREADS >= INT32_MAX)
        return tide_cuda_seterr(TIDE_ENOTSUP, "%s: more than 2^31 blocks of columns on cuda", op);
    *len = c->d / *inner;
    return TIDE_OK;
}

template <typename T, typename F>
static tide_status fold_run(tide_device *dev, const tide_kernel_call *c, const char *op) {
    int64_t len = 0, inner = 1;
    TIDE_TRY(columns_of(op, c, &len, &inner));
    cudaStream_t stream = NULL;
    TIDE_TRY(tide_cuda_enter(dev, &stream));
    void (*cols)(T *, const T *, int64_t, int64_t, int64_t) = k_fold_columns<T, F>;
    TIDE_LAUNCH(cols, tide_cuda_blocks(c->rows * inner), TIDE_CUDA_THREADS, 0, stream,
                (T *)c->out[0]->data, (const T *)c->in[0]->data, c->rows, len, inner);
    TIDE_CUDA_LAUNCHED(k_fold_columns);
    return TIDE_OK;
}

template <typename T> static tide_status cummax_run(tide_device *dev, const tide_kernel_call *c) {
    int64_t len = 0, inner = 1;
    TIDE_TRY(columns_of("cummax", c, &len, &inner));
    cudaStream_t stream = NULL;
    TIDE_TRY(tide_cuda_enter(dev, &stream));
    void (*cols)(T *, int64_t *, const T *, int64_t, int64_t, int64_t, int) = k_cummax_columns<T>;
    TIDE_LAUNCH(cols, tide_cuda_blocks(c->rows * inner), TIDE_CUDA_THREADS, 0, stream,
                c->out[0] ? (T *)c->out[0]->data : (T *)NULL, (int64_t *)c->out[1]->data,
                (const T *)c->in[0]->data, c->rows, len, inner, (int)c->p[2].i);
    TIDE_CUDA_LAUNCHED(k_cummax_columns);
    return TIDE_OK;
}

/* call: in x; out y; p d, inner */
extern "C" tide_status tide_cuda_cumprod(tide_device *dev, const tide_kernel_call *c) {
    switch (c->dtype) {
    case TIDE_DTYPE_F32:
        return fold_run<float, fold_prod>(dev, c, "cumprod");
    case TIDE_DTYPE_F64:
        return fold_run<double, fold_prod>(dev, c, "cumprod");
    case TIDE_DTYPE_I32:
        return fold_run<int32_t, fold_prod>(dev, c, "cumprod");
    case TIDE_DTYPE_I64:
        return fold_run<int64_t, fold_prod>(dev, c, "cumprod");
    default:
        return tide_cuda_notsup("cumprod", c->dtype);
    }
}

/* call: in x; out values (optional), indices; p d, inner, min */
extern "C" tide_status tide_cuda_cummax(tide_device *dev, const tide_kernel_call *c) {
    switch (c->dtype) {
    case TIDE_DTYPE_F32:
        return cummax_run<float>(dev, c);
    case TIDE_DTYPE_F64:
        return cummax_run<double>(dev, c);
    case TIDE_DTYPE_I32:
        return cummax_run<int32_t>(dev, c);
    case TIDE_DTYPE_I64:
        return cummax_run<int64_t>(dev, c);
    default:
        return tide_cuda_notsup("cummax", c->dtype);
    }
}

/* call: in x; out y; p d, inner */
extern "C" tide_status tide_cuda_logcumsumexp(tide_device *dev, const tide_kernel_call *c) {
    switch (c->dtype) {
    case TIDE_DTYPE_F32:
        return fold_run<float, fold_logsumexp>(dev, c, "logcumsumexp");
    case TIDE_DTYPE_F64:
        return fold_run<double, fold_logsumexp>(dev, c, "logcumsumexp");
    default:
        return tide_cuda_notsup("logcumsumexp", c->dtype);
    }
}
