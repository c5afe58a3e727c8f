/* test_vec_math.c — src/cpu/vec_math.h's float32 exp, log, log2, log10, log1p, expm1, sigmoid,
 * SiLU, tanh, sinh, cosh, erf, erfc, sin, cos, tan, atan, asin, acos and atan2
 * (the rows of tide.exp, tide.log, ... and the recurrent cells' activations) in ulps of the
 * double-precision libm value over every 2039th float (2.1 million, subnormals included), then at
 * NaN, +-inf and 0; GELU and its derivative; its softmax row (the CPU softmax's contiguous float32
 * path). */
#include "cpu/vec_math.h"
#include "test_util.h"
#include <float.h>

/* |got - want| in units in the last place of want as a float (2^-149 below the normals); an
 * overflow must be an infinity of want's sign */
static double ulps(float got, double want) {
    if (fabs(want) > FLT_MAX)
        return isinf(got) && (got > 0) == (want > 0) ? 0 : INFINITY;
    int e;
    frexp(want, &e);
    double ulp = fabs(want) < FLT_MIN ? ldexp(1, -149) : ldexp(1, e - 24);
    return fabs(got - want) / ulp;
}

int main(void) {
    enum {
        EXP,
        LOG,
        SIGMOID,
        SILU,
        TANH,
        LOG1P,
        EXPM1,
        SIN,
        COS,
        TAN,
        ATAN,
        ASIN,
        ACOS,
        LOG2,
        LOG10,
        SINH,
        COSH,
        ERF,
        ERFC,
        NF
    };
    const char *name[NF] = {"exp",   "log",  "sigmoid", "silu", "tanh", "log1p", "expm1",
                            "sin",   "cos",  "tan",     "atan", "asin", "acos",  "log2",
                            "log10", "sinh", "cosh",    "erf",  "erfc"};
    /* PyTorch's Sleef: 1 ulp (erfc 1.5); sin, cos and tan round a double once (0.501 seen);
     * erfc as CUDA's erfcf */
    const double bound[NF] = {1, 1, 2.5, 2.5, 1.5, 1.5, 2.5, 0.51, 0.51, 0.51,
                              1, 1, 1,   1,   1,   2,   2,   1.5,  4};
    double       worst[NF] = {0};
    float        at[NF] = {0};
    for (uint64_t u = 0; u < ((uint64_t)1 << 32); u += 2039) {
        float x = cpu_bits_to_float((uint32_t)u);
        if (isnan(x) || isinf(x))
            continue;
        double xd = x, err[NF];
        err[EXP] = ulps(cpu_vexpf(x), exp(xd));
        err[LOG] = x > 0 ? ulps(cpu_vlogf(x), log(xd)) : 0;
        err[SIGMOID] = ulps(cpu_vsigmoidf(x), 1 / (1 + exp(-xd)));
        /* below -88.7 e^-x overflows and SiLU is -0, PyTorch's float result */
        err[SILU] = x > -88 ? ulps(cpu_vsiluf(x), xd / (1 + exp(-xd))) : 0;
        err[TANH] = ulps(cpu_vtanhf(x), tanh(xd));
        err[LOG1P] = x > -1 ? ulps(cpu_vlog1pf(x), log1p(xd)) : 0;
        err[EXPM1] = ulps(cpu_vexpm1f(x), expm1(xd));
        /* past CPU_VTRIG_MAX the rows take libm's (elementwise_unary.c) */
        int trig = fabsf(x) <= CPU_VTRIG_MAX;
        err[SIN] = trig ? ulps(cpu_vsinf(x), sin(xd)) : 0;
        err[COS] = trig ? ulps(cpu_vcosf(x), cos(xd)) : 0;
        err[TAN] = trig ? ulps(cpu_vtanf(x), tan(xd)) : 0;
        err[ATAN] = ulps(cpu_vatanf(x), atan(xd));
        err[ASIN] = fabs(xd) <= 1 ? ulps(cpu_vasinf(x), asin(xd)) : (isnan(cpu_vasinf(x)) ? 0 : 99);
        err[ACOS] = fabs(xd) <= 1 ? ulps(cpu_vacosf(x), acos(xd)) : (isnan(cpu_vacosf(x)) ? 0 : 99);
        err[LOG2] = x > 0 ? ulps(cpu_vlog2f(x), log2(xd)) : 0;
        err[LOG10] = x > 0 ? ulps(cpu_vlog10f(x), log10(xd)) : 0;
        err[SINH] = ulps(cpu_vsinhf(x), sinh(xd));
        err[COSH] = ulps(cpu_vcoshf(x), cosh(xd));
        err[ERF] = ulps(cpu_verff(x), erf(xd));
        err[ERFC] = ulps(cpu_verfcf(x), erfc(xd));
        for (int f = 0; f < NF; f++)
            if (err[f] > worst[f])
                worst[f] = err[f], at[f] = x;
    }
    for (int f = 0; f < NF; f++) {
        CHECK(worst[f] <= bound[f]);
        if (worst[f] > bound[f])
            fprintf(stderr, "%s: %.3f ulp at %.9g (bound %.1f)\n", name[f], worst[f], at[f],
                    bound[f]);
    }
    CHECK(isnan(cpu_vexpf(NAN)) && isnan(cpu_vlogf(NAN)) && isnan(cpu_vsigmoidf(NAN)) &&
          isnan(cpu_vtanhf(NAN)) && isnan(cpu_vsiluf(NAN)));
    CHECK(cpu_vexpf(INFINITY) == INFINITY && cpu_vexpf(-INFINITY) == 0.0f);
    CHECK(cpu_vexpf(89.0f) == INFINITY && cpu_vexpf(-104.0f) == 0.0f);
    CHECK(cpu_vexpf(-100.0f) > 0 && cpu_vexpf(-100.0f) < FLT_MIN); /* subnormal, as libm's */
    CHECK(cpu_vlogf(0.0f) == -INFINITY && cpu_vlogf(-0.0f) == -INFINITY);
    CHECK(isnan(cpu_vlogf(-1.0f)) && cpu_vlogf(INFINITY) == INFINITY && cpu_vlogf(1.0f) == 0);
    CHECK(cpu_vtanhf(INFINITY) == 1.0f && cpu_vtanhf(-INFINITY) == -1.0f);
    CHECK(signbit(cpu_vtanhf(-0.0f)) && cpu_vtanhf(0) == 0.0f); /* odd: -0 stays -0 */
    CHECK(cpu_vsigmoidf(INFINITY) == 1.0f && cpu_vsigmoidf(-INFINITY) == 0.0f);
    CHECK(cpu_vexpf(0) == 1.0f && cpu_vsigmoidf(0) == 0.5f);
    CHECK(cpu_vsiluf(INFINITY) == INFINITY && cpu_vsiluf(-100.0f) == 0.0f);
    CHECK(cpu_vlog1pf(-1.0f) == -INFINITY && isnan(cpu_vlog1pf(-2.0f)) && isnan(cpu_vlog1pf(NAN)));
    CHECK(cpu_vlog1pf(INFINITY) == INFINITY && signbit(cpu_vlog1pf(-0.0f)));
    CHECK(cpu_vexpm1f(-INFINITY) == -1.0f && cpu_vexpm1f(INFINITY) == INFINITY);
    CHECK(signbit(cpu_vexpm1f(-0.0f)) && isnan(cpu_vexpm1f(NAN)));
    for (float x = 1e-30f; x < 1; x *= 1.7f)
        CHECK(cpu_vtanhf(-x) == -cpu_vtanhf(x)); /* odd, exactly */
    /* log2 and log10 exact at the powers of 2 and of 10 a float holds, as PyTorch's */
    int exact = 1;
    for (int k = -149; k <= 127; k++)
        exact = exact && cpu_vlog2f(ldexpf(1.0f, k)) == (float)k;
    for (int k = 0; k <= 10; k++)
        exact = exact && cpu_vlog10f((float)pow(10.0, k)) == (float)k;
    CHECK(exact);
    CHECK(cpu_vlog2f(0.0f) == -INFINITY && isnan(cpu_vlog10f(-1.0f)) && isnan(cpu_vlog2f(NAN)));
    CHECK(cpu_vlog10f(INFINITY) == INFINITY && cpu_vlog10f(-0.0f) == -INFINITY);
    /* sinh odd, cosh even and erf odd exactly; limits; NaN */
    int sym = 1;
    for (float x = 1e-30f; x < 100; x *= 1.3f)
        sym = sym && cpu_vsinhf(-x) == -cpu_vsinhf(x) && cpu_vcoshf(-x) == cpu_vcoshf(x) &&
              cpu_verff(-x) == -cpu_verff(x);
    CHECK(sym);
    CHECK(cpu_vsinhf(INFINITY) == INFINITY && cpu_vsinhf(-INFINITY) == -INFINITY);
    CHECK(cpu_vsinhf(89.5f) == INFINITY && isfinite(cpu_vsinhf(89.4f)) && cpu_vcoshf(0) == 1.0f);
    CHECK(cpu_vcoshf(-INFINITY) == INFINITY && signbit(cpu_vsinhf(-0.0f)));
    CHECK(cpu_verff(INFINITY) == 1.0f && cpu_verff(-INFINITY) == -1.0f &&
          signbit(cpu_verff(-0.0f)));
    CHECK(cpu_verfcf(INFINITY) == 0.0f && cpu_verfcf(-INFINITY) == 2.0f && cpu_verfcf(0) == 1.0f);
    CHECK(isnan(cpu_vsinhf(NAN)) && isnan(cpu_vcoshf(NAN)) && isnan(cpu_verff(NAN)) &&
          isnan(cpu_verfcf(NAN)));
    /* sin odd and cos even exactly, at the range's end too; sin(-0) = -0, sin(0) = 0, cos(0) = 1;
     * the quadrants' signs (pi/2 and pi rounded to float lie above them: cos and sin negative) */
    for (float x = 1e-30f; x <= CPU_VTRIG_MAX; x *= 1.7f)
        CHECK(cpu_vsinf(-x) == -cpu_vsinf(x) && cpu_vcosf(-x) == cpu_vcosf(x));
    CHECK(signbit(cpu_vsinf(-0.0f)) && cpu_vsinf(0.0f) == 0.0f && !signbit(cpu_vsinf(0.0f)));
    CHECK(cpu_vcosf(0.0f) == 1.0f && cpu_vcosf(-0.0f) == 1.0f && cpu_vsinf(1e-40f) == 1e-40f);
    CHECK(cpu_vsinf(1.5707964f) == 1.0f && cpu_vcosf(1.5707964f) < 0);
    CHECK(cpu_vsinf(3.1415927f) < 0 && cpu_vcosf(3.1415927f) == -1.0f);
    /* asin and acos every 2^-16 in [-1, 1] (the sweep above meets few there); tan, atan, asin
     * odd exactly; the special values */
    double arc_worst = 0;
    int    odd = 1;
    for (int i = -65536; i <= 65536; i++) {
        float  x = (float)i / 65536.0f;
        double xd = x;
        arc_worst = fmax(arc_worst, ulps(cpu_vasinf(x), asin(xd)));
        arc_worst = fmax(arc_worst, ulps(cpu_vacosf(x), acos(xd)));
        odd = odd && cpu_vasinf(-x) == -cpu_vasinf(x) && cpu_vatanf(-x) == -cpu_vatanf(x) &&
              cpu_vtanf(-x) == -cpu_vtanf(x);
    }
    CHECK(arc_worst <= 1 && odd);
    if (arc_worst > 1 || !odd)
        fprintf(stderr, "asin/acos on [-1, 1]: %.3f ulp (bound 1), odd %d\n", arc_worst, odd);
    CHECK(isnan(cpu_vtanf(NAN)) && isnan(cpu_vatanf(NAN)) && isnan(cpu_vasinf(NAN)) &&
          isnan(cpu_vacosf(NAN)) && isnan(cpu_vasinf(1.0000001f)) && isnan(cpu_vacosf(-2.0f)));
    CHECK(cpu_vatanf(INFINITY) == 1.5707964f && cpu_vatanf(-INFINITY) == -1.5707964f);
    CHECK(signbit(cpu_vatanf(-0.0f)) && signbit(cpu_vasinf(-0.0f)) && signbit(cpu_vtanf(-0.0f)));
    CHECK(cpu_vasinf(1.0f) == 1.5707964f && cpu_vacosf(1.0f) == 0.0f &&
          cpu_vacosf(-1.0f) == 3.1415927f && cpu_vacosf(0.0f) == 1.5707964f);
    /* atan2 against double precision over pairs of floats (every 2039th float y, x its bits
     * turned about: both signs, every exponent, subnormals), then C's special values exactly
     * (signs of 0 and the quadrants, infinities, NaN) */
    double atan2_worst = 0;
    for (uint64_t u = 0; u < ((uint64_t)1 << 32); u += 2039) {
        uint32_t b = (uint32_t)u;
        float    y = cpu_bits_to_float(b), x = cpu_bits_to_float((b << 13) | (b >> 19));
        if (isnan(x) || isnan(y))
            continue;
        atan2_worst = fmax(atan2_worst, ulps(cpu_vatan2f(y, x), atan2((double)y, (double)x)));
    }
    for (int i = -2000; i <= 2000; i++) /* near the axes and the diagonals, where it reduces */
        for (int j = -20; j <= 20; j++) {
            float y = (float)i / 997.0f, x = (float)j / 7.0f;
            atan2_worst = fmax(atan2_worst, ulps(cpu_vatan2f(y, x), atan2(y, x)));
            atan2_worst = fmax(atan2_worst, ulps(cpu_vatan2f(x, y), atan2(x, y)));
        }
    CHECK(atan2_worst <= 1);
    if (atan2_worst > 1)
        fprintf(stderr, "atan2: %.3f ulp (bound 1)\n", atan2_worst);
    const float special[] = {0.0f, -0.0f, 1.0f, -1.0f, 1e-40f, -3e38f, INFINITY, -INFINITY, NAN};
    for (int i = 0; i < 9; i++)
        for (int j = 0; j < 9; j++) {
            float got = cpu_vatan2f(special[i], special[j]), want = atan2f(special[i], special[j]);
            CHECK(isnan(want) ? isnan(got)
                              : signbit(got) == signbit(want) &&
                                    ulps(got, atan2(special[i], special[j])) <= 1);
        }
    /* GELU against double precision (x Phi(x), Phi from erfc), relative to its value; its
     * derivative Phi + x phi (between 0 and 1.13, with a root near -0.75) absolutely */
    double gelu_err = 0, grad_err = 0, gelu_near = 0;
    for (int i = -81920; i <= 81920; i++) {
        float  x = (float)i / 4096.0f; /* every 2^-12 in [-20, 20] */
        double xd = x, cdf = 0.5 * erfc(-xd / sqrt(2.0));
        double g = xd * cdf, dg = cdf + xd * exp(-0.5 * xd * xd) / sqrt(2 * M_PI);
        /* below 1e-30 the float result may flush to 0 (exp underflows at -87.3) */
        double eg = fabs(g) > 1e-30 ? fabs(cpu_vgeluf(x) - g) / fabs(g) : fabs(cpu_vgeluf(x));
        gelu_err = fmax(gelu_err, eg);
        if (fabs(xd) < 4) /* where a network's activations live */
            gelu_near = fmax(gelu_near, eg);
        grad_err = fmax(grad_err, fabs(cpu_vgelu_gradf(x) - dg));
    }
    CHECK(gelu_err < 2e-5 && gelu_near < 2e-6 && grad_err < 3e-7);
    if (gelu_err >= 2e-5 || gelu_near >= 2e-6 || grad_err >= 3e-7)
        fprintf(stderr, "gelu rel %g (|x| < 4: %g), gelu grad abs %g\n", gelu_err, gelu_near,
                grad_err);
    CHECK(cpu_vgeluf(INFINITY) == INFINITY && cpu_vgeluf(0) == 0.0f);
    CHECK(isnan(cpu_vgeluf(NAN)) && isnan(cpu_vgelu_gradf(NAN)));
    CHECK(cpu_vgelu_gradf(INFINITY) == 1.0f && cpu_vgelu_gradf(-INFINITY) == 0.0f);
    CHECK(cpu_vgelu_gradf(0) == 0.5f);
    /* softmax rows: against double precision, masked (-inf) entries exactly 0, NaN rows NaN */
    float row[37], out[37], lout[37];
    for (int j = 0; j < 37; j++)
        row[j] = (float)((j * 7919) % 23) * 0.37f - 4.0f;
    row[5] = row[30] = -INFINITY;
    cpu_softmax_row_f32(out, row, 37, 0);
    cpu_softmax_row_f32(lout, row, 37, 1);
    double mx = -INFINITY, sum = 0;
    for (int j = 0; j < 37; j++)
        mx = row[j] > mx ? row[j] : mx;
    for (int j = 0; j < 37; j++)
        sum += exp((double)row[j] - mx);
    double sworst = 0, lworst = 0;
    for (int j = 0; j < 37; j++) {
        double want = exp((double)row[j] - mx) / sum;
        sworst = fmax(sworst, fabs(out[j] - want) / (want > 0 ? want : 1));
        if (j != 5 && j != 30)
            lworst = fmax(lworst, fabs(lout[j] - log(want)));
    }
    CHECK(sworst < 1e-6 && lworst < 1e-6);
    CHECK(out[5] == 0.0f && out[30] == 0.0f && lout[5] == -INFINITY);
    row[11] = NAN;
    cpu_softmax_row_f32(out, row, 37, 0);
    CHECK(isnan(out[0]) && isnan(out[36]));
    /* the normal generator's double log and cos(2 pi u) (src/cpu/random.c) on its uniforms,
     * (k + 1/2) 2^-52, against libm's, and Box-Muller's float32 draws: libm's numbers but for
     * one in millions at a float's rounding boundary (the endpoints and 2^-20 steps, then a
     * million uniforms spread by a multiplicative hash) */
    double dlog = 0, dcos = 0;
    long   mismatch = 0;
    for (uint64_t i = 0; i < 1000000; i++) {
        uint64_t k1 = (i * 0x9E3779B97F4A7C15ULL) >> 12, k2 = (i * 0xBF58476D1CE4E5B9ULL) >> 12;
        double   u1 = ((double)k1 + 0.5) * 0x1.0p-52, u2 = ((double)k2 + 0.5) * 0x1.0p-52;
        dlog = fmax(dlog, fabs(cpu_vlog_d(u1) - log(u1)) / fabs(log(u1)));
        dcos = fmax(dcos, fabs(cpu_vcos_2pi_d(u2) - cos(6.283185307179586476925 * u2)));
        float ours = (float)(sqrt(-2.0 * cpu_vlog_d(u1)) * cpu_vcos_2pi_d(u2));
        float libm = (float)(sqrt(-2.0 * log(u1)) * cos(6.283185307179586476925 * u2));
        mismatch += ours != libm;
    }
    CHECK(dlog <= 2.3e-16 && dcos <= 1e-15 && mismatch <= 1);
    if (dlog > 2.3e-16 || dcos > 1e-15 || mismatch > 1)
        fprintf(stderr,
                "normal: log %.3g (bound 2.3e-16), cos %.3g (1e-15), %ld float mismatches\n", dlog,
                dcos, mismatch);
    CHECK(cpu_vlog_d(0x1.0p-53) == log(0x1.0p-53) && cpu_vlog_d(0.5) == log(0.5));
    CHECK(cpu_vcos_2pi_d(0.0) == 1.0 && cpu_vcos_2pi_d(0.5) == -1.0 && cpu_vcos_2pi_d(0.25) == 0.0);
    printf("%d passed, %d failed\n", tu_pass, tu_fail);
    return tu_fail != 0;
}
