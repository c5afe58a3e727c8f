/* test_core.c — the core through include/tide.h: dtypes, devices, views, broadcasting,
 * promotion, same-device errors, transfers and the guard, memory limit, ops' shapes and values.
 * Runs with TIDE_CPU_DEVICES=3 (set before the first tide call). */
#include "test_util.h"
#include "sanitizer.h"
#include "tide_impl.h" /* tide.h, plus tide_promote and the ctx fields */

#include <pthread.h>
#include <stdlib.h>
#include <time.h>

static tide_device *cpu0, *cpu1, *cpu2;

/* a float32 (or dt) tensor on dev filled row-major from vals */
static tide_tensor *mk(tide_device *dev, tide_dtype dt, int ndim, const int64_t *shape,
                       const double *vals) {
    tide_tensor *t = NULL, *h = NULL;
    if (tide_tensor_empty(NULL, cpu0, dt, ndim, shape, &h) != TIDE_OK) {
        fprintf(stderr, "mk: %s\n", tide_errmsg());
        exit(2);
    }
    int64_t n = tide_tensor_numel(h), idx[TIDE_MAX_DIMS] = {0};
    for (int64_t i = 0; i < n; i++) {
        int64_t r = i;
        for (int d = ndim - 1; d >= 0; d--) {
            idx[d] = r % shape[d];
            r /= shape[d];
        }
        tide_tensor_set(h, idx, vals ? vals[i] : 0);
    }
    if (dev == cpu0)
        return h;
    if (tide_tensor_to(NULL, h, dev, dt, 0, &t) != TIDE_OK) {
        fprintf(stderr, "mk: %s\n", tide_errmsg());
        exit(2);
    }
    tide_tensor_release(h);
    return t;
}

/* element i in row-major order (host tensors) */
static double at(const tide_tensor *t, int64_t i) {
    int            nd = tide_tensor_ndim(t);
    const int64_t *sh = tide_tensor_shape(t);
    int64_t        idx[TIDE_MAX_DIMS] = {0};
    for (int d = nd - 1; d >= 0; d--) {
        idx[d] = i % sh[d];
        i /= sh[d];
    }
    double v = NAN;
    if (tide_tensor_get(t, idx, &v) != TIDE_OK)
        fprintf(stderr, "at: %s\n", tide_errmsg());
    return v;
}

static int shape_is(const tide_tensor *t, int ndim, const int64_t *shape) {
    if (tide_tensor_ndim(t) != ndim)
        return 0;
    for (int i = 0; i < ndim; i++)
        if (tide_tensor_shape(t)[i] != shape[i])
            return 0;
    return 1;
}

static void check_values_(int line, const tide_tensor *t, int64_t n, const double *want,
                          double tol) {
    int before = tu_fail;
    CHECK(t != NULL);
    if (!t)
        return;
    CHECK(tide_tensor_numel(t) == n);
    for (int64_t i = 0; i < n && i < tide_tensor_numel(t); i++)
        CHECK_NEAR(at(t, i), want[i], tol);
    if (tu_fail != before)
        fprintf(stderr, "  (values checked at line %d)\n", line);
}
#define check_values(t, n, ...) check_values_(__LINE__, t, n, __VA_ARGS__)

/* ---- tables ------------------------------------------------------------------------------- */

static void test_dtypes(void) {
    CHECK_STR(tide_dtype_name(TIDE_DTYPE_F32), "float32");
    CHECK_STR(tide_dtype_name(TIDE_DTYPE_BF16), "bfloat16");
    CHECK_STR(tide_dtype_name(TIDE_DTYPE_BOOL), "bool");
    CHECK(tide_dtype_size(TIDE_DTYPE_F64) == 8);
    CHECK(tide_dtype_size(TIDE_DTYPE_F16) == 2);
    CHECK(tide_dtype_size(TIDE_DTYPE_I32) == 4);
    CHECK(tide_dtype_size(TIDE_DTYPE_U8) == 1);
    CHECK(tide_dtype_is_float(TIDE_DTYPE_BF16));
    CHECK(!tide_dtype_is_float(TIDE_DTYPE_I64));
    tide_dtype dt = TIDE_DTYPE_F32;
    CHECK_OK(tide_dtype_from_name("int64", &dt));
    CHECK(dt == TIDE_DTYPE_I64);
    CHECK_ERR(tide_dtype_from_name("float8", &dt), TIDE_EDTYPE,
              "tide: dtype: unknown dtype \"float8\"");
    CHECK(dt == TIDE_DTYPE_I64);
    CHECK_STR(tide_op_name(TIDE_OP_FLOORDIV), "floor_divide");
    CHECK(tide_op_family_of(TIDE_OP_LT) == TIDE_FAMILY_COMPARE);
    CHECK(tide_op_family_of(TIDE_OP_ARGMAX) == TIDE_FAMILY_REDUCE);
    CHECK_STR(tide_status_name(TIDE_EGUARD), "TIDE_EGUARD");
}

static void test_devices(void) {
    tide_device *d = NULL;
    CHECK(tide_device_count(TIDE_DEVICE_CPU) == 3);
    CHECK_OK(tide_device_get("cpu", &d));
    CHECK(d == cpu0 && tide_device_is_host(d) && tide_device_index(d) == 0);
    CHECK_STR(tide_device_name(d), "cpu");
    CHECK_OK(tide_device_get("cpu:0", &d));
    CHECK(d == cpu0);
    CHECK_OK(tide_device_get("cpu:2", &d));
    CHECK(d == cpu2 && !tide_device_is_host(d) && tide_device_index(d) == 2);
    CHECK_STR(tide_device_name(d), "cpu:2");
    CHECK(tide_device_type_of(d) == TIDE_DEVICE_CPU);
    CHECK_ERR(tide_device_get("cpu:3", &d), TIDE_EDEVICE, "TIDE_CPU_DEVICES=4");
    CHECK_ERR(
        tide_device_get("gpu", &d), TIDE_EINVAL,
        "tide: device: unknown device \"gpu\"; use \"cpu\", \"cpu:N\", \"cuda\" or \"cuda:N\"");
    CHECK_ERR(tide_device_get("cpu:x", &d), TIDE_EINVAL, "\"cpu:x\"");
    CHECK_ERR(tide_device_get("cpu:-1", &d), TIDE_EINVAL, "\"cpu:-1\"");
    CHECK_ERR(tide_device_get("cpux", &d), TIDE_EINVAL, "cpux");
    CHECK(d == cpu2); /* failures leave the out-parameter alone */
    if (!tide_cuda_is_available()) {
        CHECK(tide_cuda_unavailable_reason() != NULL);
        CHECK(tide_device_count(TIDE_DEVICE_CUDA) == 0);
        CHECK_ERR(tide_device_get("cuda", &d), TIDE_EDEVICE,
                  "tide: device: CUDA is not available: ");
        CHECK(strstr(tide_errmsg(), "; use tide.best_device() or \"cpu\"") != NULL);
        CHECK(strstr(tide_errmsg(), tide_cuda_unavailable_reason()) != NULL);
    } else {
        CHECK(tide_cuda_unavailable_reason() == NULL);
        CHECK_OK(tide_device_get("cuda", &d));
        CHECK_STR(tide_device_name(d), "cuda:0");
    }
    tide_memory_stats ms;
    CHECK_OK(tide_device_memory_stats(cpu1, &ms));
}

/* ---- views -------------------------------------------------------------------------------- */

static void test_views(void) {
    int64_t      s23[] = {2, 3};
    double       v[] = {1, 2, 3, 4, 5, 6};
    tide_tensor *a = mk(cpu0, TIDE_DTYPE_F32, 2, s23, v), *t = NULL, *u = NULL;
    CHECK(tide_tensor_is_contiguous(a));
    CHECK(tide_tensor_strides(a)[0] == 3 && tide_tensor_strides(a)[1] == 1);

    CHECK_OK(tide_tensor_transpose(a, 0, 1, &t));
    int64_t s32[] = {3, 2};
    CHECK(shape_is(t, 2, s32));
    CHECK(tide_tensor_strides(t)[0] == 1 && tide_tensor_strides(t)[1] == 3);
    CHECK(!tide_tensor_is_contiguous(t) && tide_tensor_same_storage(a, t));
    check_values(t, 6, (double[]){1, 4, 2, 5, 3, 6}, 0);
    /* a transposed tensor cannot be viewed flat, only reshaped (a copy) */
    int64_t flat[] = {-1};
    CHECK_ERR(tide_tensor_view(t, 1, flat, &u), TIDE_ESHAPE,
              "tide: view: a tensor of shape [3, 2]");
    CHECK(u == NULL);
    CHECK_OK(tide_tensor_reshape(NULL, t, 1, flat, &u));
    CHECK(!tide_tensor_same_storage(u, a));
    check_values(u, 6, (double[]){1, 4, 2, 5, 3, 6}, 0);
    tide_tensor_release(u), u = NULL;
    tide_tensor_release(t), t = NULL;

    /* view with -1 shares storage */
    int64_t s3m[] = {3, -1};
    CHECK_OK(tide_tensor_view(a, 2, s3m, &t));
    CHECK(shape_is(t, 2, s32) && tide_tensor_same_storage(a, t));
    tide_tensor_release(t), t = NULL;
    int64_t s4m[] = {4, -1};
    CHECK_ERR(tide_tensor_view(a, 2, s4m, &t), TIDE_ESHAPE,
              "shape [4, -1] is invalid for a tensor of shape [2, 3] (6 elements)");

    /* narrow, select */
    CHECK_OK(tide_tensor_narrow(a, 1, 1, 2, &t));
    CHECK(tide_tensor_offset(t) == 1 && tide_tensor_shape(t)[1] == 2);
    check_values(t, 4, (double[]){2, 3, 5, 6}, 0);
    tide_tensor_release(t), t = NULL;
    CHECK_ERR(tide_tensor_narrow(a, 1, 2, 2, &t), TIDE_EINDEX,
              "narrow: start 3, length 2 out of range for dim 2 of size 3");
    CHECK_OK(tide_tensor_select(a, 0, 1, &t));
    CHECK(tide_tensor_ndim(t) == 1 && tide_tensor_offset(t) == 3);
    check_values(t, 3, (double[]){4, 5, 6}, 0);
    tide_tensor_release(t), t = NULL;
    CHECK_ERR(tide_tensor_select(a, 0, 2, &t), TIDE_EINDEX,
              "select: index 3 out of range for dim 1 of size 2");
    CHECK_ERR(tide_tensor_select(a, 2, 0, &t), TIDE_EINDEX,
              "select: dim 3 out of range for a 2-d tensor");

    /* unsqueeze, squeeze, expand, permute */
    CHECK_OK(tide_tensor_unsqueeze(a, 1, &t));
    int64_t s213[] = {2, 1, 3};
    CHECK(shape_is(t, 3, s213));
    CHECK_OK(tide_tensor_squeeze(t, -1, &u));
    CHECK(shape_is(u, 2, s23));
    tide_tensor_release(u), u = NULL;
    int64_t s243[] = {2, 4, 3};
    CHECK_OK(tide_tensor_expand(t, 3, s243, &u));
    CHECK(shape_is(u, 3, s243) && tide_tensor_strides(u)[1] == 0);
    CHECK_NEAR(at(u, 3 * 3 + 2), 3, 0); /* [0][3][2] */
    tide_tensor_release(u), u = NULL;
    int64_t s33[] = {3, 3};
    CHECK_ERR(tide_tensor_expand(a, 2, s33, &u), TIDE_ESHAPE,
              "expand: cannot expand shape [2, 3] to [3, 3]");
    int perm[] = {2, 0, 1};
    CHECK_OK(tide_tensor_permute(t, perm, &u));
    int64_t s321[] = {3, 2, 1};
    CHECK(shape_is(u, 3, s321));
    CHECK_NEAR(at(u, 1), 4, 0); /* u[0][1][0] = a[1][0] */
    tide_tensor_release(u), u = NULL;
    int bad[] = {0, 0, 1};
    CHECK_ERR(tide_tensor_permute(t, bad, &u), TIDE_EINVAL, "permute: dim 1 appears twice");
    tide_tensor_release(t), t = NULL;

    /* a non-contiguous tensor views without a copy when its rows stay whole */
    tide_tensor *w = mk(cpu0, TIDE_DTYPE_F32, 2, (int64_t[]){4, 6}, NULL), *n = NULL;
    CHECK_OK(tide_tensor_narrow(w, 1, 0, 3, &n)); /* [4, 3], strides [6, 1] */
    CHECK_OK(tide_tensor_view(n, 3, (int64_t[]){2, 2, 3}, &u));
    CHECK(tide_tensor_same_storage(u, w));
    CHECK(tide_tensor_strides(u)[0] == 12 && tide_tensor_strides(u)[1] == 6 &&
          tide_tensor_strides(u)[2] == 1);
    tide_tensor_release(u), u = NULL;
    CHECK_ERR(tide_tensor_view(n, 1, (int64_t[]){12}, &u), TIDE_ESHAPE,
              "view: a tensor of shape [4, 3] with strides [6, 1] cannot be viewed as [12]");
    CHECK_OK(tide_tensor_unsqueeze(n, 2, &u)); /* [4, 3, 1] */
    CHECK(tide_tensor_ndim(u) == 3 && tide_tensor_strides(u)[2] == 1);
    tide_tensor_release(u), u = NULL;
    CHECK_OK(tide_tensor_unsqueeze(n, 0, &u)); /* [1, 4, 3]: stride 4 * 6 */
    CHECK(tide_tensor_strides(u)[0] == 24);
    tide_tensor *q = NULL;
    CHECK_OK(tide_tensor_squeeze(u, 0, &q));
    CHECK(tide_tensor_ndim(q) == 2);
    tide_tensor_release(q);
    CHECK_OK(tide_tensor_squeeze(u, 1, &q)); /* size 4: unchanged */
    CHECK(tide_tensor_ndim(q) == 3);
    tide_tensor_release(q);
    tide_tensor_release(u), u = NULL;
    tide_tensor_release(n);
    tide_tensor_release(w);

    /* contiguous returns the same tensor when it already is */
    CHECK_OK(tide_tensor_contiguous(NULL, a, &t));
    CHECK(t == a);
    tide_tensor_release(t);
    tide_tensor_release(a);
}

