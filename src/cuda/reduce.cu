/*
 * reduce.cu — sum, mean, prod, max, min, argmax, argmin over one dim (a full reduction arrives
 * as dim 0 of a 1-D view). Floats accumulate in double, integers in int64. max/min propagate NaN
 * and break ties by the lowest index, as the CPU does.
 *
 * Two shapes of work: a block per output (the reduced dim is contiguous, or there are few
 * outputs; a long dim is also split over several blocks whose partial results a second kernel
 * combines), or a thread per output (many outputs over a strided dim: neighbouring threads read
 * neighbouring memory).
 */
#include "map.cuh"

// ---- accumulators ---------------------------------------------------------------------------

template <typename A> struct racc {
    A       v;
    int64_t i; /* index of v for max/min; -1: nothing seen yet */
};

template <int DT> struct acc_type {
    typedef typename std::conditional<tide_dt_is_float<DT>(), double, int64_t>::type A;
};

template <typename A> __device__ __forceinline__ racc<A> r_identity(int op) {
    racc<A> r;
    r.v = op == TIDE_OP_PROD ? (A)1 : (A)0;
    r.i = -1;
    return r;
}

template <typename A> __device__ __forceinline__ bool r_isnan(A v) {
    return v != v;
}

/* y is better than x for max (want_max) or min: NaN wins, then the value, then the lower index */
template <typename A>
__device__ __forceinline__ racc<A> r_pick(racc<A> x, racc<A> y, bool want_max) {
    if (x.i < 0)
        return y;
    if (y.i < 0)
        return x;
    bool xn = r_isnan(x.v), yn = r_isnan(y.v);
    if (xn || yn) {
        if (xn && yn)
            return x.i <= y.i ? x : y;
        return xn ? x : y;
    }
    if (x.v == y.v)
        return x.i <= y.i ? x : y;
    return (want_max ? y.v > x.v : y.v < x.v) ? y : x;
}

/* integer sums and products wrap (two's complement, through uint64: signed overflow is
 * undefined in C++) */
template <typename A> __device__ __forceinline__ A r_add(A x, A y) {
    if constexpr (std::is_same<A, int64_t>::value)
        return (int64_t)((uint64_t)x + (uint64_t)y);
    else
        return x + y;
}

template <typename A> __device__ __forceinline__ A r_mul(A x, A y) {
    if constexpr (std::is_same<A, int64_t>::value)
        return (int64_t)((uint64_t)x * (uint64_t)y);
    else
        return x * y;
}

template <typename A> __device__ __forceinline__ racc<A> r_combine(int op, racc<A> x, racc<A> y) {
    switch (op) {
    case TIDE_OP_SUM:
    case TIDE_OP_MEAN:
        x.v = r_add(x.v, y.v);
        return x;
    case TIDE_OP_PROD:
        x.v = r_mul(x.v, y.v);
        return x;
    case TIDE_OP_MAX:
    case TIDE_OP_ARGMAX:
        return r_pick(x, y, true);
    default: /* MIN, ARGMIN */
        return r_pick(x, y, false);
    }
}

template <typename A>
__device__ __forceinline__ void r_store_value(void *out, int64_t off, int dt, A v) {
    if constexpr (std::is_same<A, int64_t>::value)
        tide_store_dyn_int(out, off, dt, v);
    else
        tide_store_dyn(out, off, dt, (double)v);
}

/* writes one finished output: value (MEAN divides by R) and index when asked */
template <typename A>
__device__ __forceinline__ void r_write(int op, racc<A> r, int64_t R, void *out, int64_t out_off,
                                        int odt, int64_t *idx, int64_t idx_off) {
    if (out) {
        if (op == TIDE_OP_MEAN)
            tide_store_dyn(out, out_off, odt, (double)r.v / (double)R);
        else
            r_store_value(out, out_off, odt, r.v);
    }
    if (idx)
        idx[idx_off] = r.i < 0 ? 0 : r.i;
}

