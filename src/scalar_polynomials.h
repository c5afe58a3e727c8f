/*
 * scalar_polynomials.h — the orthogonal polynomials of PyTorch's torch.special, p(x, n): the
 * Chebyshev T, U, V, W and their shifted forms (of 2x - 1), Hermite's H and He, Laguerre's L
 * and Legendre's P, in double (float32 rounds the double once). Included by scalar_math.h, for
 * the CPU and CUDA kernels alike.
 *
 * PyTorch 1.13's conventions: the degree is n truncated toward 0; a negative one gives 0 (NaN,
 * +-inf and |n| >= 2^63 too: the x86 conversion to int64 makes them INT64_MIN); degree 0 gives
 * 1, even at a NaN x; |x| = 1 (x = 0 or 1 for the shifted ones) has its exact values. Written
 * from the three-term recurrences, as PyTorch computes them (with one fma a step, as its build
 * contracts them: 2x^2 - 1 does not cancel), except where they fail:
 *  - an infinite x gives the polynomial's limit, +-inf (PyTorch's recurrence gives NaN there:
 *    inf - inf), and so does a result past the double range, for every family whose values
 *    grow monotonically there (the Chebyshev and Legendre beyond |x| = 1, Laguerre below 0,
 *    Hermite beyond its zeros): the recurrence stops at the overflow, with the sign the degree's
 *    parity gives;
 *  - the Chebyshev beyond |x| = 1 take n acosh|x| > 745 as an overflow, and below |x| = 1.67
 *    (acosh 1.1) past degree 16 their closed forms (cosh n t, sinh (n+1) t / sinh t, ...): next
 *    to 1, where the recurrence loses n^2 / 2 ulp, they lose n acosh|x| / 2, and no degree loops
 *    long; inside, PyTorch's trigonometric forms past degree 6 (T) or 8 (cos n acos x, ...);
 *  - elsewhere the recurrence carries its own power of two, so that a value past the double
 *    range is +-inf with its sign, not NaN; it runs at most 2^20 steps: a degree above that
 *    whose value has no closed form here (Hermite among its zeros, Laguerre, Legendre but at
 *    0 and past the overflow: inside (-1, 1), and beyond 1 where n acosh|x| <= 745) gives NaN,
 *    where PyTorch loops n times.
 */
#ifndef TIDE_SCALAR_POLYNOMIALS_H
#define TIDE_SCALAR_POLYNOMIALS_H

#define TIDE_POLY_MAX_STEPS 1048576 /* 2^20 */

/* PyTorch's degree: n truncated toward 0, -1 for what converts to INT64_MIN (or is negative) */
TIDE_HD long long tide_poly_degree(double n) {
    return (n > -1.0 && n < 9223372036854775808.0) ? (long long)n : -1;
}

/* +-inf with the sign of a polynomial of degree k, positive leading coefficient (times -1 when
 * neg_lead), at an x of that sign far out */
TIDE_HD double tide_poly_inf(double x, long long k, int neg_lead) {
    int neg = ((x < 0) && (k & 1)) != (neg_lead != 0);
    return neg ? -INFINITY : INFINITY;
}

/* ---- Chebyshev --------------------------------------------------------------------------------
 * kind 0..3: T, U, V, W, each p_(k+1) = 2x p_k - p_(k-1) from p_0 = 1 and p_1 = x, 2x, 2x - 1,
 * 2x + 1. Beyond |x| = 1, with t = acosh|x|: T = cosh kt, U = sinh (k+1)t / sinh t,
 * V = cosh (k+1/2)t / cosh t/2, W = sinh (k+1/2)t / sinh t/2 at x > 1, each at least e^(kt);
 * below -1, T and U have the degree's parity and V(x) = (-1)^k W(-x), W(x) = (-1)^k V(-x). */
