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
/* hypot: libm's for float64; float32 from the squares summed in double, which no float's square
 * overflows or underflows (glibc's hypotf computes so, one call an element: tide.hypot was a
 * Lua composition of 18 passes), and an infinite side gives +inf even beside a NaN, as C's */
TIDE_HD double tide_hypot_d(double a, double b) {
    return hypot(a, b);
}
TIDE_HD float tide_hypot_f(float a, float b) {
    double r = sqrt((double)a * a + (double)b * b);
    return (isinf(a) | isinf(b)) ? INFINITY : (float)r;
}
/* fmod: truncated, the sign of the dividend (a - trunc(a/b)*b), as C, math.fmod and PyTorch */
TIDE_DEF_LIBM_BINARY(fmod)
/* floor division as PyTorch's div_floor (Python's //): from fmod, so an infinite dividend gives
 * NaN, a finite one over an infinite divisor of the other sign -1, and a zero quotient keeps the
 * sign a / b has; floor(a / b) gave inf and -0 there */
/* (tide_floordiv_from_fmod_S: the steps after FMOD(a, b) = m, b != 0; the CPU's float32 rows
 * compute m without libm, src/cpu/fmod_rows.c) */
#define TIDE_DEF_FLOORDIV(S, T, FMOD, FLOOR, COPYSIGN)                                             \
    TIDE_HD T tide_floordiv_from_fmod_##S(T a, T b, T m) {                                         \
        T q = (a - m) / b;                                                                         \
        if (m != 0 && (b < 0) != (m < 0))                                                          \
            q -= 1;                                                                                \
        if (q == 0)                                                                                \
            return COPYSIGN((T)0, a / b);                                                          \
        T f = FLOOR(q);                                                                            \
        return q - f > (T)0.5 ? f + 1 : f;                                                         \
    }                                                                                              \
    TIDE_HD T tide_floordiv_##S(T a, T b) {                                                        \
        if (b == 0)                                                                                \
            return a / b;                                                                          \
        return tide_floordiv_from_fmod_##S(a, b, FMOD(a, b));                                      \
    }
TIDE_DEF_FLOORDIV(d, double, fmod, floor, copysign)
TIDE_DEF_FLOORDIV(f, float, fmodf, floorf, copysignf)
/* NaN wins, as in PyTorch */
TIDE_DEF_FLOAT_BINARY(maximum, (a != a || a > b) ? a : b, (a != a || a > b) ? a : b)
TIDE_DEF_FLOAT_BINARY(minimum, (a != a || a < b) ? a : b, (a != a || a < b) ? a : b)
/* remainder, Lua's %: the result takes the sign of the divisor (a - floor(a/b)*b), as Python,
 * Lua and PyTorch's remainder do */
TIDE_HD double tide_remainder_d(double a, double b) {
    double m = fmod(a, b);
    return (m != 0 && ((m < 0) != (b < 0))) ? m + b : m;
}
/* (from fmod m = fmodf(a, b): the CPU's float32 rows compute m without libm) */
TIDE_HD float tide_remainder_from_fmod_f(float b, float m) {
    return (m != 0 && ((m < 0) != (b < 0))) ? m + b : m;
}
TIDE_HD float tide_remainder_f(float a, float b) {
    return tide_remainder_from_fmod_f(b, fmodf(a, b));
}

TIDE_DEF_FLOAT_UNARY(neg, -a, -a)
TIDE_DEF_FLOAT_UNARY(abs, fabs(a), fabsf(a))
TIDE_DEF_LIBM_UNARY(exp)
TIDE_DEF_LIBM_UNARY(expm1)
TIDE_DEF_LIBM_UNARY(log)
TIDE_DEF_LIBM_UNARY(log1p)
TIDE_DEF_LIBM_UNARY(log2)
TIDE_DEF_LIBM_UNARY(log10)
TIDE_DEF_LIBM_UNARY(sqrt)
TIDE_DEF_FLOAT_UNARY(rsqrt, 1.0 / sqrt(a), 1.0f / sqrtf(a))
TIDE_DEF_FLOAT_UNARY(reciprocal, 1.0 / a, 1.0f / a)
TIDE_DEF_FLOAT_UNARY(square, a *a, a *a)
TIDE_DEF_LIBM_UNARY(tanh)
TIDE_DEF_LIBM_UNARY(sin)
TIDE_DEF_LIBM_UNARY(cos)
TIDE_DEF_LIBM_UNARY(tan)
TIDE_DEF_LIBM_UNARY(asin)
TIDE_DEF_LIBM_UNARY(acos)
TIDE_DEF_LIBM_UNARY(atan)
TIDE_DEF_LIBM_UNARY(sinh)
TIDE_DEF_LIBM_UNARY(cosh)
TIDE_DEF_LIBM_UNARY(asinh)
TIDE_DEF_LIBM_UNARY(acosh)
TIDE_DEF_LIBM_UNARY(atanh)
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

