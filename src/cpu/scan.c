/*
 * scan.c — CPU running sums: the kernel row cumsum of include/tide_kernels.def, over the rows of
 * a contiguous [rows, len * inner] view, each summed along len.
 *
 * float32 accumulates in double, as PyTorch's CPU cumsum (its acc type): a prefix of 10^6
 * uniform values keeps float32's last digit. Integers wrap in their own dtype (unsigned
 * arithmetic: no overflow in C). Rows run in parallel, a row's sums in order; a single long
 * row is cut into fixed blocks (cumsum_long). Either way the result is the same on any number
 * of threads.
 */
#include "cpu.h"
#include <stdlib.h>

/* one row [len, inner]: acc holds inner running sums (the accumulator type A) */
#define CUMSUM_ROW(NAME, T, A)                                                                     \
    CPU_HOT static void NAME(T *y, const T *x, A *acc, int64_t len, int64_t inner) {               \
        if (inner == 1) { /* along the last dim: one running sum in a register */                  \
            A s = 0;                                                                               \
            for (int64_t i = 0; i < len; i++) {                                                    \
                s = (A)(s + (A)x[i]);                                                              \
                y[i] = (T)s;                                                                       \
            }                                                                                      \
            return;                                                                                \
        }                                                                                          \
        for (int64_t k = 0; k < inner; k++)                                                        \
            acc[k] = 0;                                                                            \
        for (int64_t i = 0; i < len; i++) {                                                        \
            const T *xi = x + i * inner;                                                           \
            T       *yi = y + i * inner;                                                           \
            _Pragma("omp simd") for (int64_t k = 0; k < inner; k++) {                              \
                acc[k] = (A)(acc[k] + (A)xi[k]);                                                   \
                yi[k] = (T)acc[k];                                                                 \
            }                                                                                      \
        }                                                                                          \
    }
CUMSUM_ROW(cumsum_f32, float, double)
CUMSUM_ROW(cumsum_f64, double, double)
CUMSUM_ROW(cumsum_i32, int32_t, uint32_t)
CUMSUM_ROW(cumsum_i64, int64_t, uint64_t)

/* One long row along its last dim (a vector of a million) in two passes over fixed blocks, so
 * that threads share it: each block's sum (four interleaved sums, for the adder's latency),
 * the blocks' offsets in order, then each block's running sum from its offset. The blocks are
 * fixed by len alone: the same bits on any number of threads. off: nb accumulators. */
#define SCAN_BLOCK ((int64_t)1 << 14)
#define CUMSUM_LONG(NAME, T, A)                                                                    \
    CPU_HOT static void NAME(T *y, const T *x, A *off, int64_t len) {                              \
        int64_t nb = (len + SCAN_BLOCK - 1) / SCAN_BLOCK;                                          \
        _Pragma("omp parallel for schedule(static)") for (int64_t b = 0; b < nb; b++) {            \
            int64_t i = b * SCAN_BLOCK, end = i + SCAN_BLOCK < len ? i + SCAN_BLOCK : len;         \
            A       s[4] = {0, 0, 0, 0};                                                           \
            for (; i + 4 <= end; i += 4)                                                           \
                for (int k = 0; k < 4; k++)                                                        \
                    s[k] = (A)(s[k] + (A)x[i + k]);                                                \
            for (; i < end; i++)                                                                   \
                s[0] = (A)(s[0] + (A)x[i]);                                                        \
            off[b] = (A)((A)(s[0] + s[1]) + (A)(s[2] + s[3]));                                     \
        }                                                                                          \
        A run = 0;                                                                                 \
        for (int64_t b = 0; b < nb; b++) {                                                         \
            A t = off[b];                                                                          \
            off[b] = run;                                                                          \
            run = (A)(run + t);                                                                    \
        }                                                                                          \
        _Pragma("omp parallel for schedule(static)") for (int64_t b = 0; b < nb; b++) {            \
            int64_t i = b * SCAN_BLOCK, end = i + SCAN_BLOCK < len ? i + SCAN_BLOCK : len;         \
            A       s = off[b];                                                                    \
            for (; i < end; i++) {                                                                 \
                s = (A)(s + (A)x[i]);                                                              \
                y[i] = (T)s;                                                                       \
            }                                                                                      \
        }                                                                                          \
    }