struct rparams {
    tide_iter<3> it; /* over the outputs: operand 0 out, 1 indices, 2 a */
    int          op;
    int64_t      R, rstride;
    void        *out;
    int          odt;
    int64_t     *idx;
};

// ---- kernels --------------------------------------------------------------------------------

/* block (o, s) reduces elements [s*chunk, (s+1)*chunk) of output o; with one split it writes
 * the result, else a partial for k_reduce_final */
template <int DT>
__global__ void k_reduce_block(rparams p, const typename tide_dt<DT>::T *a, int64_t chunk,
                               racc<typename acc_type<DT>::A> *partial) {
    typedef typename acc_type<DT>::A A;
    __shared__ racc<A> sh[TIDE_CUDA_THREADS];
    uint32_t           o = blockIdx.x;
    int64_t            off[3];
    tide_iter_offsets<3, uint32_t>(p.it, o, off);
    int64_t lo = (int64_t)blockIdx.y * chunk, hi = lo + chunk < p.R ? lo + chunk : p.R;
    racc<A> acc = r_identity<A>(p.op);
    for (int64_t r = lo + threadIdx.x; r < hi; r += blockDim.x) {
        racc<A> x = {(A)tide_load<DT>(a[off[2] + r * p.rstride]), r};
        acc = r_combine(p.op, acc, x);
    }
    sh[threadIdx.x] = acc;
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w /= 2) {
        if ((int)threadIdx.x < w)
            sh[threadIdx.x] = r_combine(p.op, sh[threadIdx.x], sh[threadIdx.x + w]);
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        if (partial)
            partial[(int64_t)o * gridDim.y + blockIdx.y] = sh[0];
        else
            r_write(p.op, sh[0], p.R, p.out, off[0], p.odt, p.idx, off[1]);
    }
}

/* one thread per output combines its S partials in order */
template <typename A>
__global__ void k_reduce_final(rparams p, uint32_t O, const racc<A> *partial, int64_t S) {
    for (uint32_t o = (uint32_t)TIDE_GTID; o < O; o += (uint32_t)TIDE_GSTRIDE) {
        int64_t off[3];
        tide_iter_offsets<3, uint32_t>(p.it, o, off);
        racc<A> acc = r_identity<A>(p.op);
        for (int64_t s = 0; s < S; s++)
            acc = r_combine(p.op, acc, partial[(int64_t)o * S + s]);
        r_write(p.op, acc, p.R, p.out, off[0], p.odt, p.idx, off[1]);
    }
}

template <int DT>
__global__ void k_reduce_thread(rparams p, uint32_t O, const typename tide_dt<DT>::T *a) {
    typedef typename acc_type<DT>::A A;
    for (uint32_t o = (uint32_t)TIDE_GTID; o < O; o += (uint32_t)TIDE_GSTRIDE) {
        int64_t off[3];
        tide_iter_offsets<3, uint32_t>(p.it, o, off);
        racc<A> acc = r_identity<A>(p.op);
        for (int64_t r = 0; r < p.R; r++) {
            racc<A> x = {(A)tide_load<DT>(a[off[2] + r * p.rstride]), r};
            acc = r_combine(p.op, acc, x);
        }
        r_write(p.op, acc, p.R, p.out, off[0], p.odt, p.idx, off[1]);
    }
}

// ---- launcher -------------------------------------------------------------------------------

