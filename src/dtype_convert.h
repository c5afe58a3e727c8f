/*
 * dtype_convert.h — scalar element conversions shared by the core (src/tensor.c) and the CPU
 * backend (src/cpu/): float16 / bfloat16 <-> float, saturating double -> integer casts, and
 * loading or storing one element of any dtype as a double.
 *
 * Plain C with static inline functions; nvcc includes it too (src/cuda/common.cuh takes the
 * saturating casts from here, and the cuda_fp16 / cuda_bf16 intrinsics for half types).
 */
#ifndef TIDE_DTYPE_CONVERT_H
#define TIDE_DTYPE_CONVERT_H

#include "tide.h"
#include <stdint.h>
#include <string.h>

#ifdef __CUDACC__
#define TIDE_CONV_HD __host__ __device__ static inline
#else
#define TIDE_CONV_HD static inline
#endif

/* a float32's bits and back */
TIDE_CONV_HD uint32_t tide_f32_to_bits(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    return x;
}
TIDE_CONV_HD float tide_bits_to_f32(uint32_t x) {
    float f;
    memcpy(&f, &x, 4);
    return f;
}

/* float16 / bfloat16 bit conversions (round to nearest even, nan stays quiet) */
TIDE_CONV_HD float tide_half_to_float(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
    if (exp == 0x1f) {
        bits = sign | 0x7f800000u | (man << 13); /* inf / nan */
    } else if (exp != 0) {
        bits = sign | ((exp + 112) << 23) | (man << 13);
    } else if (man == 0) {
        bits = sign;
    } else { /* subnormal: normalise */
        int e = -1;
        do {
            e++;
            man <<= 1;
        } while (!(man & 0x400));
        bits = sign | ((uint32_t)(112 - e) << 23) | ((man & 0x3ff) << 13);
    }
    return tide_bits_to_f32(bits);
}

TIDE_CONV_HD uint16_t tide_float_to_half(float f) {
    uint32_t x = tide_f32_to_bits(f);
    uint32_t sign = (x >> 16) & 0x8000, ax = x & 0x7fffffffu;
    if (ax >= 0x7f800000u) /* inf or nan (keep nan quiet) */
        return (uint16_t)(sign | 0x7c00 | (ax > 0x7f800000u ? 0x200 : 0));
    if (ax >= 0x477ff000u) /* rounds to >= 65520: overflow */
        return (uint16_t)(sign | 0x7c00);
    if (ax < 0x38800000u) { /* below the smallest normal: subnormal or zero */
        if (ax < 0x33000000u)
            return (uint16_t)sign;
        /* value = m * 2^(e-150) = r * 2^-24: r = m >> (126 - e), rounded to nearest even */
        uint32_t e = ax >> 23, m = (ax & 0x7fffff) | 0x800000;
        uint32_t drop = 126 - e, rem = m & ((1u << drop) - 1), halfway = 1u << (drop - 1);
        uint32_t r = m >> drop;
        if (rem > halfway || (rem == halfway && (r & 1)))
            r++;
        return (uint16_t)(sign | r);
    }
    uint32_t r = ((ax >> 13) - (112 << 10)), rem = ax & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (r & 1)))
        r++; /* may carry into the exponent, which is the correct rounding */
    return (uint16_t)(sign | r);
}

TIDE_CONV_HD float tide_bf16_to_float(uint16_t h) {
    return tide_bits_to_f32((uint32_t)h << 16);
}

TIDE_CONV_HD uint16_t tide_float_to_bf16(float f) {
    uint32_t x = tide_f32_to_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((x >> 16) | 0x40);
    x += 0x7fff + ((x >> 16) & 1);
    return (uint16_t)(x >> 16);
}

/* a double rounded to float "to odd": truncated toward zero, its last bit set when inexact. A
 * double rounded to odd at float's 24 bits and then to nearest at float16's 11 (bfloat16's 8)
 * gets the same bits as the double rounded to nearest directly (Boldo and Melquiond's
 * round-to-odd): (float)d alone rounds twice, and a double just above a half-way point lands
 * on it and ties to even. As CUDA's __double2half / __double2bfloat16 round. */
TIDE_CONV_HD float tide_double_to_float_odd(double d) {
    float f = (float)d;
    if (f != f || (double)f == d)
        return f; /* NaN or exact */
    uint32_t x = tide_f32_to_bits(f);
    double   af = f < 0 ? -(double)f : (double)f, ad = d < 0 ? -d : d;
    if (af > ad)
        x--; /* rounded away from zero (to inf, too): step back toward it. (A d that rounded to
              * a zero f is below it already: a step would turn +0's bits into a NaN's.) */
    return tide_bits_to_f32(x | 1u);
}

