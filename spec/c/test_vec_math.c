/* test_vec_math.c — src/cpu/vec_math.h's float32 exp, sigmoid and tanh (the LSTM/GRU cell
 * kernels' activations), GELU and its derivative against double-precision libm over the whole
 * useful range, plus their values at NaN, +-inf and 0; its softmax row (the CPU softmax's
 * contiguous float32 path). */
#include "cpu/vec_math.h"
#include "test_util.h"

int main(void) {
    double exp_rel = 0, sig_abs = 0, tanh_abs = 0, tanh_rel = 0;
    /* every 2^-12 from -100 to 100 (819,200 points), then a sweep of tiny magnitudes */
    for (int i = -409600; i <= 409600; i++) {
        float  x = (float)i / 4096.0f;
        double xd = x;
        if (x > -87.3f && x < 88.3f) {
            double e = exp(xd);
            double rel = fabs(cpu_vexpf(x) - e) / e;
            exp_rel = rel > exp_rel ? rel : exp_rel;
        }
        double s = 1 / (1 + exp(-xd));
        double ds = fabs(cpu_vsigmoidf(x) - s);
        sig_abs = ds > sig_abs ? ds : sig_abs;
        double t = tanh(xd), dt = fabs(cpu_vtanhf(x) - t);
        tanh_abs = dt > tanh_abs ? dt : tanh_abs;
        if (t != 0 && dt / fabs(t) > tanh_rel)
            tanh_rel = dt / fabs(t);
    }
    for (float x = 1e-30f; x < 1; x *= 1.7f) {
        double rel = fabs(cpu_vtanhf(x) - tanh((double)x)) / tanh((double)x);
        tanh_rel = rel > tanh_rel ? rel : tanh_rel;
        CHECK(cpu_vtanhf(-x) == -cpu_vtanhf(x)); /* odd, exactly */
    }
    CHECK(exp_rel < 3.6e-7); /* 3 ulp */
    CHECK(sig_abs < 2e-7);
    CHECK(tanh_abs < 2e-7);
    CHECK(tanh_rel < 5e-7);
    if (exp_rel >= 3.6e-7 || sig_abs >= 2e-7 || tanh_abs >= 2e-7 || tanh_rel >= 5e-7)
        fprintf(stderr, "exp rel %g, sigmoid abs %g, tanh abs %g rel %g\n", exp_rel, sig_abs,
                tanh_abs, tanh_rel);
    CHECK(isnan(cpu_vexpf(NAN)) && isnan(cpu_vsigmoidf(NAN)) && isnan(cpu_vtanhf(NAN)));
    CHECK(cpu_vtanhf(INFINITY) == 1.0f && cpu_vtanhf(-INFINITY) == -1.0f);
    CHECK(cpu_vsigmoidf(INFINITY) == 1.0f && cpu_vsigmoidf(-INFINITY) < 1e-38f);
    CHECK(cpu_vexpf(0) == 1.0f && cpu_vsigmoidf(0) == 0.5f && cpu_vtanhf(0) == 0.0f);
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
    double worst = 0, lworst = 0;
    for (int j = 0; j < 37; j++) {
        double want = exp((double)row[j] - mx) / sum;
        worst = fmax(worst, fabs(out[j] - want) / (want > 0 ? want : 1));
        if (j != 5 && j != 30)
            lworst = fmax(lworst, fabs(lout[j] - log(want)));
    }
    CHECK(worst < 1e-6 && lworst < 1e-6);
    CHECK(out[5] == 0.0f && out[30] == 0.0f && lout[5] == -INFINITY);
    row[11] = NAN;
    cpu_softmax_row_f32(out, row, 37, 0);
    CHECK(isnan(out[0]) && isnan(out[36]));
    printf("%d passed, %d failed\n", tu_pass, tu_fail);
    return tu_fail != 0;
}
