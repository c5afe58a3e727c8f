/* test_count_ops.c — nonzero, unique and repeat_interleave through include/tide.h (0-based, as
 * the C API is): values on cpu and cpu:1, the checks that come before any allocation (the
 * memory limit, overflowing repeats), and every error path releasing what it made (run under
 * ASan with leak detection by `make asan`). */
#include "test_util.h"
#include "tide.h"

#include <stdint.h>
#include <stdlib.h>

static tide_device *cpu0, *cpu1;

/* releases t and clears it: a non-NULL *out is an output tensor to write (tide_prepare_out) */
#define DROP(t) (tide_tensor_release(t), (t) = NULL)

/* an int64 tensor on dev from n values, shaped (ndim, shape) */
static tide_tensor *mk(tide_device *dev, int ndim, const int64_t *shape, const int64_t *v) {
    tide_tensor *h = NULL, *t = NULL;
    if (tide_tensor_empty(NULL, cpu0, TIDE_DTYPE_I64, ndim, shape, &h) != TIDE_OK) {
        fprintf(stderr, "mk: %s\n", tide_errmsg());
        exit(2);
    }
    int64_t n = tide_tensor_numel(h);
    for (int64_t i = 0; i < n; i++)
        ((int64_t *)tide_tensor_data(h))[i] = v[i];
    if (dev == cpu0)
        return h;
    if (tide_tensor_to(NULL, h, dev, TIDE_DTYPE_I64, 0, &t) != TIDE_OK) {
        fprintf(stderr, "mk: %s\n", tide_errmsg());
        exit(2);
    }
    tide_tensor_release(h);
    return t;
}

/* t (int64, any device) equals the n values want, in row-major order */
static int is(const tide_tensor *t, int64_t n, const int64_t *want) {
    tide_tensor *h = NULL, *c = NULL;
    if (tide_tensor_numel(t) != n || tide_tensor_dtype(t) != TIDE_DTYPE_I64)
        return 0;
    if (tide_tensor_to(NULL, t, cpu0, TIDE_DTYPE_I64, 0, &h) != TIDE_OK ||
        tide_tensor_contiguous(NULL, h, &c) != TIDE_OK)
        return 0;
    int ok = n == 0 || memcmp(tide_tensor_data(c), want, (size_t)n * sizeof *want) == 0;
    tide_tensor_release(h);
    tide_tensor_release(c);
    return ok;
}

static void test_values(tide_device *dev) {
    int64_t      s23[2] = {2, 3}, s5 = 5;
    int64_t      x[6] = {0, 4, 4, 1, 0, 4};
    tide_tensor *a = mk(dev, 2, s23, x), *r = NULL, *v = NULL, *inv = NULL, *cnt = NULL;
    CHECK_OK(tide_nonzero(NULL, a, &r));
    CHECK(r && tide_tensor_shape(r)[0] == 4 && tide_tensor_shape(r)[1] == 2);
    CHECK(r && tide_tensor_device(r) == dev);
    CHECK(r && is(r, 8, (const int64_t[]){0, 1, 0, 2, 1, 0, 1, 2}));
    DROP(r);

    CHECK_OK(tide_unique(NULL, a, TIDE_ALL_DIMS, &v, &inv, &cnt));
    CHECK(v && is(v, 3, (const int64_t[]){0, 1, 4}));
    CHECK(inv && tide_tensor_ndim(inv) == 2 && is(inv, 6, (const int64_t[]){0, 2, 2, 1, 0, 2}));
    CHECK(cnt && is(cnt, 3, (const int64_t[]){2, 1, 3}));
    DROP(v);
    DROP(inv);
    DROP(cnt);
    CHECK_OK(tide_unique(NULL, a, -1, &v, &inv, NULL)); /* columns {0,1} {4,0} {4,4} */
    CHECK(v && is(v, 6, (const int64_t[]){0, 4, 4, 1, 0, 4}));
    CHECK(inv && is(inv, 3, (const int64_t[]){0, 1, 2}));
    DROP(v);
    DROP(inv);

    tide_tensor *rep = mk(dev, 1, (const int64_t[]){2}, (const int64_t[]){1, 2}), *ix = NULL;
    CHECK_OK(tide_repeat_interleave(NULL, a, 0, rep, 0, 3, &r, &ix));
    CHECK(r && is(r, 9, (const int64_t[]){0, 4, 4, 1, 0, 4, 1, 0, 4}));
    CHECK(ix && is(ix, 3, (const int64_t[]){0, 1, 1}));
    DROP(r);
    DROP(ix);
    CHECK_OK(tide_repeat_interleave(NULL, a, TIDE_ALL_DIMS, NULL, 2, -1, &r, NULL));
    CHECK(r && tide_tensor_ndim(r) == 1 && tide_tensor_numel(r) == 12);
    DROP(r);
    tide_tensor *reps = mk(dev, 1, &s5, (const int64_t[]){2, 0, 1, 0, 3});
    CHECK_OK(tide_repeat_interleave_index(NULL, reps, -1, &r));
    CHECK(r && is(r, 6, (const int64_t[]){0, 0, 2, 4, 4, 4}));
    DROP(r);
    tide_tensor_release(reps);
    tide_tensor_release(rep);
    tide_tensor_release(a);
}

