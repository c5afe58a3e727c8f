/*
 * scalar_math.h — the scalar math of every elementwise op, one inline function each.
 *
 * Both the C compiler (src/cpu/) and nvcc (src/cuda/) include this file, so the CPU tests
 * cover the math the GPU runs. Each function works on double or float through the TIDE_T
 * generic pair below; integer dtypes go through the double versions and are cast back, except
 * integer division, which has exact functions of its own (below).
 */
#ifndef TIDE_SCALAR_MATH_H
#define TIDE_SCALAR_MATH_H

#include <math.h>
#include <stdint.h>

#ifdef __CUDACC__
#define TIDE_HD __host__ __device__ static inline
#else
#define TIDE_HD static inline
#endif

/* floating ops, in double; float kernels call the f-suffixed twins below */
TIDE_HD double tide_add_d(double a, double b) {
    return a + b;
}
TIDE_HD double tide_sub_d(double a, double b) {
    return a - b;
}
TIDE_HD double tide_mul_d(double a, double b) {
    return a * b;
}
TIDE_HD double tide_div_d(double a, double b) {
    return a / b;
}
TIDE_HD double tide_pow_d(double a, double b) {
    return pow(a, b);
}
/* remainder, Lua's %: the result takes the sign of the divisor (a - floor(a/b)*b), as Python,
 * Lua and PyTorch's remainder do */
TIDE_HD double tide_remainder_d(double a, double b) {
    double m = fmod(a, b);
    return (m != 0 && ((m < 0) != (b < 0))) ? m + b : m;
}
/* fmod: truncated, the sign of the dividend (a - trunc(a/b)*b), as C, math.fmod and PyTorch */
TIDE_HD double tide_fmod_d(double a, double b) {
    return fmod(a, b);
}
TIDE_HD double tide_floordiv_d(double a, double b) {
    return floor(a / b);
}
TIDE_HD double tide_maximum_d(double a, double b) {
    return (a != a || a > b) ? a : b;
}
TIDE_HD double tide_minimum_d(double a, double b) {
    return (a != a || a < b) ? a : b;
}

TIDE_HD double tide_neg_d(double a) {
    return -a;
}
TIDE_HD double tide_abs_d(double a) {
    return fabs(a);
}
TIDE_HD double tide_exp_d(double a) {
    return exp(a);
}
TIDE_HD double tide_log_d(double a) {
    return log(a);
}
TIDE_HD double tide_sqrt_d(double a) {
    return sqrt(a);
}
TIDE_HD double tide_rsqrt_d(double a) {
    return 1.0 / sqrt(a);
}
TIDE_HD double tide_tanh_d(double a) {
    return tanh(a);
}
TIDE_HD double tide_sigmoid_d(double a) {
    return a >= 0 ? 1.0 / (1.0 + exp(-a)) : exp(a) / (1.0 + exp(a));
}
TIDE_HD double tide_relu_d(double a) {
    return a > 0 ? a : 0;
}
/* exact GELU (PyTorch's default): x * Phi(x) */
TIDE_HD double tide_gelu_d(double a) {
    return 0.5 * a * (1.0 + erf(a * 0.70710678118654752440));
}
TIDE_HD double tide_sin_d(double a) {
    return sin(a);
}
TIDE_HD double tide_cos_d(double a) {
    return cos(a);
}
TIDE_HD double tide_sign_d(double a) {
    return (a > 0) - (a < 0);
}
TIDE_HD double tide_clamp_d(double a, double lo, double hi) {
    return a < lo ? lo : (a > hi ? hi : a);
}

TIDE_HD float tide_add_f(float a, float b) {
    return a + b;
}
TIDE_HD float tide_sub_f(float a, float b) {
    return a - b;
}
TIDE_HD float tide_mul_f(float a, float b) {
    return a * b;
}
TIDE_HD float tide_div_f(float a, float b) {
    return a / b;
}
TIDE_HD float tide_pow_f(float a, float b) {
    return powf(a, b);
}
TIDE_HD float tide_remainder_f(float a, float b) {
    float m = fmodf(a, b);
    return (m != 0 && ((m < 0) != (b < 0))) ? m + b : m;
}
TIDE_HD float tide_fmod_f(float a, float b) {
    return fmodf(a, b);
}
TIDE_HD float tide_floordiv_f(float a, float b) {
    return floorf(a / b);
}
TIDE_HD float tide_maximum_f(float a, float b) {
    return (a != a || a > b) ? a : b;
}
TIDE_HD float tide_minimum_f(float a, float b) {
    return (a != a || a < b) ? a : b;
}

TIDE_HD float tide_neg_f(float a) {
    return -a;
}
TIDE_HD float tide_abs_f(float a) {
    return fabsf(a);
}
TIDE_HD float tide_exp_f(float a) {
    return expf(a);
}
TIDE_HD float tide_log_f(float a) {
    return logf(a);
}
TIDE_HD float tide_sqrt_f(float a) {
    return sqrtf(a);
}
TIDE_HD float tide_rsqrt_f(float a) {
    return 1.0f / sqrtf(a);
}
TIDE_HD float tide_tanh_f(float a) {
    return tanhf(a);
}
TIDE_HD float tide_sigmoid_f(float a) {
    return a >= 0 ? 1.0f / (1.0f + expf(-a)) : expf(a) / (1.0f + expf(a));
}
TIDE_HD float tide_relu_f(float a) {
    return a > 0 ? a : 0;
}
TIDE_HD float tide_gelu_f(float a) {
    return 0.5f * a * (1.0f + erff(a * 0.70710678f));
}
TIDE_HD float tide_sin_f(float a) {
    return sinf(a);
}
TIDE_HD float tide_cos_f(float a) {
    return cosf(a);
}
TIDE_HD float tide_sign_f(float a) {
    return (float)((a > 0) - (a < 0));
}
TIDE_HD float tide_clamp_f(float a, float lo, float hi) {
    return a < lo ? lo : (a > hi ? hi : a);
}

