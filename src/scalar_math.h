/*
 * scalar_math.h — the scalar math of every elementwise op, one inline function each.
 *
 * Both the C compiler (src/cpu/) and nvcc (src/cuda/) include this file, so the CPU tests
 * cover the math the GPU runs. The function of op row X(..., fn, ...) of include/tide_ops.def
 * for a dtype is tide_<fn>_<suffix>: d (float64), f (float32, and the half types on CUDA), and
 * i32, i64, u8, b (bool) for rows whose DTYPES is ALL. The kernels are generated from the table
 * and call these by name, so a missing one is a build error.
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

/* ---- floats ----------------------------------------------------------------------------------
 * Each op in double (_d) and float (_f); CUDA's half types compute in float. */

/* the float and double twins of a one-input op written once as an expression of a */
#define TIDE_DEF_FLOAT_UNARY(NAME, EXPR_D, EXPR_F)                                                 \
    TIDE_HD double tide_##NAME##_d(double a) {                                                     \
        return EXPR_D;                                                                             \
    }                                                                                              \
    TIDE_HD float tide_##NAME##_f(float a) {                                                       \
        return EXPR_F;                                                                             \
    }
#define TIDE_DEF_FLOAT_BINARY(NAME, EXPR_D, EXPR_F)                                                \
    TIDE_HD double tide_##NAME##_d(double a, double b) {                                           \
        return EXPR_D;                                                                             \
    }                                                                                              \
    TIDE_HD float tide_##NAME##_f(float a, float b) {                                              \
        return EXPR_F;                                                                             \
    }

/* a libm function and its float twin: tide_exp_d is exp, tide_exp_f is expf */
#define TIDE_DEF_LIBM_UNARY(NAME)  TIDE_DEF_FLOAT_UNARY(NAME, NAME(a), NAME##f(a))
#define TIDE_DEF_LIBM_BINARY(NAME) TIDE_DEF_FLOAT_BINARY(NAME, NAME(a, b), NAME##f(a, b))

TIDE_DEF_FLOAT_BINARY(add, a + b, a + b)
TIDE_DEF_FLOAT_BINARY(sub, a - b, a - b)
TIDE_DEF_FLOAT_BINARY(mul, a *b, a *b)
TIDE_DEF_FLOAT_BINARY(div, a / b, a / b)
TIDE_DEF_LIBM_BINARY(pow)
TIDE_DEF_LIBM_BINARY(atan2)
/* fmod: truncated, the sign of the dividend (a - trunc(a/b)*b), as C, math.fmod and PyTorch */
TIDE_DEF_LIBM_BINARY(fmod)
TIDE_DEF_FLOAT_BINARY(floordiv, floor(a / b), floorf(a / b))
/* NaN wins, as in PyTorch */
TIDE_DEF_FLOAT_BINARY(maximum, (a != a || a > b) ? a : b, (a != a || a > b) ? a : b)
TIDE_DEF_FLOAT_BINARY(minimum, (a != a || a < b) ? a : b, (a != a || a < b) ? a : b)
/* remainder, Lua's %: the result takes the sign of the divisor (a - floor(a/b)*b), as Python,
 * Lua and PyTorch's remainder do */
TIDE_HD double tide_remainder_d(double a, double b) {
    double m = fmod(a, b);
    return (m != 0 && ((m < 0) != (b < 0))) ? m + b : m;
}
TIDE_HD float tide_remainder_f(float a, float b) {
    float m = fmodf(a, b);
    return (m != 0 && ((m < 0) != (b < 0))) ? m + b : m;
}

