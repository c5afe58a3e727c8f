/*
 * rows.cuh — sums and maxima over the threads that share one row: a warp, or a whole block
 * (softmax.cu, norm.cu).
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

/* reduces v over the block (blockDim.x a multiple of 32, at most 1024) */
template <typename C, bool MAX> __device__ C block_reduce(C v, C *sh) {
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

/* over a warp (ROW_THREADS = 32) or the block (ROW_THREADS = 0, sh of 32 entries) */
template <typename C, int ROW_THREADS> __device__ __forceinline__ C row_sum(C v, C *sh) {
    return ROW_THREADS == 32 ? warp_sum(v) : block_reduce<C, false>(v, sh);
}

#endif /* TIDE_CUDA_ROWS_CUH */