/* ---- integer division ----------------------------------------------------------------------
 * One definition for the CPU (int32, int64, uint8 kernels) and CUDA (which computes every
 * integer dtype in int64). floor_divide and remainder as Lua and Python (floor, the remainder
 * takes the divisor's sign), fmod truncated as C. MIN // -1 wraps to MIN as two's complement
 * and MIN % -1 is 0, where C's MIN / -1 and MIN % -1 trap (SIGFPE). A zero divisor gives 0
 * (NumPy's value): the CPU raises before it computes (elementwise.c), CUDA cannot know without
 * a device synchronisation and gives these values (docs/API.md). */
#define TIDE_DEF_INT_DIVISION(S, T, U)                                                             \
    TIDE_HD T tide_floordiv_##S(T a, T b) {                                                        \
        if (b == 0)                                                                                \
            return 0;                                                                              \
        if (b == -1)                                                                               \
            return (T)(0 - (U)a);                                                                  \
        T q = (T)(a / b);                                                                          \
        return (T)((a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q);                              \
    }                                                                                              \
    TIDE_HD T tide_remainder_##S(T a, T b) {                                                       \
        if (b == 0 || b == -1)                                                                     \
            return 0;                                                                              \
        T m = (T)(a % b);                                                                          \
        return (T)((m != 0 && ((m < 0) != (b < 0))) ? m + b : m);                                  \
    }                                                                                              \
    TIDE_HD T tide_fmod_##S(T a, T b) {                                                            \
        return (T)((b == 0 || b == -1) ? 0 : a % b);                                               \
    }
TIDE_DEF_INT_DIVISION(i32, int32_t, uint32_t)
TIDE_DEF_INT_DIVISION(i64, int64_t, uint64_t)
/* unsigned: floor and truncation agree */
TIDE_HD uint8_t tide_floordiv_u8(uint8_t a, uint8_t b) {
    return b ? (uint8_t)(a / b) : 0;
}
TIDE_HD uint8_t tide_remainder_u8(uint8_t a, uint8_t b) {
    return b ? (uint8_t)(a % b) : 0;
}
TIDE_HD uint8_t tide_fmod_u8(uint8_t a, uint8_t b) {
    return tide_remainder_u8(a, b);
}

/* ---- counter-based random numbers ---------------------------------------------------------
 * Element i of a draw is a pure function of (seed, offset + i), so the CPU and CUDA backends
 * produce the same values for the same seed, with no generator state on the device. */

/* splitmix64's finalizer: a bijection of 64-bit words that mixes every input bit into all */
TIDE_HD unsigned long long tide_rng_fmix(unsigned long long z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}
/* 64 random bits: draw `counter` of the splitmix64 stream keyed by the hashed seed. Hashing the
 * seed keeps nearby seeds' streams apart, and no (seed, counter) maps to the fixed point 0 of the
 * finalizer by construction (seed 0, counter 0 used to give bits 0: rand 0.0, randn -37). */
TIDE_HD unsigned long long tide_rng_bits(unsigned long long seed, unsigned long long counter) {
    unsigned long long key = tide_rng_fmix(seed + 0x9E3779B97F4A7C15ULL);
    return tide_rng_fmix(key + (counter + 1) * 0x9E3779B97F4A7C15ULL);
}
/* 64 bits to the open interval (0, 1): the top 52 bits plus one half, times 2^-52, gives
 * 2^-53 .. 1 - 2^-53, each exactly representable, so no word of bits rounds to 0 or to 1 */
TIDE_HD double tide_rng_unit(unsigned long long bits) {
    return ((double)(bits >> 12) + 0.5) * (1.0 / 4503599627370496.0);
}
/* uniform in (0, 1) */
TIDE_HD double tide_rng_uniform(unsigned long long seed, unsigned long long counter) {
    return tide_rng_unit(tide_rng_bits(seed, counter));
}
/* standard normal by Box-Muller from the uniforms of the counter's two halves; u1 > 0, so the
 * logarithm is finite and |x| <= sqrt(-2 ln 2^-53) = 8.57 */
TIDE_HD double tide_rng_normal(unsigned long long seed, unsigned long long counter) {
    double u1 = tide_rng_uniform(seed, 2 * counter), u2 = tide_rng_uniform(seed, 2 * counter + 1);
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586476925 * u2);
}
/* lo + (hi - lo) * u kept in [lo, hi): rounding can reach hi (in float64 too: 1 + (1 - 2^-53)
 * is 2) */
TIDE_HD double tide_rng_in_range_d(double lo, double hi, double u) {
    double v = lo + (hi - lo) * u;
    return (v >= hi && hi > lo) ? nextafter(hi, lo) : v; /* the largest double below hi */
}
TIDE_HD float tide_rng_in_range_f(double lo, double hi, double u) {
    float f = (float)(lo + (hi - lo) * u);
    return (f >= (float)hi && hi > lo) ? nextafterf((float)hi, -INFINITY) : f;
}

#endif /* TIDE_SCALAR_MATH_H */
