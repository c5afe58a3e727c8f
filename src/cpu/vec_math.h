/*
 * vec_math.h — float32 exp, log, log2, log10, log1p, expm1, sigmoid, SiLU, tanh, GELU, sinh,
 * cosh, erf, erfc, sin, cos, tan, atan, asin, acos and atan2 written so a loop of them vectorizes:
 * no libm calls, no branches, no float-to-int conversion (the exponent comes from the bits of a
 * float rounded by adding 1.5 * 2^23). glibc's expf/logf/tanhf are scalar calls: in an LSTM step
 * they took a quarter of the time (issue 15), and tide.exp of a million floats took 6x PyTorch's
 * (Sleef's vector functions). The polynomials are Cephes' single-precision minimax fits (S.
 * Moshier), the same as many vector libraries'. Accuracy, checked over the whole float range,
 * subnormals included, in spec/c/test_vec_math.c: exp and log within 1 ulp, log1p 1.5, tanh 1.5,
 * expm1 2.3, sigmoid and SiLU 2.5, atan2 1; NaN stays NaN, +-inf give the limits. Used by the CPU
 * kernels only; the CUDA kernels keep CUDA's own functions.
 */
#ifndef TIDE_CPU_VEC_MATH_H
#define TIDE_CPU_VEC_MATH_H

#include <math.h>
#include <stdint.h>
#include <string.h>

/* always inlined: a call per element would keep a caller's loop from vectorizing (GCC declined
 * to inline log into log1p's row, and that row ran a call an element) */
#define CPU_VEC_FN static inline __attribute__((always_inline))