/* ---- special functions (lgamma, digamma, erfinv, zeta) ------------------------------------
 * float32 computes in double and rounds once (the GPU's lgamma and erfinv included, for one
 * answer on every device). */

/* log|Gamma(a)|: +inf at 0 and the negative integers. glibc's lgamma stores the sign in the
 * global signgam, a data race between kernel threads; lgamma_r keeps it local */
TIDE_HD double tide_lgamma_d(double a) {
#ifdef __CUDA_ARCH__
    return lgamma(a);
#else
    int sign;
    return lgamma_r(a, &sign);
#endif
}
TIDE_HD float tide_lgamma_f(float a) {
    return (float)tide_lgamma_d(a);
}

/* digamma (psi), d/da log Gamma(a), as PyTorch computes it: the reflection psi(1 - a) -
 * pi / tan(pi a) below 0 (from a's fractional part: tan(pi a) of a large a loses its digits),
 * the recurrence psi(a) = psi(a + 1) - 1/a up to 10, then the asymptotic series
 * log a - 1/(2a) - sum B_2k / (2k a^2k). -inf at +0, +inf at -0, NaN at the negative integers
 * and -inf */
TIDE_HD double tide_digamma_d(double a) {
    const double pi = 3.14159265358979323846;
    if (a == 0)
        return signbit(a) ? INFINITY : -INFINITY;
    double result = 0;
    if (a < 0) {
        if (a == trunc(a))
            return NAN;
        result = -pi / tan(pi * (a - trunc(a)));
        a = 1 - a;
    }
    while (a < 10) {
        result -= 1 / a;
        a += 1;
    }
    if (a == 10)
        return result + 2.25175258906672110764; /* psi(10) */
    double y = 0;
    if (a < 1e17) { /* beyond, the series' terms vanish in log a's last digit */
        double z = 1 / (a * a);
        y = z * (1.0 / 12 -
                 z * (1.0 / 120 -
                      z * (1.0 / 252 -
                           z * (1.0 / 240 - z * (1.0 / 132 - z * (691.0 / 32760 - z / 12))))));
    }
    return result + log(a) - 0.5 / a - y;
}
TIDE_HD float tide_digamma_f(float a) {
    return (float)tide_digamma_d(a);
}

/* the inverse of erf on [-1, 1] (+-inf at +-1, NaN outside): Giles' single-precision
 * approximation ("Approximating the erfinv function", GPU Computing Gems, 2011), then Newton
 * steps to double precision. Above |y| = 0.5 the steps solve log erfc(x) = log(1 - |y|) (1 - |y|
 * is exact there): erf(x) - y would cancel to nothing near 1 and leave x good to a few digits,
 * and erfc itself falls too steeply in the far tail for Newton to converge in a few steps */
