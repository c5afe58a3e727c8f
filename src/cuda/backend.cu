/*
 * backend.cu — the CUDA backend's entry point (tide_cuda_backend_open, the only exported
 * symbol, with tide_cuda_backend_abi), its vtable, per-device state (stream, cuBLAS handle), copies
 * and pinned memory.
 */
#include "common.cuh"

#include <dlfcn.h>
#include <mutex>
#include <string.h>

tide_seterr_fn tide_cuda_seterr;

// ---- errors ---------------------------------------------------------------------------------

/* the call's name: the text of the expression up to its '(' */
static int call_name_len(const char *expr) {
    const char *p = strchr(expr, '(');
    return p ? (int)(p - expr) : (int)strlen(expr);
}

/* errors after which the CUDA context is unusable: every later call fails the same way */
static bool is_sticky(cudaError_t e) {
    switch (e) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorAssert:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorLaunchTimeout:
        return true;
    default:
        return false;
    }
}

tide_status tide_cuda_fail(cudaError_t e, const char *expr, const char *file, int line) {
    return tide_cuda_seterr(TIDE_EBACKEND, "%.*s: %s (%s:%d)%s", call_name_len(expr), expr,
                            cudaGetErrorString(e), file, line,
                            is_sticky(e) ? "; the CUDA context is unusable from now on: restart "
                                           "the process (this is a bug in a kernel: please "
                                           "report it)"
                                         : "");
}

tide_status tide_cublas_fail(cublasStatus_t s, const char *expr, const char *file, int line) {
    return tide_cuda_seterr(TIDE_EBACKEND, "%.*s: %s (%s:%d)", call_name_len(expr), expr,
                            tide_cublas.status_string ? tide_cublas.status_string(s) : "?", file,
                            line);
}

tide_status tide_cuda_notsup(const char *op, tide_dtype dt) {
    return tide_cuda_seterr(TIDE_ENOTSUP,
                            "%s: not implemented for %s on cuda; convert with :float() first", op,
                            tide_cuda_dtype_name(dt));
}

// ---- kview helpers --------------------------------------------------------------------------

int64_t tide_cuda_numel(const tide_kview *v) {
    int64_t n = 1;
    for (int d = 0; d < v->ndim; d++)
        n *= v->shape[d];
    return n;
}

bool tide_cuda_contiguous(const tide_kview *v) {
    int64_t expect = 1;
    for (int d = v->ndim - 1; d >= 0; d--) {
        if (v->shape[d] != 1 && v->strides[d] != expect)
            return false;
        expect *= v->shape[d];
    }
    return true;
}

const char *tide_cuda_dtype_name(tide_dtype dt) {
    switch (dt) {
#define X(e, ctype, name)                                                                          \
    case TIDE_DTYPE_##e:                                                                           \
        return name;
        TIDE_DTYPES(X)
#undef X
    default:
        return "?";
    }
}

const char *tide_cuda_op_name(tide_op op) {
    switch (op) {
#define X(e, family, name, ...)                                                                    \
    case TIDE_OP_##e:                                                                              \
        return name;
#include "tide_ops.def"
#undef X
    default:
        return "?";
    }
}

tide_op_family tide_op_family_of_cuda(tide_op op) {
    switch (op) {
#define X(e, family, name, ...)                                                                    \
    case TIDE_OP_##e:                                                                              \
        return TIDE_FAMILY_##family;
#include "tide_ops.def"
#undef X
    default:
        return TIDE_FAMILY_UNARY;
    }
}

unsigned tide_cuda_op_flags(tide_op op) {
    switch (op) {
#define X(e, family, name, fn, dtypes, flags)                                                      \
    case TIDE_OP_##e:                                                                              \
        return (flags) | TIDE_OP_DTYPES_##dtypes;
#include "tide_ops.def"
#undef X
    default:
        return 0;
    }
}

size_t tide_cuda_dtype_size(tide_dtype dt) {
    switch (dt) {
#define X(e, ctype, name)                                                                          \
    case TIDE_DTYPE_##e:                                                                           \
        return sizeof(ctype);
        TIDE_DTYPES(X)
#undef X
    default:
        return 0;
    }
}

// ---- per-device state -----------------------------------------------------------------------

struct dev_state {
    std::once_flag once;
    tide_status    init_st;
    cudaStream_t   stream;
    cublasHandle_t blas;
    std::once_flag blas_once;
    cublasStatus_t blas_st;
    int            sm_count;
    volatile bool  ready;
};

static dev_state g_dev[TIDE_CUDA_MAX_DEVICES];
static int       g_count;

static tide_status dev_init(int idx) {
    dev_state &s = g_dev[idx];
    TIDE_CUDA_TRY(cudaSetDevice(idx));
    TIDE_CUDA_TRY(cudaStreamCreateWithFlags(&s.stream, cudaStreamDefault));
    TIDE_CUDA_TRY(cudaDeviceGetAttribute(&s.sm_count, cudaDevAttrMultiProcessorCount, idx));
    return TIDE_OK;
}

