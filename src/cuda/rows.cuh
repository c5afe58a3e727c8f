/*
 * rows.cuh — kernels that give each row to a group of threads, a warp or a whole block
 * (softmax.cu, norm.cu): the group's row, sums and maxima over it, and the launch.
 */
#ifndef TIDE_CUDA_ROWS_CUH
#define TIDE_CUDA_ROWS_CUH

#include "common.cuh"

/* NaN wins, as in max() */
template <typename C> __device__ __forceinline__ C sm_max(C a, C b) {
    return (a != a || a > b) ? a : b;
}

template <typename C> __device__ __forceinline__ C warp_max(C v) {
    for (int o = 16; o > 0; o /= 2)
        v = sm_max(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

template <typename C> __device__ __forceinline__ C warp_sum(C v) {
    for (int o = 16; o > 0; o /= 2)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

/* reduces v over the block (blockDim.x a multiple of 32, at most 1024), through 32 entries of
 * shared memory of its own */
template <typename C, bool MAX> __device__ C block_reduce(C v) {
    __shared__ C sh[32];
    v = MAX ? warp_max(v) : warp_sum(v);
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32, nw = blockDim.x / 32;
    __syncthreads(); /* sh may still be read from a previous call */
    if (lane == 0)
        sh[warp] = v;
    __syncthreads();
    v = sh[0];
    for (int w = 1; w < nw; w++)
        v = MAX ? sm_max(v, sh[w]) : v + sh[w];
    return v;
}

/* over a warp (ROW_THREADS = 32) or the block (ROW_THREADS = 0) */
template <typename C, int ROW_THREADS> __device__ __forceinline__ C row_sum(C v) {
    return ROW_THREADS == 32 ? warp_sum(v) : block_reduce<C, false>(v);
}
template <typename C, int ROW_THREADS> __device__ __forceinline__ C row_max(C v) {
    return ROW_THREADS == 32 ? warp_max(v) : block_reduce<C, true>(v);
}

/* the row of this thread's group (a warp when ROW_THREADS = 32, else the block), its lane in the
 * group and the group's size */
template <int ROW_THREADS> __device__ __forceinline__ uint32_t row_of(int *lane, int *nthreads) {
    *lane = ROW_THREADS == 32 ? threadIdx.x % 32 : threadIdx.x;
    *nthreads = ROW_THREADS == 32 ? 32 : blockDim.x;
    uint32_t per_block = ROW_THREADS == 32 ? blockDim.x / 32 : 1;
    return blockIdx.x * per_block + (ROW_THREADS == 32 ? threadIdx.x / 32 : 0);
}

/* Launches a row kernel over rows rows of len elements: warp_per_row (its ROW_THREADS = 32
 * instance) with a warp per row for rows up to 1024 long, else block_per_row (ROW_THREADS = 0)
 * with a block of 512 per row. The caller checks the launch (TIDE_CUDA_LAUNCHED). */
template <typename... P, typename... A>
static void launch_rows(cudaStream_t stream, uint32_t rows, int64_t len, void (*warp_per_row)(P...),
                        void (*block_per_row)(P...), A... args) {
    if (len <= 1024) {
        unsigned per_block = TIDE_CUDA_THREADS / 32;
        unsigned blocks = (unsigned)((rows + per_block - 1) / per_block);
        TIDE_LAUNCH(warp_per_row, blocks, TIDE_CUDA_THREADS, 0, stream, args...);
    } else {
        TIDE_LAUNCH(block_per_row, rows, 512, 0, stream, args...);
    }
}

#endif /* TIDE_CUDA_ROWS_CUH */