TIDE_HD double tide_erfinv_d(double y) {
    if (!(y >= -1 && y <= 1))
        return NAN;
    double ay = fabs(y);
    if (ay == 1)
        return y * INFINITY;
    double w = -log((1 - ay) * (1 + ay)), p;
    if (w < 5) {
        w -= 2.5;
        p = 2.81022636e-08;
        p = 3.43273939e-07 + p * w;
        p = -3.5233877e-06 + p * w;
        p = -4.39150654e-06 + p * w;
        p = 0.00021858087 + p * w;
        p = -0.00125372503 + p * w;
        p = -0.00417768164 + p * w;
        p = 0.246640727 + p * w;
        p = 1.50140941 + p * w;
    } else {
        w = sqrt(w) - 3;
        p = -0.000200214257;
        p = 0.000100950558 + p * w;
        p = 0.00134934322 + p * w;
        p = -0.00367342844 + p * w;
        p = 0.00573950773 + p * w;
        p = -0.0076224613 + p * w;
        p = 0.00943887047 + p * w;
        p = 1.00167406 + p * w;
        p = 2.83297682 + p * w;
    }
    double x = p * ay;
    for (int i = 0; i < 4; i++) { /* from ~1e-7, two steps reach 1e-16; a third checks */
        double slope = 1.1283791670955126 * exp(-x * x); /* 2/sqrt(pi) e^-x^2 */
        double step;
        if (ay < 0.5) {
            step = (erf(x) - ay) / slope;
        } else { /* log erfc(x) = log(1 - |y|): near linear in the far tail, where erfc is not */
            double c = erfc(x);
            step = slope == 0 || c == 0 ? 0 : -(log(c) - log(1 - ay)) * c / slope;
        }
        x -= step;
        if (!(fabs(step) > 1e-17 * fabs(x)))
            break;
    }
    return copysign(x, y); /* erfinv(-0) is -0 */
}
TIDE_HD float tide_erfinv_f(float a) {
    return (float)tide_erfinv_d(a);
}

/* Hurwitz zeta, sum over k >= 0 of (q + k)^-x (PyTorch's special.zeta; polygamma(n, q) is
 * (-1)^(n+1) n! zeta(n + 1, q)): the first terms summed, then the Euler-Maclaurin tail with
 * the Bernoulli numbers as (2j)! / B_2j. +inf at x = 1 and at q a non-positive integer; NaN
 * for x < 1, and for q < 0 with x not an integer */
TIDE_HD double tide_zeta_d(double x, double q) {
    const double eps = 1.11022302462515654042e-16;
    const double fact_over_b[12] = {
        12.0,
        -720.0,
        30240.0,
        -1209600.0,
        47900160.0,
        -1.8924375803183791606e9,
        7.47242496e10,
        -2.950130727918164224e12,
        1.1646782814350067249e14,
        -4.5979787224074726105e15,
        1.8152105401943546773e17,
        -7.1661652561756670113e18,
    };
    if (x == 1)
        return INFINITY;
    if (x < 1)
        return NAN;
    if (q <= 0) { /* a NaN x or q falls through to NaN terms below, as in PyTorch's order */
        if (q == floor(q))
            return INFINITY;
        if (x != floor(x))
            return NAN;
    }
    double s = pow(q, -x), a = q, b = 0;
    for (int i = 0; i < 9 || a <= 9;) {
        i++;
        a += 1;
        b = pow(a, -x);
        s += b;
        if (-eps * s < b && b < eps * s)
            return s;
    }
    double w = a, k = 0;
    s += b * w / (x - 1) - 0.5 * b;
    a = 1;
    for (int j = 0; j < 12; j++) {
        a *= x + k;
        b /= w;
        double t = a * b / fact_over_b[j];
        s += t;
        if (fabs(t / s) < eps)
            break;
        k += 1;
        a *= x + k;
        b /= w;
        k += 1;
    }
    return s;
}
TIDE_HD float tide_zeta_f(float x, float q) {
    return (float)tide_zeta_d(x, q);
}

/* I0 and I1, the modified Bessel functions of the first kind, and I0e, I1e, the same times
 * e^-|x| (PyTorch's i0, special.i1, special.i0e, special.i1e), n = 0 or 1. Below |x| = 30 the
 * power series I_n(x) = sum_k (x/2)^(2k+n) / (k! (k+n)!), whose terms are all of one sign (no
 * cancellation; about 60 of them at 30); above, the asymptotic expansion
 * I_n(x) = e^|x| / sqrt(2 pi |x|) sum_k t_k, t_0 = 1, t_k = t_(k-1) ((2k-1)^2 - 4n^2) / (8k|x|),
 * whose terms fall below 1e-17 of the sum (at |x| = 30 by k = 20) before they grow again. Past
 * e^709 the factor is one exponential, e^(|x| - log(2 pi |x|) / 2): I0(710) is finite where
 * e^710 is not (PyTorch 1.13 gives inf there). I1 is odd, I0 even. */
