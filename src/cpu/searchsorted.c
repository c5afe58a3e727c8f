/*
 * searchsorted.c — the searchsorted kernel row (include/tide_kernels.def): a binary search per
 * value in its row of the sorted sequence, on the threads by value. tide.searchsorted had run
 * the search as tensor ops, a dozen passes over every value per halving (10^6 values into 1000
 * boundaries: 234 ms, 3.7x PyTorch's).
 */
#include "cpu.h"

/* PyTorch's lower and upper bounds: the first position whose element is not below the value
 * (right: not at or below it); the negated comparisons send a NaN value to n */
#define SEARCH_LOOP(T)                                                                             \
    do {                                                                                           \
        const T *vals = (const T *)c->in[0]->data, *seq = (const T *)c->in[1]->data;               \
        int64_t *pos = (int64_t *)c->out[0]->data;                                                 \
        _Pragma("omp parallel for schedule(static) if (total > 4096)") for (int64_t i = 0;         \
                                                                            i < total; i++) {      \
            const T *row = seq + (i / d) * n;                                                      \
            T        v = vals[i];                                                                  \
            int64_t  lo = 0, hi = n;                                                               \
            while (lo < hi) {                                                                      \
                int64_t mid = lo + ((hi - lo) >> 1);                                               \
                int     before = right ? !(row[mid] > v) : !(row[mid] >= v);                       \
                lo = before ? mid + 1 : lo;                                                        \
                hi = before ? hi : mid;                                                            \
            }                                                                                      \
            pos[i] = lo;                                                                           \
        }                                                                                          \
    } while (0)

tide_status cpu_searchsorted(tide_device *dev, const tide_kernel_call *c) {
    (void)dev;
    int64_t d = c->d, n = c->n, total = c->rows * c->d;
    int     right = (int)c->p[2].i;
    switch (c->dtype) {
    case TIDE_DTYPE_F32:
        SEARCH_LOOP(float);
        break;
    case TIDE_DTYPE_F64:
        SEARCH_LOOP(double);
        break;
    case TIDE_DTYPE_I32:
        SEARCH_LOOP(int32_t);
        break;
    case TIDE_DTYPE_I64:
        SEARCH_LOOP(int64_t);
        break;
    case TIDE_DTYPE_U8:
        SEARCH_LOOP(uint8_t);
        break;
    default:
        return cpu_notsup("searchsorted", c->dtype);
    }
    return TIDE_OK;
}