TIDE_HD double tide_chebyshev(int kind, double x, double n) {
    long long k = tide_poly_degree(n);
    if (k < 0)
        return 0.0;
    if (k == 0)
        return 1.0;
    if (x != x)
        return x;
    double ax = fabs(x), kd = (double)k;
    int    odd = (int)(k & 1);
    if (ax == INFINITY)
        return tide_poly_inf(x, k, 0);
    if (ax == 1.0) { /* the exact values at +-1 */
        double at1[4] = {1.0, kd + 1, 1.0, 2 * kd + 1},
               at_minus1[4] = {1.0, kd + 1, 2 * kd + 1, 1.0};
        return x > 0 ? at1[kind] : (odd ? -at_minus1[kind] : at_minus1[kind]);
    }
    if (ax < 1.0 && k > (kind == 0 ? 6 : 8)) { /* PyTorch's trigonometric forms */
        double th = acos(x);
        switch (kind) {
        case 0:
            return cos(kd * th);
        case 1:
            return sin((kd + 1) * th) / sin(th);
        case 2: /* x next to -1: the value there */
            if (sin(0.5 * th) == 1.0)
                return odd ? -(2 * kd + 1) : 2 * kd + 1;
            return cos((kd + 0.5) * th) / cos(0.5 * th);
        default: /* x next to 1 */
            if (cos(0.5 * th) == 1.0)
                return 2 * kd + 1;
            return sin((kd + 0.5) * th) / sin(0.5 * th);
        }
    }
    if (ax > 1.0) {
        double t = acosh(ax);
        if (kd * t > 745.0) /* past e^745 > the largest double */
            return tide_poly_inf(x, k, 0);
        if (t < 1.1 && k > 16) { /* the closed forms: the recurrence loses k^2 / 2 ulp */
            double r;
            if (kind < 2)
                r = kind == 0 ? cosh(kd * t) : sinh((kd + 1) * t) / sinh(t);
            else if ((kind == 2) != (x < 0)) /* V above 1, W below -1 */
                r = cosh((kd + 0.5) * t) / cosh(0.5 * t);
            else
                r = sinh((kd + 0.5) * t) / sinh(0.5 * t);
            return (x < 0 && odd) ? -r : r;
        }
    }
    double first[4] = {x, x + x, x + x - 1, x + x + 1};
    double p = 1.0, q = first[kind];
    for (long long j = 1; j < k; j++) {
        double r = fma(x + x, q, -p);
        p = q;
        q = r;
        if (fabs(q) == INFINITY) /* beyond |x| = 1: it only grows from here */
            return tide_poly_inf(x, k, 0);
    }
    return q;
}
/* The shifted ones, of y = 2x - 1. From x = 0.25 on y is exact (Sterbenz, then a step of an
 * integer), and the unshifted function takes it; below, its rounding would cost up to n^2 ulp
 * next to y = -1, and with phi = asin(sqrt x) (acos y = pi - 2 phi) or t = acosh(1 - 2x) from
 * -2x exactly they are, for degree k: T = cos 2k phi, U = sin 2(k+1) phi / sin 2 phi,
 * V = sin (2k+1) phi / sin phi, W = cos (2k+1) phi / cos phi, each times (-1)^k, on (0, 0.25);
 * on (-0.5, 0) the hyperbolic forms at |y| (V and W swapped), times (-1)^k. */
TIDE_HD double tide_shifted_chebyshev(int kind, double x, double n) {
    long long k = tide_poly_degree(n);
    if (k < 1 || !(x > -0.5 && x < 0.25) || x == 0.0)
        return tide_chebyshev(kind, x + x - 1, n);
    double kd = (double)k, r;
    if (x > 0) {
        double p = asin(sqrt(x));
        switch (kind) {
        case 0:
            r = cos(2 * kd * p);
            break;
        case 1:
            r = sin(2 * (kd + 1) * p) / sin(2 * p);
            break;
        case 2:
            r = sin((2 * kd + 1) * p) / sin(p);
            break;
        default:
            r = cos((2 * kd + 1) * p) / cos(p);
        }
    } else {
        double d = -2 * x, t = log1p(d + sqrt(d * (2 + d))); /* acosh(1 + d), d exact */
        if (kd * t > 745.0)
            return tide_poly_inf(x, k, 0);
        switch (kind) {
        case 0:
            r = cosh(kd * t);
            break;
        case 1:
            r = sinh((kd + 1) * t) / sinh(t);
            break;
        case 2:
            r = sinh((kd + 0.5) * t) / sinh(0.5 * t);
            break;
        default:
            r = cosh((kd + 0.5) * t) / cosh(0.5 * t);
        }
    }
    return (k & 1) ? -r : r;
}