TIDE_HD double tide_bessel_i(int n, int scaled, double x) {
    if (x != x)
        return x;
    double ax = fabs(x), s;
    if (ax == INFINITY) /* the limits (PyTorch 1.13 gives NaN for the unscaled ones) */
        return scaled ? 0.0 : (n && x < 0 ? -INFINITY : INFINITY);
    if (ax < 30.0) {
        double h = 0.5 * x, h2 = h * h, t = n ? h : 1.0;
        s = t;
        for (int k = 1; k < 500 && fabs(t) > 1e-17 * fabs(s); k++) {
            t *= h2 / ((double)k * (double)(k + n));
            s += t;
        }
        return scaled ? s * exp(-ax) : s;
    }
    double t = 1.0, sum = 1.0;
    for (int k = 1; k < 60; k++) {
        double r = ((2.0 * k - 1.0) * (2.0 * k - 1.0) - 4.0 * n * n) / (8.0 * k * ax);
        if (fabs(r) >= 1.0)
            break; /* the terms grow from here: the expansion is as close as it gets */
        t *= r;
        sum += t;
        if (fabs(t) < 1e-17 * fabs(sum))
            break;
    }
    double front = 1.0 / sqrt(6.283185307179586476925 * ax);
    if (scaled)
        s = sum * front;
    else if (ax < 709.0)
        s = sum * exp(ax) * front; /* exp(ax) rounded once: exp(ax + log(front)) loses ax eps */
    else
        s = sum * exp(ax + log(front));
    return (n && x < 0) ? -s : s;
}
TIDE_DEF_FLOAT_UNARY(i0, tide_bessel_i(0, 0, a), (float)tide_bessel_i(0, 0, a))
TIDE_DEF_FLOAT_UNARY(i1, tide_bessel_i(1, 0, a), (float)tide_bessel_i(1, 0, a))
TIDE_DEF_FLOAT_UNARY(i0e, tide_bessel_i(0, 1, a), (float)tide_bessel_i(0, 1, a))
TIDE_DEF_FLOAT_UNARY(i1e, tide_bessel_i(1, 1, a), (float)tide_bessel_i(1, 1, a))

/* J, Y, K, the spherical j0 and Airy's Ai (torch.special's Bessel functions), and the
 * orthogonal polynomials (chebyshev_polynomial_t ...), each in a file of its own */
#include "scalar_bessel.h"
#include "scalar_polynomials.h"

/* erfcx(x) = e^(x^2) erfc(x), the scaled complementary error function, without the product's
 * overflow past 26 and the loss of its rounding: below 12 the product, e^(x^2) taken as
 * e^s (1 + e) with s + e = x^2 exactly (fma), so that its error does not grow with x^2; above,
 * the asymptotic series 1 / (x sqrt(pi)) sum_k (-1)^k (2k - 1)!! / (2x^2)^k, whose terms at
 * x = 12 fall below 1e-18 by k = 12; below 0 the reflection 2 e^(x^2) - erfcx(-x). */
TIDE_HD double tide_exp_square(double x) {
    double s = x * x;
    if (!(s < 709.8)) /* overflows (or NaN): fma(inf, inf, -inf) would make it NaN */
        return s == s ? INFINITY : s;
    return exp(s) * (1.0 + fma(x, x, -s));
}
TIDE_HD double tide_erfcx_nonneg(double x) {
    if (x < 12.0)
        return tide_exp_square(x) * erfc(x);
    if (x > 1e8)
        return 0.564189583547756286948 / x; /* 1 / (x sqrt(pi)): the next term is below eps */
    double z = 0.5 / (x * x), t = 1.0, sum = 1.0;
    for (int k = 1; k <= 14; k++) {
        t *= -(2.0 * k - 1.0) * z;
        sum += t;
    }
    return 0.564189583547756286948 / x * sum;
}
TIDE_HD double tide_erfcx_d(double x) {
    return x < 0 ? 2.0 * tide_exp_square(x) - tide_erfcx_nonneg(-x) : tide_erfcx_nonneg(x);
}
TIDE_HD float tide_erfcx_f(float a) {
    return (float)tide_erfcx_d(a);
}