CPU_VEC_FN float cpu_bits_to_float(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

CPU_VEC_FN uint32_t cpu_float_to_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* e^x over the whole range: x = n ln2 + r with |r| <= ln2/2 (ln2 in two parts, so n * ln2_hi
 * is exact), e^r = 1 + r + r^2 P(r), and 2^n applied as two powers of two 2^(n/2) 2^(n - n/2),
 * so that n may run from -150 (subnormal results, rounded once, by the second product) to 128
 * (+inf, by the same product). x is clamped to [-104, 89] first, where e^x is 0 or +inf
 * already (NaN passes the clamps: comparisons with NaN are false), and -inf gives exactly 0, so
 * a softmax gives masked entries 0. */
CPU_VEC_FN float cpu_vexpf(float x0) {
    const float shift = 12582912.0f; /* 1.5 * 2^23: adding it rounds to an integer */
    float       x = x0 > 89.0f ? 89.0f : x0;
    x = x < -104.0f ? -104.0f : x;
    float t = x * 1.44269504088896341f + shift;
    float n = t - shift;
    float r = x - n * 0.693359375f;
    r = r + n * 2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * (r * r) + r + 1.0f;
    /* n as an integer (t's unit in the last place is 1), halved by an arithmetic shift; the
     * exponent fields in unsigned arithmetic, so a NaN's garbage wraps instead of overflowing */
    int32_t  k = (int32_t)(cpu_float_to_bits(t) - cpu_float_to_bits(shift));
    int32_t  k1 = k >> 1;
    uint32_t e1 = ((uint32_t)k1 + 127u) << 23, e2 = ((uint32_t)(k - k1) + 127u) << 23;
    return p * cpu_bits_to_float(e1) * cpu_bits_to_float(e2);
}

/* log(x) = e ln2 + log(m) with x = m 2^e, m in [sqrt(1/2), sqrt(2)) (a subnormal scaled by 2^23
 * first): log(m) = f - f^2/2 + f^3 P(f) with f = m - 1. Returns f^3 P(f), and f and e in *f
 * and *fe: log, log2 and log10 add the parts each their way and fix the special values
 * (cpu_vlog_special). */
CPU_VEC_FN float cpu_vlog_reduced(float x0, float *fe, float *fm) {
    int      sub = x0 < 1.17549435e-38f; /* subnormal, 0 or negative (the last two fixed later) */
    float    x = sub ? x0 * 8388608.0f : x0;
    uint32_t u = cpu_float_to_bits(x);
    int32_t  e = (int32_t)((u >> 23) & 0xffu) - 126 - (sub ? 23 : 0);
    float    m = cpu_bits_to_float((u & 0x007fffffu) | 0x3f000000u); /* [1/2, 1) */
    int      low = m < 0.707106781186547524f;
    e -= low;
    float f = low ? m + m - 1.0f : m - 1.0f;
    float z = f * f;
    float y = 7.0376836292e-2f;
    y = y * f - 1.1514610310e-1f;
    y = y * f + 1.1676998740e-1f;
    y = y * f - 1.2420140846e-1f;
    y = y * f + 1.4249322787e-1f;
    y = y * f - 1.6668057665e-1f;
    y = y * f + 2.0000714765e-1f;
    y = y * f - 2.4999993993e-1f;
    y = y * f + 3.3333331174e-1f;
    *fe = (float)e;
    *fm = f;
    return y * f * z;
}

/* log(m) of the reduction, f - f^2/2 + f^3 P(f), in double */
CPU_VEC_FN double cpu_vlog_m(float x0, float *fe) {
    float f, y = cpu_vlog_reduced(x0, fe, &f);
    return (double)f + (double)(y - 0.5f * (f * f));
}

/* a logarithm's value r of x0, or its value at 0 (-inf), below 0 (NaN), +inf and NaN */
CPU_VEC_FN float cpu_vlog_special(float x0, float r) {
    r = x0 == INFINITY ? x0 : r;
    r = x0 == 0 ? -INFINITY : r;
    r = x0 < 0 ? NAN : r;
    return x0 != x0 ? x0 : r;
}

/* log(x) over the whole range: e ln2 added in two parts (ln2's first part has 9 bits, so e
 * times it is exact); 0 gives -inf, a negative x NaN, +inf +inf */
CPU_VEC_FN float cpu_vlogf(float x0) {
    float fe, f, y = cpu_vlog_reduced(x0, &fe, &f);
    y += -2.12194440e-4f * fe;
    y += -0.5f * (f * f);
    float r = f + y;
    r += 0.693359375f * fe;
    return cpu_vlog_special(x0, r);
}

/* log2(x) = e + log(m) log2(e) and log10(x) = e log10(2) + log(m) log10(e), summed in double
 * and rounded once: a power of 2 gives its exponent exactly (m = 1), and so does an exactly
 * representable power of 10 (10^0 .. 10^10), since log(m)'s error is far below half an ulp of
 * the integer (PyTorch's log10(1000) is 3) */
CPU_VEC_FN float cpu_vlog2f(float x0) {
    float  fe;
    double lm = cpu_vlog_m(x0, &fe);
    return cpu_vlog_special(x0, (float)((double)fe + lm * 1.4426950408889634));
}

CPU_VEC_FN float cpu_vlog10f(float x0) {
    float  fe;
    double lm = cpu_vlog_m(x0, &fe);
    return cpu_vlog_special(x0,
                            (float)((double)fe * 0.30102999566398120 + lm * 0.43429448190325183));
}

/* log(1 + u): log of v = 1 + u, corrected by (u - (v - 1)) / v, the part of u the sum rounded
 * away (Goldberg's trick), within 1.5 ulp; u itself where v rounds to 1 (-0 stays -0), -1 gives
 * -inf, +inf +inf, below -1 NaN */
CPU_VEC_FN float cpu_vlog1pf(float u) {
    float v = 1.0f + u;
    float r = cpu_vlogf(v);
    r = v == 1.0f ? u : r + (u - (v - 1.0f)) / v;
    r = u == INFINITY ? u : r;
    return v == 0.0f ? -INFINITY : r;
}

/* e^x - 1: Kahan's (u - 1) x / log(u) with u = e^x, which cancels the rounding of u, within
 * 2.3 ulp; x where u rounds to 1 (-0 stays -0), u - 1 below -1 (no cancellation there, and u
 * may be subnormal), -1 at -inf, +inf past the overflow */
CPU_VEC_FN float cpu_vexpm1f(float x) {
    float u = cpu_vexpf(x);
    float r = (u - 1.0f) * (x / cpu_vlogf(u));
    r = u == 1.0f ? x : r;
    r = x < -1.0f ? u - 1.0f : r;
    r = x > 88.72f ? INFINITY : r;
    return x != x ? x : r;
}

/* 1 / (1 + e^-x), from e = e^-|x| on either side of 0 (e / (1 + e) on the left), so that no
 * exp overflows and the left tail keeps its relative accuracy down to the subnormals */
CPU_VEC_FN float cpu_vsigmoidf(float x) {
    float e = cpu_vexpf(x < 0 ? x : -x);
    return (x < 0 ? e : 1.0f) / (1.0f + e);
}

/* x / (1 + e^-x): PyTorch's form (-0 where e^-x overflows, NaN at -inf) */
CPU_VEC_FN float cpu_vsiluf(float x) {
    return x / (1.0f + cpu_vexpf(-x));
}

/* tanh(x) = 1 - 2 / (e^2x + 1) loses its relative accuracy near 0, where Cephes' odd
 * polynomial x + x^3 P(x^2) takes over (|x| < 0.625); a blend, no branch */
CPU_VEC_FN float cpu_vtanhf(float x) {
    float ax = fabsf(x); /* fabsf and copysignf: bit operations, inlined */
    float big = 1.0f - 2.0f / (cpu_vexpf(2.0f * ax) + 1.0f);
    float z = ax * ax;
    float q = -5.70498872745e-3f;
    q = q * z + 2.06390887954e-2f;
    q = q * z - 5.37397155531e-2f;
    q = q * z + 1.33314422036e-1f;
    q = q * z - 3.33332819422e-1f;
    float small = q * z * ax + ax;
    float v = ax < 0.625f ? small : big;
    v = x != x ? x : v;     /* NaN: the blend above would make it 1 */
    return copysignf(v, x); /* -0 stays -0 */
}

/* erfc(z) for z >= 0 by the Chebyshev fit of Numerical Recipes' erfcc: t = 1 / (1 + z/2),
 * erfc = t exp(-z^2 + P(t)); relative error 1.1e-7 in exact arithmetic at every z (the tail
 * included, where 1 - erf loses everything), a few ulp more in float */
CPU_VEC_FN float cpu_verfcf_pos(float z) {
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
CPU_VEC_FN float cpu_vnormcdff(float x) {
    float q = 0.5f * cpu_verfcf_pos((x < 0 ? -x : x) * 0.70710678118654752f);
    return x < 0 ? q : 1.0f - q;
}

/* exact GELU, x Phi(x) (PyTorch's default; the tanh form is another function) */
CPU_VEC_FN float cpu_vgeluf(float x) {
    return x * cpu_vnormcdff(x);
}

/* GELU's derivative Phi(x) + x phi(x); x phi(x) is 0 where phi underflows, +-inf included */
CPU_VEC_FN float cpu_vgelu_gradf(float x) {
    float phi = 0.39894228040143268f * cpu_vexpf(-0.5f * x * x);
    float xphi = phi == 0 ? 0.0f : x * phi;
    return cpu_vnormcdff(x) + xphi;
}

/* sin and cos of a float32 |x| <= CPU_VTRIG_MAX, in double: x = n pi/2 + r with |r| <= pi/4 (pi/2
 * in two parts, 33 bits and the rest, so n * the first part is exact for |n| < 2^20: the
 * reduction is exact to about 2^-65, past any float's distance from a multiple of pi/2), then
 * the minimax polynomials of FreeBSD's k_sinf.c and k_cosf.c (|error| < 2^-37 on [-pi/4, pi/4])
 * and the result rounded to float once. The quadrant n & 3 picks sin or cos of r and the sign
 * without a branch. sin is computed on |x| and given x's sign, so it is odd exactly (-0 stays
 * -0). Past CPU_VTRIG_MAX (and for NaN and +-inf) the callers take libm's sinf and cosf, whose
 * reduction holds over the whole range (src/cpu/elementwise_unary.c). */
#define CPU_VTRIG_MAX 1.0e6f

CPU_VEC_FN double cpu_vtrig_reduce(float ax, uint64_t *quadrant) {
    const double shift = 6755399441055744.0; /* 1.5 * 2^52: adding it rounds to an integer */
    double       t = (double)ax * 0.63661977236758134308 + shift;
    double       n = t - shift;
    uint64_t     bits;
    memcpy(&bits, &t, sizeof bits);
    *quadrant = bits & 3; /* n's low bits (t's unit in the last place is 1) */
    return ((double)ax - n * 1.57079632673412561417) - n * 6.07710050650619224932e-11;
}

CPU_VEC_FN double cpu_vtrig_sin_poly(double r) {
    double z = r * r, w = z * z, s = z * r;
    return (r + s * (-0.166666666416265235595 + z * 0.0083333293858894631756)) +
           s * w * (-0.000198393348360966317347 + z * 0.0000027183114939898219064);
}

CPU_VEC_FN double cpu_vtrig_cos_poly(double r) {
    double z = r * r, w = z * z;
    return ((1.0 + z * -0.499999997251031003120) + w * 0.0416666233237390631894) +
           (w * z) * (-0.00138867637746099294692 + z * 0.0000243904487962774090654);
}

/* by quadrant: sin r, cos r, -sin r, -cos r (sin of n pi/2 + r); cos(x) is sin's at quadrant + 1 */
CPU_VEC_FN float cpu_vtrig_pick(double r, uint64_t q) {
    double   v = (q & 1) ? cpu_vtrig_cos_poly(r) : cpu_vtrig_sin_poly(r);
    uint32_t neg = (uint32_t)(q & 2) << 30; /* bit 1 of the quadrant to the sign bit */
    return cpu_bits_to_float(cpu_float_to_bits((float)v) ^ neg);
}

CPU_VEC_FN float cpu_vsinf(float x) {
    uint64_t q;
    double   r = cpu_vtrig_reduce(fabsf(x), &q);
    uint32_t sign = cpu_float_to_bits(x) & 0x80000000u;
    return cpu_bits_to_float(cpu_float_to_bits(cpu_vtrig_pick(r, q)) ^ sign);
}

CPU_VEC_FN float cpu_vcosf(float x) {
    uint64_t q;
    double   r = cpu_vtrig_reduce(fabsf(x), &q);
    return cpu_vtrig_pick(r, q + 1);
}

/* atan2 of |y| and |x| in double (the angle in [0, pi/2], then pi minus it where x_neg): a =
 * min / max in [0, 1] (0 / 0 read as 0, inf / inf as 1), above tan(pi/8) reduced to pi/4 +
 * atan((a - 1) / (a + 1)), Cephes' atanf polynomial, then pi/2 - r where ay > ax. No fmax / fmin
 * (GCC 12 does not vectorize them) and no division under a condition. */
CPU_VEC_FN double cpu_vatan2_abs(double ay, double ax, int x_neg) {
    const double tiny = 2.2250738585072014e-308; /* DBL_MIN: divides 0 into 0 */
    double       mx = ax > ay ? ax : ay, mn = ax > ay ? ay : ax;
    double       a = mn / (mx > tiny ? mx : tiny);
    a = mn == INFINITY ? 1.0 : a;
    int    big = a > 0.41421356237309503;
    double tb = (a - 1.0) / (a + 1.0);
    double t = big ? tb : a, z = t * t;
    double p = (((8.05374449538e-2 * z - 1.38776856032e-1) * z + 1.99777106478e-1) * z -
                3.33329491539e-1) *
                   z * t +
               t;
    double r = (big ? 0.78539816339744831 : 0.0) + p;
    r = ay > ax ? 1.5707963267948966 - r : r;
    return x_neg ? 3.1415926535897931 - r : r;
}

/* float x with the sign bit of s */
CPU_VEC_FN float cpu_with_sign_of(float x, float s) {
    return cpu_bits_to_float((cpu_float_to_bits(x) & 0x7fffffffu) |
                             (cpu_float_to_bits(s) & 0x80000000u));
}

/* atan2(y, x) of floats, as C's (the quadrant from the signs, -0 included; +-inf pairs give
 * the odd multiples of pi/4; NaN in, NaN out), within 1 ulp: in double, so only the polynomial
 * errs (libm's atan2f is a scalar call: tide.atan2 of a million floats took 10x PyTorch's
 * Sleef). atan(x) is atan2(x, 1). */
CPU_VEC_FN float cpu_vatan2f(float y, float x) {
    double r = cpu_vatan2_abs(fabs((double)y), fabs((double)x), (int)(cpu_float_to_bits(x) >> 31));
    float  o = cpu_with_sign_of((float)r, y);
    return ((x != x) | (y != y)) ? x + y : o;
}

CPU_VEC_FN float cpu_vatanf(float x) {
    return cpu_vatan2f(x, 1.0f);
}

/* asin(x) = atan2(x, sqrt((1 - x)(1 + x))) and acos(x) = atan2(sqrt((1 - x)(1 + x)), x), the
 * root in double (exact enough near +-1, where 1 - x^2 in float cancels); NaN past [-1, 1] */
CPU_VEC_FN float cpu_vasinf(float x) {
    double a = fabs((double)x), c = sqrt((1.0 - a) * (1.0 + a));
    float  o = cpu_with_sign_of((float)cpu_vatan2_abs(a, c, 0), x);
    return a <= 1.0 ? o : NAN; /* (NaN fails the test too) */
}

CPU_VEC_FN float cpu_vacosf(float x) {
    double d = (double)x, c = sqrt((1.0 - d) * (1.0 + d));
    float  o = (float)cpu_vatan2_abs(c, fabs(d), (int)(cpu_float_to_bits(x) >> 31));
    return fabs(d) <= 1.0 ? o : NAN;
}

/* sinh and cosh: (e^|x| -+ e^-|x|) / 2, and past |x| = 88.5, where e^|x| overflows before
 * sinh does, (e/2) e with e = e^(|x|/2); sinh below |x| = 1, where the difference cancels, by
 * Cephes' odd polynomial x + x^3 P(x^2). Within 2 ulp (PyTorch's Sleef: 1); odd and even
 * exactly, NaN stays NaN. */
CPU_VEC_FN float cpu_vcosh_sinh_big(float a, float sign) {
    int   huge = a > 88.5f;
    float e = cpu_vexpf(huge ? 0.5f * a : a);
    return huge ? (0.5f * e) * e : 0.5f * e + sign * (0.5f / e);
}

CPU_VEC_FN float cpu_vsinhf(float x) {
    float a = fabsf(x), z = a * a;
    float small = ((2.03721912945e-4f * z + 8.33028376239e-3f) * z + 1.66667160211e-1f) * z * a + a;
    float r = a < 1.0f ? small : cpu_vcosh_sinh_big(a, -1.0f);
    return x != x ? x : cpu_with_sign_of(r, x);
}

CPU_VEC_FN float cpu_vcoshf(float x) {
    float r = cpu_vcosh_sinh_big(fabsf(x), 1.0f);
    return x != x ? x : r;
}

/* erf(x) for |x| < 1: x P(x^2), Cephes' erff polynomial evaluated in double */
CPU_VEC_FN float cpu_verf_small(float x) {
    double z = (double)x * x;
    double y = 7.853861353153693e-5;
    y = y * z - 8.010193625184903e-4;
    y = y * z + 5.188327685732524e-3;
    y = y * z - 2.685381193529856e-2;
    y = y * z + 1.128358514861418e-1;
    y = y * z - 3.761262582423300e-1;
    y = y * z + 1.128379165726710e+0;
    return (float)((double)x * y);
}

/* erfc(z) for z >= 0 to a few ulp in its tail too: verfcf_pos's fit with t and P(t) in double
 * and z^2 split, zh^2 exact (zh is z cut to 12 bits) times e^(P - (z - zh)(z + zh)), so that
 * no rounding of z^2 (up to 100 where erfc underflows; an ulp of it moves e^-z^2 by 8e-6)
 * reaches the exponent. z is capped at 11, where erfc is 0. */
CPU_VEC_FN float cpu_verfc_tail(float z0) {
    float  z = z0 < 11.0f ? z0 : 11.0f;
    double t = 1.0 / (1.0 + 0.5 * z);
    double p = 0.17087277;
    p = p * t - 0.82215223;
    p = p * t + 1.48851587;
    p = p * t - 1.13520398;
    p = p * t + 0.27886807;
    p = p * t - 0.18628806;
    p = p * t + 0.09678418;
    p = p * t + 0.37409196;
    p = p * t + 1.00002368;
    p = p * t - 1.26551223;
    float zh = cpu_bits_to_float(cpu_float_to_bits(z) & 0xfffff000u);
    float lo = (z - zh) * (z + zh);
    return (float)(t * cpu_vexpf(-zh * zh) * cpu_vexpf((float)(p - lo)));
}

/* erf within 1.5 ulp: the polynomial below |x| = 1, 1 - erfc(|x|) above (with x's sign; erfc's
 * absolute error is what counts there, so verfcf_pos's single exp does);
 * erfc within 4 ulp (CUDA's erfcf bound; Sleef's 1.5): 1 - erf(x) below |x| = 0.5, the tail
 * above, 2 minus it for x < 0. +-inf give the limits, NaN stays NaN. */
CPU_VEC_FN float cpu_verff(float x) {
    float a = fabsf(x);
    float r = a < 1.0f ? cpu_verf_small(a) : 1.0f - cpu_verfcf_pos(a);
    return x != x ? x : cpu_with_sign_of(r, x);
}

CPU_VEC_FN float cpu_verfcf(float x) {
    float a = fabsf(x), tail = cpu_verfc_tail(a);
    float r = a < 0.5f ? 1.0f - cpu_verf_small(x) : (x < 0 ? 2.0f - tail : tail);
    return x != x ? x : r;
}

/* tan of a float32 |x| <= CPU_VTRIG_MAX: sin r / cos r of the reduction above in double (or
 * -cos r / sin r in the odd quadrants), rounded once; odd exactly (computed on |x|) */
CPU_VEC_FN float cpu_vtanf(float x) {
    uint64_t q;
    double   r = cpu_vtrig_reduce(fabsf(x), &q);
    double   sn = cpu_vtrig_sin_poly(r), cs = cpu_vtrig_cos_poly(r);
    double   t = (q & 1) ? -cs / sn : sn / cs;
    return cpu_bits_to_float(cpu_float_to_bits((float)t) ^ (cpu_float_to_bits(x) & 0x80000000u));
}

/* log(x) of a positive normal double, to double precision: fdlibm's e_log.c (x = m 2^e, m in
 * [sqrt(1/2), sqrt(2)), s = f / (2 + f), log(m) = f - f^2/2 + s (f^2/2 + R(s^2))), without its
 * special cases: the normal generator's uniforms lie in (0, 1) */
CPU_VEC_FN double cpu_vlog_d(double x) {
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    /* the exponent field as a double by the 2^52 trick (AVX2 converts no int64 to double) */
    uint64_t eb = 0x4330000000000000ULL | (u >> 52),
             mb = (u & 0x000fffffffffffffULL) | 0x3fe0000000000000ULL; /* [1/2, 1) */
    double eb_d, m;
    memcpy(&eb_d, &eb, sizeof eb_d);
    memcpy(&m, &mb, sizeof m);
    int    low = m < 0.70710678118654752440;
    double k = (eb_d - 4503599627370496.0) - (low ? 1023.0 : 1022.0);
    m = low ? m + m : m;
    double f = m - 1.0, s = f / (2.0 + f), z = s * s, w = z * z;
    double t1 = w * (3.999999999940941908e-01 +
                     w * (2.222219843214978396e-01 + w * 1.531383769920937332e-01));
    double t2 = z * (6.666666666666735130e-01 +
                     w * (2.857142874366239149e-01 +
                          w * (1.818357216161805012e-01 + w * 1.479819860511658591e-01)));
    double hfsq = 0.5 * f * f;
    return k * 6.93147180369123816490e-01 -
           ((hfsq - (s * (hfsq + t2 + t1) + k * 1.90821492927058770002e-10)) - f);
}

/* cos(2 pi u) of u in [0, 1] to double precision: the nearest quarter turn q taken off exactly
 * (u - q/4 is exact for the generator's multiples of 2^-53), the rest r in [-pi/4, pi/4] by
 * fdlibm's __kernel_sin and __kernel_cos polynomials, picked and signed by q */
CPU_VEC_FN double cpu_vcos_2pi_d(double u) {
    double q = floor(4.0 * u + 0.5);
    double r = (u - 0.25 * q) * 6.283185307179586476925, z = r * r;
    double sp = 8.33333333332248946124e-03 +
                z * (-1.98412698298579493134e-04 +
                     z * (2.75573137070700676789e-06 +
                          z * (-2.50507602534068634195e-08 + z * 1.58969099521155010221e-10)));
    double sn = r + z * r * (-1.66666666666666324348e-01 + z * sp);
    double cp =
        z * (4.16666666666666019037e-02 +
             z * (-1.38888888888741095749e-03 +
                  z * (2.48015872894767294178e-05 +
                       z * (-2.75573143513906633035e-07 +
                            z * (2.08757232129817482790e-09 + z * -1.13596475577881948265e-11)))));
    double hz = 0.5 * z, w = 1.0 - hz, cs = w + (((1.0 - w) - hz) + z * cp);
    /* cos(q pi/2 + r), q = 0..4: cos r, -sin r, -cos r, sin r, cos r (compares of doubles:
     * no conversion to int, which keeps AVX2 loops scalar) */
    double v = (q == 1.0 || q == 3.0) ? sn : cs;
    return (q == 1.0 || q == 2.0) ? -v : v;
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
