/*
 * common.cuh — what every CUDA kernel file of tide shares: error checking, per-device state,
 * dtype traits and the strided index helpers.
 *
 * This object cannot call the core (it is dlopened and may not see the core's symbols), so the
 * kview helpers here are its own copies, and errors go through the seterr pointer handed over by
 * tide_cuda_backend_open.
 */
#ifndef TIDE_CUDA_COMMON_CUH
#define TIDE_CUDA_COMMON_CUH

#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cublas_v2.h>
#include <stdint.h>
#include <string.h>

#include "backend.h"
#include "dtype_convert.h" /* the CPU's saturating casts: conversions agree */
#include "scalar_math.h"

#define TIDE_CUDA_MAX_DEVICES 64
#define TIDE_CUDA_THREADS     256

/* ---- errors ------------------------------------------------------------------------------- */

extern tide_seterr_fn tide_cuda_seterr;

/* "cudaMalloc: out of memory (src/cuda/alloc.cu:88)" and TIDE_EBACKEND */
tide_status tide_cuda_fail(cudaError_t e, const char *expr, const char *file, int line);
tide_status tide_cublas_fail(cublasStatus_t s, const char *expr, const char *file, int line);

/* returns fail(code, what, file, line) when expr's code is not ok (the three macros below) */
#define TIDE_CUDA_CHECK(T, ok, fail, expr, what)                                                   \
    do {                                                                                           \
        T code_ = (expr);                                                                          \
        if (code_ != (ok))                                                                         \
            return fail(code_, what, __FILE__, __LINE__);                                          \
    } while (0)

#define TIDE_CUDA_TRY(expr) TIDE_CUDA_CHECK(cudaError_t, cudaSuccess, tide_cuda_fail, expr, #expr)

/* Every kernel launch is written TIDE_LAUNCH(kernel, grid, block, shared bytes, stream, args...):
 * the host emulation of the CUDA runtime that runs this backend in the CPU tests
 * (spec/cuda_emu/) defines it first, to run the grid on the CPU. */
#ifndef TIDE_LAUNCH
#define TIDE_LAUNCH(kernel, grid, block, smem, stream, ...)                                        \
    kernel<<<grid, block, smem, stream>>>(__VA_ARGS__)
#endif

/* after every kernel launch: launch errors (bad configuration, no kernel image) surface here */
#define TIDE_CUDA_LAUNCHED(kernel)                                                                 \
    TIDE_CUDA_CHECK(cudaError_t, cudaSuccess, tide_cuda_fail, cudaGetLastError(), #kernel "<<<>>>")

#define TIDE_CUBLAS_TRY(expr)                                                                      \
    TIDE_CUDA_CHECK(cublasStatus_t, CUBLAS_STATUS_SUCCESS, tide_cublas_fail, expr, #expr)

/* ---- devices ------------------------------------------------------------------------------ */

/* Makes dev current on this thread and returns its stream (created on first use). Every entry
 * point calls it first. */
tide_status tide_cuda_enter(tide_device *dev, cudaStream_t *stream);
/* the device's cuBLAS handle, bound to its stream (created on first use, cuBLAS loaded then) */
tide_status tide_cuda_blas(tide_device *dev, cublasHandle_t *handle);

/* cuBLAS is loaded with dlopen on the first gemm (blas_loader.cu), not with the backend: a
 * process that only asks whether a GPU exists never maps it (~150 MB, a quarter second). Its
 * functions are called through this table once tide_cuda_blas has succeeded. */
struct tide_cublas_api {
    decltype(&cublasCreate)              create;
    decltype(&cublasSetStream)           set_stream;
    decltype(&cublasGetStatusString)     status_string;
    decltype(&cublasSgemm)               sgemm;
    decltype(&cublasDgemm)               dgemm;
    decltype(&cublasSgemmStridedBatched) sgemm_batched;
    decltype(&cublasDgemmStridedBatched) dgemm_batched;
    /* spelled out: C++ sees these two overloaded (cudaDataType compute types); the library's
     * symbols are the cublasComputeType_t ones */
    cublasStatus_t (*gemm_ex)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                              const void *, const void *, cudaDataType, int, const void *,
                              cudaDataType, int, const void *, void *, cudaDataType, int,
                              cublasComputeType_t, cublasGemmAlgo_t);
    cublasStatus_t (*gemm_batched_ex)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int,
                                      int, int, const void *, const void *, cudaDataType, int,
                                      long long, const void *, cudaDataType, int, long long,
                                      const void *, void *, cudaDataType, int, long long, int,
                                      cublasComputeType_t, cublasGemmAlgo_t);
};
extern tide_cublas_api tide_cublas;
/* loads cuBLAS once: TIDE_OK, or TIDE_EBACKEND with the reason (every later call too) */
tide_status tide_cuda_load_cublas(void);
int         tide_cuda_sm_count(tide_device *dev);