/* failures make nothing: the context's bytes in use come back to where they were */
static void test_errors(void) {
    tide_ctx    *ctx = NULL;
    int64_t      s3 = 3, s2 = 2;
    tide_tensor *a = NULL, *r = NULL;
    CHECK_OK(tide_ctx_new(&ctx));
    CHECK_OK(tide_tensor_empty(ctx, cpu0, TIDE_DTYPE_F32, 1, &s3, &a));
    size_t       before = tide_ctx_memory_in_use(ctx);
    tide_tensor *neg = mk(cpu0, 1, &s3, (const int64_t[]){1, -1, 0});
    tide_tensor *big = mk(cpu0, 1, &s3, (const int64_t[]){INT64_MAX, INT64_MAX, 0});
    tide_tensor *two = mk(cpu0, 1, &s2, (const int64_t[]){1, 1});
    tide_tensor *other = mk(cpu1, 1, &s3, (const int64_t[]){1, 1, 1});
    CHECK_ERR(tide_repeat_interleave(ctx, a, 0, neg, 0, -1, &r, NULL), TIDE_EINVAL,
              "repeats must be non-negative, got -1 at position 2");
    CHECK_ERR(tide_repeat_interleave(ctx, a, 0, NULL, -4, -1, &r, NULL), TIDE_EINVAL,
              "repeats must be non-negative, got -4");
    CHECK_ERR(tide_repeat_interleave(ctx, a, 0, big, 0, -1, &r, NULL), TIDE_EINVAL,
              "add up to more than 2^63 - 1 elements");
    CHECK_ERR(tide_repeat_interleave(ctx, a, 0, NULL, INT64_MAX / 2, -1, &r, NULL), TIDE_EINVAL,
              "add up to more than 2^63 - 1 elements");
    CHECK_ERR(tide_repeat_interleave(ctx, a, 0, two, 0, -1, &r, NULL), TIDE_ESHAPE,
              "repeats has 2 elements for dim 1 of size 3");
    CHECK_ERR(tide_repeat_interleave(ctx, a, 0, other, 0, -1, &r, NULL), TIDE_EDEVICE,
              "same device");
    CHECK_ERR(tide_repeat_interleave(ctx, a, 0, a, 0, -1, &r, NULL), TIDE_EDTYPE,
              "got a float32 tensor");
    CHECK_ERR(tide_repeat_interleave(ctx, a, 1, NULL, 2, -1, &r, NULL), TIDE_EINDEX,
              "dim 2 out of range");
    CHECK_ERR(tide_repeat_interleave(ctx, a, 0, NULL, 2, 5, &r, NULL), TIDE_ESHAPE,
              "output_size is 5 but the repeats add up to 6");
    CHECK_ERR(tide_unique(ctx, a, 3, &r, NULL, NULL), TIDE_EINDEX, "dim 4 out of range");
    CHECK_ERR(tide_repeat_interleave_index(ctx, a, -1, &r), TIDE_EDTYPE, "int64 tensor");
    /* the limit: refused before the result or its index exist */
    tide_ctx_set_memory_limit(ctx, before + 4096);
    CHECK_ERR(tide_repeat_interleave(ctx, a, 0, NULL, 1000, -1, &r, NULL), TIDE_ELIMIT,
              "tide: repeat_interleave: a result of 3000 elements and its int64 source index "
              "would take 35.2 KB, more than the 4.0 KB this process may use (what "
              "tide.memory_limit() leaves); ask for fewer repeats, or raise the limit with "
              "tide.set_memory_limit");
    CHECK_OK(tide_repeat_interleave(ctx, a, 0, NULL, 100, -1, &r, NULL));
    DROP(r);
    tide_ctx_set_memory_limit(ctx, 0);
    /* no limit: the machine's memory is the budget */
    CHECK_ERR(tide_repeat_interleave(ctx, a, 0, NULL, (int64_t)1 << 52, -1, &r, NULL), TIDE_ELIMIT,
              "this process may use (the machine's memory); ask for fewer repeats");
    CHECK(r == NULL);
    CHECK(tide_ctx_memory_in_use(ctx) == before);
    tide_tensor *all[] = {neg, big, two, other, a};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        tide_tensor_release(all[i]);
    tide_ctx_release(ctx);
}

