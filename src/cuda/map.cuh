/*
 * map.cuh — elementwise kernels over 1 to 3 inputs: a vectorized path for contiguous operands
 * and a strided path (with broadcasting by stride 0) for everything else. The per-element work
 * is a functor; the launchers choose the path. Included by the .cu files of elementwise ops.
 */
#ifndef TIDE_CUDA_MAP_CUH
#define TIDE_CUDA_MAP_CUH

#include "common.cuh"

/* V elements loaded or stored as one 16-byte (or smaller) transaction */
template <typename T, int V> struct alignas(sizeof(T) * V) tide_vec { T v[V]; };

template <typename T> __host__ __device__ constexpr int tide_max_size() {
    return (int)sizeof(T);
}
template <typename T, typename U, typename... R> __host__ __device__ constexpr int tide_max_size() {
    return (int)sizeof(T) > tide_max_size<U, R...>() ? (int)sizeof(T) : tide_max_size<U, R...>();
}

static inline bool tide_aligned(const void *p, size_t a) {
    return ((uintptr_t)p % a) == 0;
}

/* global thread index and grid stride */
#define TIDE_GTID    ((int64_t)blockIdx.x * blockDim.x + threadIdx.x)
#define TIDE_GSTRIDE ((int64_t)gridDim.x * blockDim.x)

// ---- kernels --------------------------------------------------------------------------------

/* contiguous and aligned: out[i] = f(in[i]...), V elements per load/store, then the tail */
template <int V, typename F, typename TO, typename TA>
__global__ void k_map1_vec(F f, int64_t n, TO *__restrict__ out, const TA *__restrict__ a) {
    int64_t nv = n / V;
    for (int64_t i = TIDE_GTID; i < nv; i += TIDE_GSTRIDE) {
        tide_vec<TA, V> va = reinterpret_cast<const tide_vec<TA, V> *>(a)[i];
        tide_vec<TO, V> o;
#pragma unroll
        for (int j = 0; j < V; j++)
            o.v[j] = f(va.v[j]);
        reinterpret_cast<tide_vec<TO, V> *>(out)[i] = o;
    }
    for (int64_t i = nv * V + TIDE_GTID; i < n; i += TIDE_GSTRIDE)
        out[i] = f(a[i]);
}

template <int V, typename F, typename TO, typename TA, typename TB>
__global__ void k_map2_vec(F f, int64_t n, TO *__restrict__ out, const TA *__restrict__ a,
                           const TB *__restrict__ b) {
    int64_t nv = n / V;
    for (int64_t i = TIDE_GTID; i < nv; i += TIDE_GSTRIDE) {
        tide_vec<TA, V> va = reinterpret_cast<const tide_vec<TA, V> *>(a)[i];
        tide_vec<TB, V> vb = reinterpret_cast<const tide_vec<TB, V> *>(b)[i];
        tide_vec<TO, V> o;
#pragma unroll
        for (int j = 0; j < V; j++)
            o.v[j] = f(va.v[j], vb.v[j]);
        reinterpret_cast<tide_vec<TO, V> *>(out)[i] = o;
    }
    for (int64_t i = nv * V + TIDE_GTID; i < n; i += TIDE_GSTRIDE)
        out[i] = f(a[i], b[i]);
}

/* strided, operand 0 is out. 32-bit index arithmetic (64-bit division is several times slower
 * on the GPU): the launcher splits larger iterations along their outermost dim. */
template <typename F, typename TO, typename TA>
__global__ void k_map1_strided(F f, tide_iter<2> it, uint32_t n, TO *out, const TA *a) {
    for (uint32_t i = (uint32_t)TIDE_GTID; i < n; i += (uint32_t)TIDE_GSTRIDE) {
        int64_t off[2];
        tide_iter_offsets<2, uint32_t>(it, i, off);
        out[off[0]] = f(a[off[1]]);
    }
}

template <typename F, typename TO, typename TA, typename TB>
__global__ void k_map2_strided(F f, tide_iter<3> it, uint32_t n, TO *out, const TA *a,
                               const TB *b) {
    for (uint32_t i = (uint32_t)TIDE_GTID; i < n; i += (uint32_t)TIDE_GSTRIDE) {
        int64_t off[3];
        tide_iter_offsets<3, uint32_t>(it, i, off);
        out[off[0]] = f(a[off[1]], b[off[2]]);
    }
}

