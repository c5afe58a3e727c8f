/*
 * gpu_raw.cu — the references for tide's GPU benchmarks, measured with raw CUDA and cuBLAS on
 * the same GPU in the same run (bench/gpu_check.sh compares):
 *   sgemm 8192^3 (cublasSgemm), bf16 gemm 8192^3 (cublasGemmEx, float accumulation),
 *   device-to-device cudaMemcpy of 2^28 float32, host-to-device and device-to-host of 1 GiB
 *   from and into pinned and pageable memory, and the launch cost of an empty kernel.
 * Prints "key value" lines. Build: nvcc -O3 -arch=native bench/gpu_raw.cu -lcublas
 */
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CK(x)                                                                                      \
    do {                                                                                           \
        cudaError_t e_ = (x);                                                                      \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "%s: %s (%s:%d)\n", #x, cudaGetErrorString(e_), __FILE__, __LINE__);   \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)
#define CB(x)                                                                                      \
    do {                                                                                           \
        cublasStatus_t s_ = (x);                                                                   \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                                         \
            fprintf(stderr, "%s: %s\n", #x, cublasGetStatusString(s_));                            \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

__global__ void k_empty(void) {}

__global__ void k_init(float *p, size_t n) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        p[i] = (float)(i % 7) * 0.25f;
}

/* best of reps: the GPU's clocks settle after the first runs */
template <typename F> static double best(int reps, F f) {
    double t = 1e30;
    for (int r = 0; r < reps; r++) {
        double t0 = now_s();
        f();
        double dt = now_s() - t0;
        if (dt < t)
            t = dt;
    }
    return t;
}

int main(void) {
    cublasHandle_t h;
    CB(cublasCreate(&h));
    const int    n = 8192;
    const size_t nn = (size_t)n * n;
    float       *a, *b, *c;
    CK(cudaMalloc(&a, nn * 4));
    CK(cudaMalloc(&b, nn * 4));
    CK(cudaMalloc(&c, nn * 4));
    k_init<<<1024, 256>>>(a, nn);
    k_init<<<1024, 256>>>(b, nn);
    CK(cudaDeviceSynchronize());
    const float one = 1, zero = 0;
    double      flop = 2.0 * n * n * n;

    double t = best(5, [&] {
        CB(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, n, b, n, &zero, c, n));
        CK(cudaDeviceSynchronize());
    });
    printf("raw_sgemm_tflops %.3f\n", flop / t / 1e12);

    /* bf16 operands in the same buffers (half the bytes used) */
    t = best(5, [&] {
        CB(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, CUDA_R_16BF, n, b,
                        CUDA_R_16BF, n, &zero, c, CUDA_R_16BF, n, CUBLAS_COMPUTE_32F,
                        CUBLAS_GEMM_DEFAULT));
        CK(cudaDeviceSynchronize());
    });
    printf("raw_bf16_gemm_tflops %.3f\n", flop / t / 1e12);
    CK(cudaFree(c));

    /* 2^28 float32 = 1 GiB: device-to-device copy, reported as bytes moved (read + write) */
    const size_t bytes = ((size_t)1 << 28) * 4;
    char        *d1, *d2;
    CK(cudaFree(a));
    CK(cudaFree(b));
    CK(cudaMalloc(&d1, bytes));
    CK(cudaMalloc(&d2, bytes));
    CK(cudaMemset(d1, 1, bytes));
    t = best(10, [&] {
        CK(cudaMemcpy(d2, d1, bytes, cudaMemcpyDeviceToDevice));
        CK(cudaDeviceSynchronize());
    });
    printf("raw_d2d_memcpy_gbs %.1f\n", 2.0 * bytes / t / 1e9);

    void *pinned;
    CK(cudaHostAlloc(&pinned, bytes, cudaHostAllocDefault));
    memset(pinned, 1, bytes);
    t = best(5, [&] { CK(cudaMemcpy(d1, pinned, bytes, cudaMemcpyHostToDevice)); });
    printf("raw_h2d_pinned_gbs %.2f\n", bytes / t / 1e9);
    t = best(5, [&] { CK(cudaMemcpy(pinned, d1, bytes, cudaMemcpyDeviceToHost)); });
    printf("raw_d2h_pinned_gbs %.2f\n", bytes / t / 1e9);
    CK(cudaFreeHost(pinned));
    char *pageable = (char *)malloc(bytes);
    memset(pageable, 1, bytes);
    t = best(3, [&] { CK(cudaMemcpy(d1, pageable, bytes, cudaMemcpyHostToDevice)); });
    printf("raw_h2d_pageable_gbs %.2f\n", bytes / t / 1e9);
    t = best(3, [&] { CK(cudaMemcpy(pageable, d1, bytes, cudaMemcpyDeviceToHost)); });
    printf("raw_d2h_pageable_gbs %.2f\n", bytes / t / 1e9);
    free(pageable);

    const int iters = 20000;
    k_empty<<<1, 32>>>();
    CK(cudaDeviceSynchronize());
    t = best(5, [&] {
        for (int i = 0; i < iters; i++)
            k_empty<<<1, 32>>>();
        CK(cudaDeviceSynchronize());
    });
    printf("raw_launch_us %.3f\n", t / iters * 1e6);
    CK(cudaFree(d1));
    CK(cudaFree(d2));
    CB(cublasDestroy(h));
    return 0;
}