/* log(ndtr(x)), ndtr the standard normal's CDF, as PyTorch's special.log_ndtr: below -1 from
 * erfcx (no underflow: log_ndtr(-40) is -804.6), above from log1p */
TIDE_HD double tide_log_ndtr_d(double x) {
    double t = x * 0.707106781186547524401;
    return x < -1.0 ? log(0.5 * tide_erfcx_nonneg(-t)) - t * t : log1p(-0.5 * erfc(t));
}
TIDE_HD float tide_log_ndtr_f(float a) {
    return (float)tide_log_ndtr_d(a);
}

/* ndtri(p), the standard normal's quantile (ndtr's inverse): Acklam's rational approximation
 * (relative error 1.2e-9), then Halley steps on ndtr(x) - p, cubic, to double precision. ndtr is
 * taken from the tail it is small in (erfc of a positive argument, 1 - p exact above 1/2), so
 * the tails keep their relative precision: ndtri(1e-300) is -37.04. 0 -> -inf, 1 -> inf,
 * outside [0, 1] NaN. */
TIDE_HD double tide_ndtri_d(double p) {
    if (!(p >= 0.0 && p <= 1.0))
        return NAN;
    if (p == 0.0)
        return -INFINITY;
    if (p == 1.0)
        return INFINITY;
    double x;
    if (p < 0.02425 || p > 0.97575) {
        double q = sqrt(-2.0 * (p < 0.5 ? log(p) : log1p(-p)));
        x = (((((-7.784894002430293e-03 * q - 3.223964580411365e-01) * q - 2.400758277161838) * q -
               2.549732539343734) *
                  q +
              4.374664141464968) *
                 q +
             2.938163982698783) /
            ((((7.784695709041462e-03 * q + 3.224671290700398e-01) * q + 2.445134137142996) * q +
              3.754408661907416) *
                 q +
             1.0);
        if (p > 0.5)
            x = -x;
    } else {
        double q = p - 0.5, r = q * q;
        x = (((((-3.969683028665376e+01 * r + 2.209460984245205e+02) * r - 2.759285104469687e+02) *
                   r +
               1.383577518672690e+02) *
                  r -
              3.066479806614716e+01) *
                 r +
             2.506628277459239) *
            q /
            (((((-5.447609879822406e+01 * r + 1.615858368580409e+02) * r - 1.556989798598866e+02) *
                   r +
               6.680131188771972e+01) *
                  r -
              1.328068155288572e+01) *
                 r +
             1.0);
    }
    for (int i = 0; i < 2; i++) {
        double e = x < 0 ? 0.5 * erfc(-x * 0.707106781186547524401) - p
                         : (1.0 - p) - 0.5 * erfc(x * 0.707106781186547524401);
        double u = e * 2.50662827463100050242 * exp(0.5 * x * x); /* e / ndtr'(x) */
        if (e == 0.0 || !(fabs(u) < INFINITY))
            break;
        x -= u / (1.0 + 0.5 * x * u);
    }
    return x;
}
TIDE_HD float tide_ndtri_f(float a) {
    return (float)tide_ndtri_d(a);
}

/* The regularized incomplete gamma functions P(a, x) (igamma, special.gammainc) and
 * Q(a, x) = 1 - P (igammac, special.gammaincc): P's power series below x = a + 1, Q's
 * continued fraction (modified Lentz) above, the other one as 1 minus it (each is below about
 * 0.6 where it is computed: no cancellation). Both carry x^a e^-x / Gamma(a), from Stirling's
 * series past a = 20 with log1p(d) - d, d = (x - a) / a, so that its error stays at eps times
 * |x - a| rather than a log x. Edge values as PyTorch's. */
