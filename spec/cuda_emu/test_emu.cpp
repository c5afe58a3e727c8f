/*
 * test_emu.cpp — the emulator's own test: the CPU tests of the CUDA backend are only as good as
 * the emulated runtime under them, so this checks that it means what a GPU means (barriers,
 * warp shuffles, threads that exit early, grid coordinates, cuBLAS's column-major gemm) and
 * that it refuses what a GPU would fault on or reject (host pointers in kernels, copies in the
 * wrong direction, bad launch configurations, streams of another device, memory past the cap).
 * Built with the emulator's flags (-include cuda_emu.h), kernels written as for nvcc.
 */
#include "test_util.h"

#include <cublas_v2.h>
#include <stdlib.h>
#include <vector>

/* blocks of 256: each sums its slice through shared memory, halving with a barrier each step */
__global__ void k_block_sum(const float *in, float *out) {
    __shared__ float sh[256];
    unsigned         t = threadIdx.x;
    sh[t] = in[blockIdx.x * blockDim.x + t];
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s /= 2) {
        if (t < s)
            sh[t] += sh[t + s];
        __syncthreads();
    }
    if (t == 0)
        out[blockIdx.x] = sh[0];
}

/* a butterfly over each warp: every lane ends with its warp's sum */
__global__ void k_warp_sum(const int *in, int *out) {
    int v = in[threadIdx.x];
    for (int o = 16; o > 0; o /= 2)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    out[threadIdx.x] = v;
}

/* threads past n leave before the barrier; the rest must not wait for them */
__global__ void k_early_exit(int *out, unsigned n) {
    __shared__ int sh[128];
    if (threadIdx.x >= n)
        return;
    sh[threadIdx.x] = (int)threadIdx.x;
    __syncthreads();
    out[threadIdx.x] = sh[n - 1 - threadIdx.x];
}

__global__ void k_coords(int *out) {
    unsigned b = blockIdx.y * gridDim.x + blockIdx.x;
    unsigned t = threadIdx.y * blockDim.x + threadIdx.x;
    out[b * blockDim.x * blockDim.y + t] = (int)(blockIdx.y * 1000 + blockIdx.x * 100 + t);
}

__global__ void k_store(float *out, float v) {
    out[threadIdx.x] = v;
}

static float *dev_floats(size_t n) {
    void *p = NULL;
    CHECK(cudaMalloc(&p, n * sizeof(float)) == cudaSuccess);
    return (float *)p;
}

static void test_barriers_and_shuffles(void) {
    cudaStream_t s = NULL;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamDefault) == cudaSuccess);

    std::vector<float> h(1024), sums(4);
    for (int i = 0; i < 1024; i++)
        h[i] = (float)(i % 7);
    float *din = dev_floats(1024), *dout = dev_floats(4);
    CHECK(cudaMemcpyAsync(din, h.data(), 4096, cudaMemcpyHostToDevice, s) == cudaSuccess);
    TIDE_LAUNCH(k_block_sum, 4, 256, 0, s, din, dout);
    CHECK(cudaGetLastError() == cudaSuccess);
    CHECK(cudaMemcpyAsync(sums.data(), dout, 16, cudaMemcpyDeviceToHost, s) == cudaSuccess);
    for (int b = 0; b < 4; b++) {
        float want = 0;
        for (int i = 0; i < 256; i++)
            want += h[b * 256 + i];
        CHECK_NEAR(sums[b], want, 0);
    }

    std::vector<int> hi(64), ho(64);
    for (int i = 0; i < 64; i++)
        hi[i] = i;
    int *di = NULL, *dw = NULL;
    CHECK(cudaMalloc((void **)&di, 256) == cudaSuccess);
    CHECK(cudaMalloc((void **)&dw, 256) == cudaSuccess);
    CHECK(cudaMemcpyAsync(di, hi.data(), 256, cudaMemcpyHostToDevice, s) == cudaSuccess);
    TIDE_LAUNCH(k_warp_sum, 1, 64, 0, s, di, dw);
    CHECK(cudaMemcpyAsync(ho.data(), dw, 256, cudaMemcpyDeviceToHost, s) == cudaSuccess);
    CHECK(ho[0] == 496 && ho[31] == 496);    /* 0 + ... + 31 */
    CHECK(ho[32] == 1520 && ho[63] == 1520); /* 32 + ... + 63 */

    TIDE_LAUNCH(k_early_exit, 1, 128, 0, s, dw, 40u);
    CHECK(cudaGetLastError() == cudaSuccess);
    CHECK(cudaMemcpyAsync(ho.data(), dw, 160, cudaMemcpyDeviceToHost, s) == cudaSuccess);
    CHECK(ho[0] == 39 && ho[39] == 0);

    int *dc = NULL;
    CHECK(cudaMalloc((void **)&dc, 3 * 2 * 8 * sizeof(int)) == cudaSuccess);
    TIDE_LAUNCH(k_coords, dim3(3, 2), dim3(4, 2), 0, s, dc);
    std::vector<int> hc(48);
    CHECK(cudaMemcpyAsync(hc.data(), dc, 48 * sizeof(int), cudaMemcpyDeviceToHost, s) ==
          cudaSuccess);
    CHECK(hc[0] == 0 && hc[7] == 7);        /* block (0, 0), thread (3, 1) */
    CHECK(hc[(1 * 3 + 2) * 8 + 5] == 1205); /* block (2, 1), thread (1, 1) */
    CHECK(cudaFree(din) == cudaSuccess && cudaFree(dout) == cudaSuccess);
    CHECK(cudaFree(di) == cudaSuccess && cudaFree(dw) == cudaSuccess &&
          cudaFree(dc) == cudaSuccess);
}