CUMSUM_LONG(cumsum_long_f32, float, double)
CUMSUM_LONG(cumsum_long_f64, double, double)
CUMSUM_LONG(cumsum_long_i32, int32_t, uint32_t)
CUMSUM_LONG(cumsum_long_i64, int64_t, uint64_t)

/* a single row of 4 blocks or more along its last dim: the two-pass path (-1: out of memory) */
static int cumsum_long(tide_dtype dt, void *y, const void *x, int64_t len) {
    uint64_t *off = malloc((size_t)((len + SCAN_BLOCK - 1) / SCAN_BLOCK) * sizeof *off);
    if (!off)
        return -1;
    switch (dt) {
    case TIDE_DTYPE_F32:
        cumsum_long_f32(y, x, (double *)off, len);
        break;
    case TIDE_DTYPE_F64:
        cumsum_long_f64(y, x, (double *)off, len);
        break;
    case TIDE_DTYPE_I32:
        cumsum_long_i32(y, x, (uint32_t *)off, len);
        break;
    default:
        cumsum_long_i64(y, x, off, len);
        break;
    }
    free(off);
    return 0;
}

/* call: in x; out y; p d, inner */
tide_status cpu_cumsum(tide_device *dev, const tide_kernel_call *c) {
    (void)dev;
    int64_t    rows = c->rows, d = c->d, inner = c->p[1].i;
    tide_dtype dt = c->dtype;
    if (dt != TIDE_DTYPE_F32 && dt != TIDE_DTYPE_F64 && dt != TIDE_DTYPE_I32 &&
        dt != TIDE_DTYPE_I64)
        return cpu_notsup("cumsum", dt);
    if (d % inner)
        return tide_seterr(TIDE_EINVAL, "cumsum: inner %lld does not divide the row's %lld",
                           (long long)inner, (long long)d);
    int64_t len = d / inner;
    size_t  es = cpu_dtype_size(dt);
    if (rows == 1 && inner == 1 && len >= 4 * SCAN_BLOCK) {
        if (cumsum_long(dt, c->out[0]->data, c->in[0]->data, len))
            return tide_seterr(TIDE_ENOMEM, "cumsum: out of host memory for its block sums");
        return TIDE_OK;
    }
    int par = rows > 1 && rows * d >= CPU_PAR_GRAIN;
    int failed = 0;
#pragma omp parallel if (par) reduction(| : failed)
    {
        /* 8 bytes a running sum: double or a 64-bit integer */
        uint64_t *acc = malloc((size_t)inner * sizeof *acc);
        if (!acc)
            failed = 1;
#pragma omp for schedule(static)
        for (int64_t r = 0; r < rows; r++) {
            if (!acc)
                continue;
            const void *x = (const char *)c->in[0]->data + (size_t)(r * d) * es;
            void       *y = (char *)c->out[0]->data + (size_t)(r * d) * es;
            switch (dt) {
            case TIDE_DTYPE_F32:
                cumsum_f32(y, x, (double *)acc, len, inner);
                break;
            case TIDE_DTYPE_F64:
                cumsum_f64(y, x, (double *)acc, len, inner);
                break;
            case TIDE_DTYPE_I32:
                cumsum_i32(y, x, (uint32_t *)acc, len, inner);
                break;
            default:
                cumsum_i64(y, x, acc, len, inner);
                break;
            }
        }
        free(acc);
    }
    if (failed)
        return tide_seterr(TIDE_ENOMEM, "cumsum: out of host memory for %lld running sums",
                           (long long)inner);
    return TIDE_OK;
}
