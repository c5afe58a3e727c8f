/*
 * random.c — CPU random fills and arange.
 *
 * Element i (row-major in out) takes counter offset + i of the counter-based generator in
 * scalar_math.h, so a seed gives the same numbers on every device and for any thread split.
 */
#include "cpu.h"
#include <math.h>
#include "scalar_math.h"
#include "vec_math.h"

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

/* standard normal float32 into a contiguous row: tide_rng_normal's Box-Muller (the uniforms of
 * counters 2c and 2c + 1) with vec_math.h's double-precision log and cos(2 pi u) for libm's
 * scalar calls (randn of 10^6 took 4x PyTorch's time); rounded to float the same numbers but
 * for about one draw in 20 million that lies within a double's error of a float's rounding
 * boundary (test_vec_math), on every thread split as before */
CPU_HOT static void normal_f32_row(float *o, int64_t n, uint64_t seed, uint64_t first, double mean,
                                   double std) {
    unsigned long long key = tide_rng_fmix(seed + 0x9E3779B97F4A7C15ULL);
    enum { BLOCK = 256 };
    double u1[BLOCK], u2[BLOCK];
    for (int64_t i0 = 0; i0 < n; i0 += BLOCK) {
        int m = n - i0 < BLOCK ? (int)(n - i0) : BLOCK;
        /* the uniforms first: the hash's 64-bit multiplies vectorize only with AVX-512DQ, and
         * in the same loop they kept the logarithm and cosine scalar too */
        for (int j = 0; j < m; j++) {
            unsigned long long c = 2 * (first + (uint64_t)(i0 + j));
            u1[j] = tide_rng_unit(tide_rng_fmix(key + (c + 1) * 0x9E3779B97F4A7C15ULL));
            u2[j] = tide_rng_unit(tide_rng_fmix(key + (c + 2) * 0x9E3779B97F4A7C15ULL));
        }
        for (int j = 0; j < m; j++) {
            double z = sqrt(-2.0 * cpu_vlog_d(u1[j])) * cpu_vcos_2pi_d(u2[j]);
            o[i0 + j] = (float)(mean + std * z);
        }
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
        if (ra->kind == TIDE_RANDOM_NORMAL) {
            normal_f32_row((float *)po, n, ra->seed, first, ra->lo, ra->hi);
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

/* a contiguous arange of the common dtypes, typed (tide_store_d's switch per element had cost
 * ten times PyTorch's loop); 0 for the others. The values are tide_store_d's. */
#define ARANGE_ROW(T, CONV)                                                                        \
    do {                                                                                           \
        T *o = (T *)po;                                                                            \
        /* an int index per chunk: AVX2 converts int32s to doubles, not int64s (the chunk's base   \
         * plus the index is i exactly, as a double) */                                            \
        for (int64_t base = 0; base < n; base += (int64_t)1 << 30) {                               \
            int    m = n - base < ((int64_t)1 << 30) ? (int)(n - base) : 1 << 30;                  \
            double b = (double)base;                                                               \
            for (int k = 0; k < m; k++)                                                            \
                o[base + k] = CONV(start + (b + (double)k) * step);                                \
        }                                                                                          \
    } while (0)
CPU_HOT static int arange_row(tide_dtype dt, char *po, int64_t n, double start, double step) {
    switch (dt) {
    case TIDE_DTYPE_F32:
        ARANGE_ROW(float, (float));
        return 1;
    case TIDE_DTYPE_F64:
        ARANGE_ROW(double, (double));
        return 1;
    case TIDE_DTYPE_I64:
        if (start == floor(start) && step == floor(step) &&
            fabs(start) + (double)n * fabs(step) < 9007199254740992.0) {
            /* integers all the way (exact below 2^53): an induction the compiler vectorizes */
            int64_t *o = (int64_t *)po, v = (int64_t)start, d = (int64_t)step;
            for (int64_t i = 0; i < n; i++)
                o[i] = v + i * d;
            return 1;
        }
        ARANGE_ROW(int64_t, tide_sat_i64);
        return 1;
    case TIDE_DTYPE_I32:
        ARANGE_ROW(int32_t, tide_sat_i32);
        return 1;
    default:
        return 0;
    }
}

tide_status cpu_arange(tide_device *dev, const tide_kview *out, double start, double step) {
    (void)dev;
    if (out->ndim != 1)
        return tide_seterr(TIDE_EINVAL, "arange: cpu kernel needs a 1-d out");
    if ((unsigned)out->dtype >= TIDE_DTYPE_COUNT)
        return tide_seterr(TIDE_EDTYPE, "arange: unknown dtype (cpu kernel)");
    int64_t n = out->shape[0], es = (int64_t)cpu_dtype_size(out->dtype);
    char   *po = out->data;
    if (out->strides[0] == 1 && arange_row(out->dtype, po, n, start, step))
        return TIDE_OK;
    for (int64_t i = 0; i < n; i++)
        tide_store_d(out->dtype, po + i * out->strides[0] * es, start + (double)i * step);
    return TIDE_OK;
}
