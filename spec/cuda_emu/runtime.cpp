/*
 * runtime.cpp — the emulated CUDA runtime and cuBLAS behind the CPU build of tide's CUDA
 * backend (see cuda_emu.h): only the calls src/cuda/ makes, with the toolkit's own signatures.
 *
 * Environment:
 *   TIDE_CUDA_EMU_DEVICES  number of emulated devices (default 1)
 *   TIDE_CUDA_EMU_MEMORY   bytes of memory per device (default 1 GiB): cudaMalloc beyond it
 *                          fails with cudaErrorMemoryAllocation, as a full GPU does
 *   TIDE_CUDA_EMU_SKIP_KERNELS=1  launches are checked but not run: what is left is the host
 *                          side of an op (tide's and the emulator's), for measuring it
 * Every misuse it detects is printed to stderr with "cuda emu:" and returned as the error the
 * real runtime would give (or the nearest one), so the backend's error path runs too.
 */
#include "cuda_emu.h"

#include <cublas_v2.h>

#include <array>
#include <cblas.h>
#include <map>
#include <mutex>
#include <set>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>
#include <vector>

uint3 threadIdx, blockIdx;
dim3  blockDim, gridDim;

namespace {

// ---- devices, memory, streams ---------------------------------------------------------------

struct Alloc {
    size_t size;
    int    device; /* -1: pinned host memory */
};

/* a device-to-host copy into pinned memory left in flight: done when its stream next does
 * anything, is synchronized, or memory is freed (as the GPU would have finished it by then) */
struct InFlight {
    void       *dst;
    const void *src;
    size_t      count;
};

struct EmuStream {
    int                   device;
    std::vector<InFlight> in_flight;
};

std::mutex                    g_mu; /* guards the tables below and runs one grid at a time */
std::map<uintptr_t, Alloc>    g_allocs;
std::set<EmuStream *>         g_streams;
std::vector<size_t>           g_used;
std::set<std::pair<int, int>> g_peer;
thread_local int              t_device = 0;
thread_local cudaError_t      t_last = cudaSuccess;
int                           g_count = -1;
size_t                        g_total = 0;
bool                          g_skip_kernels = false;

void init_locked() {
    if (g_count >= 0)
        return;
    const char *n = getenv("TIDE_CUDA_EMU_DEVICES");
    const char *m = getenv("TIDE_CUDA_EMU_MEMORY");
    g_count = n && *n ? atoi(n) : 1;
    g_total = m && *m ? (size_t)strtoull(m, NULL, 10) : (size_t)1 << 30;
    g_used.assign(g_count > 0 ? g_count : 0, 0);
    const char *k = getenv("TIDE_CUDA_EMU_SKIP_KERNELS");
    g_skip_kernels = k && *k == '1';
}

cudaError_t fail(cudaError_t e) {
    t_last = e;
    return e;
}

cudaError_t misuse(cudaError_t e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
cudaError_t misuse(cudaError_t e, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "cuda emu: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    return fail(e);
}

/* the allocation holding [p, p + bytes), or NULL; caller holds g_mu */
const Alloc *find_locked(const void *p, size_t bytes, uintptr_t *base = NULL) {
    uintptr_t a = (uintptr_t)p;
    auto      it = g_allocs.upper_bound(a);
    if (it == g_allocs.begin())
        return NULL;
    --it;
    if (a < it->first || a + bytes > it->first + it->second.size)
        return NULL;
    if (base)
        *base = it->first;
    return &it->second;
}

bool is_device_locked(const void *p, size_t bytes, int device) {
    const Alloc *a = find_locked(p, bytes);
    return a && a->device >= 0 && (device < 0 || a->device == device);
}

void settle(EmuStream *es) {
    for (const InFlight &f : es->in_flight)
        memcpy(f.dst, f.src, f.count);
    es->in_flight.clear();
}

void settle_all_locked() {
    for (EmuStream *es : g_streams)
        settle(es);
}

/* every call that uses a stream checks it here, which also completes the stream's earlier
 * work: stream order */
bool stream_ok_locked(cudaStream_t s, int *device) {
    if (!s) {
        *device = t_device;
        return true;
    }
    EmuStream *es = (EmuStream *)s;
    if (!g_streams.count(es))
        return false;
    settle(es);
    *device = es->device;
    return true;
}

const char *kind_name(cudaMemcpyKind k) {
    switch (k) {
    case cudaMemcpyHostToDevice:
        return "HostToDevice";
    case cudaMemcpyDeviceToHost:
        return "DeviceToHost";
    case cudaMemcpyDeviceToDevice:
        return "DeviceToDevice";
    case cudaMemcpyHostToHost:
        return "HostToHost";
    default:
        return "Default";
    }
}

// ---- the grid: one block at a time, a fiber per thread ------------------------------------

enum FiberState { READY, WAIT_BLOCK, WAIT_WARP, DONE };

struct Fiber {
    FiberState state;
    unsigned   linear;
    uint3      tid;
    char      *stack; /* NULL until the thread first runs, and again once it is done */
#if defined(__x86_64__)
    void *sp; /* saved stack pointer while switched out */
#else
    ucontext_t ctx;
#endif
};

const size_t kStack = 64 << 10;

std::vector<Fiber> g_fibers;
/* Stacks no thread holds. A thread takes one when it first runs and gives it back when it is
 * done, so a kernel without barriers runs every thread on one stack, warm in cache, rather than
 * on a stack each, 64 KB apart (64 MB for 1024 threads). */
std::vector<char *>                   g_free_stacks;
unsigned                              g_cur, g_live, g_arrived, g_nthreads;
std::vector<unsigned>                 g_warp_live, g_warp_arrived;
std::vector<std::array<char[16], 32>> g_shfl;
const std::function<void()>          *g_body;
const char                           *g_kernel;
bool                                  g_reverse;

void release(FiberState waiting, unsigned warp) {
    for (unsigned i = 0; i < g_nthreads; i++) {
        Fiber &f = g_fibers[i];
        if (f.state == waiting && (waiting == WAIT_BLOCK || f.linear / 32 == warp))
            f.state = READY;
    }
    if (waiting == WAIT_BLOCK)
        g_arrived = 0;
    else
        g_warp_arrived[warp] = 0;
}

void fiber_main();

/* Context switches. swapcontext makes a system call (the signal mask) each time, and a launch
 * switches twice per GPU thread; on x86-64 a switch is a few instructions: push the callee-saved
 * registers, swap stack pointers, pop. The floating-point control words (MXCSR, x87), which the
 * ABI also has callee preserve, stay as they are: every fiber runs on the one host thread, no
 * kernel changes them (a GPU has no such state), and storing and loading them was three
 * quarters of a switch. */
#if defined(__x86_64__)
extern "C" void tide_emu_switch(void **save_sp, void *load_sp);
asm(R"(
    .text
    .p2align 4
    .type tide_emu_switch, @function
tide_emu_switch:
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret
    .size tide_emu_switch, .-tide_emu_switch
)");

void *g_sched_sp;

[[noreturn]] void fiber_entry() {
    fiber_main();
    Fiber &f = g_fibers[g_cur];
    tide_emu_switch(&f.sp, g_sched_sp);
    abort(); /* a finished fiber is never resumed */
}

/* a stack that tide_emu_switch "returns" into fiber_entry from, as if it had been called */
void fiber_start(Fiber &f) {
    uintptr_t top = ((uintptr_t)f.stack + kStack) & ~(uintptr_t)15;
    void    **sp = (void **)top;
    *--sp = NULL;                 /* fiber_entry's own return address: never used */
    *--sp = (void *)&fiber_entry; /* popped by ret: 16-byte aligned, as after a call */
    for (int r = 0; r < 6; r++)   /* rbp rbx r12 r13 r14 r15 */
        *--sp = NULL;
    f.sp = sp;
}

void fiber_resume(Fiber &f) {
    tide_emu_switch(&g_sched_sp, f.sp);
}

void yield_fiber() {
    Fiber &f = g_fibers[g_cur];
    tide_emu_switch(&f.sp, g_sched_sp);
}
#else
ucontext_t g_sched;

void fiber_start(Fiber &f) {
    getcontext(&f.ctx);
    f.ctx.uc_stack.ss_sp = f.stack;
    f.ctx.uc_stack.ss_size = kStack;
    f.ctx.uc_link = &g_sched;
    makecontext(&f.ctx, fiber_main, 0);
}

void fiber_resume(Fiber &f) {
    swapcontext(&g_sched, &f.ctx);
}

void yield_fiber() {
    Fiber &f = g_fibers[g_cur];
    swapcontext(&f.ctx, &g_sched);
}
#endif

void warp_barrier() {
    Fiber   &f = g_fibers[g_cur];
    unsigned w = f.linear / 32;
    f.state = WAIT_WARP;
    if (++g_warp_arrived[w] == g_warp_live[w])
        release(WAIT_WARP, w);
    else
        yield_fiber();
}

void fiber_main() {
    (*g_body)();
    Fiber   &f = g_fibers[g_cur];
    unsigned w = f.linear / 32;
    f.state = DONE;
    g_live--;
    g_warp_live[w]--;
    /* a thread that has exited no longer holds a barrier back (as on sm_70 and later) */
    if (g_arrived > 0 && g_arrived == g_live)
        release(WAIT_BLOCK, 0);
    if (g_warp_arrived[w] > 0 && g_warp_arrived[w] == g_warp_live[w])
        release(WAIT_WARP, w);
}

void run_block() {
    g_live = g_nthreads;
    g_arrived = 0;
    unsigned nwarps = (g_nthreads + 31) / 32;
    g_warp_live.assign(nwarps, 0);
    g_warp_arrived.assign(nwarps, 0);
    g_shfl.resize(nwarps);
    for (unsigned i = 0; i < g_nthreads; i++) {
        Fiber &f = g_fibers[i];
        f.state = READY;
        f.linear = i;
        f.tid =
            make_uint3(i % blockDim.x, i / blockDim.x % blockDim.y, i / (blockDim.x * blockDim.y));
        g_warp_live[i / 32]++;
        f.stack = NULL;
    }
    unsigned done = 0;
    while (done < g_nthreads) {
        bool progress = false;
        for (unsigned k = 0; k < g_nthreads; k++) {
            unsigned i = g_reverse ? g_nthreads - 1 - k : k;
            if (g_fibers[i].state != READY)
                continue;
            Fiber &f = g_fibers[i];
            g_cur = i;
            threadIdx = f.tid;
            if (!f.stack) {
                if (g_free_stacks.empty())
                    g_free_stacks.push_back((char *)malloc(kStack));
                f.stack = g_free_stacks.back();
                g_free_stacks.pop_back();
                fiber_start(f);
            }
            fiber_resume(f);
            progress = true;
            if (f.state == DONE) {
                done++;
                g_free_stacks.push_back(f.stack); /* never resumed again: free to reuse */
                f.stack = NULL;
            }
        }
        if (!progress) {
            fprintf(stderr,
                    "cuda emu: kernel %s deadlocked in block (%u, %u, %u): %u of %u threads wait "
                    "at a barrier the others never reach\n",
                    g_kernel, blockIdx.x, blockIdx.y, blockIdx.z, g_nthreads - done, g_nthreads);
            abort(); /* a GPU would hang: a test must not */
        }
    }
}

} // namespace

// ---- device-side functions ------------------------------------------------------------------

void __syncthreads() {
    Fiber &f = g_fibers[g_cur];
    f.state = WAIT_BLOCK;
    if (++g_arrived == g_live)
        release(WAIT_BLOCK, 0);
    else
        yield_fiber();
}

namespace tide_emu {

void shfl_xor(const void *in, void *out, size_t size, int lane_mask, int width) {
    unsigned linear = g_fibers[g_cur].linear, lane = linear % 32, w = linear / 32;
    memcpy(g_shfl[w][lane], in, size);
    warp_barrier();
    unsigned src = lane ^ (unsigned)lane_mask;
    /* outside the lane's segment of `width` lanes, or a lane the block does not have: its own */
    if (src / (unsigned)width != lane / (unsigned)width || w * 32 + src >= g_nthreads)
        src = lane;
    memcpy(out, g_shfl[w][src], size);
    warp_barrier(); /* nobody overwrites a slot before every lane has read */
}

bool check_kernel_pointer(const char *kernel, int arg, const void *p) {
    std::lock_guard<std::mutex> lock(g_mu);
    if (!p || is_device_locked(p, 0, t_device))
        return true;
    const Alloc *a = find_locked(p, 0);
    misuse(cudaErrorInvalidValue,
           "kernel %s: argument %d (%p) is not memory of cuda:%d, the current device (%s)", kernel,
           arg, p, t_device,
           !a              ? "host memory"
           : a->device < 0 ? "pinned host memory"
                           : "another device's memory");
    return false;
}

bool run_grid(const char *kernel, dim3 grid, dim3 block, size_t shared_bytes, cudaStream_t stream,
              const std::function<void()> &body) {
    std::lock_guard<std::mutex> lock(g_mu);
    init_locked();
    int sdev = 0;
    if (!stream_ok_locked(stream, &sdev)) {
        misuse(cudaErrorInvalidResourceHandle, "kernel %s: launched on an unknown stream", kernel);
        return false;
    }
    if (sdev != t_device) {
        misuse(cudaErrorInvalidResourceHandle,
               "kernel %s: launched on a stream of cuda:%d while cuda:%d is current", kernel, sdev,
               t_device);
        return false;
    }
    uint64_t threads = (uint64_t)block.x * block.y * block.z;
    if (threads == 0 || threads > 1024 || block.z > 64 || grid.x == 0 || grid.y == 0 ||
        grid.z == 0 || grid.x > 0x7fffffffu || grid.y > 65535 || grid.z > 65535 ||
        shared_bytes > 48 * 1024) {
        misuse(cudaErrorInvalidConfiguration,
               "kernel %s: invalid configuration grid (%u, %u, %u) block (%u, %u, %u) shared %zu",
               kernel, grid.x, grid.y, grid.z, block.x, block.y, block.z, shared_bytes);
        return false;
    }
    if (g_fibers.size() < threads)
        g_fibers.resize(threads);
    g_nthreads = (unsigned)threads;
    g_body = &body;
    g_kernel = kernel;
    gridDim = grid;
    blockDim = block;
    if (g_skip_kernels)
        return true; /* measuring the host side alone (results are garbage) */
    /* every other launch runs its blocks and threads in reverse order: a kernel that relies on
     * an order the GPU does not promise gives different results between the two */
    g_reverse = !g_reverse;
    for (unsigned z = 0; z < grid.z; z++)
        for (unsigned y = 0; y < grid.y; y++)
            for (unsigned x = 0; x < grid.x; x++) {
                blockIdx = g_reverse ? make_uint3(grid.x - 1 - x, grid.y - 1 - y, grid.z - 1 - z)
                                     : make_uint3(x, y, z);
                run_block();
            }
    return true;
}

} // namespace tide_emu

// ---- the runtime API ------------------------------------------------------------------------

extern "C" {

cudaError_t cudaGetDeviceCount(int *count) {
    std::lock_guard<std::mutex> lock(g_mu);
    init_locked();
    *count = g_count;
    return g_count > 0 ? cudaSuccess : fail(cudaErrorNoDevice);
}

cudaError_t cudaSetDevice(int device) {
    std::lock_guard<std::mutex> lock(g_mu);
    init_locked();
    if (device < 0 || device >= g_count)
        return fail(cudaErrorInvalidDevice);
    t_device = device;
    return cudaSuccess;
}

cudaError_t cudaGetDevice(int *device) {
    *device = t_device;
    return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int *value, cudaDeviceAttr attr, int device) {
    std::lock_guard<std::mutex> lock(g_mu);
    init_locked();
    if (device < 0 || device >= g_count)
        return fail(cudaErrorInvalidDevice);
    if (attr != cudaDevAttrMultiProcessorCount)
        return misuse(cudaErrorInvalidValue, "cudaDeviceGetAttribute: attribute %d not emulated",
                      (int)attr);
    *value = 4;
    return cudaSuccess;
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *stream, unsigned int flags) {
    (void)flags;
    std::lock_guard<std::mutex> lock(g_mu);
    EmuStream                  *s = new EmuStream{t_device, {}};
    g_streams.insert(s);
    *stream = (cudaStream_t)s;
    return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
    std::lock_guard<std::mutex> lock(g_mu);
    int                         dev = 0;
    if (!stream_ok_locked(stream, &dev))
        return misuse(cudaErrorInvalidResourceHandle, "cudaStreamSynchronize: unknown stream");
    return cudaSuccess;
}

cudaError_t cudaMalloc(void **ptr, size_t size) {
    std::lock_guard<std::mutex> lock(g_mu);
    init_locked();
    *ptr = NULL;
    size_t rounded = (size + 255) / 256 * 256;
    if (rounded == 0)
        rounded = 256;
    if (g_used[t_device] + rounded > g_total)
        return fail(cudaErrorMemoryAllocation);
    void *p = aligned_alloc(256, rounded);
    if (!p)
        return fail(cudaErrorMemoryAllocation);
    memset(p, 0xff, rounded); /* reads of memory never written give NaN, as garbage would */
    g_allocs[(uintptr_t)p] = Alloc{rounded, t_device};
    g_used[t_device] += rounded;
    *ptr = p;
    return cudaSuccess;
}

cudaError_t cudaFree(void *ptr) {
    if (!ptr)
        return cudaSuccess;
    std::lock_guard<std::mutex> lock(g_mu);
    settle_all_locked(); /* cudaFree waits for the device */
    auto it = g_allocs.find((uintptr_t)ptr);
    if (it == g_allocs.end() || it->second.device < 0)
        return misuse(cudaErrorInvalidValue, "cudaFree(%p): not a device allocation", ptr);
    g_used[it->second.device] -= it->second.size;
    g_allocs.erase(it);
    free(ptr);
    return cudaSuccess;
}

cudaError_t cudaHostAlloc(void **ptr, size_t size, unsigned int flags) {
    (void)flags;
    std::lock_guard<std::mutex> lock(g_mu);
    *ptr = NULL;
    void *p = aligned_alloc(256, (size + 255) / 256 * 256 + 256);
    if (!p)
        return fail(cudaErrorMemoryAllocation);
    g_allocs[(uintptr_t)p] = Alloc{size ? size : 1, -1};
    *ptr = p;
    return cudaSuccess;
}

cudaError_t cudaFreeHost(void *ptr) {
    std::lock_guard<std::mutex> lock(g_mu);
    settle_all_locked();
    auto it = g_allocs.find((uintptr_t)ptr);
    if (it == g_allocs.end() || it->second.device >= 0)
        return misuse(cudaErrorInvalidValue, "cudaFreeHost(%p): not pinned host memory", ptr);
    g_allocs.erase(it);
    free(ptr);
    return cudaSuccess;
}

cudaError_t cudaPointerGetAttributes(cudaPointerAttributes *attr, const void *ptr) {
    std::lock_guard<std::mutex> lock(g_mu);
    memset(attr, 0, sizeof *attr);
    const Alloc *a = find_locked(ptr, 0);
    if (!a) {
        attr->type = cudaMemoryTypeUnregistered;
        attr->device = -2;
        attr->hostPointer = (void *)ptr;
    } else if (a->device < 0) {
        attr->type = cudaMemoryTypeHost;
        attr->hostPointer = attr->devicePointer = (void *)ptr;
    } else {
        attr->type = cudaMemoryTypeDevice;
        attr->device = a->device;
        attr->devicePointer = (void *)ptr;
    }
    return cudaSuccess;
}

cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total) {
    std::lock_guard<std::mutex> lock(g_mu);
    init_locked();
    *total = g_total;
    *free_bytes = g_total - g_used[t_device];
    return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, cudaMemcpyKind kind,
                            cudaStream_t stream) {
    std::lock_guard<std::mutex> lock(g_mu);
    int                         sdev = 0;
    if (!stream_ok_locked(stream, &sdev))
        return misuse(cudaErrorInvalidResourceHandle, "cudaMemcpyAsync: unknown stream");
    if (count == 0)
        return cudaSuccess;
    bool dst_dev = is_device_locked(dst, count, -1), src_dev = is_device_locked(src, count, -1);
    bool want_dst = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice;
    bool want_src = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice;
    if (kind != cudaMemcpyDefault && (dst_dev != want_dst || src_dev != want_src))
        return misuse(cudaErrorInvalidValue,
                      "cudaMemcpyAsync(%p, %p, %zu, %s): the destination is %s and the source %s "
                      "(or a range runs past its allocation)",
                      dst, src, count, kind_name(kind),
                      dst_dev ? "device memory" : "not device memory",
                      src_dev ? "device memory" : "not device memory");
    uintptr_t d = (uintptr_t)dst, s = (uintptr_t)src;
    if (d < s + count && s < d + count)
        return misuse(cudaErrorInvalidValue, "cudaMemcpyAsync(%p, %p, %zu): ranges overlap", dst,
                      src, count);
    /* into pinned memory the copy is asynchronous: the host sees it after a synchronize */
    const Alloc *da = find_locked(dst, count);
    if (stream && src_dev && da && da->device < 0) {
        ((EmuStream *)stream)->in_flight.push_back(InFlight{dst, src, count});
        return cudaSuccess;
    }
    memcpy(dst, src, count);
    return cudaSuccess;
}

cudaError_t cudaMemcpyPeerAsync(void *dst, int dst_device, const void *src, int src_device,
                                size_t count, cudaStream_t stream) {
    std::lock_guard<std::mutex> lock(g_mu);
    int                         sdev = 0;
    if (!stream_ok_locked(stream, &sdev))
        return misuse(cudaErrorInvalidResourceHandle, "cudaMemcpyPeerAsync: unknown stream");
    if (count == 0)
        return cudaSuccess;
    if (!is_device_locked(dst, count, dst_device) || !is_device_locked(src, count, src_device))
        return misuse(cudaErrorInvalidValue,
                      "cudaMemcpyPeerAsync(%p on cuda:%d, %p on cuda:%d, %zu): a range is not "
                      "memory of the device named",
                      dst, dst_device, src, src_device, count);
    memcpy(dst, src, count);
    return cudaSuccess;
}

cudaError_t cudaMemsetAsync(void *ptr, int value, size_t count, cudaStream_t stream) {
    std::lock_guard<std::mutex> lock(g_mu);
    int                         sdev = 0;
    if (!stream_ok_locked(stream, &sdev))
        return misuse(cudaErrorInvalidResourceHandle, "cudaMemsetAsync: unknown stream");
    if (count && !is_device_locked(ptr, count, -1))
        return misuse(cudaErrorInvalidValue, "cudaMemsetAsync(%p, %zu): not device memory", ptr,
                      count);
    memset(ptr, value, count);
    return cudaSuccess;
}

cudaError_t cudaDeviceCanAccessPeer(int *can, int device, int peer) {
    std::lock_guard<std::mutex> lock(g_mu);
    init_locked();
    if (device < 0 || device >= g_count || peer < 0 || peer >= g_count)
        return fail(cudaErrorInvalidDevice);
    *can = device != peer;
    return cudaSuccess;
}

cudaError_t cudaDeviceEnablePeerAccess(int peer, unsigned int flags) {
    (void)flags;
    std::lock_guard<std::mutex> lock(g_mu);
    if (peer < 0 || peer >= g_count || peer == t_device)
        return fail(cudaErrorInvalidDevice);
    if (!g_peer.insert({t_device, peer}).second)
        return fail(cudaErrorPeerAccessAlreadyEnabled);
    return cudaSuccess;
}

cudaError_t cudaGetLastError(void) {
    cudaError_t e = t_last;
    t_last = cudaSuccess;
    return e;
}

const char *cudaGetErrorName(cudaError_t e) {
    switch (e) {
    case cudaSuccess:
        return "cudaSuccess";
    case cudaErrorInvalidValue:
        return "cudaErrorInvalidValue";
    case cudaErrorMemoryAllocation:
        return "cudaErrorMemoryAllocation";
    case cudaErrorInvalidConfiguration:
        return "cudaErrorInvalidConfiguration";
    case cudaErrorInvalidDevice:
        return "cudaErrorInvalidDevice";
    case cudaErrorInvalidResourceHandle:
        return "cudaErrorInvalidResourceHandle";
    case cudaErrorNoDevice:
        return "cudaErrorNoDevice";
    case cudaErrorPeerAccessAlreadyEnabled:
        return "cudaErrorPeerAccessAlreadyEnabled";
    default:
        return "cudaErrorUnknown";
    }
}

const char *cudaGetErrorString(cudaError_t e) {
    switch (e) {
    case cudaSuccess:
        return "no error";
    case cudaErrorInvalidValue:
        return "invalid argument";
    case cudaErrorMemoryAllocation:
        return "out of memory";
    case cudaErrorInvalidConfiguration:
        return "invalid configuration argument";
    case cudaErrorInvalidDevice:
        return "invalid device ordinal";
    case cudaErrorInvalidResourceHandle:
        return "invalid resource handle";
    case cudaErrorNoDevice:
        return "no CUDA-capable device is detected";
    case cudaErrorPeerAccessAlreadyEnabled:
        return "peer access is already enabled";
    default:
        return "unknown error";
    }
}

// ---- for the emulated cuBLAS --------------------------------------------------------------
// cuBLAS is its own library (spec/cuda_emu/cublas.cpp -> libcublas_emu.so), loaded on the first
// gemm as the real one is; it reaches the runtime's tables through these two, exported from the
// emulated libtide_cuda.so (spec/cuda_emu/exports.map).

__attribute__((visibility("default"))) int cuda_emu_current_device(void) {
    return t_device;
}

__attribute__((visibility("default"))) int
cuda_emu_gemm_operands_ok(const char *fn, cudaStream_t stream, const void *A, size_t aspan,
                          const void *B, size_t bspan, const void *C, size_t cspan) {
    std::lock_guard<std::mutex> lock(g_mu);
    int                         sdev = 0;
    if (!stream_ok_locked(stream, &sdev) || sdev != t_device) {
        fprintf(stderr, "cuda emu: %s: the handle's stream is not a stream of cuda:%d\n", fn,
                t_device);
        return 0;
    }
    if ((A && !is_device_locked(A, aspan, t_device)) ||
        (B && !is_device_locked(B, bspan, t_device)) || !is_device_locked(C, cspan, t_device)) {
        fprintf(stderr,
                "cuda emu: %s: an operand is not memory of cuda:%d or runs past its "
                "allocation\n",
                fn, t_device);
        return 0;
    }
    return 1;
}

} // extern "C"
