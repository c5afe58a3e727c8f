/*
 * random.c — CPU random fills and arange.
 *
 * Element i (row-major in out) takes counter offset + i of the counter-based generator in
 * scalar_math.h, so a seed gives the same numbers on every device and for any thread split.
 */
#include "cpu.h"
#include "scalar_math.h"

typedef struct rnd_arg {
    tide_dtype       dt;
    tide_random_kind kind;
    double           lo, hi;
    uint64_t         seed, offset;
} rnd_arg;

/* Uniform float32 into a contiguous row: rnd_row's numbers (tide_rng_bits, tide_rng_unit,
 * tide_rng_in_range_f), with the seed's key hashed once and no branch on the kind in the loop,
 * so the generator vectorizes (its 64-bit multiplies need AVX-512DQ: the v4 clone). Dropout
 * draws one per element of every activation it drops, a tenth of a transformer step. */
CPU_HOT static void uniform_f32_row(float *o, int64_t n, uint64_t seed, uint64_t first, double lo,
                                    double hi) {
    unsigned long long key = tide_rng_fmix(seed + 0x9E3779B97F4A7C15ULL);
    double             span = hi - lo;
    float              top = (float)hi, below = nextafterf(top, -INFINITY);
    int                clamp = hi > lo;
    for (int64_t i = 0; i < n; i++) {
        unsigned long long c = first + (uint64_t)i;
        unsigned long long bits = tide_rng_fmix(key + (c + 1) * 0x9E3779B97F4A7C15ULL);
        float              f = (float)(lo + span * tide_rng_unit(bits));
        o[i] = (clamp && f >= top) ? below : f;
    }
}

/* dropout's mask (TIDE_RANDOM_KEEP) into a contiguous float32 row, vectorized the same way */
CPU_HOT static void keep_f32_row(float *o, int64_t n, uint64_t seed, uint64_t first, double p,
                                 float value) {
    unsigned long long key = tide_rng_fmix(seed + 0x9E3779B97F4A7C15ULL);
    for (int64_t i = 0; i < n; i++) {
        unsigned long long c = first + (uint64_t)i;
        unsigned long long bits = tide_rng_fmix(key + (c + 1) * 0x9E3779B97F4A7C15ULL);
        o[i] = tide_rng_unit(bits) >= p ? value : 0.0f;
    }
}

static void rnd_row(char **p, const int64_t *s, int64_t n, int64_t index, void *arg) {
    const rnd_arg *ra = arg;
    char          *po = p[0];
    if (ra->dt == TIDE_DTYPE_F32 && s[0] == sizeof(float)) {
        uint64_t first = ra->offset + (uint64_t)index;
        if (ra->kind == TIDE_RANDOM_UNIFORM) {
            uniform_f32_row((float *)po, n, ra->seed, first, ra->lo, ra->hi);
            return;
        }
        if (ra->kind == TIDE_RANDOM_KEEP) {
            keep_f32_row((float *)po, n, ra->seed, first, ra->lo, (float)ra->hi);
            return;
        }
    }
    for (int64_t i = 0; i < n; i++, po += s[0]) {
        unsigned long long c = ra->offset + (uint64_t)(index + i);
        if (ra->kind == TIDE_RANDOM_KEEP) {
            double v = tide_rng_uniform(ra->seed, c) >= ra->lo ? ra->hi : 0.0;
            if (ra->dt == TIDE_DTYPE_F32)
                *(float *)po = (float)v;
            else
                *(double *)po = v;
        } else if (ra->kind == TIDE_RANDOM_NORMAL) {
            double v = ra->lo + ra->hi * tide_rng_normal(ra->seed, c);
            if (ra->dt == TIDE_DTYPE_F32)
                *(float *)po = (float)v;
            else
                *(double *)po = v;
        } else {
            double u = tide_rng_uniform(ra->seed, c);
            if (ra->dt == TIDE_DTYPE_F32)
                *(float *)po = tide_rng_in_range_f(ra->lo, ra->hi, u);
            else
                *(double *)po = tide_rng_in_range_d(ra->lo, ra->hi, u);
        }
    }
}

tide_status cpu_random(tide_device *dev, const tide_kview *out, tide_random_kind kind, double lo,
                       double hi, uint64_t seed, uint64_t offset) {
    (void)dev;
    const char *name = kind == TIDE_RANDOM_UNIFORM ? "uniform_"
                       : kind == TIDE_RANDOM_KEEP  ? "keep_mask_"
                                                   : "normal_";
    if (out->dtype != TIDE_DTYPE_F32 && out->dtype != TIDE_DTYPE_F64)
        return cpu_notsup(name, out->dtype);
    const tide_kview *v[1] = {out};
    cpu_iter          it;
    TIDE_TRY(cpu_iter_init(&it, name, 1, v));
    rnd_arg ra = {out->dtype, kind, lo, hi, seed, offset};
    cpu_iter_run(&it, CPU_PAR_GRAIN_HEAVY, rnd_row, &ra);
    return TIDE_OK;
}

tide_status cpu_arange(tide_device *dev, const tide_kview *out, double start, double step) {
    (void)dev;
    if (out->ndim != 1)
        return tide_seterr(TIDE_EINVAL, "arange: cpu kernel needs a 1-d out");
    if ((unsigned)out->dtype >= TIDE_DTYPE_COUNT)
        return tide_seterr(TIDE_EDTYPE, "arange: unknown dtype (cpu kernel)");
    int64_t n = out->shape[0], es = (int64_t)cpu_dtype_size(out->dtype);
    char   *po = out->data;
    for (int64_t i = 0; i < n; i++)
        tide_store_d(out->dtype, po + i * out->strides[0] * es, start + (double)i * step);
    return TIDE_OK;
}