/* empty and 0-d inputs */
static void test_edges(void) {
    int64_t      s0 = 0, s30[2] = {3, 0};
    tide_tensor *e = NULL, *z = NULL, *s = NULL, *r = NULL, *inv = NULL, *cnt = NULL;
    CHECK_OK(tide_tensor_empty(NULL, cpu0, TIDE_DTYPE_F64, 1, &s0, &e));
    CHECK_OK(tide_tensor_empty(NULL, cpu0, TIDE_DTYPE_F64, 2, s30, &z));
    CHECK_OK(tide_tensor_full(NULL, cpu0, TIDE_DTYPE_I32, 0, NULL, tide_scalar_i(3), &s));
    CHECK_OK(tide_nonzero(NULL, e, &r));
    CHECK(r && tide_tensor_shape(r)[0] == 0 && tide_tensor_shape(r)[1] == 1);
    DROP(r);
    CHECK_OK(tide_nonzero(NULL, s, &r));
    CHECK(r && tide_tensor_shape(r)[0] == 1 && tide_tensor_shape(r)[1] == 0);
    DROP(r);
    CHECK_OK(tide_unique(NULL, e, TIDE_ALL_DIMS, &r, &inv, &cnt));
    CHECK(r && tide_tensor_numel(r) == 0 && tide_tensor_numel(inv) == 0 &&
          tide_tensor_numel(cnt) == 0);
    DROP(r);
    DROP(inv);
    DROP(cnt);
    CHECK_OK(tide_unique(NULL, z, 0, &r, NULL, &cnt)); /* three empty rows: one */
    CHECK(r && tide_tensor_shape(r)[0] == 1 && is(cnt, 1, (const int64_t[]){3}));
    DROP(r);
    DROP(cnt);
    CHECK_OK(tide_unique(NULL, s, TIDE_ALL_DIMS, &r, &inv, NULL));
    CHECK(r && tide_tensor_numel(r) == 1 && tide_tensor_ndim(inv) == 0);
    DROP(r);
    DROP(inv);
    CHECK_OK(tide_repeat_interleave(NULL, s, TIDE_ALL_DIMS, NULL, 3, -1, &r, NULL));
    CHECK(r && tide_tensor_numel(r) == 3);
    DROP(r);
    CHECK_ERR(tide_repeat_interleave(NULL, s, 0, NULL, 3, -1, &r, NULL), TIDE_EINDEX, "0-d tensor");
    CHECK_OK(tide_repeat_interleave(NULL, z, 1, NULL, 1000000, -1, &r, NULL));
    CHECK(r && tide_tensor_shape(r)[0] == 3 && tide_tensor_shape(r)[1] == 0);
    DROP(r);
    tide_tensor_release(e);
    tide_tensor_release(z);
    tide_tensor_release(s);
}

int main(void) {
    setenv("TIDE_CPU_DEVICES", "2", 1);
    if (tide_init() != TIDE_OK || tide_device_get("cpu", &cpu0) != TIDE_OK ||
        tide_device_get("cpu:1", &cpu1) != TIDE_OK) {
        fprintf(stderr, "init: %s\n", tide_errmsg());
        printf("0 passed, 1 failed\n");
        return 1;
    }
    test_values(cpu0);
    test_values(cpu1);
    test_errors();
    test_edges();
    return tu_finish();
}