TIDE_HD double tide_igam_prefactor(double a, double x) {
    if (a < 20.0)
        return exp(a * log(x) - x - lgamma(a));
    double d = (x - a) / a, ia = 1.0 / a, ia2 = ia * ia;
    double stirling = ia * (1.0 / 12 - ia2 * (1.0 / 360 - ia2 * (1.0 / 1260 - ia2 / 1680)));
    return exp(a * (log1p(d) - d) - stirling) * sqrt(a) * 0.398942280401432677940;
}
TIDE_HD double tide_igam_series(double a, double x) { /* P(a, x) */
    double r = a, c = 1.0, sum = 1.0;
    for (int n = 0; n < 100000 && c > sum * 1.1102230246251565e-16; n++) {
        r += 1.0;
        c *= x / r;
        sum += c;
    }
    return sum * tide_igam_prefactor(a, x) / a;
}
TIDE_HD double tide_igamc_fraction(double a, double x) { /* Q(a, x) */
    const double tiny = 1e-300;
    double       b = x + 1.0 - a, c = 1.0 / tiny, d = 1.0 / b, h = d;
    for (int i = 1; i < 100000; i++) {
        double an = -i * (i - a);
        b += 2.0;
        d = an * d + b;
        d = fabs(d) < tiny ? tiny : d;
        c = b + an / c;
        c = fabs(c) < tiny ? tiny : c;
        d = 1.0 / d;
        h *= d * c;
        if (fabs(d * c - 1.0) <= 1.1102230246251565e-16)
            break;
    }
    return h * tide_igam_prefactor(a, x);
}
/* Past a = 1e5 (where the series and the fraction need about 9 sqrt(a) terms), Temme's uniform
 * expansion, DLMF 8.12: with d = x / a - 1 and eta^2 / 2 = d - log1p(d), sign(eta) = sign(d),
 * Q = erfc(eta sqrt(a / 2)) / 2 + R, P = erfc(-eta sqrt(a / 2)) / 2 - R, R = e^(-a eta^2 / 2) /
 * sqrt(2 pi a) (c0(eta) + c1(eta) / a), c0 = 1/d - 1/eta, c1 = 1/eta^3 - 1/d^3 - 1/d^2 -
 * 1/(12 d); the next term is below 1e-16 there. Near eta = 0, where c0 and c1 cancel, their
 * Taylor series (Temme's coefficients), and d - log1p(d) by its own. */
TIDE_HD double tide_igam_temme(double a, double x, int lower) {
    double d = (x - a) / a, half_eta2;
    if (fabs(d) < 1e-3)
        half_eta2 = d * d * (0.5 - d * (1.0 / 3 - d * (0.25 - d * (0.2 - d / 6))));
    else
        half_eta2 = d - log1p(d);
    double eta = d < 0 ? -sqrt(2.0 * half_eta2) : sqrt(2.0 * half_eta2);
    double c0, c1;
    if (fabs(eta) < 0.01) {
        c0 = -1.0 / 3 +
             eta * (1.0 / 12 + eta * (-2.0 / 135 + eta * (1.0 / 864 + eta * 3.527336860670194e-4)));
        c1 = -1.0 / 540 - eta * 3.4722222222222222e-3;
    } else {
        c0 = 1.0 / d - 1.0 / eta;
        c1 = 1.0 / (eta * eta * eta) - 1.0 / (d * d * d) - 1.0 / (d * d) - 1.0 / (12.0 * d);
    }
    double r = exp(-a * half_eta2) / sqrt(6.283185307179586476925 * a) * (c0 + c1 / a);
    double z = eta * sqrt(0.5 * a);
    return lower ? 0.5 * erfc(-z) - r : 0.5 * erfc(z) + r;
}
/* lower: P(a, x), else Q(a, x); the edge values in PyTorch's order (NaN compares false) */
TIDE_HD double tide_incomplete_gamma(double a, double x, int lower) {
    if (x < 0 || a < 0)
        return NAN;
    if (a == 0)
        return x > 0 ? (lower ? 1.0 : 0.0) : NAN;
    if (x == 0)
        return lower ? 0.0 : 1.0;
    if (a == INFINITY)
        return x == INFINITY ? NAN : (lower ? 0.0 : 1.0);
    if (x == INFINITY)
        return lower ? 1.0 : 0.0;
    if (a > 1e5)
        return tide_igam_temme(a, x, lower);
    if (x < a + 1.0) {
        double p = tide_igam_series(a, x);
        return lower ? p : 1.0 - p;
    }
    double q = tide_igamc_fraction(a, x);
    return lower ? 1.0 - q : q;
}
TIDE_DEF_FLOAT_BINARY(igamma, tide_incomplete_gamma(a, b, 1), (float)tide_incomplete_gamma(a, b, 1))
TIDE_DEF_FLOAT_BINARY(igammac, tide_incomplete_gamma(a, b, 0),
                      (float)tide_incomplete_gamma(a, b, 0))

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