template <typename F, typename TO, typename TA, typename TB, typename TC>
__global__ void k_map3_strided(F f, tide_iter<4> it, uint32_t n, TO *out, const TA *a, const TB *b,
                               const TC *c) {
    for (uint32_t i = (uint32_t)TIDE_GTID; i < n; i += (uint32_t)TIDE_GSTRIDE) {
        int64_t off[4];
        tide_iter_offsets<4, uint32_t>(it, i, off);
        out[off[0]] = f(a[off[1]], b[off[2]], c[off[3]]);
    }
}

// ---- launchers ------------------------------------------------------------------------------

/* grid for a grid-stride loop: enough blocks to fill the GPU many times over, capped */
static inline unsigned tide_map_grid(int64_t work) {
    int64_t b = (work + TIDE_CUDA_THREADS - 1) / TIDE_CUDA_THREADS;
    if (b < 1)
        b = 1;
    return (unsigned)(b > 65535 * 16 ? 65535 * 16 : b);
}

/* Splits an iteration of more than 2^31 elements along its outermost dim into pieces the 32-bit
 * kernels can take; fn(piece, n, offset of the piece in each operand) launches one. */
template <int N, typename L>
tide_status tide_iter_chunks(const tide_iter<N> &it, int64_t n, L launch) {
    if (n <= INT32_MAX)
        return launch(it, (uint32_t)n, (const int64_t *)NULL);
    int64_t inner = n / it.shape[0];
    if (inner > INT32_MAX)
        return tide_cuda_seterr(TIDE_ENOTSUP,
                                "cuda: a strided operation over %lld elements is not supported; "
                                "make the tensors contiguous first",
                                (long long)n);
    int64_t      rows = INT32_MAX / inner;
    tide_iter<N> piece = it;
    for (int64_t r = 0; r < it.shape[0]; r += rows) {
        int64_t len = it.shape[0] - r < rows ? it.shape[0] - r : rows;
        int64_t off[N];
        for (int k = 0; k < N; k++)
            off[k] = r * it.stride[k][0];
        piece.shape[0] = len;
        TIDE_TRY(launch(piece, (uint32_t)(len * inner), off));
    }
    return TIDE_OK;
}

template <typename T> static inline T *tide_at(T *p, const int64_t *off, int k) {
    return off ? p + off[k] : p;
}

template <typename F, typename TO, typename TA>
tide_status tide_map1(tide_device *dev, F f, const tide_kview *out, const tide_kview *a) {
    cudaStream_t stream = NULL;
    TIDE_TRY(tide_cuda_enter(dev, &stream));
    int64_t n = tide_cuda_numel(out);
    if (n == 0)
        return TIDE_OK;
    const tide_kview *views[2] = {out, a};
    tide_iter<2>      it = tide_iter_make<2>(views);
    TO               *po = (TO *)out->data;
    const TA         *pa = (const TA *)a->data;
    constexpr int     V = 16 / tide_max_size<TO, TA>();
    if (tide_iter_contiguous(it) && tide_aligned(po, sizeof(TO) * V) &&
        tide_aligned(pa, sizeof(TA) * V)) {
        TIDE_LAUNCH(k_map1_vec<V>, tide_map_grid(n / V), TIDE_CUDA_THREADS, 0, stream, f, n, po,
                    pa);
        TIDE_CUDA_LAUNCHED(k_map1_vec);
        return TIDE_OK;
    }
    return tide_iter_chunks<2>(it, n, [&](const tide_iter<2> &p, uint32_t m, const int64_t *off) {
        TIDE_LAUNCH(k_map1_strided, tide_map_grid(m), TIDE_CUDA_THREADS, 0, stream, f, p, m,
                    tide_at(po, off, 0), tide_at(pa, off, 1));
        TIDE_CUDA_LAUNCHED(k_map1_strided);
        return TIDE_OK;
    });
}

