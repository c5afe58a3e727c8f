/* test_linear.c — tide_linear (the linear kernel row) on the CPU against a naive double-precision
 * act(x w^T + bias): odd sizes (rows 1, 7, 300; d 1, 3, 130; n 1, 5, 64), each activation, with
 * and without a bias, float32 and float64, a 3-D input, bfloat16 and float16 against their
 * widened values, and the errors (a refused call makes no output). Runs with TIDE_CPU_DEVICES=2. */
#include "test_util.h"
#include "tide.h"

#include <stdint.h>
#include <stdlib.h>

static tide_device *cpu0, *cpu1;
static uint64_t     rng = 88172645463325252ull;

static double urand(void) { /* xorshift64: [0, 1) */
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0;
}

/* a float32 or float64 tensor on dev of random values in [-1, 1) (their values into ref) */
static tide_tensor *rnd(tide_device *dev, tide_dtype dt, int ndim, const int64_t *shape,
                        double *ref) {
    tide_tensor *t = NULL;
    if (tide_tensor_empty(NULL, dev, dt, ndim, shape, &t) != TIDE_OK) {
        fprintf(stderr, "rnd: %s\n", tide_errmsg());
        exit(2);
    }
    int64_t n = tide_tensor_numel(t);
    for (int64_t i = 0; i < n; i++) {
        double v = 2 * urand() - 1;
        if (dt == TIDE_DTYPE_F32) {
            ((float *)tide_tensor_data(t))[i] = (float)v;
            v = (float)v;
        } else {
            ((double *)tide_tensor_data(t))[i] = v;
        }
        ref[i] = v;
    }
    return t;
}

static double at(const tide_tensor *t, int64_t i) {
    return tide_tensor_dtype(t) == TIDE_DTYPE_F32 ? ((const float *)tide_tensor_data(t))[i]
                                                  : ((const double *)tide_tensor_data(t))[i];
}

static double act_of(tide_act act, double v) {
    if (act == TIDE_ACT_RELU)
        return v < 0 ? 0 : v;
    if (act == TIDE_ACT_GELU)
        return 0.5 * v * erfc(-v / sqrt(2.0));
    return v;
}

/* the reference act(x w^T + b) into y[rows * n] */
static void naive(const double *x, const double *w, const double *b, double *y, int64_t rows,
                  int64_t d, int64_t n, tide_act act) {
    for (int64_t r = 0; r < rows; r++)
        for (int64_t j = 0; j < n; j++) {
            double s = b ? b[j] : 0;
            for (int64_t k = 0; k < d; k++)
                s += x[r * d + k] * w[j * d + k];
            y[r * n + j] = act_of(act, s);
        }
}

/* one (rows, d, n, bias?, act, dtype) case against the reference */
static void linear_case(int64_t rows, int64_t d, int64_t n, int has_b, tide_act act,
                        tide_dtype dt) {
    int64_t      xs[2] = {rows, d}, ws[2] = {n, d}, bs[1] = {n};
    double      *x = malloc(sizeof(double) * rows * d), *w = malloc(sizeof(double) * n * d);
    double      *b = malloc(sizeof(double) * n), *y = malloc(sizeof(double) * rows * n);
    tide_tensor *tx = rnd(cpu0, dt, 2, xs, x), *tw = rnd(cpu0, dt, 2, ws, w);
    tide_tensor *tb = has_b ? rnd(cpu0, dt, 1, bs, b) : NULL, *ty = NULL;
    naive(x, w, has_b ? b : NULL, y, rows, d, n, act);
    CHECK_OK(tide_linear(NULL, tx, tw, tb, act, &ty));
    double tol = dt == TIDE_DTYPE_F32 ? 1e-5 * (1 + sqrt((double)d)) : 1e-12, worst = 0;
    for (int64_t i = 0; ty && i < rows * n; i++)
        worst = fmax(worst, fabs(at(ty, i) - y[i]));
    if (!(ty && worst <= tol))
        fprintf(stderr, "linear %lldx%lld n %lld bias %d act %d %s: error %g\n", (long long)rows,
                (long long)d, (long long)n, has_b, (int)act, tide_dtype_name(dt), worst);
    CHECK(ty && tide_tensor_shape(ty)[0] == rows && tide_tensor_shape(ty)[1] == n && worst <= tol);
    tide_tensor_release(tx), tide_tensor_release(tw), tide_tensor_release(tb);
    tide_tensor_release(ty);
    free(x), free(w), free(b), free(y);
}

static void test_linear_values(void) {
    static const int64_t  rowss[] = {1, 7, 300}, ds[] = {1, 3, 130}, ns[] = {1, 5, 64};
    static const tide_act acts[] = {TIDE_ACT_NONE, TIDE_ACT_RELU, TIDE_ACT_GELU};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            for (int k = 0; k < 3; k++)
                for (int a = 0; a < 3; a++)
                    for (int hb = 0; hb < 2; hb++) {
                        linear_case(rowss[i], ds[j], ns[k], hb, acts[a], TIDE_DTYPE_F32);
                        linear_case(rowss[i], ds[j], ns[k], hb, acts[a], TIDE_DTYPE_F64);
                    }
}

