/*
 * row_norm2.c — the row_norm2 kernel row (include/tide_kernels.def): each row's 2-norm in one
 * pass over it, on the threads by row. tide's norm(2, dim) squared x into a temporary, summed it
 * and took the root: three passes and a copy of x (x:norm(2, -1) of [1000, 1000] float32 took
 * 8x PyTorch's time).
 */
#include "cpu.h"
#include <math.h>

#define NORM_LANES 16 /* independent accumulators: the adds' latency hidden, a SIMD multiple */

#define ROW_NORM2(T)                                                                               \
    do {                                                                                           \
        const T *x = (const T *)c->in[0]->data;                                                    \
        T       *out = (T *)c->out[0]->data;                                                       \
        _Pragma("omp parallel for schedule(static) if (rows * d > 32768)") for (int64_t r = 0;     \
                                                                                r < rows; r++) {   \
            const T *xr = x + r * d;                                                               \
            double   acc[NORM_LANES] = {0};                                                        \
            int64_t  j = 0;                                                                        \
            for (; j + NORM_LANES <= d; j += NORM_LANES)                                           \
                for (int u = 0; u < NORM_LANES; u++)                                               \
                    acc[u] += (double)xr[j + u] * (double)xr[j + u];                               \
            for (; j < d; j++)                                                                     \
                acc[0] += (double)xr[j] * (double)xr[j];                                           \
            for (int w = NORM_LANES / 2; w > 0; w /= 2) /* pairwise */                             \
                for (int u = 0; u < w; u++)                                                        \
                    acc[u] += acc[u + w];                                                          \
            out[r] = (T)sqrt(acc[0]);                                                              \
        }                                                                                          \
    } while (0)

CPU_HOT static void norm_f32(const tide_kernel_call *c, int64_t rows, int64_t d) {
    ROW_NORM2(float);
}

CPU_HOT static void norm_f64(const tide_kernel_call *c, int64_t rows, int64_t d) {
    ROW_NORM2(double);
}

tide_status cpu_row_norm2(tide_device *dev, const tide_kernel_call *c) {
    (void)dev;
    if (c->dtype == TIDE_DTYPE_F32)
        norm_f32(c, c->rows, c->d);
    else if (c->dtype == TIDE_DTYPE_F64)
        norm_f64(c, c->rows, c->d);
    else
        return cpu_notsup("row_norm2", c->dtype);
    return TIDE_OK;
}