/* ---- Hermite, Laguerre, Legendre --------------------------------------------------------------
 * The recurrence p_(j+1) = a_j(x) p_j - b_j p_(j-1) with its scale: past 2^600, p and q are
 * multiplied by 2^-600 and e counts it; the result is q 2^e (+-inf past the range). */
enum { TIDE_POLY_H, TIDE_POLY_HE, TIDE_POLY_L, TIDE_POLY_P };

TIDE_HD double tide_poly_recurrence(int fam, double x, long long k, int stop_at_inf) {
    double p = 1.0, q = fam == TIDE_POLY_H ? x + x : fam == TIDE_POLY_L ? 1.0 - x : x;
    int    e = 0;
    for (long long j = 1; j < k; j++) {
        double jd = (double)j, r;
        switch (fam) {
        case TIDE_POLY_H:
            r = fma(x + x, q, -(2 * jd * p));
            break;
        case TIDE_POLY_HE:
            r = fma(x, q, -(jd * p));
            break;
        case TIDE_POLY_L:
            r = fma(2 * jd + (1 - x), q, -(jd * p)) / (jd + 1);
            break;
        default:
            r = fma((2 * jd + 1) * x, q, -(jd * p)) / (jd + 1);
        }
        p = q;
        q = r;
        if (stop_at_inf) { /* the values are positive, and the one past the range too (a
                              product overflowing first may have made it -inf) */
            if (fabs(q) == INFINITY)
                return INFINITY;
        } else if (fabs(q) > 0x1p600 || fabs(p) > 0x1p600) {
            p *= 0x1p-600;
            q *= 0x1p-600;
            e += 600;
        }
    }
    return e ? ldexp(q, e) : q;
}

/* H (physicists', p_(j+1) = 2x p_j - 2j p_(j-1)) or He (probabilists', x p_j - j p_(j-1)).
 * Beyond sqrt(2k) (H) or 2 sqrt(k) (He) every p_j(x), j <= k, exceeds x times the one before,
 * so p_k is at least |x|^k there (infinite past 2^20 steps); at 0, 0 for an odd degree and
 * (-1)^(k/2) (2^(k/2)) (k-1)!! for an even one, infinite past k = 400. */
TIDE_HD double tide_hermite(int fam, double x, double n) {
    long long k = tide_poly_degree(n);
    if (k < 0)
        return 0.0;
    if (k == 0)
        return 1.0;
    if (x != x)
        return x;
    double kd = (double)k;
    if (fabs(x) == INFINITY)
        return tide_poly_inf(x, k, 0);
    if (x == 0.0 && ((k & 1) || k > 400))
        return (k & 1) ? 0.0 : ((k / 2) & 1) ? -INFINITY : INFINITY;
    if (x * x >= (fam == TIDE_POLY_H ? 2 * kd : 4 * kd)) { /* no zero beyond: it only grows */
        double r = k > TIDE_POLY_MAX_STEPS ? INFINITY : tide_poly_recurrence(fam, fabs(x), k, 1);
        return (x < 0 && (k & 1)) ? -r : r;
    }
    if (k > TIDE_POLY_MAX_STEPS)
        return NAN;
    return tide_poly_recurrence(fam, x, k, 0);
}

/* L: 1 at x = 0 (PyTorch tests it first); below 0 a sum of positive terms, growing with k;
 * past 2^200 its leading term (-x)^k / k! to the last bit (the next is k^2 / x of it), which
 * overflows past k = 5 (one step of the recurrence there could overflow before its scale) */