/* [2, 3, d] in, [2, 3, n] out; half dtypes within their rounding of the float32 result */
static void test_linear_shapes_and_half(void) {
    int64_t      xs[3] = {2, 3, 16}, ws[2] = {24, 16}, bs[1] = {24};
    double       xr[96], wr[384], br[24], yr[144];
    tide_tensor *x = rnd(cpu0, TIDE_DTYPE_F32, 3, xs, xr),
                *w = rnd(cpu0, TIDE_DTYPE_F32, 2, ws, wr);
    tide_tensor *b = rnd(cpu0, TIDE_DTYPE_F32, 1, bs, br), *y = NULL;
    naive(xr, wr, br, yr, 6, 16, 24, TIDE_ACT_GELU);
    CHECK_OK(tide_linear(NULL, x, w, b, TIDE_ACT_GELU, &y));
    CHECK(y && tide_tensor_ndim(y) == 3 && tide_tensor_shape(y)[2] == 24);
    CHECK(y && fabs(at(y, 143) - yr[143]) < 1e-5);
    tide_tensor_release(y);
    static const tide_dtype halves[] = {TIDE_DTYPE_BF16, TIDE_DTYPE_F16};
    for (int h = 0; h < 2; h++) {
        tide_tensor *hx = NULL, *hw = NULL, *hb = NULL, *hy = NULL, *fy = NULL;
        CHECK_OK(tide_tensor_to(NULL, x, cpu0, halves[h], 0, &hx));
        CHECK_OK(tide_tensor_to(NULL, w, cpu0, halves[h], 0, &hw));
        CHECK_OK(tide_tensor_to(NULL, b, cpu0, halves[h], 0, &hb));
        CHECK_OK(tide_linear(NULL, hx, hw, hb, TIDE_ACT_GELU, &hy));
        CHECK(hy && tide_tensor_dtype(hy) == halves[h]);
        CHECK_OK(tide_tensor_to(NULL, hy, cpu0, TIDE_DTYPE_F32, 0, &fy));
        double worst = 0; /* |y| < 5 here: bfloat16's step is at most 2^-5 */
        for (int64_t i = 0; fy && i < 144; i++)
            worst = fmax(worst, fabs(at(fy, i) - yr[i]));
        CHECK(fy && worst < (halves[h] == TIDE_DTYPE_BF16 ? 0.08 : 0.01));
        tide_tensor *all[5] = {hx, hw, hb, hy, fy};
        for (int i = 0; i < 5; i++)
            tide_tensor_release(all[i]);
    }
    tide_tensor_release(x), tide_tensor_release(w), tide_tensor_release(b);
}

static void test_linear_errors(void) {
    int64_t      xs[2] = {3, 4}, ws[2] = {2, 4}, w5s[2] = {2, 5}, bs[1] = {3}, b2s[1] = {2};
    double       buf[12];
    tide_tensor *x = rnd(cpu0, TIDE_DTYPE_F32, 2, xs, buf),
                *w = rnd(cpu0, TIDE_DTYPE_F32, 2, ws, buf);
    tide_tensor *w5 = rnd(cpu0, TIDE_DTYPE_F32, 2, w5s, buf);
    tide_tensor *b3 = rnd(cpu0, TIDE_DTYPE_F32, 1, bs, buf);
    tide_tensor *b64 = rnd(cpu0, TIDE_DTYPE_F64, 1, b2s, buf);
    tide_tensor *w1 = rnd(cpu1, TIDE_DTYPE_F32, 2, ws, buf), *xi = NULL, *y = NULL;
    CHECK_OK(tide_tensor_empty(NULL, cpu0, TIDE_DTYPE_I64, 2, xs, &xi));
    CHECK_ERR(tide_linear(NULL, x, w5, NULL, TIDE_ACT_NONE, &y), TIDE_ESHAPE,
              "tide: linear: x of shape [3, 4] must have d = 5 elements in its last dim");
    CHECK_ERR(tide_linear(NULL, x, w, b3, TIDE_ACT_NONE, &y), TIDE_ESHAPE,
              "tide: linear: bias of shape [3] must hold n = 2 elements");
    CHECK_ERR(tide_linear(NULL, x, w, b64, TIDE_ACT_NONE, &y), TIDE_EDTYPE,
              "tide: linear: bias must have x's dtype float32, got float64");
    CHECK_ERR(tide_linear(NULL, x, w1, NULL, TIDE_ACT_NONE, &y), TIDE_EDEVICE,
              "tide: linear: expected all tensors on the same device");
    CHECK_ERR(tide_linear(NULL, xi, w, NULL, TIDE_ACT_NONE, &y), TIDE_EDTYPE,
              "tide: linear: x must be float32 or float64 or float16 or bfloat16, got int64");
    CHECK_ERR(tide_linear(NULL, x, w, NULL, (tide_act)7, &y), TIDE_EINVAL,
              "tide: linear: act = 7 must be in 0..2");
    CHECK_ERR(tide_linear(NULL, x, b3, NULL, TIDE_ACT_NONE, &y), TIDE_EINVAL,
              "linear: x and a 2-D weight [n, d] are required");
    CHECK(y == NULL);
    tide_tensor *all[7] = {x, w, w5, b3, b64, w1, xi};
    for (int i = 0; i < 7; i++)
        tide_tensor_release(all[i]);
}

int main(void) {
    setenv("TIDE_CPU_DEVICES", "2", 1);
    if (tide_init() != TIDE_OK || tide_device_get("cpu", &cpu0) != TIDE_OK ||
        tide_device_get("cpu:1", &cpu1) != TIDE_OK) {
        fprintf(stderr, "init: %s\n", tide_errmsg());
        printf("0 passed, 1 failed\n");
        return 1;
    }
    test_linear_values();
    test_linear_shapes_and_half();
    test_linear_errors();
    return tu_finish();
}