/* integer powers by squaring, wrapping as two's complement (PyTorch's int pow: 3 ** 41 wraps in
 * int64). An exponent below 0 gives 1 for a base of 1, +-1 for -1 and 0 otherwise (the CPU
 * raises before it computes, as PyTorch's; CUDA cannot know without a synchronisation) */
#define TIDE_DEF_INT_POW(S, T, U)                                                                  \
    TIDE_HD T tide_pow_##S(T a, T e) {                                                             \
        if (e < 0)                                                                                 \
            return (T)(a == 1 ? 1 : a == (T)-1 ? ((e & 1) ? -1 : 1) : 0);                          \
        U r = 1, b = (U)a;                                                                         \
        for (U k = (U)e; k; k >>= 1, b *= b)                                                       \
            if (k & 1)                                                                             \
                r *= b;                                                                            \
        return (T)r;                                                                               \
    }
TIDE_DEF_INT_POW(i32, int32_t, uint32_t)
TIDE_DEF_INT_POW(i64, int64_t, uint64_t)
TIDE_HD uint8_t tide_pow_u8(uint8_t a, uint8_t e) {
    unsigned r = 1, b = a;
    for (unsigned k = e; k; k >>= 1, b = (b * b) & 0xffu)
        if (k & 1)
            r = (r * b) & 0xffu;
    return (uint8_t)r;
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
TIDE_DEF_BOOL_BINARY(pow) /* a ** b of 0 and 1: 0 ** 0 is 1 */
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

/* ---- bitwise: integer and bool dtypes (rows whose DTYPES is INTEGRAL or INTEGER) ----------
 * Shifts are defined for every amount, as PyTorch 2 defines them: << by the width or more, or by
 * a negative amount, gives 0, and >> gives FILL, the sign (0 or -1; 0 for uint8). The amount is
 * compared as unsigned, so a negative one is large; << shifts the unsigned type (a signed
 * overflow is undefined in C). CUDA computes every integer dtype in int64 and stores back: the
 * stored bits agree (an int32 shifted by 32..63 keeps none of its own, or only its sign). */
#define TIDE_DEF_BITWISE(S, T, U, BITS, FILL)                                                      \
    TIDE_HD T tide_bitwise_and_##S(T a, T b) {                                                     \
        return (T)(a & b);                                                                         \
    }                                                                                              \
    TIDE_HD T tide_bitwise_or_##S(T a, T b) {                                                      \
        return (T)(a | b);                                                                         \
    }                                                                                              \
    TIDE_HD T tide_bitwise_xor_##S(T a, T b) {                                                     \
        return (T)(a ^ b);                                                                         \
    }                                                                                              \
    TIDE_HD T tide_bitwise_not_##S(T a) {                                                          \
        return (T) ~(U)a;                                                                          \
    }                                                                                              \
    TIDE_HD T tide_shl_##S(T a, T b) {                                                             \
        return (U)b >= (BITS) ? (T)0 : (T)((U)a << b);                                             \
    }                                                                                              \
    TIDE_HD T tide_shr_##S(T a, T b) {                                                             \
        return (U)b >= (BITS) ? (T)(FILL) : (T)(a >> b);                                           \
    }
TIDE_DEF_BITWISE(i32, int32_t, uint32_t, 32, a >> 31)
TIDE_DEF_BITWISE(i64, int64_t, uint64_t, 64, a >> 63)
TIDE_DEF_BITWISE(u8, uint8_t, uint8_t, 8, 0)
/* gcd and lcm, on the magnitudes as unsigned 64-bit integers (|INT_MIN| too), the result
 * stored back in the dtype with its two's-complement wrap: gcd >= 0 but for the one gcd that
 * is the dtype's |MIN| itself (gcd(MIN, 0), MIN as PyTorch's), lcm |a / gcd(a, b) * b| (0 when
 * either is 0). An lcm past the dtype wraps the exact value (CUDA computes int32 and uint8 in
 * int64 and stores the same bits); PyTorch wraps in the dtype and then takes |.|. */