/* the caching allocator (alloc.cu); temporaries of kernels go through it too: reuse is safe
 * because every use of a block is ordered on the device's one stream */
tide_status tide_cuda_alloc(tide_device *dev, size_t bytes, void **ptr);
void        tide_cuda_free(tide_device *dev, void *ptr, size_t bytes);
tide_status tide_cuda_memory_stats(tide_device *dev, tide_memory_stats *out);
tide_status tide_cuda_empty_cache(tide_device *dev);

/* ---- kview helpers (own copies of the core's) --------------------------------------------- */

int64_t        tide_cuda_numel(const tide_kview *v);
bool           tide_cuda_contiguous(const tide_kview *v);
const char    *tide_cuda_dtype_name(tide_dtype dt);
const char    *tide_cuda_op_name(tide_op op);
tide_op_family tide_op_family_of_cuda(tide_op op);
unsigned       tide_cuda_op_flags(tide_op op); /* TIDE_OPF_* of its tide_ops.def row */
size_t         tide_cuda_dtype_size(tide_dtype dt);

static inline unsigned tide_cuda_blocks(int64_t n, int per_thread = 1) {
    int64_t b = (n + (int64_t)TIDE_CUDA_THREADS * per_thread - 1) /
                ((int64_t)TIDE_CUDA_THREADS * per_thread);
    if (b < 1)
        b = 1;
    return (unsigned)(b > 0x7fffffff ? 0x7fffffff : b);
}

/* ---- strided iteration -------------------------------------------------------------------- */

/* N operands over one shape; coalesced on the host so kernels walk as few dims as possible.
 * Element i in row-major order of shape sits at sum(coord[d] * stride[k][d]) in operand k. */
template <int N> struct tide_iter {
    int     ndim;
    int64_t shape[TIDE_MAX_DIMS];
    int64_t stride[N][TIDE_MAX_DIMS];
};

/* Builds an iterator over views[0]'s shape: drops size-1 dims and merges dims that are
 * contiguous with each other in every operand. */
template <int N> static inline tide_iter<N> tide_iter_make(const tide_kview *const *views) {
    tide_iter<N> it;
    int          nd = 0;
    const int    src_nd = views[0]->ndim;
    for (int d = 0; d < src_nd; d++) {
        int64_t size = views[0]->shape[d];
        if (size == 1)
            continue;
        bool merge = nd > 0;
        for (int k = 0; k < N && merge; k++)
            merge = it.stride[k][nd - 1] == views[k]->strides[d] * size;
        if (merge) {
            it.shape[nd - 1] *= size;
            for (int k = 0; k < N; k++)
                it.stride[k][nd - 1] = views[k]->strides[d];
        } else {
            it.shape[nd] = size;
            for (int k = 0; k < N; k++)
                it.stride[k][nd] = views[k]->strides[d];
            nd++;
        }
    }
    if (nd == 0) { /* a scalar: one element */
        it.shape[0] = 1;
        for (int k = 0; k < N; k++)
            it.stride[k][0] = 0;
        nd = 1;
    }
    it.ndim = nd;
    return it;
}

