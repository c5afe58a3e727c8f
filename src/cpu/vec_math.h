/*
 * vec_math.h — float32 exp, sigmoid, tanh and GELU written so a loop of them vectorizes: no libm
 * calls, no branches, no float-to-int conversion (the exponent comes from the bits of a
 * float rounded by adding 1.5 * 2^23). glibc's expf/tanhf are scalar calls: in an LSTM step
 * they took a quarter of the time (issue 15). Accuracy, checked over the whole float range in
 * spec/c/test_cpu_kernels.c: exp within 3 ulp (below 88.3; clamped above: these serve
 * sigmoid and tanh), sigmoid and tanh within 2e-7 absolute and 5e-7 relative; NaN stays NaN, +-inf
 * give the limits. Used by the CPU kernels only; the CUDA kernels keep CUDA's own functions.
 */
#ifndef TIDE_CPU_VEC_MATH_H
#define TIDE_CPU_VEC_MATH_H

#include <math.h>
#include <stdint.h>
#include <string.h>

static inline float cpu_bits_to_float(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static inline uint32_t cpu_float_to_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* e^x: x = n ln2 + r with |r| <= ln2/2, e^r by a degree-6 polynomial (Taylor terms, error
 * below 1 ulp on that interval), 2^n from the exponent bits; x clamped to [-87.3, 88.3], where
 * n stays in [-126, 127], and 0 below (so a softmax gives masked entries exactly 0) (NaN passes the
 * clamps: comparisons with NaN are false) */
static inline float cpu_vexpf(float x0) {
    const float shift = 12582912.0f; /* 1.5 * 2^23: adding it rounds to an integer */
    float       x = x0 > 88.3f ? 88.3f : x0;
    x = x < -87.3f ? -87.3f : x;
    float t = x * 1.44269504088896341f + shift;
    float n = t - shift;
    /* ln2 in two parts so n * ln2_hi is exact */
    float r = x - n * 0.693359375f;
    r = r + n * 2.12194440e-4f;
    float p = 1.0f / 720;
    p = p * r + 1.0f / 120;
    p = p * r + 1.0f / 24;
    p = p * r + 1.0f / 6;
    p = p * r + 0.5f;
    p = p * r + 1.0f;
    p = p * r + 1.0f;
    uint32_t k = cpu_float_to_bits(t) - cpu_float_to_bits(shift); /* n as an integer */
    float    e = p * cpu_bits_to_float((k + 127u) << 23);
    return x0 < -87.3f ? 0.0f : e; /* below: 0 (libm's denormals differ by < 2^-126) */
}

static inline float cpu_vsigmoidf(float x) {
    return 1.0f / (1.0f + cpu_vexpf(-x));
}

/* tanh(x) = 1 - 2 / (e^2x + 1) loses its relative accuracy near 0, where the odd Taylor
 * polynomial up to x^9 takes over (|x| < 0.25: error below 1e-9 relative); a blend, no branch */
static inline float cpu_vtanhf(float x) {
    float ax = x < 0 ? -x : x;
    float big = 1.0f - 2.0f / (cpu_vexpf(2.0f * ax) + 1.0f);
    float x2 = x * x;
    float small =
        ax *
        (1.0f + x2 * (-1.0f / 3 + x2 * (2.0f / 15 + x2 * (-17.0f / 315 + x2 * (62.0f / 2835)))));
    float v = ax < 0.25f ? small : big;
    v = x != x ? x : v; /* NaN: the blend above would make it 1 */
    return x < 0 ? -v : v;
}

/* erfc(z) for z >= 0 by the Chebyshev fit of Numerical Recipes' erfcc: t = 1 / (1 + z/2),
 * erfc = t exp(-z^2 + P(t)); relative error 1.1e-7 in exact arithmetic at every z (the tail
 * included, where 1 - erf loses everything), a few ulp more in float */
static inline float cpu_verfcf_pos(float z) {
    float t = 1.0f / (1.0f + 0.5f * z);
    float p = 0.17087277f;
    p = p * t - 0.82215223f;
    p = p * t + 1.48851587f;
    p = p * t - 1.13520398f;
    p = p * t + 0.27886807f;
    p = p * t - 0.18628806f;
    p = p * t + 0.09678418f;
    p = p * t + 0.37409196f;
    p = p * t + 1.00002368f;
    p = p * t - 1.26551223f;
    return t * cpu_vexpf(p - z * z);
}

/* Phi(x), the standard normal's CDF: erfc(|x| / sqrt 2) / 2 on the left, 1 minus it on the
 * right (no cancellation in the left tail, unlike 1 + erf) */
static inline float cpu_vnormcdff(float x) {
    float q = 0.5f * cpu_verfcf_pos((x < 0 ? -x : x) * 0.70710678118654752f);
    return x < 0 ? q : 1.0f - q;
}

/* exact GELU, x Phi(x) (PyTorch's default; the tanh form is another function) */
static inline float cpu_vgeluf(float x) {
    return x * cpu_vnormcdff(x);
}

/* GELU's derivative Phi(x) + x phi(x); x phi(x) is 0 where phi underflows, +-inf included */
static inline float cpu_vgelu_gradf(float x) {
    float phi = 0.39894228040143268f * cpu_vexpf(-0.5f * x * x);
    float xphi = phi == 0 ? 0.0f : x * phi;
    return cpu_vnormcdff(x) + xphi;
}

/* softmax and log-softmax of one contiguous float32 row, PyTorch's way: the max first, so exp
 * never overflows; a NaN anywhere makes the row NaN; the sum accumulates in float lanes, as
 * PyTorch's vectorized kernel does. Always inlined, so each ISA copy of a caller (CPU_HOT)
 * gets its own vector code. */
__attribute__((always_inline)) static inline void cpu_softmax_row_f32(float *o, const float *a,
                                                                      int64_t len, int as_log) {
    float mx = -INFINITY;
    int   nan = 0;
#pragma omp simd reduction(max : mx) reduction(| : nan)
    for (int64_t j = 0; j < len; j++) {
        mx = a[j] > mx ? a[j] : mx;
        nan |= a[j] != a[j];
    }
    if (nan)
        mx = NAN;
    float sum = 0;
    if (as_log) {
#pragma omp simd reduction(+ : sum)
        for (int64_t j = 0; j < len; j++)
            sum += cpu_vexpf(a[j] - mx);
        float lse = (float)log(sum);
#pragma omp simd
        for (int64_t j = 0; j < len; j++)
            o[j] = a[j] - mx - lse;
        return;
    }
#pragma omp simd reduction(+ : sum)
    for (int64_t j = 0; j < len; j++) {
        float e = cpu_vexpf(a[j] - mx);
        o[j] = e;
        sum += e;
    }
    float inv = (float)(1.0 / sum);
#pragma omp simd
    for (int64_t j = 0; j < len; j++)
        o[j] *= inv;
}

#endif