struct run_reduce {
    template <int DT>
    static tide_status run(tide_device *dev, cudaStream_t stream, rparams p, int64_t O,
                           const void *a) {
        typedef typename tide_dt<DT>::T  T;
        typedef typename acc_type<DT>::A A;
        const T                         *pa = (const T *)a;
        if ((p.rstride != 1 || p.R <= 64) && O >= 2048 && p.R <= 65536) {
            TIDE_LAUNCH(k_reduce_thread<DT>, tide_map_grid(O), TIDE_CUDA_THREADS, 0, stream, p,
                        (uint32_t)O, pa);
            TIDE_CUDA_LAUNCHED(k_reduce_thread);
            return TIDE_OK;
        }
        /* split a long dim until the GPU has a few blocks per multiprocessor */
        int64_t want = 4 * (int64_t)tide_cuda_sm_count(dev);
        int64_t S = (want + O - 1) / O;
        int64_t max_s = (p.R + 4095) / 4096;
        if (S > max_s)
            S = max_s;
        if (S > 65535)
            S = 65535;
        if (S < 1)
            S = 1;
        int64_t chunk = (p.R + S - 1) / S;
        S = chunk > 0 ? (p.R + chunk - 1) / chunk : 1;
        if (S < 1)
            S = 1;
        dim3     grid((unsigned)O, (unsigned)S);
        racc<A> *partial = NULL;
        if (S > 1) {
            void *mem = NULL;
            TIDE_TRY(tide_cuda_alloc(dev, (size_t)(O * S) * sizeof(racc<A>), &mem));
            partial = (racc<A> *)mem;
        }
        TIDE_LAUNCH(k_reduce_block<DT>, grid, TIDE_CUDA_THREADS, 0, stream, p, pa, chunk, partial);
        cudaError_t e = cudaGetLastError();
        if (e == cudaSuccess && partial) {
            TIDE_LAUNCH(k_reduce_final<A>, tide_map_grid(O), TIDE_CUDA_THREADS, 0, stream, p,
                        (uint32_t)O, partial, S);
            e = cudaGetLastError();
        }
        /* freed at once: the next user of the block is ordered after these kernels */
        if (partial)
            tide_cuda_free(dev, partial, (size_t)(O * S) * sizeof(racc<A>));
        if (e != cudaSuccess)
            return tide_cuda_fail(e, "k_reduce_block<<<>>>", __FILE__, __LINE__);
        return TIDE_OK;
    }
};

extern "C" tide_status tide_cuda_reduce(tide_device *dev, tide_op op, const tide_kview *out,
                                        const tide_kview *indices, const tide_kview *a, int dim) {
    if (op < TIDE_OP_SUM || op > TIDE_OP_PROD)
        return tide_cuda_seterr(TIDE_EINVAL, "reduce: op %d is not a reduction", (int)op);
    if (dim < 0 || dim >= a->ndim)
        return tide_cuda_seterr(TIDE_EINVAL, "%s: dim %d out of range for %d dims",
                                tide_cuda_op_name(op), dim, a->ndim);
    cudaStream_t stream = NULL;
    TIDE_TRY(tide_cuda_enter(dev, &stream));
    /* the outputs' iteration: a's shape with size 1 at dim, over out, indices and a */
    tide_kview a1 = *a;
    a1.shape[dim] = 1;
    tide_kview o1 = out ? *out : a1, i1 = indices ? *indices : a1;
    o1.ndim = i1.ndim = a1.ndim;
    for (int d = 0; d < a1.ndim; d++)
        o1.shape[d] = i1.shape[d] = a1.shape[d];
    const tide_kview *views[3] = {&o1, &i1, &a1};
    int64_t           O = tide_cuda_numel(&a1);
    if (O == 0)
        return TIDE_OK;
    if (O > INT32_MAX)
        return tide_cuda_seterr(TIDE_ENOTSUP, "%s: more than 2^31 outputs on cuda",
                                tide_cuda_op_name(op));
    rparams p;
    p.it = tide_iter_make<3>(views);
    p.op = (int)op;
    p.R = a->shape[dim];
    p.rstride = a->strides[dim];
    p.out = out ? out->data : NULL;
    p.odt = out ? (int)out->dtype : 0;
    p.idx = indices ? (int64_t *)indices->data : NULL;
    TIDE_CUDA_DISPATCH_ALL(a->dtype, run_reduce, dev, stream, p, O, a->data);
    return tide_cuda_notsup(tide_cuda_op_name(op), a->dtype);
}
