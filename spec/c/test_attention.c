/* test_attention.c — tide_attention (the attention kernel row) on the CPU against a naive
 * double-precision softmax(q k^T * scale) v per packed sequence and head: float32 and float64,
 * sequences of 0, 1 and up to 70 tokens, and the errors (a refused call makes no output). */
#include "test_util.h"
#include "tide.h"

#include <stdint.h>
#include <stdlib.h>

static tide_device *cpu0;
static uint64_t     rng = 88172645463325252ull;

static double urand(void) { /* xorshift64: [0, 1) */
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0;
}

static tide_tensor *tensor(tide_dtype dt, int ndim, const int64_t *shape) {
    tide_tensor *t = NULL;
    if (tide_tensor_empty(NULL, cpu0, dt, ndim, shape, &t) != TIDE_OK) {
        fprintf(stderr, "tensor: %s\n", tide_errmsg());
        exit(2);
    }
    return t;
}

/* random values in [-1, 1) (ref: the values as stored) */
static tide_tensor *rnd(tide_dtype dt, int64_t rows, int64_t cols, double *ref) {
    int64_t      shape[2] = {rows, cols};
    tide_tensor *t = tensor(dt, 2, shape);
    for (int64_t i = 0; i < rows * cols; i++) {
        double x = 2 * urand() - 1;
        if (dt == TIDE_DTYPE_F32)
            ref[i] = ((float *)tide_tensor_data(t))[i] = (float)x;
        else
            ref[i] = ((double *)tide_tensor_data(t))[i] = x;
    }
    return t;
}

static tide_tensor *offsets_of(const int64_t *o, int64_t n) {
    tide_tensor *t = tensor(TIDE_DTYPE_I64, 1, &n);
    for (int64_t i = 0; i < n; i++)
        ((int64_t *)tide_tensor_data(t))[i] = o[i];
    return t;
}

static void attention_case(tide_dtype dt) {
    enum { HEADS = 3, D = 5, W = HEADS * D, B = 5 };
    static const int64_t off[B + 1] = {0, 70, 70, 71, 74, 100}; /* lengths 70, 0, 1, 3, 26 */
    int64_t              n = off[B];
    double              *q = malloc(sizeof(double) * n * W), *k = malloc(sizeof(double) * n * W);
    double              *v = malloc(sizeof(double) * n * W), *want = calloc(n * W, sizeof(double));
    double              *s = malloc(sizeof(double) * n), scale = 0.4;
    tide_tensor         *tq = rnd(dt, n, W, q), *tk = rnd(dt, n, W, k), *tv = rnd(dt, n, W, v);
    tide_tensor         *to = offsets_of(off, B + 1), *y = NULL;
    for (int b = 0; b < B; b++)
        for (int h = 0; h < HEADS; h++)
            for (int64_t i = off[b]; i < off[b + 1]; i++) {
                double mx = -INFINITY, sum = 0;
                for (int64_t j = off[b]; j < off[b + 1]; j++) {
                    double dot = 0;
                    for (int e = 0; e < D; e++)
                        dot += q[i * W + h * D + e] * k[j * W + h * D + e];
                    s[j] = dot * scale;
                    mx = fmax(mx, s[j]);
                }
                for (int64_t j = off[b]; j < off[b + 1]; j++)
                    sum += s[j] = exp(s[j] - mx);
                for (int64_t j = off[b]; j < off[b + 1]; j++)
                    for (int e = 0; e < D; e++)
                        want[i * W + h * D + e] += s[j] / sum * v[j * W + h * D + e];
            }
    CHECK_OK(tide_attention(NULL, tq, tk, tv, to, HEADS, scale, &y));
    double worst = 0;
    for (int64_t i = 0; y && i < n * W; i++) {
        double got = dt == TIDE_DTYPE_F32 ? ((const float *)tide_tensor_data(y))[i]
                                          : ((const double *)tide_tensor_data(y))[i];
        worst = fmax(worst, fabs(got - want[i]));
    }
    if (!(y && worst <= (dt == TIDE_DTYPE_F32 ? 1e-6 : 1e-13)))
        fprintf(stderr, "attention %s: error %g\n", tide_dtype_name(dt), worst);
    CHECK(y && worst <= (dt == TIDE_DTYPE_F32 ? 1e-6 : 1e-13));
    tide_tensor *all[5] = {tq, tk, tv, to, y};
    for (int i = 0; i < 5; i++)
        tide_tensor_release(all[i]);
    free(q), free(k), free(v), free(want), free(s);
}

static void test_attention_errors(void) {
    double       buf[24];
    tide_tensor *q = rnd(TIDE_DTYPE_F32, 4, 6, buf), *y = NULL;
    int64_t      good[2] = {0, 4}, short_[2] = {0, 3}, falling[4] = {0, 3, 2, 4};
    tide_tensor *og = offsets_of(good, 2), *os = offsets_of(short_, 2),
                *of = offsets_of(falling, 4);
    CHECK_ERR(tide_attention(NULL, q, q, q, og, 4, 1, &y), TIDE_EINVAL,
              "attention: q must be [N, heads * d] with heads = 4 dividing its 6 features");
    CHECK_ERR(tide_attention(NULL, q, q, q, os, 2, 1, &y), TIDE_EINVAL,
              "tide: attention: offsets must run from 0 to the 4 tokens of q, got 0 to 3");
    CHECK_ERR(tide_attention(NULL, q, q, q, of, 2, 1, &y), TIDE_EINVAL,
              "tide: attention: offsets must not decrease, got 3 then 2");
    CHECK_ERR(tide_attention(NULL, q, q, q, q, 2, 1, &y), TIDE_EDTYPE,
              "tide: attention: offsets must be a 1-D int64 tensor of offsets, got float32 [4, 6]");
    CHECK_ERR(tide_attention(NULL, q, q, q, og, 2, -1, &y), TIDE_EINVAL,
              "tide: attention: scale = -1 must be >= 0");
    CHECK(y == NULL);
    tide_tensor *all[4] = {q, og, os, of};
    for (int i = 0; i < 4; i++)
        tide_tensor_release(all[i]);
}

int main(void) {
    if (tide_init() != TIDE_OK || tide_device_get("cpu", &cpu0) != TIDE_OK) {
        fprintf(stderr, "init: %s\n", tide_errmsg());
        printf("0 passed, 1 failed\n");
        return 1;
    }
    attention_case(TIDE_DTYPE_F32);
    attention_case(TIDE_DTYPE_F64);
    test_attention_errors();
    return tu_finish();
}
