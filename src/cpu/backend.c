/*
 * backend.c — the CPU backend's vtable and its memory entries.
 *
 * cpu:0 and the virtual devices cpu:1..N-1 share this table and host memory: copies between
 * them are memcpy, but each keeps its own allocator counters (alloc.c).
 */
#include "cpu.h"
#include <omp.h>
#include <string.h>

/* to and from the host: both sides are host memory */
static tide_status copy_host(tide_device *dev, void *dst, const void *src, size_t bytes,
                             int non_blocking) {
    (void)dev;
    (void)non_blocking;
    if (bytes)
        memmove(dst, src, bytes);
    return TIDE_OK;
}

static tide_status copy_peer(tide_device *dst_dev, void *dst, tide_device *src_dev, const void *src,
                             size_t bytes) {
    (void)src_dev;
    return copy_host(dst_dev, dst, src, bytes, 0);
}

static tide_status synchronize(tide_device *dev) {
    (void)dev;
    return TIDE_OK; /* every CPU kernel has finished when it returns */
}

/* what runs the kernels: OpenMP's threads and OpenBLAS's kernel family */
static tide_status device_info(tide_device *dev, tide_device_info *out) {
    (void)dev;
    out->blas_core = cpu_blas_core();
    out->threads = cpu_threads();
    return TIDE_OK;
}

/* Both thread pools at once, here above the iterator and matmul.c that each own one. */
tide_status tide_cpu_set_threads(int n) {
    if (n < 1)
        return tide_seterr(TIDE_EINVAL, "set_num_threads: n must be an integer >= 1, got %d", n);
    omp_set_num_threads(n); /* the kernels' pool, and OpenBLAS's OpenMP build reads it per call */
    cpu_blas_set_threads(n);
    return TIDE_OK;
}

/* the rows whose CPU column is HALF: cpu_<name>_or_half, the float32 kernel for half tensors */
#define TIDE_KERNEL_HALF_Y(name)
#define TIDE_KERNEL_HALF_N(name)
#define TIDE_KERNEL_HALF_HALF(name)                                                                \
    static tide_status cpu_##name##_or_half(tide_device *dev, const tide_kernel_call *c) {         \
        return cpu_kernel_or_half(dev, c, cpu_##name);                                             \
    }
#define K(NAME, name, kind, dtypes, cpu, ...) TIDE_KERNEL_HALF_##cpu(name)
#include "tide_kernels.def"
#undef K

/* the kernels of include/tide_kernels.def whose CPU column is Y or HALF, by kernel id */
static const tide_kernel_fn cpu_kernels[TIDE_KERNEL_COUNT] = {
#define K(NAME, name, kind, dtypes, cpu, ...) [TIDE_K_##NAME] = TIDE_ENTRY_IF(cpu, cpu_##name),
#include "tide_kernels.def"
#undef K
};

const tide_backend tide_cpu_backend = {
    .name = "cpu",
    .alloc = cpu_alloc,
    .free = cpu_free,
    .copy_to_host = copy_host,
    .copy_from_host = copy_host,
    .copy_peer = copy_peer,
    .synchronize = synchronize,
    .memory_stats = cpu_memory_stats,
    .empty_cache = cpu_empty_cache,
    .alloc_pinned = NULL,
    .free_pinned = NULL,
    .stream = NULL,
    .device_info = device_info,
/* the compute entries of src/backend_entries.def: cpu_<name> where the CPU column says Y (conv2d
 * and its gradient only with oneDNN: NULL without, and nn runs im2col + gemm) */
#define E(name, cpu, cuda, params) .name = TIDE_ENTRY_IF(cpu, cpu_##name),
#include "backend_entries.def"
#undef E
    .kernels = cpu_kernels,
    .nkernels = TIDE_KERNEL_COUNT,
};
