/*
 * random.cu — uniform_, normal_ and dropout's keep mask from the counter-based generator of
 * scalar_math.h: element i (row-major in out) is a pure function of (seed, offset + i), so the GPU
 * draws the same numbers as the CPU for the same seed, with no generator state on the device.
 */
#include "map.cuh"

/* float16 and bfloat16 take the float32 draw, rounded, as the CPU (src/cpu/half.c): a value
 * goes through float, so double rounding matches too; a uniform draw that rounds up to hi takes
 * `below`, the largest half value under hi (tide_half_below) */
__global__ void k_random(tide_iter<1> it, uint32_t n, uint64_t first, void *out, int dt, int kind,
                         double lo, double hi, float below, unsigned long long seed,
                         unsigned long long offset) {
    bool is_half = dt == TIDE_DTYPE_F16 || dt == TIDE_DTYPE_BF16;
    for (uint32_t i = (uint32_t)TIDE_GTID; i < n; i += (uint32_t)TIDE_GSTRIDE) {
        int64_t off[1];
        tide_iter_offsets<1, uint32_t>(it, i, off);
        unsigned long long c = offset + first + i;
        double             v;
        if (kind == TIDE_RANDOM_KEEP) { /* dropout's mask: hi where the draw is >= lo */
            v = tide_rng_uniform(seed, c) >= lo ? hi : 0.0;
        } else if (kind == TIDE_RANDOM_NORMAL) {
            v = lo + hi * tide_rng_normal(seed, c);
        } else {
            /* as the CPU: [lo, hi) after rounding to the dtype */
            double u = tide_rng_uniform(seed, c);
            if (dt == TIDE_DTYPE_F32 || is_half) {
                float f = tide_rng_in_range_f(lo, hi, u);
                if (is_half && hi > lo && tide_round_half(dt == TIDE_DTYPE_BF16, f) >= hi)
                    f = below;
                if (dt == TIDE_DTYPE_F32) {
                    ((float *)out)[off[0]] = f;
                    continue;
                }
                v = f;
            } else {
                v = tide_rng_in_range_d(lo, hi, u);
            }
        }
        tide_store_dyn(out, off[0], dt, is_half ? (double)(float)v : v);
    }
}

extern "C" tide_status tide_cuda_random(tide_device *dev, const tide_kview *out,
                                        tide_random_kind kind, double lo, double hi, uint64_t seed,
                                        uint64_t offset) {
    cudaStream_t stream = NULL;
    TIDE_TRY(tide_cuda_enter(dev, &stream));
    int64_t n = tide_cuda_numel(out);
    if (n == 0)
        return TIDE_OK;
    /* coalescing keeps row-major order, so the counter of element i stays offset + i */
    const tide_kview *views[1] = {out};
    tide_iter<1>      it = tide_iter_make<1>(views);
    char             *po = (char *)out->data;
    size_t            es = tide_cuda_dtype_size(out->dtype);
    float   below = tide_half_below(out->dtype == TIDE_DTYPE_BF16, hi); /* used by half dtypes */
    int64_t inner = n / it.shape[0];
    return tide_iter_chunks<1>(it, n, [&](const tide_iter<1> &p, uint32_t m, const int64_t *off) {
        /* a piece starts at row off[0] / stride: its first counter is that row times inner */
        uint64_t first = 0;
        if (off && it.stride[0][0] != 0)
            first = (uint64_t)(off[0] / it.stride[0][0] * inner);
        TIDE_LAUNCH(k_random, tide_map_grid(m), TIDE_CUDA_THREADS, 0, stream, p, m, first,
                    po + (off ? off[0] * (int64_t)es : 0), (int)out->dtype, (int)kind, lo, hi,
                    below, (unsigned long long)seed, (unsigned long long)offset);
        TIDE_CUDA_LAUNCHED(k_random);
        return TIDE_OK;
    });
}