/* true when every operand walks memory with unit stride in row-major order */
template <int N> static inline bool tide_iter_contiguous(const tide_iter<N> &it) {
    if (it.ndim != 1)
        return false;
    for (int k = 0; k < N; k++)
        if (it.stride[k][0] != 1 && it.shape[0] != 1)
            return false;
    return true;
}

/* offsets of element i in each operand; I is uint32_t when the element count allows it (64-bit
 * division is several times slower on the GPU) */
template <int N, typename I>
__device__ __forceinline__ void tide_iter_offsets(const tide_iter<N> &it, I i, int64_t *off) {
    for (int k = 0; k < N; k++)
        off[k] = 0;
    for (int d = it.ndim - 1; d >= 0; d--) {
        I size = (I)it.shape[d];
        I c = i % size;
        i /= size;
        for (int k = 0; k < N; k++)
            off[k] += (int64_t)c * it.stride[k][d];
    }
}

/* ---- dtypes ------------------------------------------------------------------------------- */

/* X(ENUM, storage type T, compute type C) for each dtype: floats compute in float (half types
 * included) or double; integers compute exactly in int64 */
#define TIDE_CUDA_DTYPES(X)                                                                        \
    X(F32, float, float)                                                                           \
    X(F64, double, double)                                                                         \
    X(F16, __half, float)                                                                          \
    X(BF16, __nv_bfloat16, float)                                                                  \
    X(I32, int32_t, int64_t)                                                                       \
    X(I64, int64_t, int64_t)                                                                       \
    X(U8, uint8_t, int64_t)                                                                        \
    X(BOOL, uint8_t, int64_t)

template <int DT> struct tide_dt;
#define X(E, TS, TC)                                                                               \
    template <> struct tide_dt<TIDE_DTYPE_##E> {                                                   \
        typedef TS T;                                                                              \
        typedef TC C;                                                                              \
    };
TIDE_CUDA_DTYPES(X)
#undef X

/* the four float dtypes; every other is an integer */
__host__ __device__ constexpr bool tide_dt_is_float_rt(int dt) {
    return dt == TIDE_DTYPE_F32 || dt == TIDE_DTYPE_F64 || dt == TIDE_DTYPE_F16 ||
           dt == TIDE_DTYPE_BF16;
}

template <int DT> __host__ __device__ constexpr bool tide_dt_is_float() {
    return tide_dt_is_float_rt(DT);
}

/* name(float) and name(double): scalar_math.h's tide_<fn>_f and tide_<fn>_d as one overload set,
 * for code templated on the compute type */
#define TIDE_CUDA_FLOAT_OVERLOADS(name, fn)                                                        \
    __device__ __forceinline__ float name(float a) {                                               \
        return tide_##fn##_f(a);                                                                   \
    }                                                                                              \
    __device__ __forceinline__ double name(double a) {                                             \
        return tide_##fn##_d(a);                                                                   \
    }

/* storage -> compute type */
template <int DT>
__device__ __forceinline__ typename tide_dt<DT>::C tide_load(typename tide_dt<DT>::T v) {
    if constexpr (DT == TIDE_DTYPE_F16)
        return __half2float(v);
    else if constexpr (DT == TIDE_DTYPE_BF16)
        return __bfloat162float(v);
    else
        return (typename tide_dt<DT>::C)v;
}

/* compute type -> storage (bool: nonzero is true) */
template <int DT, typename C> __device__ __forceinline__ typename tide_dt<DT>::T tide_store(C v) {
    if constexpr (DT == TIDE_DTYPE_F16)
        return __float2half((float)v);
    else if constexpr (DT == TIDE_DTYPE_BF16)
        return __float2bfloat16((float)v);
    else if constexpr (DT == TIDE_DTYPE_BOOL)
        return (uint8_t)(v != 0);
    else
        return (typename tide_dt<DT>::T)v;
}

