/* test_layer_norm.c — tide_layer_norm, tide_layer_norm_backward and tide_softmax_backward on
 * the CPU against naive double-precision references: odd sizes (d = 1, 3, 127, 1000; rows = 1,
 * 7, 300), with and without weight and bias, float32 and float64, strided softmax inputs, the
 * parameter gradients' bits on 1 and 2 threads, and the errors. Runs with TIDE_CPU_DEVICES=2. */
#include "test_util.h"
#include "tide.h"

#include <omp.h>
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

/* a contiguous tensor on dev of n random values in [lo, lo + span) (mirrored into ref) */
static tide_tensor *rnd(tide_device *dev, tide_dtype dt, int ndim, const int64_t *shape, double lo,
                        double span, double *ref) {
    tide_tensor *t = NULL;
    if (tide_tensor_empty(NULL, dev, dt, ndim, shape, &t) != TIDE_OK) {
        fprintf(stderr, "rnd: %s\n", tide_errmsg());
        exit(2);
    }
    int64_t n = tide_tensor_numel(t);
    for (int64_t i = 0; i < n; i++) {
        double v = lo + span * urand();
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

/* |got - want| <= tol * (1 + |want|) for all n; prints the first miss */
static int close_all(const char *what, const tide_tensor *t, const double *want, int64_t n,
                     double tol) {
    for (int64_t i = 0; i < n; i++) {
        double g = at(t, i);
        if (!(fabs(g - want[i]) <= tol * (1 + fabs(want[i])))) {
            fprintf(stderr, "%s[%lld] = %.9g, expected %.9g\n", what, (long long)i, g, want[i]);
            return 0;
        }
    }
    return 1;
}

/* forward and backward of one (rows, d, weight?, bias?, dtype) case against double math */
static void ln_case(int64_t rows, int64_t d, int has_w, int has_b, tide_dtype dt) {
    int64_t      xs[2] = {rows, d}, ws[1] = {d};
    double      *x = malloc(sizeof(double) * rows * d), *dy = malloc(sizeof(double) * rows * d);
    double      *w = malloc(sizeof(double) * d), *b = malloc(sizeof(double) * d);
    double      *y = malloc(sizeof(double) * rows * d), *dx = malloc(sizeof(double) * rows * d);
    double      *mu = malloc(sizeof(double) * rows), *rs = malloc(sizeof(double) * rows);
    double      *dw = calloc(d, sizeof(double)), *db = calloc(d, sizeof(double));
    tide_tensor *tx = rnd(cpu0, dt, 2, xs, 3, 4, x); /* rows far from 0: a one-pass var fails */
    tide_tensor *tdy = rnd(cpu0, dt, 2, xs, -1, 2, dy);
    tide_tensor *tw = has_w ? rnd(cpu0, dt, 1, ws, 0.5, 1, w) : NULL;
    tide_tensor *tb = has_b ? rnd(cpu0, dt, 1, ws, -1, 2, b) : NULL;
    for (int64_t r = 0; r < rows; r++) {
        const double *xr = x + r * d, *gr = dy + r * d;
        double        s = 0, v = 0, a = 0, c = 0;
        for (int64_t j = 0; j < d; j++)
            s += xr[j];
        mu[r] = s / d;
        for (int64_t j = 0; j < d; j++)
            v += (xr[j] - mu[r]) * (xr[j] - mu[r]);
        rs[r] = 1 / sqrt(v / d + 1e-5);
        for (int64_t j = 0; j < d; j++) {
            double xh = (xr[j] - mu[r]) * rs[r], g = gr[j] * (has_w ? w[j] : 1);
            y[r * d + j] = xh * (has_w ? w[j] : 1) + (has_b ? b[j] : 0);
            a += g;
            c += g * xh;
            dw[j] += gr[j] * xh;
            db[j] += gr[j];
        }
        for (int64_t j = 0; j < d; j++) {
            double xh = (xr[j] - mu[r]) * rs[r], g = gr[j] * (has_w ? w[j] : 1);
            dx[r * d + j] = rs[r] * (g - a / d - xh * c / d);
        }
    }
    double       tol = dt == TIDE_DTYPE_F32 ? 2e-5 : 1e-11;
    tide_tensor *ty = NULL, *tm = NULL, *ts = NULL, *tdx = NULL, *tdw = NULL, *tdb = NULL;
    char         what[64];
    snprintf(what, sizeof what, "layer_norm %lldx%lld w%d b%d %s", (long long)rows, (long long)d,
             has_w, has_b, dt == TIDE_DTYPE_F32 ? "f32" : "f64");
    CHECK_OK(tide_layer_norm(NULL, tx, tw, tb, d, 1e-5, &ty, &tm, &ts));
    CHECK(ty && close_all(what, ty, y, rows * d, tol));
    CHECK(tm && close_all(what, tm, mu, rows, tol));
    CHECK(ts && close_all(what, ts, rs, rows, tol));
    CHECK_OK(tide_layer_norm_backward(NULL, tdy, tx, tm, ts, tw, d, &tdx, has_w ? &tdw : NULL,
                                      has_b ? &tdb : NULL));
    CHECK(tdx && close_all(what, tdx, dx, rows * d, 10 * tol));
    if (has_w)
        CHECK(tdw && close_all(what, tdw, dw, d, 10 * tol));
    if (has_b)
        CHECK(tdb && close_all(what, tdb, db, d, 10 * tol));
    tide_tensor *all[9] = {tx, tdy, tw, tb, ty, tm, ts, tdx, tdw};
    for (int i = 0; i < 9; i++)
        tide_tensor_release(all[i]);
    tide_tensor_release(tdb);
    free(x), free(dy), free(w), free(b), free(y), free(dx), free(mu), free(rs), free(dw), free(db);
}

static void test_layer_norm_values(void) {
    static const int64_t ds[] = {1, 3, 127, 1000}, rowss[] = {1, 7, 300};
    for (int i = 0; i < 4; i++)
        for (int k = 0; k < 3; k++)
            for (int wb = 0; wb < 4; wb++) {
                ln_case(rowss[k], ds[i], wb & 1, wb >> 1, TIDE_DTYPE_F32);
                ln_case(rowss[k], ds[i], wb & 1, wb >> 1, TIDE_DTYPE_F64);
            }
}

/* x [2, 3, 4] normalized over its last 12 elements, weight [3, 4]: shapes kept */
static void test_layer_norm_shapes(void) {
    int64_t      xs[3] = {2, 3, 4}, ws[2] = {3, 4};
    double       buf[24];
    tide_tensor *x = rnd(cpu0, TIDE_DTYPE_F32, 3, xs, -1, 2, buf);
    tide_tensor *w = rnd(cpu0, TIDE_DTYPE_F32, 2, ws, -1, 2, buf);
    tide_tensor *y = NULL, *m = NULL, *s = NULL, *dx = NULL, *dw = NULL, *db = NULL;
    CHECK_OK(tide_layer_norm(NULL, x, w, NULL, 12, 1e-5, &y, &m, &s));
    CHECK(y && tide_tensor_ndim(y) == 3 && tide_tensor_shape(y)[2] == 4);
    CHECK(m && tide_tensor_ndim(m) == 1 && tide_tensor_shape(m)[0] == 2);
    CHECK_OK(tide_layer_norm_backward(NULL, x, x, m, s, w, 12, &dx, &dw, &db));
    CHECK(dw && tide_tensor_ndim(dw) == 2 && tide_tensor_shape(dw)[1] == 4);
    CHECK(db && tide_tensor_ndim(db) == 2);
    tide_tensor *all[8] = {x, w, y, m, s, dx, dw, db};
    for (int i = 0; i < 8; i++)
        tide_tensor_release(all[i]);
    /* no rows: an empty result and zero parameter gradients */
    int64_t      es[2] = {0, 5}, e5[1] = {5};
    tide_tensor *ex = NULL, *ew = NULL;
    CHECK_OK(tide_tensor_empty(NULL, cpu0, TIDE_DTYPE_F64, 2, es, &ex));
    ew = rnd(cpu0, TIDE_DTYPE_F64, 1, e5, 1, 1, buf);
    y = m = s = dx = dw = db = NULL;
    CHECK_OK(tide_layer_norm(NULL, ex, ew, ew, 5, 1e-5, &y, &m, &s));
    CHECK(y && tide_tensor_numel(y) == 0 && tide_tensor_numel(m) == 0);
    CHECK_OK(tide_layer_norm_backward(NULL, ex, ex, m, s, ew, 5, &dx, &dw, &db));
    CHECK(dw && at(dw, 4) == 0 && db && at(db, 0) == 0);
    tide_tensor *all2[8] = {ex, ew, y, m, s, dx, dw, db};
    for (int i = 0; i < 8; i++)
        tide_tensor_release(all2[i]);
}

/* the parameter gradients' bits do not depend on the threads */
static void test_layer_norm_deterministic(void) {
    int64_t      xs[2] = {4096, 128}, ws[1] = {128};
    double      *buf = malloc(sizeof(double) * 4096 * 128);
    tide_tensor *x = rnd(cpu0, TIDE_DTYPE_F32, 2, xs, -1, 2, buf);
    tide_tensor *g = rnd(cpu0, TIDE_DTYPE_F32, 2, xs, -1, 2, buf);
    tide_tensor *w = rnd(cpu0, TIDE_DTYPE_F32, 1, ws, -1, 2, buf);
    tide_tensor *y = NULL, *m = NULL, *s = NULL, *dw[2] = {NULL, NULL}, *db[2] = {NULL, NULL};
    CHECK_OK(tide_layer_norm(NULL, x, w, w, 128, 1e-5, &y, &m, &s));
    int nt = omp_get_max_threads();
    for (int k = 0; k < 2; k++) {
        omp_set_num_threads(k == 0 ? 1 : 2);
        CHECK_OK(tide_layer_norm_backward(NULL, g, x, m, s, w, 128, NULL, &dw[k], &db[k]));
    }
    omp_set_num_threads(nt);
    CHECK(dw[0] && dw[1] && memcmp(tide_tensor_data(dw[0]), tide_tensor_data(dw[1]), 512) == 0);
    CHECK(db[0] && db[1] && memcmp(tide_tensor_data(db[0]), tide_tensor_data(db[1]), 512) == 0);
    tide_tensor *all[9] = {x, g, w, y, m, s, dw[0], dw[1], db[0]};
    for (int i = 0; i < 9; i++)
        tide_tensor_release(all[i]);
    tide_tensor_release(db[1]);
    free(buf);
}

static void test_layer_norm_errors(void) {
    int64_t      xs[2] = {3, 4}, s5[1] = {5}, s4[1] = {4};
    double       buf[12];
    tide_tensor *x = rnd(cpu0, TIDE_DTYPE_F32, 2, xs, -1, 2, buf);
    tide_tensor *x64 = rnd(cpu0, TIDE_DTYPE_F64, 2, xs, -1, 2, buf);
    tide_tensor *w5 = rnd(cpu0, TIDE_DTYPE_F32, 1, s5, -1, 2, buf);
    tide_tensor *w64 = rnd(cpu0, TIDE_DTYPE_F64, 1, s4, -1, 2, buf);
    tide_tensor *xi = NULL, *x1 = NULL, *y = NULL, *m = NULL, *s = NULL, *dx = NULL;
    CHECK_OK(tide_tensor_empty(NULL, cpu0, TIDE_DTYPE_I64, 2, xs, &xi));
    CHECK_OK(tide_tensor_empty(NULL, cpu1, TIDE_DTYPE_F32, 1, s4, &x1));
    CHECK_ERR(tide_layer_norm(NULL, x, NULL, NULL, 5, 1e-5, &y, &m, &s), TIDE_ESHAPE,
              "tide: layer_norm: x of shape [3, 4] does not split into rows of d = 5 elements");
    CHECK_ERR(tide_layer_norm(NULL, x, NULL, NULL, 0, 1e-5, &y, &m, &s), TIDE_EINVAL,
              "tide: layer_norm: d = 0 must be >= 1");
    CHECK_ERR(tide_layer_norm(NULL, xi, NULL, NULL, 4, 1e-5, &y, &m, &s), TIDE_EDTYPE,
              "tide: layer_norm: x must be float32 or float64, got int64; convert it with "
              ":float()");
    CHECK_ERR(tide_layer_norm(NULL, x, w5, NULL, 4, 1e-5, &y, &m, &s), TIDE_ESHAPE,
              "tide: layer_norm: weight of shape [5] must hold d = 4 elements");
    CHECK_ERR(tide_layer_norm(NULL, x, NULL, w64, 4, 1e-5, &y, &m, &s), TIDE_EDTYPE,
              "tide: layer_norm: bias must have x's dtype float32, got float64");
    CHECK_ERR(tide_layer_norm(NULL, x, x1, NULL, 4, 1e-5, &y, &m, &s), TIDE_EDEVICE,
              "tide: layer_norm: expected all tensors on the same device");
    CHECK_ERR(tide_layer_norm(NULL, x, NULL, NULL, 4, -1, &y, &m, &s), TIDE_EINVAL,
              "tide: layer_norm: eps = -1 must be >= 0");
    CHECK(y == NULL && m == NULL && s == NULL);
    CHECK_OK(tide_layer_norm(NULL, x, NULL, NULL, 4, 1e-5, &y, &m, &s));
    CHECK_ERR(tide_layer_norm_backward(NULL, x64, x, m, s, NULL, 4, &dx, NULL, NULL), TIDE_EDTYPE,
              "tide: layer_norm_backward: dy must have x's dtype float32, got float64");
    CHECK_ERR(tide_layer_norm_backward(NULL, x, x, x, s, NULL, 4, &dx, NULL, NULL), TIDE_ESHAPE,
              "tide: layer_norm_backward: mean of shape [3, 4] must hold 3 values (one per row)");
    CHECK(dx == NULL);
    tide_tensor *all[10] = {x, x64, w5, w64, xi, x1, y, m, s, dx};
    for (int i = 0; i < 10; i++)
        tide_tensor_release(all[i]);
}

/* softmax's gradient over each dim of a [3, 5, 4] tensor, contiguous and transposed, against
 * double math; the log flavour from log_softmax's result */
static void sm_case(tide_dtype dt, int dim, int log, int transposed) {
    int64_t      shape[3] = {3, 5, 4};
    double       a[60], g[60];
    tide_tensor *ta = rnd(cpu0, dt, 3, shape, -2, 4, a), *tg = rnd(cpu0, dt, 3, shape, -1, 2, g);
    tide_tensor *y = NULL, *dx = NULL, *ty = NULL, *tgv = NULL;
    CHECK_OK(tide_softmax(NULL, ta, dim, log, &y));
    /* the reference, in double from a */
    int64_t st[3] = {20, 4, 1}, want_n = 60;
    double  yd[60], want[60];
    for (int64_t i = 0; i < 60; i++) {
        int64_t idx[3] = {i / 20, i / 4 % 5, i % 4};
        double  mx = -INFINITY, s = 0, sg = 0, sgy = 0;
        for (int64_t k = 0; k < shape[dim]; k++) {
            int64_t j = i + (k - idx[dim]) * st[dim];
            mx = fmax(mx, a[j]);
        }
        for (int64_t k = 0; k < shape[dim]; k++)
            s += exp(a[i + (k - idx[dim]) * st[dim]] - mx);
        for (int64_t k = 0; k < shape[dim]; k++) {
            int64_t j = i + (k - idx[dim]) * st[dim];
            double  p = exp(a[j] - mx) / s;
            sg += g[j];
            sgy += g[j] * p;
        }
        double p = exp(a[i] - mx) / s;
        yd[i] = p;
        want[i] = log ? g[i] - p * sg : p * (g[i] - sgy);
    }
    (void)yd;
    if (transposed) { /* the same values, seen through swapped dims 0 and 2 */
        tide_tensor *yt = NULL, *gt = NULL, *yc = NULL, *gc = NULL, *yv = NULL, *gv = NULL;
        CHECK_OK(tide_tensor_transpose(y, 0, 2, &yt));
        CHECK_OK(tide_tensor_transpose(tg, 0, 2, &gt));
        CHECK_OK(tide_tensor_contiguous(NULL, yt, &yc));
        CHECK_OK(tide_tensor_contiguous(NULL, gt, &gc));
        CHECK_OK(tide_tensor_transpose(yc, 0, 2, &yv)); /* y's shape, strides of [4, 5, 3] */
        CHECK_OK(tide_tensor_transpose(gc, 0, 2, &gv));
        ty = yv;
        tgv = gv;
        tide_tensor_release(yt), tide_tensor_release(gt), tide_tensor_release(yc);
        tide_tensor_release(gc);
        CHECK(!tide_tensor_is_contiguous(ty));
    } else {
        ty = y;
        tgv = tg;
        tide_tensor_retain(ty);
        tide_tensor_retain(tgv);
    }
    CHECK_OK(tide_softmax_backward(NULL, ty, tgv, dim - 3, log, &dx)); /* a negative dim too */
    char what[64];
    snprintf(what, sizeof what, "softmax_backward dim %d log %d t %d %s", dim, log, transposed,
             dt == TIDE_DTYPE_F32 ? "f32" : "f64");
    CHECK(dx && close_all(what, dx, want, want_n, dt == TIDE_DTYPE_F32 ? 1e-5 : 1e-12));
    tide_tensor *all[6] = {ta, tg, y, dx, ty, tgv};
    for (int i = 0; i < 6; i++)
        tide_tensor_release(all[i]);
}

static void test_softmax_backward(void) {
    for (int dim = 0; dim < 3; dim++)
        for (int k = 0; k < 8; k++)
            sm_case(k & 1 ? TIDE_DTYPE_F64 : TIDE_DTYPE_F32, dim, (k >> 1) & 1, k >> 2);
    int64_t      s34[2] = {3, 4}, s43[2] = {4, 3};
    double       buf[12];
    tide_tensor *a = rnd(cpu0, TIDE_DTYPE_F32, 2, s34, -1, 2, buf);
    tide_tensor *b = rnd(cpu0, TIDE_DTYPE_F32, 2, s43, -1, 2, buf);
    tide_tensor *c = rnd(cpu0, TIDE_DTYPE_F64, 2, s34, -1, 2, buf);
    tide_tensor *d = NULL, *dx = NULL;
    CHECK_OK(tide_tensor_empty(NULL, cpu1, TIDE_DTYPE_F32, 2, s34, &d));
    CHECK_ERR(tide_softmax_backward(NULL, a, b, 1, 0, &dx), TIDE_ESHAPE,
              "tide: softmax_backward: y [3, 4] and g [4, 3] must have one shape");
    CHECK_ERR(tide_softmax_backward(NULL, a, c, 1, 1, &dx), TIDE_EDTYPE,
              "tide: log_softmax_backward: y and g must share a float dtype, got float32 and "
              "float64");
    CHECK_ERR(tide_softmax_backward(NULL, a, a, 2, 0, &dx), TIDE_EINDEX,
              "tide: softmax_backward: dim 3 out of range for a 2-d tensor");
    CHECK_ERR(tide_softmax_backward(NULL, a, d, 1, 0, &dx), TIDE_EDEVICE,
              "tide: softmax_backward: expected all tensors on the same device");
    CHECK(dx == NULL);
    tide_tensor *all[4] = {a, b, c, d};
    for (int i = 0; i < 4; i++)
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
    test_layer_norm_values();
    test_layer_norm_shapes();
    test_layer_norm_deterministic();
    test_layer_norm_errors();
    test_softmax_backward();
    return tu_finish();
}