static void test_elements(void) {
    int64_t      s2[] = {2};
    tide_tensor *a = mk(cpu0, TIDE_DTYPE_I32, 1, s2, (double[]){7, -3});
    double       x = 0;
    int64_t      i1[] = {1}, i2[] = {2};
    CHECK_OK(tide_tensor_get(a, i1, &x));
    CHECK(x == -3);
    CHECK_OK(tide_tensor_set(a, i1, 9.7)); /* truncates like a cast */
    CHECK_OK(tide_tensor_get(a, i1, &x));
    CHECK(x == 9);
    /* out-of-range values saturate, as casts and fill_ do (they used to wrap) */
    CHECK_OK(tide_tensor_set(a, i1, 3e9));
    CHECK_OK(tide_tensor_get(a, i1, &x));
    CHECK(x == 2147483647);
    CHECK_OK(tide_tensor_set(a, i1, NAN));
    CHECK_OK(tide_tensor_get(a, i1, &x));
    CHECK(x == 0);
    tide_tensor *u8 = mk(cpu0, TIDE_DTYPE_U8, 1, s2, (double[]){300, -5});
    CHECK(at(u8, 0) == 255 && at(u8, 1) == 0);
    tide_tensor_release(u8);
    CHECK_ERR(tide_tensor_get(a, i2, &x), TIDE_EINDEX,
              "get: index 3 out of range for dim 1 of size 2");
    CHECK_ERR(tide_tensor_item(NULL, a, &x), TIDE_ESHAPE, "item: a tensor with 2 elements");
    tide_tensor *s = NULL;
    CHECK_OK(tide_tensor_select(a, 0, 0, &s));
    CHECK_OK(tide_tensor_item(NULL, s, &x));
    CHECK(x == 7);
    tide_tensor_release(s);
    tide_tensor_release(a);
    /* half precision round trip */
    tide_tensor *h = mk(cpu0, TIDE_DTYPE_F16, 1, s2, (double[]){0.333251953125, -65504});
    CHECK_NEAR(at(h, 0), 0.333251953125, 0);
    CHECK_NEAR(at(h, 1), -65504, 0);
    tide_tensor_release(h);
    h = mk(cpu0, TIDE_DTYPE_BF16, 1, s2, (double[]){1.5, -2.0});
    CHECK_NEAR(at(h, 0), 1.5, 0);
    tide_tensor_release(h);
}

/* ---- ops ---------------------------------------------------------------------------------- */

static void test_broadcast(void) {
    int64_t      s23[] = {2, 3}, s3[] = {3}, s4[] = {4}, s21[] = {2, 1}, s13[] = {1, 3};
    tide_tensor *a = mk(cpu0, TIDE_DTYPE_F32, 2, s23, (double[]){1, 2, 3, 4, 5, 6});
    tide_tensor *b = mk(cpu0, TIDE_DTYPE_F32, 1, s3, (double[]){10, 20, 30});
    tide_tensor *r = NULL;
    CHECK_OK(tide_binary(NULL, TIDE_OP_ADD, a, b, &r));
    CHECK(shape_is(r, 2, s23));
    check_values(r, 6, (double[]){11, 22, 33, 14, 25, 36}, 0);
    tide_tensor_release(r), r = NULL;

    tide_tensor *c = mk(cpu0, TIDE_DTYPE_F32, 2, s21, (double[]){1, 2});
    tide_tensor *d = mk(cpu0, TIDE_DTYPE_F32, 2, s13, (double[]){10, 20, 30});
    CHECK_OK(tide_binary(NULL, TIDE_OP_MUL, c, d, &r));
    CHECK(shape_is(r, 2, s23));
    check_values(r, 6, (double[]){10, 20, 30, 20, 40, 60}, 0);
    tide_tensor_release(r), r = NULL;

    tide_tensor *e = mk(cpu0, TIDE_DTYPE_F32, 1, s4, NULL);
    CHECK_ERR(tide_binary(NULL, TIDE_OP_ADD, a, e, &r), TIDE_ESHAPE, "");
    CHECK_STR(tide_errmsg(),
              "tide: add: shapes [2, 3] and [4] cannot be broadcast: size 3 vs 4 at dim 2");
    CHECK(r == NULL);

    /* in place: a += b (broadcast b) works, c += d (result [2, 3]) must not */
    tide_tensor *out = a;
    CHECK_OK(tide_binary(NULL, TIDE_OP_SUB, a, b, &out));
    CHECK(out == a);
    check_values(a, 6, (double[]){-9, -18, -27, -6, -15, -24}, 0);
    out = c;
    CHECK_ERR(tide_binary(NULL, TIDE_OP_ADD, c, d, &out), TIDE_ESHAPE,
              "add: the result has shape [2, 3] but the output tensor has shape [2, 1]");
    check_values(c, 2, (double[]){1, 2}, 0); /* unchanged */

    /* scalar forms */
    CHECK_OK(tide_binary_scalar(NULL, TIDE_OP_SUB, b, 1, 1, &r)); /* 1 - b */
    check_values(r, 3, (double[]){-9, -19, -29}, 0);
    tide_tensor_release(r), r = NULL;
    CHECK_OK(tide_binary_scalar(NULL, TIDE_OP_POW, b, 2, 0, &r));
    check_values(r, 3, (double[]){100, 400, 900}, 0);
    tide_tensor_release(r), r = NULL;
    CHECK_OK(tide_binary_scalar(NULL, TIDE_OP_GT, b, 15, 0, &r));
    CHECK(tide_tensor_dtype(r) == TIDE_DTYPE_BOOL);
    check_values(r, 3, (double[]){0, 1, 1}, 0);
    tide_tensor_release(r), r = NULL;

    tide_tensor *rels[] = {a, b, c, d, e};
    for (int i = 0; i < 5; i++)
        tide_tensor_release(rels[i]);
}

static void test_promotion(void) {
    int64_t      s2[] = {2};
    tide_tensor *i32 = mk(cpu0, TIDE_DTYPE_I32, 1, s2, (double[]){7, -7});
    tide_tensor *i64 = mk(cpu0, TIDE_DTYPE_I64, 1, s2, (double[]){2, 2});
    tide_tensor *f32 = mk(cpu0, TIDE_DTYPE_F32, 1, s2, (double[]){0.5, 0.25});
    tide_tensor *bl = mk(cpu0, TIDE_DTYPE_BOOL, 1, s2, (double[]){1, 0});
    tide_tensor *r = NULL;
    CHECK(tide_promote(TIDE_DTYPE_BOOL, TIDE_DTYPE_U8) == TIDE_DTYPE_U8);
    CHECK(tide_promote(TIDE_DTYPE_I64, TIDE_DTYPE_F32) == TIDE_DTYPE_F32);
    CHECK(tide_promote(TIDE_DTYPE_F16, TIDE_DTYPE_BF16) == TIDE_DTYPE_F32);
    CHECK(tide_promote(TIDE_DTYPE_F64, TIDE_DTYPE_F32) == TIDE_DTYPE_F64);

    CHECK_OK(tide_binary(NULL, TIDE_OP_ADD, i32, i64, &r));
    CHECK(tide_tensor_dtype(r) == TIDE_DTYPE_I64);
    check_values(r, 2, (double[]){9, -5}, 0);
    tide_tensor_release(r), r = NULL;
    CHECK_OK(tide_binary(NULL, TIDE_OP_MUL, i32, f32, &r));
    CHECK(tide_tensor_dtype(r) == TIDE_DTYPE_F32);
    check_values(r, 2, (double[]){3.5, -1.75}, 0);
    tide_tensor_release(r), r = NULL;
    CHECK_OK(tide_binary(NULL, TIDE_OP_DIV, i32, i64, &r)); /* integer division gives float32 */
    CHECK(tide_tensor_dtype(r) == TIDE_DTYPE_F32);
    check_values(r, 2, (double[]){3.5, -3.5}, 0);
    tide_tensor_release(r), r = NULL;
    CHECK_OK(tide_binary(NULL, TIDE_OP_LT, i32, f32, &r));
    CHECK(tide_tensor_dtype(r) == TIDE_DTYPE_BOOL);
    check_values(r, 2, (double[]){0, 1}, 0);
    tide_tensor_release(r), r = NULL;
    CHECK_OK(tide_binary_scalar(NULL, TIDE_OP_ADD, i32, 2.5, 0, &r));
    CHECK(tide_tensor_dtype(r) == TIDE_DTYPE_F32);
    check_values(r, 2, (double[]){9.5, -4.5}, 0);
    tide_tensor_release(r), r = NULL;
    CHECK_OK(tide_binary_scalar(NULL, TIDE_OP_ADD, i32, 2, 0, &r));
    CHECK(tide_tensor_dtype(r) == TIDE_DTYPE_I32);
    tide_tensor_release(r), r = NULL;
    CHECK_OK(tide_binary_scalar(NULL, TIDE_OP_ADD, bl, 1, 0, &r));
    CHECK(tide_tensor_dtype(r) == TIDE_DTYPE_I64);
    check_values(r, 2, (double[]){2, 1}, 0);
    tide_tensor_release(r), r = NULL;
    CHECK_OK(tide_unary(NULL, TIDE_OP_EXP, i64, NULL, &r));
    CHECK(tide_tensor_dtype(r) == TIDE_DTYPE_F32);
    CHECK_NEAR(at(r, 0), exp(2), 1e-5);
    tide_tensor_release(r), r = NULL;

    /* in place into int32 of a float result is refused and changes nothing */
    tide_tensor *out = i32;
    CHECK_ERR(tide_binary(NULL, TIDE_OP_ADD, i32, f32, &out), TIDE_EDTYPE,
              "add: the result has dtype float32, which cannot be written into a int32 tensor");
    check_values(i32, 2, (double[]){7, -7}, 0);
    tide_tensor_release(i32);
    tide_tensor_release(i64);
    tide_tensor_release(f32);
    tide_tensor_release(bl);
}