tide_status tide_cuda_enter(tide_device *dev, cudaStream_t *stream) {
    int idx = dev->index;
    if (idx < 0 || idx >= g_count)
        return tide_cuda_seterr(TIDE_EDEVICE, "cuda: no device cuda:%d (%d found)", idx, g_count);
    dev_state &s = g_dev[idx];
    if (!s.ready) {
        std::call_once(s.once, [&] {
            s.init_st = dev_init(idx);
            s.ready = s.init_st == TIDE_OK;
        });
        if (s.init_st != TIDE_OK)
            return tide_cuda_seterr(s.init_st, "cuda: cuda:%d could not be initialised", idx);
    }
    /* cudaGetDevice only reads thread state: cheaper than setting it on every call */
    int cur = -1;
    if (cudaGetDevice(&cur) != cudaSuccess || cur != idx)
        TIDE_CUDA_TRY(cudaSetDevice(idx));
    *stream = s.stream;
    return TIDE_OK;
}

tide_status tide_cuda_blas(tide_device *dev, cublasHandle_t *handle) {
    cudaStream_t stream = NULL;
    TIDE_TRY(tide_cuda_enter(dev, &stream));
    TIDE_TRY(tide_cuda_load_cublas());
    dev_state &s = g_dev[dev->index];
    std::call_once(s.blas_once, [&] {
        s.blas_st = tide_cublas.create(&s.blas);
        if (s.blas_st == CUBLAS_STATUS_SUCCESS)
            s.blas_st = tide_cublas.set_stream(s.blas, s.stream);
    });
    TIDE_CUBLAS_TRY(s.blas_st);
    *handle = s.blas;
    return TIDE_OK;
}

int tide_cuda_sm_count(tide_device *dev) {
    return g_dev[dev->index].sm_count > 0 ? g_dev[dev->index].sm_count : 1;
}

// ---- copies ---------------------------------------------------------------------------------

/* host memory the CUDA runtime knows as page-locked */
static bool is_pinned(const void *p) {
    cudaPointerAttributes attr;
    if (cudaPointerGetAttributes(&attr, p) != cudaSuccess) {
        cudaGetLastError();
        return false;
    }
    return attr.type == cudaMemoryTypeHost;
}

static tide_status copy_to_host(tide_device *dev, void *dst, const void *src, size_t bytes,
                                int non_blocking) {
    cudaStream_t stream = NULL;
    TIDE_TRY(tide_cuda_enter(dev, &stream));
    if (bytes == 0)
        return TIDE_OK;
    TIDE_CUDA_TRY(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream));
    /* into pinned memory the copy may stay in flight: the core synchronizes before the host
     * reads it. Into pageable memory cudaMemcpyAsync has finished anyway. */
    if (!(non_blocking && is_pinned(dst)))
        TIDE_CUDA_TRY(cudaStreamSynchronize(stream));
    return TIDE_OK;
}

static tide_status copy_from_host(tide_device *dev, void *dst, const void *src, size_t bytes,
                                  int non_blocking) {
    cudaStream_t stream = NULL;
    TIDE_TRY(tide_cuda_enter(dev, &stream));
    if (bytes == 0)
        return TIDE_OK;
    TIDE_CUDA_TRY(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream));
    /* only a pinned source may be left in flight: pageable memory can be freed or reused by the
     * caller as soon as we return */
    if (!(non_blocking && is_pinned(src)))
        TIDE_CUDA_TRY(cudaStreamSynchronize(stream));
    return TIDE_OK;
}

/* Device to device. The source's producers run on its stream, so that stream is drained first;
 * the copy itself is synchronous, so the source block can be reused as soon as we return. */
static tide_status copy_peer(tide_device *dst_dev, void *dst, tide_device *src_dev, const void *src,
                             size_t bytes) {
    cudaStream_t src_stream = NULL, dst_stream = NULL;
    TIDE_TRY(tide_cuda_enter(src_dev, &src_stream));
    if (bytes == 0)
        return TIDE_OK;
    if (dst_dev == src_dev) {
        TIDE_CUDA_TRY(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, src_stream));
        return TIDE_OK;
    }
    TIDE_CUDA_TRY(cudaStreamSynchronize(src_stream));
    TIDE_TRY(tide_cuda_enter(dst_dev, &dst_stream));
    /* cudaMemcpyPeerAsync goes over NVLink/PCIe directly when peer access is enabled and is
     * staged by the driver otherwise, so failing to enable it (already enabled, unsupported
     * topology) is not an error */
    int can = 0;
    if (cudaDeviceCanAccessPeer(&can, dst_dev->index, src_dev->index) == cudaSuccess && can)
        cudaDeviceEnablePeerAccess(src_dev->index, 0);
    cudaGetLastError();
    TIDE_CUDA_TRY(cudaMemcpyPeerAsync(dst, dst_dev->index, src, src_dev->index, bytes, dst_stream));
    TIDE_CUDA_TRY(cudaStreamSynchronize(dst_stream));
    return TIDE_OK;
}

