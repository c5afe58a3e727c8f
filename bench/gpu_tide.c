/*
 * gpu_tide.c — tide's side of the GPU benchmarks, through the C API on cuda:0 (bench/gpu_raw.cu
 * measures the references; bench/gpu_check.sh compares):
 *   sgemm and bf16 gemm 8192^3 (tide_matmul), add of 2^28 float32 (bytes moved: 3 x 1 GiB),
 *   host-to-device of 1 GiB from pinned (tide_tensor_pin_memory) and pageable memory,
 *   device-to-host of 1 GiB into pinned (tide_tensor_copy_) and pageable memory, and the
 *   per-op cost of a small a + b (allocation, dispatch and launch).
 * Prints "key value" lines. `gpu_tide smoke` runs every step at toy sizes: the test suite does so
 * on the emulated GPU (spec/cuda_emu/) so that this program is known to work before a GPU runs it.
 */
#include "bench_util.h"

#include <string.h>

static tide_device *gpu;
static int          smoke; /* toy sizes */

static void sync_gpu(void) {
    must(tide_device_synchronize(gpu), "synchronize");
}

static tide_tensor *filled(tide_dtype dt, int ndim, const int64_t *shape, tide_device *dev) {
    tide_tensor *t = NULL;
    must(tide_tensor_empty(NULL, dev, dt, ndim, shape, &t), "empty");
    must(tide_random_(NULL, t, TIDE_RANDOM_UNIFORM, -1, 1), "uniform_");
    return t;
}

static double gemm_tflops(tide_dtype dt) {
    int64_t      g = smoke ? 64 : 8192;
    int64_t      s[2] = {g, g};
    tide_tensor *a = filled(dt, 2, s, gpu), *b = filled(dt, 2, s, gpu);
    double       best = 1e30;
    for (int r = 0; r < 6; r++) {
        tide_tensor *c = NULL;
        sync_gpu();
        double t0 = now_s();
        must(tide_matmul(NULL, a, b, &c), "matmul");
        sync_gpu();
        double dt_s = now_s() - t0;
        if (r > 0 && dt_s < best) /* the first run creates the cuBLAS handle */
            best = dt_s;
        tide_tensor_release(c);
    }
    tide_tensor_release(a);
    tide_tensor_release(b);
    return 2.0 * (double)g * (double)g * (double)g / best / 1e12;
}

int main(int argc, char **argv) {
    smoke = argc > 1 && strcmp(argv[1], "smoke") == 0;
    must(tide_init(), "init");
    if (!tide_cuda_is_available()) {
        printf("no GPU: %s\n", tide_cuda_unavailable_reason());
        return 0;
    }
    must(tide_device_get("cuda:0", &gpu), "device");
    tide_device *cpu = NULL;
    must(tide_device_get("cpu", &cpu), "device");

    printf("tide_sgemm_tflops %.3f\n", gemm_tflops(TIDE_DTYPE_F32));
    printf("tide_bf16_gemm_tflops %.3f\n", gemm_tflops(TIDE_DTYPE_BF16));

    /* add of 2^28 float32 into a preallocated output (as the raw copy writes into one) */
    int64_t      n = (int64_t)1 << (smoke ? 12 : 28);
    tide_tensor *a = filled(TIDE_DTYPE_F32, 1, &n, gpu), *b = filled(TIDE_DTYPE_F32, 1, &n, gpu);
    tide_tensor *c = NULL;
    must(tide_binary(NULL, TIDE_OP_ADD, a, b, &c), "add");
    double best = 1e30;
    for (int r = 0; r < 10; r++) {
        sync_gpu();
        double t0 = now_s();
        must(tide_binary(NULL, TIDE_OP_ADD, a, b, &c), "add");
        sync_gpu();
        double dt_s = now_s() - t0;
        if (dt_s < best)
            best = dt_s;
    }
    printf("tide_add_gbs %.1f\n", 3.0 * (double)n * 4 / best / 1e9);
    tide_tensor_release(a);
    tide_tensor_release(b);
    tide_tensor_release(c);

    /* host to device, 1 GiB */
    tide_tensor *h = NULL, *p = NULL;
    must(tide_tensor_empty(NULL, cpu, TIDE_DTYPE_F32, 1, &n, &h), "empty");
    memset(tide_tensor_data(h), 1, (size_t)n * 4);
    must(tide_tensor_pin_memory(NULL, h, &p), "pin_memory");
    double pinned = 1e30, pageable = 1e30;
    for (int r = 0; r < 5; r++) {
        tide_tensor *g = NULL;
        double       t0 = now_s();
        must(tide_tensor_to(NULL, p, gpu, TIDE_DTYPE_F32, 0, &g), "to");
        sync_gpu();
        double dt_s = now_s() - t0;
        if (dt_s < pinned)
            pinned = dt_s;
        tide_tensor_release(g);
        g = NULL;
        if (r < 3) {
            t0 = now_s();
            must(tide_tensor_to(NULL, h, gpu, TIDE_DTYPE_F32, 0, &g), "to");
            sync_gpu();
            dt_s = now_s() - t0;
            if (dt_s < pageable)
                pageable = dt_s;
            tide_tensor_release(g);
        }
    }
    printf("tide_h2d_pinned_gbs %.2f\n", (double)n * 4 / pinned / 1e9);
    printf("tide_h2d_pageable_gbs %.2f\n", (double)n * 4 / pageable / 1e9);

    /* device to host, 1 GiB: into the pinned tensor (tide_tensor_copy_, as the raw copy writes
     * into a page-locked buffer) and into a new pageable one (tide_tensor_to, as :cpu() does) */
    tide_tensor *d = NULL;
    must(tide_tensor_to(NULL, p, gpu, TIDE_DTYPE_F32, 0, &d), "to");
    pinned = pageable = 1e30;
    for (int r = 0; r < 5; r++) {
        sync_gpu();
        double t0 = now_s();
        must(tide_tensor_copy_(NULL, p, d), "copy_");
        sync_gpu();
        double dt_s = now_s() - t0;
        if (dt_s < pinned)
            pinned = dt_s;
        if (r < 3) {
            tide_tensor *o = NULL;
            t0 = now_s();
            must(tide_tensor_to(NULL, d, cpu, TIDE_DTYPE_F32, 0, &o), "to");
            sync_gpu();
            dt_s = now_s() - t0;
            if (dt_s < pageable)
                pageable = dt_s;
            tide_tensor_release(o);
        }
    }
    printf("tide_d2h_pinned_gbs %.2f\n", (double)n * 4 / pinned / 1e9);
    printf("tide_d2h_pageable_gbs %.2f\n", (double)n * 4 / pageable / 1e9);
    tide_tensor_release(d);
    tide_tensor_release(h);
    tide_tensor_release(p);

    /* small a + b: a fresh output each time, as a script does */
    int64_t      k = 100;
    tide_tensor *x = filled(TIDE_DTYPE_F32, 1, &k, gpu), *y = filled(TIDE_DTYPE_F32, 1, &k, gpu);
    const int    iters = smoke ? 50 : 20000;
    double       t_ops[5];
    for (int r = 0; r < 5; r++) {
        sync_gpu();
        double t0 = now_s();
        for (int i = 0; i < iters; i++) {
            tide_tensor *z = NULL;
            must(tide_binary(NULL, TIDE_OP_ADD, x, y, &z), "add");
            tide_tensor_release(z);
        }
        sync_gpu();
        t_ops[r] = (now_s() - t0) / iters * 1e6;
    }
    printf("tide_c_small_add_us %.3f\n", median(t_ops, 5));
    tide_tensor_release(x);
    tide_tensor_release(y);
    return 0;
}