TIDE_DEF_FLOAT_UNARY(neg, -a, -a)
TIDE_DEF_FLOAT_UNARY(abs, fabs(a), fabsf(a))
TIDE_DEF_LIBM_UNARY(exp)
TIDE_DEF_LIBM_UNARY(expm1)
TIDE_DEF_LIBM_UNARY(log)
TIDE_DEF_LIBM_UNARY(log1p)
TIDE_DEF_LIBM_UNARY(log2)
TIDE_DEF_LIBM_UNARY(sqrt)
TIDE_DEF_FLOAT_UNARY(rsqrt, 1.0 / sqrt(a), 1.0f / sqrtf(a))
TIDE_DEF_FLOAT_UNARY(reciprocal, 1.0 / a, 1.0f / a)
TIDE_DEF_FLOAT_UNARY(square, a *a, a *a)
TIDE_DEF_LIBM_UNARY(tanh)
TIDE_DEF_LIBM_UNARY(sin)
TIDE_DEF_LIBM_UNARY(cos)
TIDE_DEF_LIBM_UNARY(tan)
TIDE_DEF_LIBM_UNARY(erf)
TIDE_DEF_LIBM_UNARY(erfc)
TIDE_DEF_LIBM_UNARY(floor)
TIDE_DEF_LIBM_UNARY(ceil)
TIDE_DEF_LIBM_UNARY(trunc)
/* half to even, as PyTorch (rint rounds in the default mode, to nearest even) */
TIDE_DEF_FLOAT_UNARY(round, rint(a), rintf(a))
/* PyTorch's frac: a - trunc(a), the sign of a (frac(-1.5) is -0.5; inf gives NaN) */
TIDE_DEF_FLOAT_UNARY(frac, a - trunc(a), a - truncf(a))
TIDE_DEF_FLOAT_UNARY(sign, (a > 0) - (a < 0), (float)((a > 0) - (a < 0)))
/* NaN stays NaN and -0 stays -0, as PyTorch */
TIDE_DEF_FLOAT_UNARY(relu, a < 0 ? 0 : a, a < 0 ? 0 : a)
/* the overflow-free form on each side of 0 */
TIDE_DEF_FLOAT_UNARY(sigmoid, a >= 0 ? 1.0 / (1.0 + exp(-a)) : exp(a) / (1.0 + exp(a)),
                     a >= 0 ? 1.0f / (1.0f + expf(-a)) : expf(a) / (1.0f + expf(a)))
/* x * sigmoid(x); exp(-x) = inf for x below about -709 gives -0, as PyTorch */
TIDE_DEF_FLOAT_UNARY(silu, a / (1.0 + exp(-a)), a / (1.0f + expf(-a)))
/* PyTorch's defaults beta = 1, threshold = 20: linear above the threshold */
TIDE_DEF_FLOAT_UNARY(softplus, a > 20 ? a : log1p(exp(a)), a > 20 ? a : log1pf(expf(a)))
/* exact GELU (PyTorch's default): x * Phi(x), Phi from erfc, which keeps its relative accuracy
 * in the left tail where 1 + erf cancels (the CPU's float32 kernel: vec_math.h's, the same) */
TIDE_DEF_FLOAT_UNARY(gelu, 0.5 * a * erfc(a * -0.70710678118654752440),
                     0.5f * a * erfcf(a * -0.70710678f))

TIDE_HD double tide_clamp_d(double a, double lo, double hi) {
    return a < lo ? lo : (a > hi ? hi : a);
}
TIDE_HD float tide_clamp_f(float a, float lo, float hi) {
    return a < lo ? lo : (a > hi ? hi : a);
}

/* predicates (bool results) */
TIDE_DEF_FLOAT_UNARY(isnan, (uint8_t)(a != a), (uint8_t)(a != a))
TIDE_DEF_FLOAT_UNARY(isinf, (uint8_t)(a == INFINITY || a == -INFINITY),
                     (uint8_t)(a == INFINITY || a == -INFINITY))
TIDE_DEF_FLOAT_UNARY(isfinite, (uint8_t)(a == a && a != INFINITY && a != -INFINITY),
                     (uint8_t)(a == a && a != INFINITY && a != -INFINITY))

/* ---- integers ----------------------------------------------------------------------------------
 * Exact in the dtype, wrapping like C unsigned arithmetic (two's complement), never trapping: the
 * CPU calls the i32, i64, u8 and b (bool) functions, CUDA computes every integer dtype in int64
 * and stores back (int32 and uint8 wrap the same way; bool is nonzero). Ops whose row says
 * DTYPES FLOAT have no integer functions: the core promotes their integer inputs. */