/* any dtype as double (exact for every dtype but int64 beyond 2^53) */
template <int DT> __device__ __forceinline__ double tide_to_double(typename tide_dt<DT>::T v) {
    return (double)tide_load<DT>(v);
}

/* double -> storage, rounding once (half types convert from double directly); integers
 * saturate (NaN -> 0) as on the CPU (dtype_convert.h) */
template <int DT> __device__ __forceinline__ typename tide_dt<DT>::T tide_from_double(double v) {
    if constexpr (DT == TIDE_DTYPE_F16)
        return __double2half(v);
    else if constexpr (DT == TIDE_DTYPE_BF16)
        return __double2bfloat16(v);
    else if constexpr (DT == TIDE_DTYPE_BOOL)
        return (uint8_t)(v != 0);
    else if constexpr (DT == TIDE_DTYPE_I32)
        return tide_sat_i32(v);
    else if constexpr (DT == TIDE_DTYPE_I64)
        return tide_sat_i64(v);
    else if constexpr (DT == TIDE_DTYPE_U8)
        return tide_sat_u8(v);
    else
        return (typename tide_dt<DT>::T)v;
}

/* element off of a tensor of run-time dtype dt, as double / int64 (ints exactly) */
__device__ __forceinline__ double tide_load_dyn(const void *p, int64_t off, int dt) {
    switch (dt) {
#define X(E, TS, TC)                                                                               \
    case TIDE_DTYPE_##E:                                                                           \
        return tide_to_double<TIDE_DTYPE_##E>(((const TS *)p)[off]);
        TIDE_CUDA_DTYPES(X)
#undef X
    default:
        return 0;
    }
}

__device__ __forceinline__ int64_t tide_load_dyn_int(const void *p, int64_t off, int dt) {
    switch (dt) {
    case TIDE_DTYPE_I32:
        return ((const int32_t *)p)[off];
    case TIDE_DTYPE_I64:
        return ((const int64_t *)p)[off];
    case TIDE_DTYPE_U8:
    case TIDE_DTYPE_BOOL:
        return ((const uint8_t *)p)[off];
    default:
        return tide_sat_i64(tide_load_dyn(p, off, dt));
    }
}

/* double -> element of run-time dtype dt: integers saturate and NaN gives 0, as on the CPU
 * (tide_store_d) */
__device__ __forceinline__ void tide_store_dyn(void *p, int64_t off, int dt, double v) {
    switch (dt) {
#define X(E, TS, TC)                                                                               \
    case TIDE_DTYPE_##E:                                                                           \
        ((TS *)p)[off] = tide_from_double<TIDE_DTYPE_##E>(v);                                      \
        break;
        TIDE_CUDA_DTYPES(X)
#undef X
    default:
        break;
    }
}

__device__ __forceinline__ void tide_store_dyn_int(void *p, int64_t off, int dt, int64_t v) {
    switch (dt) {
    case TIDE_DTYPE_I32:
        ((int32_t *)p)[off] = (int32_t)v;
        break;
    case TIDE_DTYPE_I64:
        ((int64_t *)p)[off] = v;
        break;
    case TIDE_DTYPE_U8:
        ((uint8_t *)p)[off] = (uint8_t)v;
        break;
    case TIDE_DTYPE_BOOL:
        ((uint8_t *)p)[off] = v != 0;
        break;
    default:
        tide_store_dyn(p, off, dt, (double)v);
        break;
    }
}

/* a host scalar as an integer dtype holds it, as the CPU stores a scalar operand (tide_store_d):
 * saturated to the dtype's range, NaN 0, bool 0 or 1 */
static inline int64_t tide_cuda_scalar_int(tide_dtype dt, double s) {
    switch (dt) {
    case TIDE_DTYPE_I32:
        return tide_sat_i32(s);
    case TIDE_DTYPE_U8:
        return tide_sat_u8(s);
    case TIDE_DTYPE_BOOL:
        return s != 0;
    default:
        return tide_sat_i64(s);
    }
}

static inline bool tide_dtype_is_int(tide_dtype dt) {
    return !tide_dt_is_float_rt(dt);
}