static void test_same_device(void) {
    int64_t      s2[] = {2};
    tide_tensor *a = mk(cpu0, TIDE_DTYPE_F32, 1, s2, (double[]){1, 2});
    tide_tensor *b = mk(cpu1, TIDE_DTYPE_F32, 1, s2, (double[]){3, 4});
    tide_tensor *r = NULL;
    CHECK_ERR(tide_binary(NULL, TIDE_OP_ADD, a, b, &r), TIDE_EDEVICE, "");
    CHECK_STR(tide_errmsg(), "tide: add: expected all tensors on the same device, found cpu and "
                             "cpu:1; move one with :to(\"cpu:1\")");
    CHECK(r == NULL);
    CHECK_ERR(tide_matmul(NULL, a, b, &r), TIDE_EDEVICE,
              "tide: matmul: expected all tensors on the same device, found cpu and cpu:1");
    CHECK_ERR(tide_binary(NULL, TIDE_OP_EQ, b, a, &r), TIDE_EDEVICE,
              "tide: eq: expected all tensors on the same device, found cpu:1 and cpu;");
    const tide_tensor *ts[] = {a, b};
    CHECK_ERR(tide_cat(NULL, 2, ts, 0, &r), TIDE_EDEVICE,
              "tide: cat: expected all tensors on the same device");
    /* in-place into a tensor on another device */
    tide_tensor *out = b;
    CHECK_ERR(tide_unary(NULL, TIDE_OP_NEG, a, NULL, &out), TIDE_EDEVICE,
              "tide: neg: expected all tensors on the same device");
    /* results stay on the inputs' device */
    CHECK_OK(tide_binary_scalar(NULL, TIDE_OP_MUL, b, 2, 0, &r));
    CHECK(tide_tensor_device(r) == cpu1);
    double       x;
    tide_tensor *s = NULL;
    CHECK_OK(tide_tensor_select(r, 0, 1, &s));
    CHECK_OK(tide_tensor_item(NULL, s, &x));
    CHECK(x == 8);
    /* host element access needs CPU memory; cpu:1 is CPU memory */
    tide_tensor_release(s);
    tide_tensor_release(r);
    tide_tensor_release(a);
    tide_tensor_release(b);
}

static void test_transfers(void) {
    tide_ctx *ctx;
    CHECK_OK(tide_ctx_new(&ctx));
    tide_transfer_stats st;
    int64_t             s3[] = {3};
    tide_tensor *a = mk(cpu0, TIDE_DTYPE_F32, 1, s3, (double[]){1, 2, 3}), *b = NULL, *c = NULL,
                *d = NULL, *e = NULL;
    CHECK_OK(tide_tensor_to(ctx, a, cpu1, TIDE_DTYPE_F32, 0, &b));
    CHECK(tide_tensor_device(b) == cpu1);
    CHECK_OK(tide_tensor_to(ctx, b, cpu2, TIDE_DTYPE_F64, 0, &c));
    CHECK(tide_tensor_dtype(c) == TIDE_DTYPE_F64);
    CHECK_OK(tide_tensor_to(ctx, c, cpu0, TIDE_DTYPE_F64, 0, &d));
    CHECK_OK(tide_tensor_to(ctx, d, cpu0, TIDE_DTYPE_F32, 0, &e)); /* same device: not counted */
    check_values(e, 3, (double[]){1, 2, 3}, 0);
    tide_ctx_transfer_stats(ctx, &st);
    CHECK(st.h2d_count == 1 && st.h2d_bytes == 12);
    CHECK(st.d2d_count == 1 && st.d2d_bytes == 24);
    CHECK(st.d2h_count == 1 && st.d2h_bytes == 24);
    /* copy_ across devices broadcasts and converts, counted too */
    int64_t      s23[] = {2, 3};
    tide_tensor *m = mk(cpu2, TIDE_DTYPE_F64, 2, s23, NULL);
    CHECK_OK(tide_tensor_copy_(ctx, m, a));
    tide_ctx_transfer_stats(ctx, &st);
    CHECK(st.h2d_count == 2 && st.h2d_bytes == 12 + 24);
    tide_tensor *mh = NULL;
    CHECK_OK(tide_tensor_to(ctx, m, cpu0, TIDE_DTYPE_F64, 0, &mh));
    check_values(mh, 6, (double[]){1, 2, 3, 1, 2, 3}, 0);
    /* same shape across devices: the values land in dst */
    tide_tensor *h3 = mk(cpu0, TIDE_DTYPE_F32, 1, s3, NULL);
    CHECK_OK(tide_tensor_copy_(ctx, h3, b));
    check_values(h3, 3, (double[]){1, 2, 3}, 0);
    tide_tensor_release(h3);
    tide_ctx_reset_transfer_stats(ctx);
    tide_ctx_transfer_stats(ctx, &st);
    CHECK(st.h2d_count == 0 && st.d2h_bytes == 0 && st.d2d_count == 0);
    /* the default context is separate */
    tide_transfer_stats ds;
    tide_ctx_transfer_stats(NULL, &ds);
    tide_tensor *rel[] = {a, b, c, d, e, m, mh};
    for (int i = 0; i < 7; i++)
        tide_tensor_release(rel[i]);
    tide_ctx_release(ctx);
}

static int  log_calls;
static char log_msg[256];
static void on_log(void *ud, const char *msg) {
    (void)ud;
    log_calls++;
    snprintf(log_msg, sizeof log_msg, "%s", msg);
}

static void test_guard(void) {
    tide_ctx *ctx;
    CHECK_OK(tide_ctx_new(&ctx));
    int64_t      s1[] = {1};
    tide_tensor *a = mk(cpu1, TIDE_DTYPE_F32, 1, s1, (double[]){4.5}), *h = NULL;
    double       x = 0;
    CHECK(tide_ctx_guard(ctx) == TIDE_GUARD_ALLOW);
    CHECK_OK(tide_tensor_item(ctx, a, &x));
    CHECK(x == 4.5);
    tide_transfer_stats st;
    tide_ctx_transfer_stats(ctx, &st);
    CHECK(st.d2h_count == 1 && st.d2h_bytes == 4);

    tide_ctx_set_guard(ctx, TIDE_GUARD_DISALLOW);
    x = 0;
    CHECK_ERR(tide_tensor_item(ctx, a, &x), TIDE_EGUARD, "");
    CHECK_STR(tide_errmsg(), "tide: item: implicit transfer from cpu:1 to cpu refused by "
                             "transfer_guard(\"disallow\"); call :cpu() explicitly");
    CHECK(x == 0);
    CHECK_ERR(tide_tensor_to(ctx, a, cpu2, TIDE_DTYPE_F32, TIDE_TO_IMPLICIT, &h), TIDE_EGUARD,
              "call :to(\"cpu:2\") explicitly");
    CHECK_OK(tide_tensor_to(ctx, a, cpu0, TIDE_DTYPE_F32, 0, &h)); /* explicit: allowed */
    tide_tensor_release(h), h = NULL;

    tide_ctx_set_guard(ctx, TIDE_GUARD_LOG);
    tide_ctx_set_log(ctx, on_log, NULL);
    CHECK_OK(tide_tensor_item(ctx, a, &x));
    CHECK(log_calls == 1 &&
          strcmp(log_msg, "tide: item: implicit transfer from cpu:1 to cpu (4 bytes)") == 0);
    CHECK_OK(tide_tensor_to(ctx, a, cpu0, TIDE_DTYPE_F32, 0, &h));
    CHECK(log_calls == 1); /* explicit transfers are not logged */
    tide_tensor_release(h);
    tide_tensor_release(a);
    tide_ctx_release(ctx);
}

static void test_memory_limit(void) {
    tide_ctx *ctx;
    CHECK_OK(tide_ctx_new(&ctx));
    tide_ctx_set_memory_limit(ctx, 100);
    CHECK(tide_ctx_memory_limit(ctx) == 100);
    int64_t      s20[] = {20}, s10[] = {10};
    tide_tensor *a = NULL, *b = NULL;
    CHECK_OK(tide_tensor_empty(ctx, cpu0, TIDE_DTYPE_F32, 1, s20, &a));
    CHECK(tide_ctx_memory_in_use(ctx) == 80);
    CHECK_ERR(tide_tensor_empty(ctx, cpu0, TIDE_DTYPE_F32, 1, s10, &b), TIDE_ELIMIT, "");
    CHECK_STR(tide_errmsg(), "tide: empty: memory limit of 100 bytes reached: 80 in use, tried to "
                             "allocate 40; raise it with tide.set_memory_limit");
    CHECK(b == NULL && tide_ctx_memory_in_use(ctx) == 80);
    /* an op's allocation names the op */
    CHECK_ERR(tide_unary(ctx, TIDE_OP_NEG, a, NULL, &b), TIDE_ELIMIT,
              "tide: neg: memory limit of 100 bytes reached");
    CHECK(b == NULL);
    tide_tensor_release(a);
    CHECK(tide_ctx_memory_in_use(ctx) == 0);
    CHECK(tide_ctx_memory_allocated(ctx) == 80); /* what was made, freed or not; refusals aside */
    CHECK_OK(tide_tensor_empty(ctx, cpu0, TIDE_DTYPE_F32, 1, s10, &b));
    CHECK(tide_ctx_memory_allocated(ctx) == 120);
    tide_ctx_set_memory_limit(ctx, 0); /* no limit */
    tide_tensor_release(b);
    tide_ctx_release(ctx);
}

