/*
 * backend.c — the CPU backend's vtable and its memory entries.
 *
 * cpu:0 and the virtual devices cpu:1..N-1 share this table and host memory: copies between
 * them are memcpy, but each keeps its own allocator counters (alloc.c).
 */
#include "cpu.h"
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

/* the kernels of include/tide_kernels.def whose CPU column is Y, by kernel id */
static const tide_kernel_fn cpu_kernels[TIDE_KERNEL_COUNT] = {
#define K(NAME, name, kind, dtypes, cpu, ...) [TIDE_K_##NAME] = TIDE_KERNEL_ENTRY(cpu, cpu_##name),
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
    .binary = cpu_binary,
    .binary_scalar = cpu_binary_scalar,
    .unary = cpu_unary,
    .copy = cpu_copy,
    .fill = cpu_fill,
    .reduce = cpu_reduce,
    .matmul = cpu_matmul,
    .softmax = cpu_softmax,
    .index_select = cpu_index_select,
    .index_add = cpu_index_add,
    .where = cpu_where,
    .random = cpu_random,
    .arange = cpu_arange,
    .im2col = cpu_im2col,
    .col2im = cpu_col2im,
    .maxpool2d = cpu_maxpool2d,
    .maxpool2d_backward = cpu_maxpool2d_backward,
    .rnn_cell = cpu_rnn_cell,
    .rnn_cell_backward = cpu_rnn_cell_backward,
    .gather = cpu_gather,
    .scatter = cpu_scatter,
    .sort = cpu_sort,
    .optim_step = cpu_optim_step,
    .act_backward = cpu_act_backward,
    .softmax_backward = cpu_softmax_backward,
    .conv2d = CPU_CONV2D, /* NULL without oneDNN: nn runs im2col + gemm */
    .conv2d_backward = CPU_CONV2D_BACKWARD,
    .kernels = cpu_kernels,
    .nkernels = TIDE_KERNEL_COUNT,
};