static void test_refusals(void) {
    cudaStream_t s0 = NULL, s1 = NULL;
    CHECK(cudaSetDevice(0) == cudaSuccess);
    CHECK(cudaStreamCreateWithFlags(&s0, cudaStreamDefault) == cudaSuccess);
    float *d = dev_floats(32);
    float  host[32];

    /* memory never written reads as NaN, as garbage would show up */
    CHECK(cudaMemcpyAsync(host, d, sizeof host, cudaMemcpyDeviceToHost, s0) == cudaSuccess);
    CHECK(host[0] != host[0]);

    /* a host pointer as a kernel argument: refused, the kernel does not run */
    host[0] = 1;
    TIDE_LAUNCH(k_store, 1, 32, 0, s0, host, 5.0f);
    CHECK(cudaGetLastError() == cudaErrorInvalidValue);
    CHECK(host[0] == 1);
    CHECK(cudaGetLastError() == cudaSuccess); /* read once, then cleared */

    TIDE_LAUNCH(k_store, 1, 2048, 0, s0, d, 5.0f);
    CHECK(cudaGetLastError() == cudaErrorInvalidConfiguration);
    TIDE_LAUNCH(k_store, 0, 32, 0, s0, d, 5.0f);
    CHECK(cudaGetLastError() == cudaErrorInvalidConfiguration);

    /* copies: the direction must match the pointers, ranges stay inside their allocation */
    CHECK(cudaMemcpyAsync(host, d, 16, cudaMemcpyHostToDevice, s0) == cudaErrorInvalidValue);
    /* 32 floats take a block of 256 bytes: 8 bytes at float 63 run past it */
    CHECK(cudaMemcpyAsync(d + 63, host, 8, cudaMemcpyHostToDevice, s0) == cudaErrorInvalidValue);
    CHECK(cudaMemcpyAsync(d, d + 2, 16, cudaMemcpyDeviceToDevice, s0) == cudaErrorInvalidValue);
    cudaGetLastError();

    /* a stream of cuda:1 while cuda:0 is current */
    CHECK(cudaSetDevice(1) == cudaSuccess);
    CHECK(cudaStreamCreateWithFlags(&s1, cudaStreamDefault) == cudaSuccess);
    float *d1 = dev_floats(32);
    CHECK(cudaSetDevice(0) == cudaSuccess);
    TIDE_LAUNCH(k_store, 1, 32, 0, s1, d, 5.0f);
    CHECK(cudaGetLastError() == cudaErrorInvalidResourceHandle);
    /* another device's memory in a kernel of this one */
    TIDE_LAUNCH(k_store, 1, 32, 0, s0, d1, 5.0f);
    CHECK(cudaGetLastError() == cudaErrorInvalidValue);
    CHECK(cudaMemcpyPeerAsync(d1, 1, d, 0, 128, s0) == cudaSuccess);
    CHECK(cudaMemcpyPeerAsync(d1, 0, d, 0, 128, s0) == cudaErrorInvalidValue);
    cudaGetLastError();
    CHECK(cudaSetDevice(2) == cudaErrorInvalidDevice);
    cudaGetLastError();

    /* the memory cap: TIDE_CUDA_EMU_MEMORY, set by main before the first call */
    void  *big = NULL;
    size_t free_b = 0, total = 0;
    CHECK(cudaMemGetInfo(&free_b, &total) == cudaSuccess);
    CHECK(total == (size_t)64 << 20);
    CHECK(cudaMalloc(&big, total) == cudaErrorMemoryAllocation);
    CHECK(big == NULL);
    CHECK(cudaGetLastError() == cudaErrorMemoryAllocation);
    CHECK(cudaMalloc(&big, free_b) == cudaSuccess);
    CHECK(cudaFree(big) == cudaSuccess);
    CHECK(cudaFree(host) == cudaErrorInvalidValue);
    cudaGetLastError();
    CHECK(cudaFree(d) == cudaSuccess);
    CHECK(cudaSetDevice(1) == cudaSuccess && cudaFree(d1) == cudaSuccess);
    CHECK(cudaSetDevice(0) == cudaSuccess);

    /* pinned memory is known as host memory; plain malloc is not */
    void *pinned = NULL;
    CHECK(cudaHostAlloc(&pinned, 100, cudaHostAllocPortable) == cudaSuccess);
    cudaPointerAttributes attr;
    CHECK(cudaPointerGetAttributes(&attr, (char *)pinned + 10) == cudaSuccess);
    CHECK(attr.type == cudaMemoryTypeHost);
    CHECK(cudaPointerGetAttributes(&attr, host) == cudaSuccess);
    CHECK(attr.type == cudaMemoryTypeUnregistered);

    /* device to pinned host memory is asynchronous: seen after a synchronize, not before */
    float *dv = dev_floats(4), src[4] = {1, 2, 3, 4};
    CHECK(cudaMemcpyAsync(dv, src, 16, cudaMemcpyHostToDevice, s0) == cudaSuccess);
    float *hp = (float *)pinned;
    hp[0] = -1;
    CHECK(cudaMemcpyAsync(hp, dv, 16, cudaMemcpyDeviceToHost, s0) == cudaSuccess);
    CHECK(hp[0] == -1);
    CHECK(cudaStreamSynchronize(s0) == cudaSuccess);
    CHECK(hp[0] == 1 && hp[3] == 4);
    /* into pageable memory it has finished when the call returns */
    float pageable[4] = {0};
    CHECK(cudaMemcpyAsync(pageable, dv, 16, cudaMemcpyDeviceToHost, s0) == cudaSuccess);
    CHECK(pageable[2] == 3);
    CHECK(cudaFree(dv) == cudaSuccess);
    CHECK(cudaFreeHost(pinned) == cudaSuccess);
}