template <typename F, typename TO, typename TA, typename TB>
tide_status tide_map2(tide_device *dev, F f, const tide_kview *out, const tide_kview *a,
                      const tide_kview *b) {
    cudaStream_t stream = NULL;
    TIDE_TRY(tide_cuda_enter(dev, &stream));
    int64_t n = tide_cuda_numel(out);
    if (n == 0)
        return TIDE_OK;
    const tide_kview *views[3] = {out, a, b};
    tide_iter<3>      it = tide_iter_make<3>(views);
    TO               *po = (TO *)out->data;
    const TA         *pa = (const TA *)a->data;
    const TB         *pb = (const TB *)b->data;
    constexpr int     V = 16 / tide_max_size<TO, TA, TB>();
    if (tide_iter_contiguous(it) && tide_aligned(po, sizeof(TO) * V) &&
        tide_aligned(pa, sizeof(TA) * V) && tide_aligned(pb, sizeof(TB) * V)) {
        TIDE_LAUNCH(k_map2_vec<V>, tide_map_grid(n / V), TIDE_CUDA_THREADS, 0, stream, f, n, po, pa,
                    pb);
        TIDE_CUDA_LAUNCHED(k_map2_vec);
        return TIDE_OK;
    }
    return tide_iter_chunks<3>(it, n, [&](const tide_iter<3> &p, uint32_t m, const int64_t *off) {
        TIDE_LAUNCH(k_map2_strided, tide_map_grid(m), TIDE_CUDA_THREADS, 0, stream, f, p, m,
                    tide_at(po, off, 0), tide_at(pa, off, 1), tide_at(pb, off, 2));
        TIDE_CUDA_LAUNCHED(k_map2_strided);
        return TIDE_OK;
    });
}

template <typename F, typename TO, typename TA, typename TB, typename TC>
tide_status tide_map3(tide_device *dev, F f, const tide_kview *out, const tide_kview *a,
                      const tide_kview *b, const tide_kview *c) {
    cudaStream_t stream = NULL;
    TIDE_TRY(tide_cuda_enter(dev, &stream));
    int64_t n = tide_cuda_numel(out);
    if (n == 0)
        return TIDE_OK;
    const tide_kview *views[4] = {out, a, b, c};
    tide_iter<4>      it = tide_iter_make<4>(views);
    TO               *po = (TO *)out->data;
    const TA         *pa = (const TA *)a->data;
    const TB         *pb = (const TB *)b->data;
    const TC         *pc = (const TC *)c->data;
    return tide_iter_chunks<4>(it, n, [&](const tide_iter<4> &p, uint32_t m, const int64_t *off) {
        TIDE_LAUNCH(k_map3_strided, tide_map_grid(m), TIDE_CUDA_THREADS, 0, stream, f, p, m,
                    tide_at(po, off, 0), tide_at(pa, off, 1), tide_at(pb, off, 2),
                    tide_at(pc, off, 3));
        TIDE_CUDA_LAUNCHED(k_map3_strided);
        return TIDE_OK;
    });
}

/* an unsigned type of the dtype's size, for kernels that only move bytes */
template <int SIZE> struct tide_bytes;
template <> struct tide_bytes<1> { typedef uint8_t T; };
template <> struct tide_bytes<2> { typedef uint16_t T; };
template <> struct tide_bytes<4> { typedef uint32_t T; };
template <> struct tide_bytes<8> { typedef uint64_t T; };

/* atomicAdd for every dtype a scatter kernel accumulates (index_add, col2im, pool backward) */
__device__ __forceinline__ void atomic_add(float *p, float v) {
    atomicAdd(p, v);
}
__device__ __forceinline__ void atomic_add(double *p, double v) {
    atomicAdd(p, v);
}
__device__ __forceinline__ void atomic_add(__half *p, __half v) {
    atomicAdd(p, v);
}
__device__ __forceinline__ void atomic_add(__nv_bfloat16 *p, __nv_bfloat16 v) {
    atomicAdd(p, v);
}
__device__ __forceinline__ void atomic_add(int32_t *p, int32_t v) {
    atomicAdd(p, v);
}
__device__ __forceinline__ void atomic_add(int64_t *p, int64_t v) {
    /* two's complement: an unsigned add is the signed add */
    atomicAdd((unsigned long long *)p, (unsigned long long)v);
}

#endif /* TIDE_CUDA_MAP_CUH */