#define TIDE_DEF_INT_OPS(S, T, U)                                                                  \
    TIDE_HD T tide_add_##S(T a, T b) {                                                             \
        return (T)((U)a + (U)b);                                                                   \
    }                                                                                              \
    TIDE_HD T tide_sub_##S(T a, T b) {                                                             \
        return (T)((U)a - (U)b);                                                                   \
    }                                                                                              \
    TIDE_HD T tide_mul_##S(T a, T b) {                                                             \
        return (T)((U)a * (U)b);                                                                   \
    }                                                                                              \
    TIDE_HD T tide_square_##S(T a) {                                                               \
        return (T)((U)a * (U)a);                                                                   \
    }                                                                                              \
    TIDE_HD T tide_maximum_##S(T a, T b) {                                                         \
        return a > b ? a : b;                                                                      \
    }                                                                                              \
    TIDE_HD T tide_minimum_##S(T a, T b) {                                                         \
        return a < b ? a : b;                                                                      \
    }                                                                                              \
    TIDE_HD T tide_neg_##S(T a) {                                                                  \
        return (T)(0 - (U)a);                                                                      \
    }                                                                                              \
    TIDE_HD T tide_relu_##S(T a) {                                                                 \
        return a > 0 ? a : 0;                                                                      \
    }                                                                                              \
    TIDE_HD T tide_clamp_##S(T a, T lo, T hi) {                                                    \
        return a < lo ? lo : (a > hi ? hi : a);                                                    \
    }
/* and what differs by sign: uint8's abs is the identity and its sign 0 or 1 */
#define TIDE_DEF_SIGNED_OPS(S, T, U)                                                               \
    TIDE_DEF_INT_OPS(S, T, U)                                                                      \
    TIDE_HD T tide_abs_##S(T a) {                                                                  \
        return a < 0 ? (T)(0 - (U)a) : a;                                                          \
    }                                                                                              \
    TIDE_HD T tide_sign_##S(T a) {                                                                 \
        return (T)((a > 0) - (a < 0));                                                             \
    }
TIDE_DEF_SIGNED_OPS(i32, int32_t, uint32_t)
TIDE_DEF_SIGNED_OPS(i64, int64_t, uint64_t)
TIDE_DEF_INT_OPS(u8, uint8_t, uint8_t)
TIDE_HD uint8_t tide_abs_u8(uint8_t a) {
    return a;
}
TIDE_HD uint8_t tide_sign_u8(uint8_t a) {
    return a > 0;
}

/* integer division. floor_divide and remainder as Lua and Python (floor, the remainder takes
 * the divisor's sign), fmod truncated as C. MIN // -1 wraps to MIN as two's complement and
 * MIN % -1 is 0, where C's MIN / -1 and MIN % -1 trap (SIGFPE). A zero divisor gives 0 (NumPy's
 * value): the CPU raises before it computes (elementwise.c), CUDA cannot know without a device
 * synchronisation and gives these values (docs/API.md). */
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

/* what integers share with every dtype: rounding is the identity (PyTorch returns the integer
 * tensor unchanged) and no integer is NaN or infinite */
#define TIDE_DEF_INT_SAME(NAME, S, T)                                                              \
    TIDE_HD T tide_##NAME##_##S(T a) {                                                             \
        return a;                                                                                  \
    }
#define TIDE_DEF_INT_CONST_PRED(NAME, S, T, V)                                                     \
    TIDE_HD uint8_t tide_##NAME##_##S(T a) {                                                       \
        (void)a;                                                                                   \
        return V;                                                                                  \
    }