/* Runs F::template run<DT>(args...) for the dtype dt; other dtypes get TIDE_ENOTSUP. */
#define TIDE_CUDA_DISPATCH_CASE(DT, F, ...)                                                        \
    case DT:                                                                                       \
        return F::template run<DT>(__VA_ARGS__);

#define TIDE_CUDA_FLOAT_CASES(F, ...)                                                              \
    TIDE_CUDA_DISPATCH_CASE(TIDE_DTYPE_F32, F, __VA_ARGS__)                                        \
    TIDE_CUDA_DISPATCH_CASE(TIDE_DTYPE_F64, F, __VA_ARGS__)                                        \
    TIDE_CUDA_DISPATCH_CASE(TIDE_DTYPE_F16, F, __VA_ARGS__)                                        \
    TIDE_CUDA_DISPATCH_CASE(TIDE_DTYPE_BF16, F, __VA_ARGS__)

#define TIDE_CUDA_DISPATCH_FLOAT(dt, F, ...)                                                       \
    switch (dt) {                                                                                  \
        TIDE_CUDA_FLOAT_CASES(F, __VA_ARGS__)                                                      \
    default:                                                                                       \
        break;                                                                                     \
    }

#define TIDE_CUDA_DISPATCH_ALL(dt, F, ...)                                                         \
    switch (dt) {                                                                                  \
        TIDE_CUDA_FLOAT_CASES(F, __VA_ARGS__)                                                      \
        TIDE_CUDA_DISPATCH_CASE(TIDE_DTYPE_I32, F, __VA_ARGS__)                                    \
        TIDE_CUDA_DISPATCH_CASE(TIDE_DTYPE_I64, F, __VA_ARGS__)                                    \
        TIDE_CUDA_DISPATCH_CASE(TIDE_DTYPE_U8, F, __VA_ARGS__)                                     \
        TIDE_CUDA_DISPATCH_CASE(TIDE_DTYPE_BOOL, F, __VA_ARGS__)                                   \
    default:                                                                                       \
        break;                                                                                     \
    }

/* "add: not implemented for bool on cuda; convert with :float() first" */
tide_status tide_cuda_notsup(const char *op, tide_dtype dt);

/* f(T()) with T the unsigned integer of dt's size, for kernels that only move elements; ENOTSUP
 * naming op for any other size */
template <typename F>
static inline tide_status tide_cuda_by_size(tide_dtype dt, const char *op, F f) {
    switch (tide_cuda_dtype_size(dt)) {
    case 1:
        return f(uint8_t());
    case 2:
        return f(uint16_t());
    case 4:
        return f(uint32_t());
    case 8:
        return f(uint64_t());
    default:
        return tide_cuda_notsup(op, dt);
    }
}

/* ---- the vtable's kernel entries (one .cu per family) -------------------------------------- */

extern "C" {
/* The compute entries of src/backend_entries.def with a Y in the CUDA column: tide_cuda_<name>
 * (elementwise.cu: binary, binary_scalar, unary, where; copy.cu: copy, fill, arange; random.cu;
 * reduce.cu; matmul.cu; softmax.cu: softmax, softmax_backward; index.cu: index_select,
 * index_add; gather.cu: gather, scatter, and the kernel row sort; optim.cu, conv.cu, pool.cu
 * and rnn.cu: kernel rows only) */
#define E(name, cpu, cuda, params) TIDE_ENTRY_PROTO(cuda, tide_cuda_##name, params)
#include "backend_entries.def"
#undef E

/* the kernels of include/tide_kernels.def with a Y in the CUDA column: tide_cuda_<lua name>,
 * one signature (backend.h's tide_kernel_fn) */
#define K(NAME, name, kind, dtypes, cpu, cuda, ...) TIDE_KERNEL_PROTO(cuda, tide_cuda_##name)
#include "tide_kernels.def"
#undef K
}

#endif /* TIDE_CUDA_COMMON_CUH */