TIDE_CONV_HD uint16_t tide_double_to_half(double d) {
    return tide_float_to_half(tide_double_to_float_odd(d));
}

TIDE_CONV_HD uint16_t tide_double_to_bf16(double d) {
    return tide_float_to_bf16(tide_double_to_float_odd(d));
}

/* float f rounded to float16 (bfloat16 when bf), as a float */
TIDE_CONV_HD float tide_round_half(int bf, float f) {
    return bf ? tide_bf16_to_float(tide_float_to_bf16(f))
              : tide_half_to_float(tide_float_to_half(f));
}

/* the largest float16 (bfloat16 when bf) value below hi, as a float: a uniform draw in [lo, hi)
 * that rounds up to hi in the half dtype takes it instead, as float32 draws take the float
 * below hi. Rounding to nearest lands within one step of hi, so two steps down always do. */
TIDE_CONV_HD float tide_half_below(int bf, double hi) {
    uint16_t b = bf ? tide_float_to_bf16((float)hi) : tide_float_to_half((float)hi);
    for (int k = 0; k < 3; k++) {
        float v = bf ? tide_bf16_to_float(b) : tide_half_to_float(b);
        if (v < hi)
            return v;
        b = (b & 0x8000u) ? (uint16_t)(b + 1) : b == 0 ? (uint16_t)0x8001u : (uint16_t)(b - 1);
    }
    return (float)hi; /* hi NaN or below every finite value: nothing lies below it */
}

/* saturating double -> integer casts (NaN -> 0): C leaves out-of-range conversions undefined */
#define TIDE_DEF_SAT(S, T, MIN, MAX)                                                               \
    TIDE_CONV_HD T tide_sat_##S(double v) {                                                        \
        if (v != v)                                                                                \
            return 0;                                                                              \
        if (v >= (double)(MAX))                                                                    \
            return MAX;                                                                            \
        if (v <= (double)(MIN))                                                                    \
            return MIN;                                                                            \
        return (T)v;                                                                               \
    }
TIDE_DEF_SAT(i64, int64_t, INT64_MIN, INT64_MAX)
TIDE_DEF_SAT(i32, int32_t, INT32_MIN, INT32_MAX)
TIDE_CONV_HD uint8_t tide_sat_u8(double v) {
    if (v != v || v <= 0)
        return 0;
    if (v >= 255.0)
        return 255;
    return (uint8_t)v;
}

/* read the element of dtype dt at p as a double */
TIDE_CONV_HD double tide_load_d(tide_dtype dt, const void *p) {
    switch (dt) {
    case TIDE_DTYPE_F32:
        return *(const float *)p;
    case TIDE_DTYPE_F64:
        return *(const double *)p;
    case TIDE_DTYPE_F16:
        return tide_half_to_float(*(const uint16_t *)p);
    case TIDE_DTYPE_BF16:
        return tide_bf16_to_float(*(const uint16_t *)p);
    case TIDE_DTYPE_I32:
        return *(const int32_t *)p;
    case TIDE_DTYPE_I64:
        return (double)*(const int64_t *)p;
    case TIDE_DTYPE_BOOL:
        return *(const uint8_t *)p ? 1 : 0;
    default: /* u8 */
        return *(const uint8_t *)p;
    }
}

/* write a double as dtype dt at p: floats round, integers saturate (NaN -> 0), bool is v != 0 */
TIDE_CONV_HD void tide_store_d(tide_dtype dt, void *p, double v) {
    switch (dt) {
    case TIDE_DTYPE_F32:
        *(float *)p = (float)v;
        break;
    case TIDE_DTYPE_F64:
        *(double *)p = v;
        break;
    case TIDE_DTYPE_F16:
        *(uint16_t *)p = tide_double_to_half(v);
        break;
    case TIDE_DTYPE_BF16:
        *(uint16_t *)p = tide_double_to_bf16(v);
        break;
    case TIDE_DTYPE_I32:
        *(int32_t *)p = tide_sat_i32(v);
        break;
    case TIDE_DTYPE_I64:
        *(int64_t *)p = tide_sat_i64(v);
        break;
    case TIDE_DTYPE_U8:
        *(uint8_t *)p = tide_sat_u8(v);
        break;
    default: /* bool */
        *(uint8_t *)p = v != 0;
        break;
    }
}

#endif