static tide_status synchronize(tide_device *dev) {
    cudaStream_t stream = NULL;
    TIDE_TRY(tide_cuda_enter(dev, &stream));
    TIDE_CUDA_TRY(cudaStreamSynchronize(stream));
    return TIDE_OK;
}

static tide_status stream_of(tide_device *dev, void **out) {
    cudaStream_t stream = NULL;
    TIDE_TRY(tide_cuda_enter(dev, &stream));
    *out = (void *)stream;
    return TIDE_OK;
}

// ---- pinned host memory ---------------------------------------------------------------------

static tide_status alloc_pinned(size_t bytes, void **ptr) {
    *ptr = NULL;
    /* portable: usable with every device, whichever is current */
    cudaError_t e = cudaHostAlloc(ptr, bytes ? bytes : 1, cudaHostAllocPortable);
    if (e == cudaErrorMemoryAllocation) {
        cudaGetLastError();
        return tide_cuda_seterr(TIDE_ENOMEM,
                                "pin_memory: could not page-lock %zu bytes of host memory; free "
                                "pinned tensors or use pageable memory",
                                bytes);
    }
    TIDE_CUDA_TRY(e);
    return TIDE_OK;
}

static void free_pinned(void *ptr) {
    if (ptr && cudaFreeHost(ptr) != cudaSuccess)
        cudaGetLastError();
}

// ---- the vtable -----------------------------------------------------------------------------

/* the kernels of include/tide_kernels.def whose CUDA column is Y, in row order (kernel id) */
static const tide_kernel_fn cuda_kernels[TIDE_KERNEL_COUNT] = {
#define K(NAME, name, kind, dtypes, cpu, cuda, ...) TIDE_ENTRY_IF(cuda, tide_cuda_##name),
#include "tide_kernels.def"
#undef K
};

static const tide_backend cuda_backend = {
    /* .name = */ "cuda",
    /* .alloc = */ tide_cuda_alloc,
    /* .free = */ tide_cuda_free,
    /* .copy_to_host = */ copy_to_host,
    /* .copy_from_host = */ copy_from_host,
    /* .copy_peer = */ copy_peer,
    /* .synchronize = */ synchronize,
    /* .memory_stats = */ tide_cuda_memory_stats,
    /* .empty_cache = */ tide_cuda_empty_cache,
    /* .alloc_pinned = */ alloc_pinned,
    /* .free_pinned = */ free_pinned,
    /* .stream = */ stream_of,
    /* .device_info = */ NULL,
/* the compute entries of src/backend_entries.def, in row order: tide_cuda_<name> where the CUDA
 * column says Y (conv2d runs as im2col + cuBLAS, tide.nn._fused) */
#define E(name, cpu, cuda, params) /* .name = */ TIDE_ENTRY_IF(cuda, tide_cuda_##name),
#include "backend_entries.def"
#undef E
    /* .kernels = */ cuda_kernels,
    /* .nkernels = */ TIDE_KERNEL_COUNT,
};

/* The backend interface version this plug-in was built with: the core checks it first. */
extern "C" __attribute__((visibility("default"))) int tide_cuda_backend_abi(void) {
    return TIDE_BACKEND_ABI;
}

/* The entry point. Safe to call more than once; never crashes where CUDA is absent:
 * the runtime is linked statically and loads libcuda.so.1 itself, so a missing driver comes
 * back as an error code. */
extern "C" __attribute__((visibility("default"))) tide_status
tide_cuda_backend_open(tide_seterr_fn seterr, const tide_backend **backend, int *count) {
    tide_cuda_seterr = seterr;
    *backend = NULL;
    *count = 0;
    int         n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        cudaGetLastError();
        /* one cause, stated once: without a driver the runtime's own message ("driver version
         * is insufficient", "no CUDA-capable device") describes the same absence misleadingly */
        void *drv = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
        if (!drv)
            return seterr(TIDE_EDEVICE, "no CUDA driver found (libcuda.so.1 could not be loaded)");
        dlclose(drv);
        if (e == cudaErrorNoDevice)
            return seterr(TIDE_EDEVICE, "no CUDA device found");
        return seterr(TIDE_EDEVICE, "CUDA could not be initialised: %s (%s)", cudaGetErrorString(e),
                      cudaGetErrorName(e));
    }
    if (n <= 0)
        return seterr(TIDE_EDEVICE, "no CUDA device found");
    if (n > TIDE_CUDA_MAX_DEVICES)
        n = TIDE_CUDA_MAX_DEVICES;
    g_count = n;
    *backend = &cuda_backend;
    *count = n;
    return TIDE_OK;
}