static void test_overflow(void) {
    int64_t      big[] = {INT64_C(1) << 40, INT64_C(1) << 40}, neg[] = {2, -1};
    tide_tensor *t = NULL;
    CHECK_ERR(
        tide_tensor_empty(NULL, cpu0, TIDE_DTYPE_F32, 2, big, &t), TIDE_ESHAPE,
        "tide: empty: shape [1099511627776, 1099511627776] has more elements than fit in 64 bits");
    CHECK_ERR(tide_tensor_empty(NULL, cpu0, TIDE_DTYPE_F32, 2, neg, &t), TIDE_ESHAPE,
              "negative size -1 at dim 2");
    int64_t huge[] = {INT64_C(1) << 62};
    CHECK_ERR(tide_tensor_empty(NULL, cpu0, TIDE_DTYPE_F64, 1, huge, &t), TIDE_ESHAPE, "too large");
    int64_t nine[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    CHECK_ERR(tide_tensor_empty(NULL, cpu0, TIDE_DTYPE_F32, 9, nine, &t), TIDE_ESHAPE,
              "9 dims given");
    CHECK(t == NULL);
}

static int  deleted;
static void on_delete(void *ud) {
    deleted += *(int *)ud;
}

static void test_from_blob(void) {
    float        data[6] = {1, 2, 3, 4, 5, 6};
    int          one = 1;
    int64_t      s23[] = {2, 3};
    tide_tensor *t = NULL, *v = NULL;
    CHECK_OK(
        tide_tensor_from_blob(NULL, data, TIDE_DTYPE_F32, 2, s23, NULL, NULL, on_delete, &one, &t));
    CHECK(tide_tensor_data(t) == data && tide_tensor_device(t) == cpu0);
    CHECK_OK(tide_tensor_select(t, 0, 1, &v));
    check_values(v, 3, (double[]){4, 5, 6}, 0);
    tide_tensor_release(t);
    CHECK(deleted == 0); /* the view keeps the storage */
    tide_tensor_release(v);
    CHECK(deleted == 1);
    /* explicit strides: a transposed view of the host's memory */
    int64_t s32[] = {3, 2}, st[] = {1, 3};
    CHECK_OK(tide_tensor_from_blob(NULL, data, TIDE_DTYPE_F32, 2, s32, st, NULL, NULL, NULL, &t));
    check_values(t, 6, (double[]){1, 4, 2, 5, 3, 6}, 0);
    tide_tensor_release(t);
    CHECK(deleted == 1);
}

static void test_matmul(void) {
    int64_t      s23[] = {2, 3}, s34[] = {3, 4}, s3[] = {3};
    tide_tensor *a = mk(cpu0, TIDE_DTYPE_F32, 2, s23, (double[]){1, 2, 3, 4, 5, 6});
    tide_tensor *b =
        mk(cpu0, TIDE_DTYPE_F32, 2, s34, (double[]){1, 0, 0, 1, 0, 1, 0, 1, 0, 0, 1, 1});
    tide_tensor *v = mk(cpu0, TIDE_DTYPE_F32, 1, s3, (double[]){1, 1, 2});
    tide_tensor *r = NULL;
    CHECK_OK(tide_matmul(NULL, a, b, &r));
    int64_t s24[] = {2, 4};
    CHECK(shape_is(r, 2, s24));
    check_values(r, 8, (double[]){1, 2, 3, 6, 4, 5, 6, 15}, 1e-5);
    tide_tensor_release(r), r = NULL;
    CHECK_OK(tide_matmul(NULL, v, v, &r)); /* dot: 0-d */
    CHECK(tide_tensor_ndim(r) == 0);
    CHECK_NEAR(at(r, 0), 6, 1e-6);
    tide_tensor_release(r), r = NULL;
    CHECK_OK(tide_matmul(NULL, a, v, &r)); /* [2,3]@[3] -> [2] */
    int64_t s2[] = {2};
    CHECK(shape_is(r, 1, s2));
    check_values(r, 2, (double[]){9, 21}, 1e-5);
    tide_tensor_release(r), r = NULL;
    CHECK_OK(tide_matmul(NULL, v, b, &r)); /* [3]@[3,4] -> [4] */
    int64_t s4[] = {4};
    CHECK(shape_is(r, 1, s4));
    check_values(r, 4, (double[]){1, 1, 2, 4}, 1e-5);
    tide_tensor_release(r), r = NULL;
    /* batched with broadcasting: [2,1,2,3] @ [3,3,4] -> [2,3,2,4]; batch (i,j) = (i+1)*a@b */
    int64_t s2123[] = {2, 1, 2, 3}, s334[] = {3, 3, 4};
    double  av[12], bv[36];
    for (int i = 0; i < 12; i++)
        av[i] = (i / 6 + 1) * (i % 6 + 1);
    for (int i = 0; i < 36; i++)
        bv[i] = (double[]){1, 0, 0, 1, 0, 1, 0, 1, 0, 0, 1, 1}[i % 12];
    tide_tensor *ba = mk(cpu0, TIDE_DTYPE_F32, 4, s2123, av),
                *bb = mk(cpu0, TIDE_DTYPE_F32, 3, s334, bv);
    CHECK_OK(tide_matmul(NULL, ba, bb, &r));
    int64_t s2324[] = {2, 3, 2, 4};
    CHECK(shape_is(r, 4, s2324));
    CHECK_NEAR(at(r, 7), 15, 1e-5);             /* [0][0][1][3] */
    CHECK_NEAR(at(r, 2 * 8 + 4 + 3), 15, 1e-5); /* [0][2][1][3] */
    CHECK_NEAR(at(r, 3 * 8 + 3), 12, 1e-5);     /* [1][0][0][3] = 2 * 6 */
    tide_tensor_release(r), r = NULL;
    /* stacked rows times one matrix: [2,2,3] @ [3,4], batch i = (i+1) * a@b */
    tide_tensor *ra = mk(cpu0, TIDE_DTYPE_F32, 3, (int64_t[]){2, 2, 3}, av);
    CHECK_OK(tide_matmul(NULL, ra, b, &r));
    CHECK(shape_is(r, 3, (int64_t[]){2, 2, 4}));
    check_values(r, 16, (double[]){1, 2, 3, 6, 4, 5, 6, 15, 2, 4, 6, 12, 8, 10, 12, 30}, 1e-5);
    tide_tensor_release(r), r = NULL;
    tide_tensor_release(ra);
    /* a transposed (strided) operand */
    tide_tensor *at_ = NULL;
    CHECK_OK(tide_tensor_transpose(a, 0, 1, &at_)); /* [3,2] */
    CHECK_OK(tide_matmul(NULL, at_, a, &r));        /* a^T a */
    check_values(r, 9, (double[]){17, 22, 27, 22, 29, 36, 27, 36, 45}, 1e-4);
    tide_tensor_release(r), r = NULL;
    CHECK_ERR(
        tide_matmul(NULL, a, a, &r), TIDE_ESHAPE,
        "matmul: shapes [2, 3] and [2, 3] do not fit: the first has 3 columns, the second 2 rows");
    CHECK(r == NULL);
    tide_tensor *rel[] = {a, b, v, ba, bb, at_};
    for (int i = 0; i < 6; i++)
        tide_tensor_release(rel[i]);
}

static void test_reduce(void) {
    int64_t      s23[] = {2, 3};
    tide_tensor *a = mk(cpu0, TIDE_DTYPE_F32, 2, s23, (double[]){1, 5, 3, 4, 2, 6});
    tide_tensor *r = NULL, *ix = NULL;
    CHECK_OK(tide_reduce(NULL, TIDE_OP_SUM, a, 1, 0, &r, NULL));
    int64_t s2[] = {2}, s21[] = {2, 1}, s11[] = {1, 1}, s13[] = {1, 3};
    CHECK(shape_is(r, 1, s2));
    check_values(r, 2, (double[]){9, 12}, 1e-6);
    tide_tensor_release(r), r = NULL;
    CHECK_OK(tide_reduce(NULL, TIDE_OP_SUM, a, 1, 1, &r, NULL));
    CHECK(shape_is(r, 2, s21));
    tide_tensor_release(r), r = NULL;
    CHECK_OK(tide_reduce(NULL, TIDE_OP_MEAN, a, 0, 1, &r, NULL));
    CHECK(shape_is(r, 2, s13));
    check_values(r, 3, (double[]){2.5, 3.5, 4.5}, 1e-6);
    tide_tensor_release(r), r = NULL;
    CHECK_OK(tide_reduce(NULL, TIDE_OP_SUM, a, TIDE_ALL_DIMS, 0, &r, NULL));
    CHECK(tide_tensor_ndim(r) == 0);
    CHECK_NEAR(at(r, 0), 21, 1e-6);
    tide_tensor_release(r), r = NULL;
    CHECK_OK(tide_reduce(NULL, TIDE_OP_PROD, a, TIDE_ALL_DIMS, 1, &r, NULL));
    CHECK(shape_is(r, 2, s11));
    CHECK_NEAR(at(r, 0), 720, 1e-3);
    tide_tensor_release(r), r = NULL;
    CHECK_OK(tide_reduce(NULL, TIDE_OP_MAX, a, 1, 0, &r, &ix));
    check_values(r, 2, (double[]){5, 6}, 0);
    CHECK(ix && tide_tensor_dtype(ix) == TIDE_DTYPE_I64);
    check_values(ix, 2, (double[]){1, 2}, 0);
    tide_tensor_release(r), r = NULL;
    tide_tensor_release(ix), ix = NULL;
    CHECK_OK(tide_reduce(NULL, TIDE_OP_ARGMIN, a, 0, 0, &r, NULL));
    CHECK(tide_tensor_dtype(r) == TIDE_DTYPE_I64);
    check_values(r, 3, (double[]){0, 1, 0}, 0);
    tide_tensor_release(r), r = NULL;
    CHECK_OK(tide_reduce(NULL, TIDE_OP_ARGMAX, a, TIDE_ALL_DIMS, 0, &r, NULL));
    CHECK_NEAR(at(r, 0), 5, 0);
    tide_tensor_release(r), r = NULL;
    /* reductions of a transposed view */
    tide_tensor *t = NULL;
    CHECK_OK(tide_tensor_transpose(a, 0, 1, &t));
    CHECK_OK(tide_reduce(NULL, TIDE_OP_MIN, t, 1, 0, &r, NULL));
    check_values(r, 3, (double[]){1, 2, 3}, 0);
    tide_tensor_release(r), r = NULL;
    tide_tensor_release(t);
    CHECK_ERR(tide_reduce(NULL, TIDE_OP_SUM, a, 2, 0, &r, NULL), TIDE_EINDEX,
              "sum: dim 3 out of range for a 2-d tensor");
    CHECK_ERR(tide_reduce(NULL, TIDE_OP_ADD, a, 0, 0, &r, NULL), TIDE_EINVAL, "not a reduction");
    /* integer sums in int64 */
    tide_tensor *i = mk(cpu0, TIDE_DTYPE_I32, 2, s23, (double[]){1, 2, 3, 4, 5, 6});
    CHECK_OK(tide_reduce(NULL, TIDE_OP_SUM, i, 0, 0, &r, NULL));
    CHECK(tide_tensor_dtype(r) == TIDE_DTYPE_I64);
    check_values(r, 3, (double[]){5, 7, 9}, 0);
    tide_tensor_release(r), r = NULL;
    /* sum_to: the reverse of broadcasting */
    CHECK_OK(tide_sum_to(NULL, a, 1, (int64_t[]){3}, &r));
    check_values(r, 3, (double[]){5, 7, 9}, 1e-6);
    tide_tensor_release(r), r = NULL;
    CHECK_OK(tide_sum_to(NULL, a, 2, s21, &r));
    CHECK(shape_is(r, 2, s21));
    check_values(r, 2, (double[]){9, 12}, 1e-6);
    tide_tensor_release(r), r = NULL;
    CHECK_ERR(tide_sum_to(NULL, a, 1, (int64_t[]){2}, &r), TIDE_ESHAPE,
              "sum_to: cannot sum shape [2, 3] down to [2]");
    tide_tensor_release(i);
    tide_tensor_release(a);
}

static void test_misc_ops(void) {
    int64_t      s23[] = {2, 3}, s3[] = {3};
    tide_tensor *a = mk(cpu0, TIDE_DTYPE_F32, 2, s23, (double[]){1, 2, 3, 4, 5, 6}), *r = NULL;
    /* where */
    tide_tensor *cond = NULL;
    CHECK_OK(tide_binary_scalar(NULL, TIDE_OP_GT, a, 3.5, 0, &cond));
    tide_tensor *z = mk(cpu0, TIDE_DTYPE_F32, 1, s3, (double[]){0, -1, -2});
    CHECK_OK(tide_where(NULL, cond, a, z, &r));
    check_values(r, 6, (double[]){0, -1, -2, 4, 5, 6}, 0);
    tide_tensor_release(r), r = NULL;
    CHECK_ERR(tide_where(NULL, a, a, z, &r), TIDE_EDTYPE,
              "where: the condition must be bool, got float32");
    /* cat */
    const tide_tensor *ts[] = {a, a};
    CHECK_OK(tide_cat(NULL, 2, ts, 1, &r));
    int64_t s26[] = {2, 6};
    CHECK(shape_is(r, 2, s26));
    check_values(r, 12, (double[]){1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6}, 0);
    tide_tensor_release(r), r = NULL;
    const tide_tensor *bad[] = {a, z};
    CHECK_ERR(tide_cat(NULL, 2, bad, 0, &r), TIDE_ESHAPE, "cat: tensor 2 has shape [3]");
    /* index_select, index_add_ */
    tide_tensor *idx = mk(cpu0, TIDE_DTYPE_I64, 1, (int64_t[]){3}, (double[]){2, 0, 2});
    CHECK_OK(tide_index_select(NULL, a, 1, idx, &r));
    int64_t s233[] = {2, 3};
    CHECK(shape_is(r, 2, s233));
    check_values(r, 6, (double[]){3, 1, 3, 6, 4, 6}, 0);
    tide_tensor *acc = mk(cpu0, TIDE_DTYPE_F32, 2, s23, NULL);
    CHECK_OK(tide_index_add_(NULL, acc, 1, idx, r));
    check_values(acc, 6, (double[]){1, 0, 6, 4, 0, 12}, 0);
    tide_tensor_release(r), r = NULL;
    tide_tensor *oob = mk(cpu0, TIDE_DTYPE_I64, 1, (int64_t[]){1}, (double[]){3});
    CHECK_ERR(
        tide_index_select(NULL, a, 1, oob, &r), TIDE_EINDEX,
        "index_select: index 4 is out of range for dim 2 of size 3; indices are 1-based: use 1..3");
    CHECK_ERR(tide_index_select(NULL, a, 1, a, &r), TIDE_EDTYPE,
              "index must be int64 or int32, got float32");
    /* softmax */
    CHECK_OK(tide_softmax(NULL, a, 1, 0, &r));
    double e = exp(1) + exp(2) + exp(3);
    check_values(r, 6,
                 (double[]){exp(1) / e, exp(2) / e, exp(3) / e, exp(1) / e, exp(2) / e, exp(3) / e},
                 1e-6);
    tide_tensor_release(r), r = NULL;
    CHECK_OK(tide_softmax(NULL, a, 0, 1, &r));
    CHECK_NEAR(at(r, 0), 1 - 4 - log(exp(-3) + 1), 1e-5);
    tide_tensor_release(r), r = NULL;
    /* fill_, arange, clamp */
    CHECK_OK(tide_fill_(NULL, acc, 2.5));
    check_values(acc, 6, (double[]){2.5, 2.5, 2.5, 2.5, 2.5, 2.5}, 0);
    CHECK_OK(tide_arange(NULL, cpu1, TIDE_DTYPE_I64, 1, 7, 2, &r));
    CHECK(tide_tensor_device(r) == cpu1 && tide_tensor_numel(r) == 3);
    check_values(r, 3, (double[]){1, 3, 5}, 0);
    tide_tensor_release(r), r = NULL;
    CHECK_ERR(tide_arange(NULL, cpu0, TIDE_DTYPE_F32, 0, 1, 0, &r), TIDE_EINVAL,
              "arange: step must not be zero");
    CHECK_OK(tide_unary(NULL, TIDE_OP_CLAMP, a, (double[]){2, 4.5}, &r));
    check_values(r, 6, (double[]){2, 2, 3, 4, 4.5, 4.5}, 0);
    tide_tensor_release(r), r = NULL;
    tide_tensor *rel[] = {a, cond, z, idx, acc, oob};
    for (int i = 0; i < 6; i++)
        tide_tensor_release(rel[i]);
}

static void test_random(void) {
    tide_ctx *c1, *c2;
    CHECK_OK(tide_ctx_new(&c1));
    CHECK_OK(tide_ctx_new(&c2));
    tide_ctx_manual_seed(c1, 42);
    tide_ctx_manual_seed(c2, 42);
    int64_t      s4[] = {4};
    tide_tensor *a = mk(cpu0, TIDE_DTYPE_F32, 1, s4, NULL),
                *b = mk(cpu1, TIDE_DTYPE_F32, 1, s4, NULL);
    CHECK_OK(tide_random_(c1, a, TIDE_RANDOM_UNIFORM, 2, 3));
    CHECK_OK(tide_random_(c2, b, TIDE_RANDOM_UNIFORM, 2, 3));
    CHECK(c1->rng_offset == 4);
    tide_tensor *bh = NULL;
    CHECK_OK(tide_tensor_to(c2, b, cpu0, TIDE_DTYPE_F32, 0, &bh));
    for (int i = 0; i < 4; i++) {
        CHECK(at(a, i) >= 2 && at(a, i) < 3);
        CHECK(at(a, i) == at(bh, i)); /* same seed, same numbers on every device */
    }
    double first = at(a, 0);
    CHECK_OK(tide_random_(c1, a, TIDE_RANDOM_NORMAL, 0, 1));
    CHECK(c1->rng_offset == 8);
    CHECK(at(a, 0) != first);
    /* the generator's position saved and restored: the next draws repeat */
    uint64_t seed, offset;
    double   again[4];
    tide_ctx_rng_state(c1, &seed, &offset);
    CHECK(seed == 42 && offset == 8);
    CHECK_OK(tide_random_(c1, a, TIDE_RANDOM_UNIFORM, 0, 1));
    for (int k = 0; k < 4; k++)
        again[k] = at(a, k);
    tide_ctx_set_rng_state(c1, seed, offset);
    CHECK_OK(tide_random_(c1, a, TIDE_RANDOM_UNIFORM, 0, 1));
    for (int k = 0; k < 4; k++)
        CHECK(at(a, k) == again[k]);
    tide_tensor *i = mk(cpu0, TIDE_DTYPE_I32, 1, s4, NULL);
    CHECK_ERR(tide_random_(c1, i, TIDE_RANDOM_UNIFORM, 0, 1), TIDE_EDTYPE,
              "uniform_: random values need a floating-point tensor, got int32");
    tide_tensor_release(a);
    tide_tensor_release(b);
    tide_tensor_release(bh);
    tide_tensor_release(i);
    tide_ctx_release(c1);
    tide_ctx_release(c2);
}

static void test_nn_shapes(void) {
    int64_t s[] = {1, 2, 4, 4};
    double  v[32];
    for (int i = 0; i < 32; i++)
        v[i] = i;
    tide_tensor   *x = mk(cpu0, TIDE_DTYPE_F32, 4, s, v), *cols = NULL, *o = NULL, *ix = NULL;
    tide_conv_geom g = {3, 3, 1, 1, 1, 1, 1, 1};
    CHECK_OK(tide_im2col(NULL, x, g, &cols));
    int64_t cs[] = {1, 18, 16};
    CHECK(shape_is(cols, 3, cs));
    tide_tensor *back = NULL;
    CHECK_OK(tide_col2im(NULL, cols, 2, 4, 4, g, &back));
    CHECK(shape_is(back, 4, s));
    tide_conv_geom p = {2, 2, 2, 2, 0, 0, 1, 1};
    CHECK_OK(tide_maxpool2d(NULL, x, p, &o, &ix));
    int64_t ps[] = {1, 2, 2, 2};
    CHECK(shape_is(o, 4, ps) && shape_is(ix, 4, ps));
    check_values(o, 8, (double[]){5, 7, 13, 15, 21, 23, 29, 31}, 0);
    check_values(ix, 8, (double[]){5, 7, 13, 15, 5, 7, 13, 15}, 0);
    tide_tensor *gi = NULL;
    CHECK_OK(tide_maxpool2d_backward(NULL, o, ix, 4, 4, &gi));
    CHECK(shape_is(gi, 4, s));
    CHECK_NEAR(at(gi, 5), 5, 0);
    CHECK_NEAR(at(gi, 4), 0, 0);
    tide_conv_geom bad = {5, 5, 1, 1, 0, 0, 1, 1};
    tide_tensor   *none = NULL;
    CHECK_ERR(tide_im2col(NULL, x, bad, &none), TIDE_ESHAPE,
              "im2col: kernel 5x5 is larger than the padded input 4x4");
    CHECK_ERR(tide_maxpool2d(NULL, cols, p, &none, NULL), TIDE_ESHAPE,
              "maxpool2d: input must be 4-d [N, C, H, W], got shape [1, 18, 16]");
    /* dilation 2 and ceil_mode: PyTorch's sizes, windows clipped to the input */
    CHECK(tide_pool_out_size(5, 2, 2, 0, 1, 1) == 3 && tide_pool_out_size(5, 2, 2, 0, 1, 0) == 2);
    CHECK(tide_pool_out_size(8, 2, 3, 1, 2, 1) == 3 && tide_pool_out_size(2, 3, 1, 0, 2, 0) == -1);
    tide_pool_geom dg = {2, 2, 1, 1, 0, 0, 2, 2, 0};
    tide_tensor   *od = NULL, *id = NULL;
    CHECK_OK(tide_maxpool2d_ex(NULL, x, dg, &od, &id));
    int64_t ds[] = {1, 2, 2, 2};
    CHECK(shape_is(od, 4, ds));
    check_values(od, 8, (double[]){10, 11, 14, 15, 26, 27, 30, 31}, 0);
    check_values(id, 8, (double[]){10, 11, 14, 15, 10, 11, 14, 15}, 0);
    tide_pool_geom cg = {3, 3, 2, 2, 0, 0, 1, 1, 1};
    tide_tensor   *oc = NULL, *ic = NULL;
    CHECK_OK(tide_maxpool2d_ex(NULL, x, cg, &oc, &ic)); /* 4x4, kernel 3, stride 2: 2x2 */
    CHECK(shape_is(oc, 4, ps));
    check_values(oc, 8, (double[]){10, 11, 14, 15, 26, 27, 30, 31}, 0);
    tide_pool_geom zero = {2, 2, 1, 1, 0, 0, 0, 1, 0};
    CHECK_ERR(tide_maxpool2d_ex(NULL, x, zero, &none, NULL), TIDE_EINVAL,
              "maxpool2d: dilation 0x1 must be positive");
    tide_pool_geom wide = {3, 3, 1, 1, 0, 0, 2, 2, 0};
    CHECK_ERR(tide_maxpool2d_ex(NULL, x, wide, &none, NULL), TIDE_ESHAPE,
              "maxpool2d: kernel 3x3 (dilation 2x2) is larger than the padded input 4x4");
    /* dilation 2: taps (h, w) and (h+2, w+2) of a 4x4 plane, 2x2 outputs */
    tide_conv_geom d = {2, 2, 1, 1, 0, 0, 2, 2};
    tide_tensor   *dc = NULL;
    CHECK_OK(tide_im2col(NULL, x, d, &dc));
    int64_t dcs[] = {1, 8, 4};
    CHECK(shape_is(dc, 3, dcs));
    CHECK_NEAR(at(dc, 0), 0, 0);
    CHECK_NEAR(at(dc, 1), 1, 0);
    CHECK_NEAR(at(dc, 2), 4, 0);
    CHECK_NEAR(at(dc, 3), 5, 0);
    tide_conv_geom negd = {2, 2, 1, 1, 0, 0, -1, 1};
    CHECK_ERR(tide_im2col(NULL, x, negd, &none), TIDE_EINVAL,
              "dilation -1x1: kernel, stride and dilation must be positive");
    /* tide_conv2d: the device's own convolution, or TIDE_ENOTSUP (float64 has none on the CPU;
     * float32 has oneDNN's when tide is built with it); its tensors checked either way */
    int64_t      ws[] = {3, 2, 3, 3}, w1[] = {3, 1, 3, 3}, os[] = {1, 3, 4, 4};
    double       wv[54] = {0};
    tide_tensor *w = mk(cpu0, TIDE_DTYPE_F32, 4, ws, wv),
                *wbad = mk(cpu0, TIDE_DTYPE_F32, 4, w1, wv);
    tide_tensor *x64 = mk(cpu0, TIDE_DTYPE_F64, 4, s, v),
                *w64 = mk(cpu0, TIDE_DTYPE_F64, 4, ws, wv);
    CHECK_ERR(
        tide_conv2d(NULL, x, wbad, NULL, g, 1, &none), TIDE_ESHAPE,
        "conv2d: weight [3, 1, 3, 3] does not fit input [1, 2, 4, 4], kernel 3x3 and groups 1");
    CHECK_ERR(tide_conv2d(NULL, x64, w64, NULL, g, 1, &none), TIDE_ENOTSUP, "conv2d");
    CHECK(none == NULL);
    tide_tensor *y = NULL;
    tide_status  st = tide_conv2d(NULL, x, w, NULL, g, 1, &y);
    CHECK(st == TIDE_OK || st == TIDE_ENOTSUP);
    if (st == TIDE_OK) { /* zero weights: zero output of [1, 3, 4, 4] */
        CHECK(shape_is(y, 4, os));
        CHECK_NEAR(at(y, 0), 0, 0);
        tide_tensor *gx = NULL, *gw = NULL;
        CHECK_OK(tide_conv2d_backward(NULL, y, x, w, g, 1, &gx, &gw, NULL));
        CHECK(shape_is(gx, 4, s) && shape_is(gw, 4, ws));
        tide_tensor_release(gx);
        tide_tensor_release(gw);
    }
    tide_tensor *rel[] = {x, cols, o, ix, back, gi, od, id, oc, ic, dc, w, wbad, x64, w64, y};
    for (int i = 0; i < 16; i++)
        tide_tensor_release(rel[i]);
}

static void test_lifetimes(void) {
    /* a tensor keeps its context alive after the host releases it */
    tide_ctx *ctx;
    CHECK_OK(tide_ctx_new(&ctx));
    int64_t      s23[] = {2, 3}, s0[] = {0};
    tide_tensor *t = NULL, *u = NULL;
    CHECK_OK(tide_tensor_empty(ctx, cpu1, TIDE_DTYPE_F64, 2, s23, &t));
    CHECK(tide_tensor_ctx(t) == ctx);
    tide_ctx_release(ctx);
    CHECK(tide_ctx_memory_in_use(ctx) == 48);
    CHECK_OK(tide_fill_(ctx, t, 1.25));
    /* a strided source crosses devices as one contiguous block */
    tide_tensor *tr = NULL;
    CHECK_OK(tide_tensor_transpose(t, 0, 1, &tr));
    CHECK_OK(tide_tensor_set(t, (int64_t[]){0, 1}, 7));
    CHECK_OK(tide_tensor_to(ctx, tr, cpu0, TIDE_DTYPE_F32, 0, &u));
    CHECK(tide_tensor_is_contiguous(u) && tide_tensor_dtype(u) == TIDE_DTYPE_F32);
    check_values(u, 6, (double[]){1.25, 1.25, 7, 1.25, 1.25, 1.25}, 0);
    tide_tensor_release(u), u = NULL;
    tide_tensor_release(tr);
    tide_tensor_release(t); /* frees ctx too (ASan checks) */

    /* empty tensors go through every path */
    CHECK_OK(tide_tensor_empty(NULL, cpu0, TIDE_DTYPE_F32, 1, s0, &t));
    CHECK_OK(tide_tensor_to(NULL, t, cpu2, TIDE_DTYPE_F32, 0, &u));
    CHECK(tide_tensor_numel(u) == 0);
    tide_tensor_release(u), u = NULL;
    CHECK_OK(tide_reduce(NULL, TIDE_OP_SUM, t, TIDE_ALL_DIMS, 0, &u, NULL));
    CHECK_NEAR(at(u, 0), 0, 0);
    tide_tensor_release(u), u = NULL;
    CHECK_ERR(tide_reduce(NULL, TIDE_OP_MAX, t, 0, 0, &u, NULL), TIDE_ESHAPE,
              "max: cannot reduce over an empty dim");
    CHECK_OK(tide_binary_scalar(NULL, TIDE_OP_ADD, t, 1, 0, &u));
    tide_tensor_release(u), u = NULL;
    tide_tensor_release(t);

    /* pinned memory needs the CUDA backend */
    if (!tide_cuda_is_available()) {
        CHECK_OK(tide_tensor_empty(NULL, cpu0, TIDE_DTYPE_F32, 2, s23, &t));
        CHECK_ERR(tide_tensor_pin_memory(NULL, t, &u), TIDE_ENOTSUP,
                  "pin_memory: pinned memory needs the CUDA backend");
        CHECK(u == NULL && !tide_tensor_is_pinned(t));
        tide_tensor_release(t);
    }
}

static void test_inplace_unchanged(void) {
    int64_t      s3[] = {3}, s2[] = {2};
    tide_tensor *a = mk(cpu0, TIDE_DTYPE_F32, 1, s3, (double[]){1, -2, 3});
    tide_tensor *b = mk(cpu0, TIDE_DTYPE_F32, 1, s2, (double[]){1, 1});
    tide_tensor *out = a;
    CHECK_OK(tide_unary(NULL, TIDE_OP_ABS, a, NULL, &out));
    check_values(a, 3, (double[]){1, 2, 3}, 0);
    CHECK_ERR(tide_binary(NULL, TIDE_OP_MUL, a, b, &out), TIDE_ESHAPE,
              "mul: shapes [3] and [2] cannot be broadcast");
    /* min above max: max everywhere, as PyTorch's (a new result) */
    tide_tensor *c = NULL;
    CHECK_OK(tide_unary(NULL, TIDE_OP_CLAMP, a, (double[]){3, 1}, &c));
    check_values(c, 3, (double[]){1, 1, 1}, 0);
    tide_tensor_release(c);
    out = b;
    CHECK_ERR(tide_unary(NULL, TIDE_OP_NEG, a, NULL, &out), TIDE_ESHAPE,
              "neg: the result has shape [3] but the output tensor has shape [2]");
    check_values(a, 3, (double[]){1, 2, 3}, 0);
    check_values(b, 2, (double[]){1, 1}, 0);
    /* float64 into float32 in place computes in float32 */
    tide_tensor *d = mk(cpu0, TIDE_DTYPE_F64, 1, s3, (double[]){0.5, 0.5, 0.5});
    out = a;
    CHECK_OK(tide_binary(NULL, TIDE_OP_ADD, a, d, &out));
    CHECK(tide_tensor_dtype(a) == TIDE_DTYPE_F32);
    check_values(a, 3, (double[]){1.5, 2.5, 3.5}, 0);
    /* an expanded view cannot take results in place */
    tide_tensor *e = NULL;
    int64_t      s23[] = {2, 3};
    CHECK_OK(tide_tensor_expand(a, 2, s23, &e));
    out = e;
    CHECK_ERR(tide_unary(NULL, TIDE_OP_NEG, e, NULL, &out), TIDE_EINVAL,
              "neg: the output tensor is an expanded view (stride 0 at dim 1)");
    check_values(a, 3, (double[]){1.5, 2.5, 3.5}, 0);
    tide_tensor_release(e);
    tide_tensor_release(a);
    tide_tensor_release(b);
    tide_tensor_release(d);
}

/* ---- exact int64 scalars, version counters, the header cache ------------------------------ */

static int64_t i64_at(const tide_tensor *t, int64_t i) {
    return ((const int64_t *)tide_tensor_data(t))[i * tide_tensor_strides(t)[0]];
}

static void test_exact_scalars(void) {
    const int64_t big = ((int64_t)1 << 62) + 1, odd = ((int64_t)1 << 53) + 1;
    int64_t       s2[] = {2};
    tide_tensor  *t = NULL, *r = NULL;
    /* full and fill_x_ keep every bit of an int64 */
    CHECK_OK(tide_tensor_full(NULL, cpu0, TIDE_DTYPE_I64, 1, s2, tide_scalar_i(big), &t));
    CHECK(i64_at(t, 0) == big && i64_at(t, 1) == big);
    CHECK(tide_tensor_version(t) == 0);
    CHECK_OK(tide_fill_x_(NULL, t, tide_scalar_i(INT64_MAX)));
    CHECK(i64_at(t, 0) == INT64_MAX && i64_at(t, 1) == INT64_MAX);
    CHECK_OK(tide_fill_x_(NULL, t, tide_scalar_i(odd)));
    CHECK(i64_at(t, 1) == odd);
    CHECK(tide_tensor_version(t) == 2);
    /* PyTorch's checked conversion (tide.tensor's integers, fill_, full): int64 takes any
     * integer, a float past 2^63 or NaN no integer dtype; uint8 wraps -255..-1 */
    CHECK_OK(tide_scalar_fits("tensor", TIDE_DTYPE_I64, tide_scalar_i(INT64_MIN)));
    CHECK(tide_scalar_fits("tensor", TIDE_DTYPE_I64, tide_scalar_f(0x1p63)) == TIDE_EINVAL);
    CHECK(tide_scalar_fits("tensor", TIDE_DTYPE_I32, tide_scalar_f(NAN)) == TIDE_EINVAL);
    CHECK(strstr(tide_errmsg(), "tensor: the value nan cannot be converted to int32") != NULL);
    CHECK_OK(tide_scalar_fits("tensor", TIDE_DTYPE_U8, tide_scalar_i(-255)));
    CHECK(tide_scalar_fits("tensor", TIDE_DTYPE_U8, tide_scalar_i(256)) == TIDE_EINVAL);
    CHECK(tide_scalar_fits("tensor", TIDE_DTYPE_U8, tide_scalar_f(-0.5)) == TIDE_EINVAL);
    CHECK_OK(tide_scalar_fits("tensor", TIDE_DTYPE_F32, tide_scalar_f(INFINITY)));
    /* the double API rounds, as a double does */
    CHECK_OK(tide_fill_(NULL, t, (double)odd));
    CHECK(i64_at(t, 0) == odd - 1);
    /* arithmetic and comparisons, either order */
    int64_t vals[] = {1, 2};
    memcpy(tide_tensor_data(t), vals, sizeof vals);
    CHECK_OK(tide_binary_scalar_x(NULL, TIDE_OP_ADD, t, tide_scalar_i(odd), 0, &r));
    CHECK(tide_tensor_dtype(r) == TIDE_DTYPE_I64 && i64_at(r, 0) == odd + 1 &&
          i64_at(r, 1) == odd + 2);
    tide_tensor_release(r), r = NULL;
    CHECK_OK(tide_binary_scalar_x(NULL, TIDE_OP_SUB, t, tide_scalar_i(big), 1, &r));
    CHECK(i64_at(r, 0) == big - 1 && i64_at(r, 1) == big - 2);
    tide_tensor_release(r), r = NULL;
    CHECK_OK(tide_binary_scalar_x(NULL, TIDE_OP_EQ, t, tide_scalar_i(odd + 1), 0, &r));
    CHECK(tide_tensor_dtype(r) == TIDE_DTYPE_BOOL);
    check_values(r, 2, (double[]){0, 0}, 0);
    tide_tensor_release(r), r = NULL;
    tide_tensor *out = t; /* in place */
    CHECK_OK(tide_binary_scalar_x(NULL, TIDE_OP_ADD, t, tide_scalar_i(odd), 0, &out));
    CHECK(i64_at(t, 0) == odd + 1 && i64_at(t, 1) == odd + 2);
    CHECK_OK(tide_binary_scalar_x(NULL, TIDE_OP_GE, t, tide_scalar_i(odd + 2), 0, &r));
    check_values(r, 2, (double[]){0, 1}, 0);
    tide_tensor_release(r), r = NULL;
    /* clamp with exact bounds; a float bound of an integer tensor gives float32 */
    CHECK_OK(tide_clamp(NULL, t, tide_scalar_i(odd + 2), tide_scalar_f(INFINITY), &r));
    CHECK(tide_tensor_dtype(r) == TIDE_DTYPE_I64 && i64_at(r, 0) == odd + 2);
    tide_tensor_release(r), r = NULL;
    CHECK_OK(tide_clamp(NULL, t, tide_scalar_f(-INFINITY), tide_scalar_i(odd), &r));
    CHECK(i64_at(r, 0) == odd && i64_at(r, 1) == odd);
    tide_tensor_release(r), r = NULL;
    CHECK_OK(tide_clamp(NULL, t, tide_scalar_i(odd + 1), tide_scalar_i(odd), &r));
    CHECK(i64_at(r, 0) == odd && i64_at(r, 1) == odd); /* min above max: max, exactly */
    tide_tensor_release(r), r = NULL;
    CHECK_OK(tide_clamp(NULL, t, tide_scalar_f(0.5), tide_scalar_f(0.75), &r));
    CHECK(tide_tensor_dtype(r) == TIDE_DTYPE_F32);
    check_values(r, 2, (double[]){0.75, 0.75}, 0);
    tide_tensor_release(r), r = NULL;
    double p[2] = {0.5, 0.75};
    CHECK_OK(tide_unary(NULL, TIDE_OP_CLAMP, t, p, &r)); /* the double API promotes too */
    CHECK(tide_tensor_dtype(r) == TIDE_DTYPE_F32);
    tide_tensor_release(r), r = NULL;
    out = t;
    CHECK_ERR(tide_clamp(NULL, t, tide_scalar_f(0.5), tide_scalar_f(0.75), &out), TIDE_EDTYPE,
              "clamp: the result has dtype float32, which cannot be written into a int64 tensor");
    CHECK(i64_at(t, 0) == odd + 1 && i64_at(t, 1) == odd + 2);
    tide_tensor_release(t), t = NULL;
    /* int32 wraps from the exact integer: (2^62 + 1) mod 2^32 = 1 */
    t = mk(cpu0, TIDE_DTYPE_I32, 1, s2, (double[]){5, -5});
    CHECK_OK(tide_binary_scalar_x(NULL, TIDE_OP_ADD, t, tide_scalar_i(big), 0, &r));
    CHECK(tide_tensor_dtype(r) == TIDE_DTYPE_I32);
    check_values(r, 2, (double[]){6, -4}, 0);
    tide_tensor_release(r), r = NULL;
    tide_tensor_release(t), t = NULL;
    /* on another device too (a one-element operand is made there) */
    CHECK_OK(tide_tensor_full(NULL, cpu1, TIDE_DTYPE_I64, 1, s2, tide_scalar_i(1), &t));
    CHECK_OK(tide_binary_scalar_x(NULL, TIDE_OP_MUL, t, tide_scalar_i(big), 0, &r));
    CHECK(tide_tensor_device(r) == cpu1 && i64_at(r, 0) == big);
    tide_tensor_release(r), r = NULL;
    tide_tensor_release(t), t = NULL;
}

static void test_stack(void) {
    int64_t            s23[] = {2, 3}, s32[] = {3, 2};
    tide_tensor       *a = mk(cpu0, TIDE_DTYPE_F32, 2, s23, (double[]){1, 2, 3, 4, 5, 6});
    tide_tensor       *b = mk(cpu0, TIDE_DTYPE_F32, 2, s32, NULL), *r = NULL;
    const tide_tensor *ab[] = {a, b}, *aa[] = {a, a};
    CHECK_ERR(tide_stack(NULL, 2, ab, 0, &r), TIDE_ESHAPE,
              "stack: tensors must have the same shape; tensor 1 has shape [2, 3], tensor 2 has "
              "shape [3, 2]");
    CHECK(r == NULL);
    CHECK_ERR(tide_stack(NULL, 2, aa, 3, &r), TIDE_EINDEX, "stack: dim 4 out of range");
    CHECK_OK(tide_stack(NULL, 2, aa, 2, &r));
    CHECK(shape_is(r, 3, (int64_t[]){2, 3, 2}));
    check_values(r, 12, (double[]){1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6}, 0);
    tide_tensor_release(r);
    tide_tensor_release(a);
    tide_tensor_release(b);
}

/* relu's gradient written into the incoming gradient (autograd's, when nothing else holds it),
 * and the ownership test that allows it */
static void test_relu_backward_inplace(void) {
    int64_t      s4[] = {4};
    tide_tensor *y = mk(cpu1, TIDE_DTYPE_F32, 1, s4, (double[]){1, -1, 0, NAN});
    tide_tensor *g = mk(cpu1, TIDE_DTYPE_F32, 1, s4, (double[]){5, 6, 7, 8});
    tide_tensor *fresh = NULL, *v = NULL, *h = NULL;
    CHECK_OK(tide_relu_backward(NULL, g, y, &fresh));
    CHECK(tide_tensor_is_sole_owner(g));
    tide_tensor_retain(g); /* a second handle */
    CHECK(!tide_tensor_is_sole_owner(g));
    tide_tensor_release(g);
    CHECK_OK(tide_tensor_narrow(g, 0, 1, 2, &v)); /* a view shares the storage */
    CHECK(!tide_tensor_is_sole_owner(g) && !tide_tensor_is_sole_owner(v));
    tide_tensor_release(v);
    CHECK(tide_tensor_is_sole_owner(g));
    uint64_t before = tide_tensor_version(g);
    CHECK_OK(tide_relu_backward_(NULL, g, y));
    CHECK(tide_tensor_version(g) == before + 1);
    CHECK_OK(tide_tensor_to(NULL, g, cpu0, TIDE_DTYPE_F32, 0, &h));
    check_values(h, 4, (double[]){5, 0, 0, 8}, 0); /* NaN's result passes g, as out of place */
    tide_tensor_release(h);
    h = NULL;
    CHECK_OK(tide_tensor_to(NULL, fresh, cpu0, TIDE_DTYPE_F32, 0, &h));
    check_values(h, 4, (double[]){5, 0, 0, 8}, 0);
    tide_tensor *wrong = mk(cpu1, TIDE_DTYPE_F32, 1, (int64_t[]){3}, NULL);
    CHECK_ERR(tide_relu_backward_(NULL, wrong, y), TIDE_ESHAPE,
              "relu_backward_: input of shape [4] must have grad_out's shape [3]");
    tide_tensor *elsewhere = mk(cpu2, TIDE_DTYPE_F32, 1, s4, NULL);
    CHECK(tide_relu_backward_(NULL, elsewhere, y) == TIDE_EDEVICE);
    tide_tensor_release(elsewhere);
    /* an expanded gradient (sum's): one element under all four; in place it would be zeroed */
    tide_tensor *one = mk(cpu1, TIDE_DTYPE_F32, 1, (int64_t[]){1}, (double[]){3}), *ex = NULL;
    CHECK_OK(tide_tensor_expand(one, 1, s4, &ex));
    CHECK_ERR(tide_relu_backward_(NULL, ex, y), TIDE_EINVAL,
              "relu_backward_: grad_out is written in place and must be contiguous");
    tide_tensor_release(ex);
    tide_tensor_release(one);
    tide_tensor_release(wrong);
    tide_tensor_release(h);
    tide_tensor_release(fresh);
    tide_tensor_release(g);
    tide_tensor_release(y);
}

/* the optimizer rows through the C API: param and state written in place (versions bumped),
 * and a call the rows refuse leaves every tensor as it was */
static void test_optim_step_rows(void) {
    int64_t            s4[] = {4}, s3[] = {3};
    tide_tensor       *p = mk(cpu0, TIDE_DTYPE_F32, 1, s4, (double[]){1, 2, 3, 4});
    tide_tensor       *g = mk(cpu0, TIDE_DTYPE_F32, 1, s4, (double[]){1, 1, 2, 2});
    tide_tensor       *buf = mk(cpu0, TIDE_DTYPE_F32, 1, s4, (double[]){0, 0, 0, 0});
    tide_optim_hparams h = {.kind = TIDE_OPTIM_SGD, .lr = 0.5, .momentum = 0.9, .first_step = 1};
    uint64_t           vp = tide_tensor_version(p), vb = tide_tensor_version(buf);
    CHECK_OK(tide_optim_step_(NULL, &h, p, g, buf, NULL, NULL));
    check_values(p, 4, (double[]){0.5, 1.5, 2, 3}, 0);
    check_values(buf, 4, (double[]){1, 1, 2, 2}, 0); /* the first step: buf = g */
    CHECK(tide_tensor_version(p) == vp + 1 && tide_tensor_version(buf) == vb + 1);
    /* Adam with a first moment of another shape: refused, nothing written */
    tide_tensor       *m = mk(cpu0, TIDE_DTYPE_F32, 1, s3, (double[]){7, 7, 7});
    tide_tensor       *v = mk(cpu0, TIDE_DTYPE_F32, 1, s4, (double[]){0, 0, 0, 0});
    tide_optim_hparams a = {.kind = TIDE_OPTIM_ADAM,
                            .lr = 0.1,
                            .beta1 = 0.9,
                            .beta2 = 0.999,
                            .eps = 1e-8,
                            .bias_correction1 = 0.1,
                            .bias_correction2 = 0.001};
    CHECK_ERR(tide_optim_step_(NULL, &a, p, g, m, v, NULL), TIDE_ESHAPE,
              "adam_step_: exp_avg of shape [3] must have param's shape [4]");
    check_values(p, 4, (double[]){0.5, 1.5, 2, 3}, 0);
    check_values(m, 3, (double[]){7, 7, 7}, 0);
    /* an expanded parameter cannot be written where it lies */
    tide_tensor *one = mk(cpu0, TIDE_DTYPE_F32, 1, (int64_t[]){1}, (double[]){3}), *ex = NULL;
    CHECK_OK(tide_tensor_expand(one, 1, s4, &ex));
    h.momentum = 0;
    CHECK_ERR(tide_optim_step_(NULL, &h, ex, g, NULL, NULL, NULL), TIDE_EINVAL,
              "sgd_step_: param is written in place and must be contiguous");
    check_values(one, 1, (double[]){3}, 0);
    tide_tensor *all[] = {p, g, buf, m, v, one, ex};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        tide_tensor_release(all[i]);
}

static void test_versions(void) {
    int64_t      s3[] = {3}, s1[] = {1};
    tide_tensor *t = NULL, *v = NULL, *r = NULL, *u = NULL;
    CHECK_OK(tide_tensor_empty(NULL, cpu0, TIDE_DTYPE_F32, 1, s3, &t));
    CHECK(tide_tensor_version(t) == 0);
    CHECK_OK(tide_tensor_narrow(t, 0, 1, 2, &v));
    CHECK_OK(tide_fill_(NULL, v, 1)); /* through a view: the storage counts */
    CHECK(tide_tensor_version(t) == 1 && tide_tensor_version(v) == 1);
    tide_tensor *out = t;
    CHECK_OK(tide_binary_scalar(NULL, TIDE_OP_MUL, t, 2, 0, &out));
    CHECK(tide_tensor_version(t) == 2);
    CHECK_OK(tide_unary(NULL, TIDE_OP_NEG, v, NULL, &v));
    CHECK(tide_tensor_version(t) == 3);
    CHECK_OK(tide_random_(NULL, t, TIDE_RANDOM_UNIFORM, 0, 1));
    CHECK(tide_tensor_version(t) == 4);
    CHECK_OK(tide_tensor_set(t, (int64_t[]){0}, 5));
    CHECK(tide_tensor_version(t) == 5);
    tide_tensor *ix = mk(cpu0, TIDE_DTYPE_I64, 1, s1, (double[]){2});
    tide_tensor *src = mk(cpu0, TIDE_DTYPE_F32, 1, s1, (double[]){1});
    CHECK_OK(tide_index_add_(NULL, t, 0, ix, src));
    CHECK(tide_tensor_version(t) == 6);
    CHECK(tide_tensor_bump_version(t, 0) == 7);
    CHECK(tide_tensor_bump_version(t, 41) == 42); /* past another tensor's count (set_) */
    /* results of ops start at 0; reading does not count; a failed call does not count */
    CHECK_OK(tide_binary(NULL, TIDE_OP_ADD, t, t, &r));
    CHECK(tide_tensor_version(r) == 0 && tide_tensor_version(t) == 42);
    out = t;
    CHECK_ERR(tide_binary(NULL, TIDE_OP_ADD, t, v, &out), TIDE_ESHAPE,
              "add: shapes [3] and [2] cannot be broadcast");
    CHECK(tide_tensor_version(t) == 42);
    CHECK_OK(tide_tensor_full(NULL, cpu0, TIDE_DTYPE_F32, 1, s3, tide_scalar_f(2), &u));
    CHECK(tide_tensor_version(u) == 0);
    tide_tensor_release(u);
    tide_tensor_release(ix);
    tide_tensor_release(src);
    tide_tensor_release(r);
    tide_tensor_release(v);
    tide_tensor_release(t);
}

/* freed tensor + storage headers are kept for reuse; the cache flush hands them back */
static void test_header_cache(void) {
    enum { N = 64 };
    tide_tensor *ts[N];
    int64_t      s1[] = {1};
    for (int i = 0; i < N; i++)
        CHECK_OK(tide_tensor_empty(NULL, cpu0, TIDE_DTYPE_F32, 1, s1, &ts[i]));
    for (int i = 0; i < N; i++)
        tide_tensor_release(ts[i]);
#if TIDE_ASAN /* the cache is off under ASan */
    CHECK(tide_storage_cache_count() == 0);
#else
    CHECK(tide_storage_cache_count() >= N);
#endif
    CHECK_OK(tide_device_empty_cache(cpu1)); /* any CPU device: the cache is the process's */
    CHECK(tide_storage_cache_count() == 0);
    /* and it fills again */
    tide_tensor *t = NULL;
    CHECK_OK(tide_tensor_empty(NULL, cpu0, TIDE_DTYPE_F32, 1, s1, &t));
    tide_tensor_release(t);
#if !TIDE_ASAN
    CHECK(tide_storage_cache_count() == 1);
#endif
    CHECK_OK(tide_device_empty_cache(cpu0));
    CHECK(tide_storage_cache_count() == 0);
}

/* each thread keeps its own cache: a thread's releases (of its tensors and of one made on the
 * main thread) fill its cache, not the main thread's, and its exit frees them */
typedef struct cache_job {
    tide_tensor *from_main;
    int          seen; /* the thread's cache count before it exits */
} cache_job;

static void *cache_worker(void *arg) {
    cache_job   *job = arg;
    int64_t      s1[] = {4};
    tide_tensor *ts[16];
    for (int i = 0; i < 16; i++)
        if (tide_tensor_empty(NULL, cpu0, TIDE_DTYPE_F32, 1, s1, &ts[i]) != TIDE_OK)
            return NULL;
    for (int i = 0; i < 16; i++)
        tide_tensor_release(ts[i]);
    tide_tensor_release(job->from_main);
    job->seen = tide_storage_cache_count();
    return NULL;
}

static void test_header_cache_threads(void) {
    CHECK_OK(tide_device_empty_cache(cpu0));
    int64_t   s1[] = {4};
    cache_job job = {NULL, -1};
    CHECK_OK(tide_tensor_empty(NULL, cpu0, TIDE_DTYPE_F32, 1, s1, &job.from_main));
    pthread_t th;
    CHECK(pthread_create(&th, NULL, cache_worker, &job) == 0);
    CHECK(pthread_join(th, NULL) == 0);
#if TIDE_ASAN
    CHECK(job.seen == 0);
#else
    CHECK(job.seen == 17);
#endif
    CHECK(tide_storage_cache_count() == 0); /* the main thread's stayed empty */
}

/* storages hold their context through per-thread batches of references (ctx.c): a context
 * outlives its handle while tensors made on any thread live, and goes with the last of them
 * (ASan and valgrind see a leak or a use after free) */
typedef struct ctx_job {
    tide_ctx    *ctx;
    tide_tensor *kept; /* made on the thread, released by the main thread */
} ctx_job;

static void *ctx_worker(void *arg) {
    ctx_job     *job = arg;
    int64_t      s1[] = {8};
    tide_tensor *ts[10];
    for (int i = 0; i < 10; i++)
        if (tide_tensor_empty(job->ctx, cpu0, TIDE_DTYPE_F32, 1, s1, &ts[i]) != TIDE_OK)
            return NULL;
    for (int i = 1; i < 10; i++)
        tide_tensor_release(ts[i]);
    job->kept = ts[0];
    return NULL;
}

static void test_ctx_refs_threads(void) {
    tide_ctx *c;
    CHECK_OK(tide_ctx_new(&c));
    int64_t      s1[] = {8};
    tide_tensor *mine;
    CHECK_OK(tide_tensor_empty(c, cpu0, TIDE_DTYPE_F32, 1, s1, &mine));
    ctx_job   job = {c, NULL};
    pthread_t th;
    CHECK(pthread_create(&th, NULL, ctx_worker, &job) == 0);
    CHECK(pthread_join(th, NULL) == 0);
    CHECK(job.kept != NULL);
    CHECK(tide_ctx_memory_in_use(c) == 64);
    tide_ctx_release(c); /* the handle: both tensors still hold c */
    CHECK(tide_tensor_ctx(mine) == c);
    CHECK(tide_ctx_memory_in_use(tide_tensor_ctx(job.kept)) == 64);
    tide_tensor_release(job.kept);
    CHECK(tide_ctx_memory_in_use(tide_tensor_ctx(mine)) == 32);
    tide_tensor_release(mine); /* the last reference: c is freed */
    /* many contexts on one thread: each switch gives the previous one's batch back */
    for (int i = 0; i < 3; i++) {
        tide_ctx    *ci;
        tide_tensor *ti;
        CHECK_OK(tide_ctx_new(&ci));
        CHECK_OK(tide_tensor_empty(ci, cpu0, TIDE_DTYPE_F32, 1, s1, &ti));
        tide_ctx_release(ci);
        tide_tensor_release(ti);
    }
}

/* ---- a copy still landing in a host tensor (a non-blocking to("cpu")) ---------------------- */

/* a device whose synchronize takes a while and lands the copy only then */
static float *landing;

static tide_status slow_synchronize(tide_device *dev) {
    (void)dev;
    struct timespec ts = {0, 200 * 1000 * 1000};
    nanosleep(&ts, NULL);
    *landing = 42;
    return TIDE_OK;
}

static void *read_landed(void *arg) {
    float v = *(const float *)tide_tensor_data(arg);
    return v == 42 ? arg : NULL;
}

/* two threads touch a tensor whose copy is in flight: the second, arriving while the first waits
 * for the device, must wait too, not read the memory before the copy has landed */
static void test_in_flight_threads(void) {
    tide_backend slow = *cpu1->backend;
    slow.synchronize = slow_synchronize;
    tide_device fake = *cpu1;
    fake.backend = &slow;
    int64_t      s1[] = {1};
    tide_tensor *t = NULL;
    CHECK_OK(tide_tensor_empty(NULL, cpu0, TIDE_DTYPE_F32, 1, s1, &t));
    landing = (float *)t->storage->data;
    *landing = 0;
    t->storage->in_flight = &fake;
    pthread_t       first, second;
    void           *r1 = NULL, *r2 = NULL;
    struct timespec ts = {0, 50 * 1000 * 1000};
    pthread_create(&first, NULL, read_landed, t);
    nanosleep(&ts, NULL); /* the first is inside synchronize by now */
    pthread_create(&second, NULL, read_landed, t);
    pthread_join(first, &r1);
    pthread_join(second, &r2);
    CHECK(r1 == t && r2 == t);
    tide_tensor_release(t);
}

/* each thread has its own message */
static void *thread_err(void *arg) {
    tide_device *d;
    *(int *)arg = tide_device_get("tpu", &d) == TIDE_EINVAL && strstr(tide_errmsg(), "\"tpu\"") &&
                  tide_cuda_is_available() == tide_cuda_is_available();
    return NULL;
}

static void test_threads(void) {
    tide_device *d;
    CHECK_ERR(tide_device_get("npu", &d), TIDE_EINVAL, "\"npu\"");
    pthread_t th[4];
    int       ok[4] = {0};
    for (int i = 0; i < 4; i++)
        pthread_create(&th[i], NULL, thread_err, &ok[i]);
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        CHECK(ok[i]);
    }
    CHECK(strstr(tide_errmsg(), "\"npu\"") != NULL);
}

int main(void) {
    setenv("TIDE_CPU_DEVICES", "3", 1);
    if (tide_init() != TIDE_OK || tide_device_get("cpu", &cpu0) != TIDE_OK ||
        tide_device_get("cpu:1", &cpu1) != TIDE_OK || tide_device_get("cpu:2", &cpu2) != TIDE_OK) {
        fprintf(stderr, "init: %s\n", tide_errmsg());
        printf("0 passed, 1 failed\n");
        return 1;
    }
    test_dtypes();
    test_devices();
    test_views();
    test_elements();
    test_broadcast();
    test_promotion();
    test_same_device();
    test_transfers();
    test_guard();
    test_memory_limit();
    test_overflow();
    test_from_blob();
    test_matmul();
    test_reduce();
    test_misc_ops();
    test_random();
    test_nn_shapes();
    test_lifetimes();
    test_inplace_unchanged();
    test_exact_scalars();
    test_stack();
    test_versions();
    test_relu_backward_inplace();
    test_optim_step_rows();
    test_header_cache();
    test_header_cache_threads();
    test_ctx_refs_threads();
    test_threads();
    test_in_flight_threads();
    return tu_finish();
}