static void test_gemm(void) {
    cublasHandle_t h = NULL;
    cudaStream_t   s = NULL;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamDefault) == cudaSuccess);
    CHECK(cublasCreate(&h) == CUBLAS_STATUS_SUCCESS);
    CHECK(cublasSetStream(h, s) == CUBLAS_STATUS_SUCCESS);
    /* column-major A 2x3, B 3x2: C = A B is 2x2 */
    float  ha[6] = {1, 4, 2, 5, 3, 6}, hb[6] = {7, 9, 11, 8, 10, 12}, hc[4] = {0};
    float *da = dev_floats(6), *db = dev_floats(6), *dc = dev_floats(4);
    cudaMemcpyAsync(da, ha, sizeof ha, cudaMemcpyHostToDevice, s);
    cudaMemcpyAsync(db, hb, sizeof hb, cudaMemcpyHostToDevice, s);
    float one = 1, zero = 0;
    CHECK(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 3, &one, da, 2, db, 3, &zero, dc, 2) ==
          CUBLAS_STATUS_SUCCESS);
    cudaMemcpyAsync(hc, dc, sizeof hc, cudaMemcpyDeviceToHost, s);
    CHECK(hc[0] == 58 && hc[1] == 139 && hc[2] == 64 && hc[3] == 154);
    /* lda smaller than the rows: rejected as cuBLAS does */
    CHECK(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 3, &one, da, 1, db, 3, &zero, dc, 2) ==
          CUBLAS_STATUS_INVALID_VALUE);
    /* an operand on the host */
    CHECK(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 3, &one, ha, 2, db, 3, &zero, dc, 2) ==
          CUBLAS_STATUS_EXECUTION_FAILED);

    /* bfloat16 operands, float accumulation, bfloat16 result */
    __nv_bfloat16 ba[6], bb[6], bc[4];
    for (int i = 0; i < 6; i++) {
        ba[i] = __float2bfloat16(ha[i]);
        bb[i] = __float2bfloat16(hb[i]);
    }
    void *dba = NULL, *dbb = NULL, *dbc = NULL;
    cudaMalloc(&dba, sizeof ba);
    cudaMalloc(&dbb, sizeof bb);
    cudaMalloc(&dbc, sizeof bc);
    cudaMemcpyAsync(dba, ba, sizeof ba, cudaMemcpyHostToDevice, s);
    cudaMemcpyAsync(dbb, bb, sizeof bb, cudaMemcpyHostToDevice, s);
    CHECK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 3, &one, dba, CUDA_R_16BF, 2, dbb,
                       CUDA_R_16BF, 3, &zero, dbc, CUDA_R_16BF, 2, CUBLAS_COMPUTE_32F,
                       CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS);
    cudaMemcpyAsync(bc, dbc, sizeof bc, cudaMemcpyDeviceToHost, s);
    CHECK(__bfloat162float(bc[0]) == 58 && __bfloat162float(bc[3]) == 154);
    cudaFree(da), cudaFree(db), cudaFree(dc), cudaFree(dba), cudaFree(dbb), cudaFree(dbc);
}

int main(void) {
    setenv("TIDE_CUDA_EMU_DEVICES", "2", 1);
    setenv("TIDE_CUDA_EMU_MEMORY", "67108864", 1);
    int n = 0;
    CHECK(cudaGetDeviceCount(&n) == cudaSuccess && n == 2);
    test_barriers_and_shuffles();
    test_refusals();
    test_gemm();
    return tu_finish();
}
