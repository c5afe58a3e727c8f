/*
 * cuda_emu.h — the host side of the CUDA emulator that runs tide's CUDA backend in the CPU
 * tests.
 *
 * The machines that build and test tide have the CUDA toolkit but no GPU, so the kernels and
 * the host logic of src/cuda/ would otherwise run only where a GPU is lent. The emulator
 * compiles the same src/cuda/ kernel files with the host C++ compiler, against the toolkit's real
 * headers (types, enums, half and bfloat16 arithmetic all come from there), and links them with
 * spec/cuda_emu/runtime.cpp instead of the CUDA runtime and cuBLAS: device memory is host
 * memory with its bounds and owner device tracked, a kernel launch runs its grid on the CPU one
 * block at a time with each thread on a fiber of its own (so __syncthreads and warp shuffles
 * mean what they mean on a GPU), and cuBLAS gemms are OpenBLAS calls. It checks what a GPU
 * would fault on or silently get wrong: launch configurations, kernel pointer arguments outside
 * the current device's memory, copies in the wrong direction, streams of another device.
 *
 * Every other launch runs its blocks and threads in reverse order, so a kernel relying on an
 * order the GPU does not promise gives different results between runs.
 *
 * This file is force-included (-include) before each .cu file. What it cannot show: timing,
 * data races between threads (threads run one at a time, switching only at barriers and
 * shuffles), asynchrony (every call completes before it returns, except a device-to-host copy
 * into pinned memory, which lands when its stream next works or is synchronized) and device
 * code that reads host memory through a pointer hidden in a struct argument.
 */
#ifndef TIDE_CUDA_EMU_H
#define TIDE_CUDA_EMU_H

#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>

#include <cublas_v2.h>
#include <dlfcn.h>
#include <functional>
#include <math.h>
#include <mutex>
#include <set>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <string>
#include <type_traits>
#include <unordered_map>

/* after every standard header the .cu files include: libstdc++ spells the attribute
 * __attribute__((__noinline__)) */
#undef __noinline__
#define __noinline__ __attribute__((noinline))

/* the block's shared memory: blocks of a grid run one after another, so a static per kernel
 * (per template instance) is shared by the threads of the running block and by nothing else */
#undef __shared__
#define __shared__ static

/* each fiber's coordinates; the scheduler sets them before it resumes a fiber */
extern uint3 threadIdx, blockIdx;
extern dim3  blockDim, gridDim;

void __syncthreads();

/* for the emulated cuBLAS, a library of its own (cublas.cpp): the calling thread's device, and
 * whether a gemm's stream and operands (spans in bytes; NULL: not read) belong to it */
extern "C" int cuda_emu_current_device(void);
extern "C" int cuda_emu_gemm_operands_ok(const char *fn, cudaStream_t stream, const void *A,
                                         size_t aspan, const void *B, size_t bspan, const void *C,
                                         size_t cspan);

namespace tide_emu {

/* copies size bytes of this thread's value into its warp's exchange slots, waits for the
 * warp, and reads lane src_of(lane)'s value back */
void shfl_xor(const void *in, void *out, size_t size, int lane_mask, int width);

/* runs body as every thread of a grid; false (and the last error set) when the configuration
 * or the stream is invalid */
bool run_grid(const char *kernel, dim3 grid, dim3 block, size_t shared_bytes, cudaStream_t stream,
              const std::function<void()> &body);

/* a kernel's pointer argument must be NULL or point into memory of the current device */
bool check_kernel_pointer(const char *kernel, int arg, const void *p);

template <typename T> bool check_arg(const char *kernel, int arg, const T &v) {
    if constexpr (std::is_pointer<typename std::decay<T>::type>::value)
        return check_kernel_pointer(kernel, arg, (const void *)v);
    (void)kernel, (void)arg, (void)v;
    return true;
}

template <typename... A>
void launch(const char *kernel, dim3 grid, dim3 block, size_t shared_bytes, cudaStream_t stream,
            const std::function<void()> &body, const A &...args) {
    int  i = 0;
    bool ok = true;
    ((ok = ok && check_arg(kernel, ++i, args)), ...);
    if (ok)
        run_grid(kernel, grid, block, shared_bytes, stream, body);
}

} // namespace tide_emu

#define TIDE_LAUNCH(kernel, grid, block, smem, stream, ...)                                        \
    ::tide_emu::launch(                                                                            \
        #kernel, dim3(grid), dim3(block), (smem), (stream), [&]() { kernel(__VA_ARGS__); },        \
        __VA_ARGS__)

template <typename T> T __shfl_xor_sync(unsigned mask, T var, int lane_mask, int width = 32) {
    (void)mask;
    static_assert(sizeof(T) <= 16, "shuffle of a value over 16 bytes");
    T r;
    tide_emu::shfl_xor(&var, &r, sizeof(T), lane_mask, width);
    return r;
}

/* threads of a block never run at the same time, so a plain add is atomic */
template <typename T> T tide_emu_atomic_add(T *p, T v) {
    T old = *p;
    *p = old + v;
    return old;
}
inline float atomicAdd(float *p, float v) {
    return tide_emu_atomic_add(p, v);
}
inline double atomicAdd(double *p, double v) {
    return tide_emu_atomic_add(p, v);
}
inline int atomicAdd(int *p, int v) {
    return (int)tide_emu_atomic_add((unsigned *)p, (unsigned)v); /* wraps like the GPU's */
}
inline unsigned long long atomicAdd(unsigned long long *p, unsigned long long v) {
    return tide_emu_atomic_add(p, v);
}
inline __half atomicAdd(__half *p, __half v) {
    __half old = *p;
    *p = __float2half(__half2float(old) + __half2float(v));
    return old;
}
inline __nv_bfloat16 atomicAdd(__nv_bfloat16 *p, __nv_bfloat16 v) {
    __nv_bfloat16 old = *p;
    *p = __float2bfloat16(__bfloat162float(old) + __bfloat162float(v));
    return old;
}

#endif /* TIDE_CUDA_EMU_H */