TIDE_HD unsigned long long tide_magnitude(long long v) {
    return v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
}
TIDE_HD unsigned long long tide_gcd_u64(unsigned long long x, unsigned long long y) {
    while (y != 0) {
        unsigned long long t = x % y;
        x = y;
        y = t;
    }
    return x;
}
#define TIDE_DEF_GCD(S, T)                                                                         \
    TIDE_HD T tide_gcd_##S(T a, T b) {                                                             \
        return (T)tide_gcd_u64(tide_magnitude((long long)a), tide_magnitude((long long)b));        \
    }                                                                                              \
    TIDE_HD T tide_lcm_##S(T a, T b) {                                                             \
        unsigned long long x = tide_magnitude((long long)a), y = tide_magnitude((long long)b);     \
        unsigned long long g = tide_gcd_u64(x, y);                                                 \
        if (g == 0)                                                                                \
            return 0;                                                                              \
        return (T)((x / g) * y);                                                                   \
    }
TIDE_DEF_GCD(i32, int32_t)
TIDE_DEF_GCD(i64, int64_t)
TIDE_DEF_GCD(u8, uint8_t)
/* bool: and, or, xor of 0 and 1 stay 0 or 1; not is the logical not (PyTorch's ~mask) */
TIDE_HD uint8_t tide_bitwise_and_b(uint8_t a, uint8_t b) {
    return a & b;
}
TIDE_HD uint8_t tide_bitwise_or_b(uint8_t a, uint8_t b) {
    return a | b;
}
TIDE_HD uint8_t tide_bitwise_xor_b(uint8_t a, uint8_t b) {
    return a ^ b;
}
TIDE_HD uint8_t tide_bitwise_not_b(uint8_t a) {
    return a == 0;
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
/* Attention's dropout (the kernel rows attention and attention_backward): head h's weight of key
 * token j for query token i (rows of q, n in all) is element c = (h * n + i) * n + j of the mask,
 * kept when its 16 bits, bits 16 (c % 4) .. 16 (c % 4) + 15 of word c / 4 of the seed's stream
 * (tide_rng_bits(seed, c / 4)), are at least threshold = ceil(p * 2^16): a pure function of the
 * seed, so the backward draws the forward's mask again, and one hash serves four weights (it had
 * cost as much as the products). A weight is kept with probability 1 - threshold / 2^16, p to
 * within 2^-16 (none at p = 1). key = tide_rng_fmix(seed + 0x9E3779B97F4A7C15), once per call. */
TIDE_HD unsigned tide_attention_threshold(double p) {
    double t = ceil(p * 65536.0);
    return t <= 0 ? 0u : t >= 65536 ? 65536u : (unsigned)t;
}
/* a kept weight's factor: 1 / the keep probability the threshold gives (1 / (1 - p) to within
 * 2^-16), so the expectation is the weights' exactly; 0 when nothing is kept */
TIDE_HD double tide_attention_inverse(unsigned threshold) {
    return threshold < 65536u ? 65536.0 / (double)(65536u - threshold) : 0.0;
}
/* the word of mask element c's group of four */
TIDE_HD unsigned long long tide_attention_word(unsigned long long key, unsigned long long c) {
    return tide_rng_fmix(key + ((c >> 2) + 1) * 0x9E3779B97F4A7C15ULL);
}
/* element c's decision from its word */
TIDE_HD int tide_attention_kept(unsigned long long word, unsigned long long c, unsigned threshold) {
    return (unsigned)((word >> (16 * (c & 3))) & 0xFFFFu) >= threshold;
}
TIDE_HD unsigned long long tide_attention_element(long long h, long long i, long long j,
                                                  long long n) {
    return ((unsigned long long)h * (unsigned long long)n + (unsigned long long)i) *
               (unsigned long long)n +
           (unsigned long long)j;
}
TIDE_HD int tide_attention_keep(unsigned long long key, unsigned threshold, long long h,
                                long long i, long long j, long long n) {
    unsigned long long c = tide_attention_element(h, i, j, n);
    return tide_attention_kept(tide_attention_word(key, c), c, threshold);
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