TIDE_HD double tide_laguerre(double x, double n) {
    long long k = tide_poly_degree(n);
    if (k < 0)
        return 0.0;
    if (k == 0 || x == 0.0)
        return 1.0;
    if (x != x)
        return x;
    if (fabs(x) == INFINITY)
        return tide_poly_inf(x, k, (int)(k & 1)); /* the leading coefficient is (-1)^k / k! */
    if (x > 0x1p200 && k > 1) {
        const double factorial[6] = {1, 1, 2, 6, 24, 120};
        int          e;
        double       m = frexp(x, &e),
               r = k > 5 ? INFINITY : ldexp(pow(m, (double)k) / factorial[k], (int)k * e);
        return (k & 1) ? -r : r;
    }
    if (k > TIDE_POLY_MAX_STEPS)
        return NAN;
    return tide_poly_recurrence(TIDE_POLY_L, x, k, x < 0);
}

/* P: beyond |x| = 1, P_k(cosh t) >= e^(kt) / (2 pi sqrt k) (from Laplace's integral), so
 * kt > 745 overflows; at 0, (-1)^(k/2) (k-1)!! / k!! for an even k, from Stirling's series in
 * m = k/2 past 2^19 (1 / sqrt(pi m) (1 - 1/(8m) + 1/(128m^2) + 5/(1024m^3) - 21/(32768m^4))). */
TIDE_HD double tide_legendre(double x, double n) {
    long long k = tide_poly_degree(n);
    if (k < 0)
        return 0.0;
    if (k == 0)
        return 1.0;
    if (x != x)
        return x;
    double ax = fabs(x), kd = (double)k;
    int    odd = (int)(k & 1);
    if (ax == INFINITY)
        return tide_poly_inf(x, k, 0);
    if (ax == 1.0)
        return (x > 0 || !odd) ? 1.0 : -1.0;
    if (x == 0.0 && (odd || k > TIDE_POLY_MAX_STEPS)) {
        if (odd)
            return 0.0;
        double m = 0.5 * kd, im = 1.0 / m;
        double r = (1 - im * (1.0 / 8 - im * (1.0 / 128 + im * (5.0 / 1024 - im * 21.0 / 32768)))) /
                   sqrt(3.14159265358979323846 * m);
        return ((k / 2) & 1) ? -r : r;
    }
    if (ax > 1.0) {
        if (kd * acosh(ax) > 745.0)
            return tide_poly_inf(x, k, 0);
        if (k > TIDE_POLY_MAX_STEPS)
            return NAN;
        double r = tide_poly_recurrence(TIDE_POLY_P, ax, k, 1);
        return (x < 0 && odd) ? -r : r;
    }
    if (k > TIDE_POLY_MAX_STEPS)
        return NAN;
    return tide_poly_recurrence(TIDE_POLY_P, x, k, 0);
}

/* the rows' functions (x, n): float32 rounds the double once */
#define TIDE_DEF_POLYNOMIAL(NAME, EXPR) TIDE_DEF_FLOAT_BINARY(NAME, EXPR, (float)(EXPR))
TIDE_DEF_POLYNOMIAL(chebyshev_t, tide_chebyshev(0, a, b))
TIDE_DEF_POLYNOMIAL(chebyshev_u, tide_chebyshev(1, a, b))
TIDE_DEF_POLYNOMIAL(chebyshev_v, tide_chebyshev(2, a, b))
TIDE_DEF_POLYNOMIAL(chebyshev_w, tide_chebyshev(3, a, b))
TIDE_DEF_POLYNOMIAL(shifted_chebyshev_t, tide_shifted_chebyshev(0, a, b))
TIDE_DEF_POLYNOMIAL(shifted_chebyshev_u, tide_shifted_chebyshev(1, a, b))
TIDE_DEF_POLYNOMIAL(shifted_chebyshev_v, tide_shifted_chebyshev(2, a, b))
TIDE_DEF_POLYNOMIAL(shifted_chebyshev_w, tide_shifted_chebyshev(3, a, b))
TIDE_DEF_POLYNOMIAL(hermite_h, tide_hermite(TIDE_POLY_H, a, b))
TIDE_DEF_POLYNOMIAL(hermite_he, tide_hermite(TIDE_POLY_HE, a, b))
TIDE_DEF_POLYNOMIAL(laguerre_l, tide_laguerre(a, b))
TIDE_DEF_POLYNOMIAL(legendre_p, tide_legendre(a, b))

#endif /* TIDE_SCALAR_POLYNOMIALS_H */