#define TIDE_DEF_INT_ROUNDING(S, T)                                                                \
    TIDE_DEF_INT_SAME(floor, S, T)                                                                 \
    TIDE_DEF_INT_SAME(ceil, S, T)                                                                  \
    TIDE_DEF_INT_SAME(round, S, T)                                                                 \
    TIDE_DEF_INT_SAME(trunc, S, T)                                                                 \
    TIDE_DEF_INT_CONST_PRED(isnan, S, T, 0)                                                        \
    TIDE_DEF_INT_CONST_PRED(isinf, S, T, 0)                                                        \
    TIDE_DEF_INT_CONST_PRED(isfinite, S, T, 1)
TIDE_DEF_INT_ROUNDING(i32, int32_t)
TIDE_DEF_INT_ROUNDING(i64, int64_t)
TIDE_DEF_INT_ROUNDING(u8, uint8_t)
TIDE_DEF_INT_ROUNDING(b, uint8_t)

/* bool: the uint8 result made 0 or 1 (add is or, mul is and, sub is xor) */
#define TIDE_DEF_BOOL_BINARY(NAME)                                                                 \
    TIDE_HD uint8_t tide_##NAME##_b(uint8_t a, uint8_t b) {                                        \
        return tide_##NAME##_u8(a, b) != 0;                                                        \
    }
#define TIDE_DEF_BOOL_UNARY(NAME)                                                                  \
    TIDE_HD uint8_t tide_##NAME##_b(uint8_t a) {                                                   \
        return tide_##NAME##_u8(a) != 0;                                                           \
    }
TIDE_DEF_BOOL_BINARY(add)
TIDE_DEF_BOOL_BINARY(sub)
TIDE_DEF_BOOL_BINARY(mul)
TIDE_DEF_BOOL_BINARY(floordiv)
TIDE_DEF_BOOL_BINARY(remainder)
TIDE_DEF_BOOL_BINARY(fmod)
TIDE_DEF_BOOL_BINARY(maximum)
TIDE_DEF_BOOL_BINARY(minimum)
TIDE_DEF_BOOL_UNARY(neg)
TIDE_DEF_BOOL_UNARY(abs)
TIDE_DEF_BOOL_UNARY(sign)
TIDE_DEF_BOOL_UNARY(relu)
TIDE_DEF_BOOL_UNARY(square)
TIDE_HD uint8_t tide_clamp_b(uint8_t a, uint8_t lo, uint8_t hi) {
    return tide_clamp_u8(a, lo, hi) != 0;
}

/* ---- comparisons and logic, every dtype (bool results; nonzero is true, NaN too) ---------- */
#define TIDE_DEF_BOOL_FN(NAME, S, T, EXPR)                                                         \
    TIDE_HD uint8_t tide_##NAME##_##S(T a, T b) {                                                  \
        return EXPR;                                                                               \
    }
#define TIDE_DEF_COMPARE(S, T)                                                                     \
    TIDE_DEF_BOOL_FN(eq, S, T, a == b)                                                             \
    TIDE_DEF_BOOL_FN(ne, S, T, a != b)                                                             \
    TIDE_DEF_BOOL_FN(lt, S, T, a < b)                                                              \
    TIDE_DEF_BOOL_FN(le, S, T, a <= b)                                                             \
    TIDE_DEF_BOOL_FN(gt, S, T, a > b)                                                              \
    TIDE_DEF_BOOL_FN(ge, S, T, a >= b)                                                             \
    TIDE_DEF_BOOL_FN(logical_and, S, T, a != 0 && b != 0)                                          \
    TIDE_DEF_BOOL_FN(logical_or, S, T, a != 0 || b != 0)                                           \
    TIDE_DEF_BOOL_FN(logical_xor, S, T, (a != 0) != (b != 0))                                      \
    TIDE_HD uint8_t tide_logical_not_##S(T a) {                                                    \
        return a == 0;                                                                             \
    }
TIDE_DEF_COMPARE(d, double)
TIDE_DEF_COMPARE(f, float)
TIDE_DEF_COMPARE(i32, int32_t)
TIDE_DEF_COMPARE(i64, int64_t)
TIDE_DEF_COMPARE(u8, uint8_t)
TIDE_DEF_COMPARE(b, uint8_t)

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
