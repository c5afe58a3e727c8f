/*
 * test_cpu_kernels.c — drives the CPU backend's vtable directly with hand-built views and checks
 * hand-computed values: contiguous, broadcast (stride 0), transposed and non-contiguous inputs,
 * every kernel family. Prints "N passed, N failed" last; exits non-zero on a failure.
 */
#include "backend.h"
#include "cpu/cpu.h"
#include "cpu/vec_math.h"
#include "sanitizer.h"
#include "scalar_math.h"
#include <omp.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int passed, failed;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (cond) {                                                                                \
            passed++;                                                                              \
        } else {                                                                                   \
            failed++;                                                                              \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                                            \
            printf(__VA_ARGS__);                                                                   \
            printf("\n");                                                                          \
        }                                                                                          \
    } while (0)

#define CHECK_OK(expr) CHECK((expr) == TIDE_OK, "%s -> %s", #expr, tide_errmsg())

static const tide_backend *B = &tide_cpu_backend;
static tide_device         dev0 = {TIDE_DEVICE_CPU, 0, "cpu", &tide_cpu_backend, NULL};
static tide_device         dev1 = {TIDE_DEVICE_CPU, 1, "cpu:1", &tide_cpu_backend, NULL};

/* a view; strides NULL means contiguous */
static tide_kview kv(void *data, tide_dtype dt, int ndim, const int64_t *shape,
                     const int64_t *strides) {
    tide_kview v;
    memset(&v, 0, sizeof v);
    v.data = data;
    v.dtype = dt;
    v.ndim = ndim;
    int64_t st = 1;
    for (int d = ndim - 1; d >= 0; d--) {
        v.shape[d] = shape[d];
        v.strides[d] = strides ? strides[d] : st;
        st *= shape[d];
    }
    return v;
}

static int close_f(double a, double b, double tol) {
    if (isnan(a) || isnan(b))
        return isnan(a) && isnan(b);
    return fabs(a - b) <= tol * (1 + fabs(b));
}

static int all_close_f(const float *a, const float *b, int64_t n, double tol) {
    for (int64_t i = 0; i < n; i++)
        if (!close_f(a[i], b[i], tol)) {
            printf("  at %lld: %g vs %g\n", (long long)i, a[i], b[i]);
            return 0;
        }
    return 1;
}

/* ---- iterator ----------------------------------------------------------------------------- */

/* writes each element's row-major position into it */
static void write_index(char **p, const int64_t *s, int64_t n, int64_t index, void *arg) {
    (void)arg;
    for (int64_t i = 0; i < n; i++)
        *(double *)(p[0] + i * s[0]) = (double)(index + i);
}

static void test_iter(void) {
    /* a permuted [3, 5, 7] view of a [7, 3, 5] buffer: dims 0 and 1 merge, dim 2 cannot */
    double            buf[105];
    int64_t           sh[3] = {3, 5, 7}, st[3] = {5, 1, 15};
    tide_kview        v = kv(buf, TIDE_DTYPE_F64, 3, sh, st);
    const tide_kview *vs[1] = {&v};
    cpu_iter          it;
    CHECK_OK(cpu_iter_init(&it, "test", 1, vs));
    CHECK(it.ndim == 2 && it.shape[0] == 15 && it.strides[0][0] == 8 && it.numel == 105,
          "coalescing of a permutation (ndim %d)", it.ndim);
    omp_set_num_threads(2);
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < 105; i++)
            buf[i] = -1;
        /* pass 1: a grain of 10 splits the rows between threads, mid-row */
        cpu_iter_run(&it, pass ? 10 : 0, write_index, NULL);
        int ok = 1;
        for (int64_t a = 0; a < 3; a++)
            for (int64_t b = 0; b < 5; b++)
                for (int64_t c = 0; c < 7; c++)
                    ok &= buf[a * 5 + b + c * 15] == (double)((a * 5 + b) * 7 + c);
        CHECK(ok, "every element visited once with its row-major index (pass %d)", pass);
    }
    /* a contiguous view and a transposed one: dims merge only where strides allow */
    int64_t    sh2[3] = {2, 3, 4}, st2[3] = {12, 1, 3};
    tide_kview c = kv(buf, TIDE_DTYPE_F64, 3, sh2, NULL), t = kv(buf, TIDE_DTYPE_F64, 3, sh2, st2);
    const tide_kview *vc[2] = {&c, &c}, *vt[2] = {&c, &t};
    CHECK_OK(cpu_iter_init(&it, "test", 2, vc));
    CHECK(it.ndim == 1 && it.shape[0] == 24 && it.strides[1][0] == 8, "contiguous is one row");
    CHECK_OK(cpu_iter_init(&it, "test", 2, vt));
    CHECK(it.ndim == 3, "transposed inner dims do not merge");
    /* size-1 dims vanish; a broadcast dim keeps its zero stride */
    int64_t    sh3[3] = {4, 1, 6}, st3[3] = {0, 0, 1};
    tide_kview o3 = kv(buf, TIDE_DTYPE_F64, 3, sh3, NULL),
               b3 = kv(buf, TIDE_DTYPE_F64, 3, sh3, st3);
    const tide_kview *v3[2] = {&o3, &b3};
    CHECK_OK(cpu_iter_init(&it, "test", 2, v3));
    CHECK(it.ndim == 2 && it.strides[1][0] == 0 && it.strides[0][0] == 48, "broadcast dim kept");
}

/* ---- memory ------------------------------------------------------------------------------- */

static void test_alloc(void) {
    tide_memory_stats s0, s1, s;
    CHECK_OK(B->empty_cache(&dev0));
    CHECK_OK(B->memory_stats(&dev0, &s0));
    CHECK_OK(B->memory_stats(&dev1, &s1));
    void *p = NULL, *q = NULL;
    CHECK_OK(B->alloc(&dev0, 1000, &p));
    CHECK(p && ((uintptr_t)p % 64) == 0, "64-byte alignment, got %p", p);
    memset(p, 1, 1000);
    CHECK_OK(B->memory_stats(&dev0, &s));
    CHECK(s.allocated == s0.allocated + 1000, "allocated +1000: %zu -> %zu", s0.allocated,
          s.allocated);
    CHECK(s.reserved >= s.allocated && s.reserved <= s0.reserved + 1280,
          "reserved rounds up by at most 25%%: %zu", s.reserved);
    CHECK(s.peak >= s.allocated, "peak %zu >= allocated %zu", s.peak, s.allocated);
    B->free(&dev0, p, 1000);
    CHECK_OK(B->memory_stats(&dev0, &s));
    CHECK(s.allocated == s0.allocated, "allocated back to %zu, got %zu", s0.allocated, s.allocated);
    CHECK(s.reserved > s.allocated, "freed block stays cached (reserved %zu)", s.reserved);
    /* same size class: the cached block comes back */
    CHECK_OK(B->alloc(&dev0, 1010, &q));
    CHECK(q == p, "cached block reused (%p vs %p)", q, p);
    B->free(&dev0, q, 1010);
    /* the other virtual device's counters did not move */
    CHECK_OK(B->memory_stats(&dev1, &s));
    CHECK(s.allocated == s1.allocated && s.reserved == s1.reserved, "cpu:1 counters unchanged");
    CHECK_OK(B->empty_cache(&dev0));
    CHECK_OK(B->memory_stats(&dev0, &s));
    CHECK(s.reserved == s0.reserved, "empty_cache returns cached blocks: %zu vs %zu", s.reserved,
          s0.reserved);
    /* zero bytes still gives a usable distinct pointer */
    CHECK_OK(B->alloc(&dev1, 0, &p));
    CHECK(p != NULL, "alloc(0) non-NULL");
    B->free(&dev1, p, 0);
    /* an impossible size fails with ENOMEM and a message, no abort */
    CHECK(B->alloc(&dev0, (size_t)1 << 62, &p) == TIDE_ENOMEM, "huge alloc fails");
    CHECK(strstr(tide_errmsg(), "tide: cpu alloc:") != NULL, "message: %s", tide_errmsg());
    /* large blocks (1 MB and more): freed memory serves other sizes, split and merged */
    const size_t MB = (size_t)1 << 20;
    void        *l1 = NULL, *l2 = NULL, *l3 = NULL, *l4 = NULL;
    CHECK_OK(B->empty_cache(&dev0));
    CHECK_OK(B->memory_stats(&dev0, &s0));
    CHECK_OK(B->alloc(&dev0, 2 * MB + 100, &l1));
    CHECK_OK(B->alloc(&dev0, 3 * MB, &l2));
    CHECK(l1 && l2 && ((uintptr_t)l1 % 4096) == 0 && ((uintptr_t)l2 % 4096) == 0,
          "page-aligned large blocks: %p %p", l1, l2);
    memset(l1, 1, 2 * MB + 100);
    memset(l2, 2, 3 * MB);
    CHECK_OK(B->memory_stats(&dev0, &s));
    CHECK(s.allocated == s0.allocated + 5 * MB + 100, "large blocks counted: %zu", s.allocated);
    size_t reserved_large = s.reserved;
    B->free(&dev0, l1, 2 * MB + 100);
    B->free(&dev0, l2, 3 * MB);
    CHECK_OK(B->memory_stats(&dev0, &s));
    CHECK(s.allocated == s0.allocated && s.reserved == reserved_large,
          "freed large blocks stay mapped: reserved %zu, %zu before", s.reserved, reserved_large);
    /* the two freed neighbours merged: a 5 MB request fits where they were */
    CHECK_OK(B->alloc(&dev0, 5 * MB, &l3));
    CHECK(l3 == l1, "merged blocks reused from the start (%p vs %p)", l3, l1);
    CHECK_OK(B->memory_stats(&dev0, &s));
    CHECK(s.reserved == reserved_large, "no new segment for the merged space: %zu", s.reserved);
    B->free(&dev0, l3, 5 * MB);
    /* a smaller request splits a free block: the next one follows it */
    CHECK_OK(B->alloc(&dev0, 2 * MB, &l3));
    CHECK_OK(B->alloc(&dev0, 2 * MB, &l4));
    CHECK(l3 == l1 && (char *)l4 == (char *)l1 + 2 * MB, "split: %p then %p", l3, l4);
    memset(l4, 3, 2 * MB);
    B->free(&dev0, l3, 2 * MB);
    B->free(&dev0, l4, 2 * MB);
    /* a block larger than a segment's least size gets a segment of its own */
    CHECK_OK(B->alloc(&dev0, 40 * MB, &l4));
    CHECK_OK(B->memory_stats(&dev0, &s));
    CHECK(s.reserved >= reserved_large + 40 * MB, "a segment for 40 MB: reserved %zu", s.reserved);
    B->free(&dev0, l4, 40 * MB);
    CHECK_OK(B->empty_cache(&dev0));
    CHECK_OK(B->memory_stats(&dev0, &s));
    CHECK(s.reserved == s0.reserved, "empty_cache unmaps free segments: %zu vs %zu", s.reserved,
          s0.reserved);
    /* copies: memcpy both ways and between virtual devices */
    float a[4] = {1, 2, 3, 4}, b[4] = {0}, c[4] = {0};
    CHECK_OK(B->copy_from_host(&dev1, b, a, sizeof a, 0));
    CHECK_OK(B->copy_peer(&dev0, c, &dev1, b, sizeof b));
    CHECK(c[3] == 4 && c[0] == 1, "copy_peer");
    CHECK_OK(B->synchronize(&dev1));
    CHECK(B->alloc_pinned == NULL && B->free_pinned == NULL, "no pinned memory on the CPU");
}

/* under ASan the allocator gives every buffer its own exact-size block, freed at once
 * (TIDE_EXACT_ALLOC, src/cpu/alloc.c): nothing is cached, so ASan sees a read past its end */
static void test_exact_alloc(void) {
    tide_memory_stats s0, s;
    CHECK_OK(B->memory_stats(&dev0, &s0));
    void *p = NULL;
    CHECK_OK(B->alloc(&dev0, 1000, &p));
    CHECK(p && ((uintptr_t)p % 64) == 0, "64-byte alignment, got %p", p);
    memset(p, 1, 1000);
    CHECK_OK(B->memory_stats(&dev0, &s));
    CHECK(s.allocated == s0.allocated + 1000 && s.reserved == s0.reserved + 1000,
          "exactly 1000 bytes: allocated %zu, reserved %zu", s.allocated, s.reserved);
    B->free(&dev0, p, 1000);
    CHECK_OK(B->memory_stats(&dev0, &s));
    CHECK(s.allocated == s0.allocated && s.reserved == s0.reserved, "freed at once: %zu",
          s.reserved);
}

/* ---- binary ------------------------------------------------------------------------------- */

static void test_binary_f32(void) {
    int64_t    sh[2] = {2, 3};
    float      a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {10, 20, 30, 40, 50, 60}, o[6];
    tide_kview vo = kv(o, TIDE_DTYPE_F32, 2, sh, NULL), va = kv(a, TIDE_DTYPE_F32, 2, sh, NULL),
               vb = kv(b, TIDE_DTYPE_F32, 2, sh, NULL);
    CHECK_OK(B->binary(&dev0, TIDE_OP_ADD, &vo, &va, &vb));
    float e1[6] = {11, 22, 33, 44, 55, 66};
    CHECK(all_close_f(o, e1, 6, 0), "contiguous add");
    /* broadcast: row [3] expanded to [2, 3] with stride 0 on dim 0 */
    int64_t    bst[2] = {0, 1};
    tide_kview vr = kv(b, TIDE_DTYPE_F32, 2, sh, bst);
    CHECK_OK(B->binary(&dev0, TIDE_OP_SUB, &vo, &va, &vr));
    float e2[6] = {-9, -18, -27, -6, -15, -24};
    CHECK(all_close_f(o, e2, 6, 0), "broadcast row sub");
    /* broadcast column [2, 1] -> [2, 3] (stride 0 on dim 1) on the left */
    int64_t    cst[2] = {1, 0};
    tide_kview vc = kv(b, TIDE_DTYPE_F32, 2, sh, cst);
    CHECK_OK(B->binary(&dev0, TIDE_OP_MUL, &vo, &vc, &va));
    float e3[6] = {10, 20, 30, 80, 100, 120};
    CHECK(all_close_f(o, e3, 6, 0), "broadcast column mul");
    /* transposed: a holds a [3, 2] matrix, viewed as [2, 3] with strides {1, 2} */
    int64_t    tst[2] = {1, 2};
    tide_kview vt = kv(a, TIDE_DTYPE_F32, 2, sh, tst);
    CHECK_OK(B->binary(&dev0, TIDE_OP_DIV, &vo, &vt, &vb));
    float e4[6] = {1.f / 10, 3.f / 20, 5.f / 30, 2.f / 40, 4.f / 50, 6.f / 60};
    CHECK(all_close_f(o, e4, 6, 1e-6), "transposed div");
    /* non-contiguous output: every other element of a 12-float buffer */
    float   big[12];
    int64_t ost[2] = {6, 2};
    for (int i = 0; i < 12; i++)
        big[i] = -1;
    tide_kview vbig = kv(big, TIDE_DTYPE_F32, 2, sh, ost);
    CHECK_OK(B->binary(&dev0, TIDE_OP_MAXIMUM, &vbig, &va, &vt));
    /* a = [[1,2,3],[4,5,6]], t = [[1,3,5],[2,4,6]] */
    CHECK(big[0] == 1 && big[2] == 3 && big[4] == 5 && big[6] == 4 && big[8] == 5 && big[10] == 6 &&
              big[1] == -1 && big[11] == -1,
          "strided output maximum");
    /* Lua semantics of % and // on floats, pow, NaN in maximum/minimum */
    int64_t    n5[1] = {5};
    float      x[5] = {-7, 7, 7.5f, 2, NAN}, y[5] = {3, -3, 2, 10, 1}, r[5];
    tide_kview vx = kv(x, TIDE_DTYPE_F32, 1, n5, NULL), vy = kv(y, TIDE_DTYPE_F32, 1, n5, NULL),
               vr5 = kv(r, TIDE_DTYPE_F32, 1, n5, NULL);
    CHECK_OK(B->binary(&dev0, TIDE_OP_REMAINDER, &vr5, &vx, &vy));
    CHECK(r[0] == 2 && r[1] == -2 && r[2] == 1.5f && r[3] == 2,
          "remainder takes the divisor's sign: %g %g", r[0], r[1]);
    CHECK_OK(B->binary(&dev0, TIDE_OP_FMOD, &vr5, &vx, &vy));
    CHECK(r[0] == -1 && r[1] == 1 && r[2] == 1.5f && r[3] == 2,
          "fmod takes the dividend's sign: %g %g", r[0], r[1]);
    CHECK_OK(B->binary(&dev0, TIDE_OP_FLOORDIV, &vr5, &vx, &vy));
    CHECK(r[0] == -3 && r[1] == -3 && r[2] == 3 && r[3] == 0, "floor_divide %g %g %g", r[0], r[1],
          r[2]);
    CHECK_OK(B->binary(&dev0, TIDE_OP_POW, &vr5, &vy, &vx));
    CHECK(close_f(r[0], 1.0 / 2187, 1e-6) && close_f(r[3], 100, 1e-6), "pow %g %g", r[0], r[3]);
    CHECK_OK(B->binary(&dev0, TIDE_OP_MINIMUM, &vr5, &vx, &vy));
    CHECK(r[0] == -7 && r[1] == -3 && isnan(r[4]), "minimum propagates NaN");
    /* float64 too */
    double     d1[3] = {1.5, 2.5, -1}, d2[3] = {2, 2, 2}, d3[3];
    int64_t    n3[1] = {3};
    tide_kview vd1 = kv(d1, TIDE_DTYPE_F64, 1, n3, NULL), vd2 = kv(d2, TIDE_DTYPE_F64, 1, n3, NULL),
               vd3 = kv(d3, TIDE_DTYPE_F64, 1, n3, NULL);
    CHECK_OK(B->binary(&dev0, TIDE_OP_MUL, &vd3, &vd1, &vd2));
    CHECK(d3[0] == 3 && d3[1] == 5 && d3[2] == -2, "f64 mul");
}

static void test_binary_int(void) {
    int64_t    n[1] = {8};
    int64_t    a[8] = {-7, 7, 7, INT64_MIN, 5, 3, 2, -7};
    int64_t    b[8] = {2, -2, 0, -1, 0, 4, -1, 3}, o[8];
    tide_kview vo = kv(o, TIDE_DTYPE_I64, 1, n, NULL), va = kv(a, TIDE_DTYPE_I64, 1, n, NULL),
               vb = kv(b, TIDE_DTYPE_I64, 1, n, NULL);
    /* the shared definitions (CUDA runs them too): wrap, never trap; 0 for a zero divisor */
    CHECK(tide_floordiv_i64(INT64_MIN, -1) == INT64_MIN && tide_remainder_i64(INT64_MIN, -1) == 0 &&
              tide_fmod_i64(INT64_MIN, -1) == 0 && tide_floordiv_i32(INT32_MIN, -1) == INT32_MIN &&
              tide_fmod_i32(INT32_MIN, -1) == 0 && tide_floordiv_i64(5, 0) == 0 &&
              tide_remainder_i64(5, 0) == 0 && tide_fmod_u8(5, 0) == 0,
          "integer division edge cases");
    CHECK(tide_floordiv_i64(-7, 2) == -4 && tide_remainder_i64(-7, 2) == 1 &&
              tide_fmod_i64(-7, 2) == -1 && tide_remainder_i32(7, -2) == -1 &&
              tide_fmod_i32(7, -2) == 1,
          "floor and truncated signs");
    /* a zero divisor raises before anything is written */
    for (int i = 0; i < 8; i++)
        o[i] = 99;
    CHECK(B->binary(&dev0, TIDE_OP_FLOORDIV, &vo, &va, &vb) == TIDE_EINVAL &&
              strstr(tide_errmsg(), "floor_divide: integer division by zero") && o[0] == 99,
          "int floor_divide by zero: %s", tide_errmsg());
    CHECK(B->binary(&dev0, TIDE_OP_REMAINDER, &vo, &va, &vb) == TIDE_EINVAL && o[7] == 99,
          "int remainder by zero");
    CHECK(B->binary(&dev0, TIDE_OP_FMOD, &vo, &va, &vb) == TIDE_EINVAL && o[3] == 99,
          "int fmod by zero");
    int64_t    nz[8] = {2, -2, 5, -1, 5, 4, -1, 3};
    tide_kview vnz = kv(nz, TIDE_DTYPE_I64, 1, n, NULL);
    CHECK_OK(B->binary(&dev0, TIDE_OP_FLOORDIV, &vo, &va, &vnz));
    CHECK(o[0] == -4 && o[1] == -4 && o[2] == 1 && o[3] == INT64_MIN && o[4] == 1 && o[5] == 0 &&
              o[6] == -2 && o[7] == -3,
          "int floor_divide: %lld %lld %lld %lld", (long long)o[0], (long long)o[1],
          (long long)o[2], (long long)o[3]);
    CHECK_OK(B->binary(&dev0, TIDE_OP_REMAINDER, &vo, &va, &vnz));
    CHECK(o[0] == 1 && o[1] == -1 && o[2] == 2 && o[3] == 0 && o[5] == 3 && o[6] == 0 && o[7] == 2,
          "int remainder: %lld %lld %lld", (long long)o[0], (long long)o[1], (long long)o[7]);
    CHECK_OK(B->binary(&dev0, TIDE_OP_FMOD, &vo, &va, &vnz));
    CHECK(o[0] == -1 && o[1] == 1 && o[3] == 0 && o[5] == 3 && o[6] == 0 && o[7] == -1,
          "int fmod: %lld %lld %lld", (long long)o[0], (long long)o[1], (long long)o[7]);
    /* float-only rows (tide_ops.def DTYPES FLOAT) have no integer kernel: the core promotes
     * first, and the backend refuses rather than compute a value */
    o[0] = 77;
    CHECK(B->binary(&dev0, TIDE_OP_DIV, &vo, &va, &vb) == TIDE_ENOTSUP &&
              strstr(tide_errmsg(), "div: int64 is not supported on the CPU") && o[0] == 77,
          "int div refused: %s", tide_errmsg());
    /* integer pow: exact, wrapping; an exponent tensor holding a negative gives 0 there (1 and
     * +-1 for bases 1 and -1), PyTorch's values */
    CHECK_OK(B->binary(&dev0, TIDE_OP_POW, &vo, &va, &vnz));
    CHECK(o[0] == 49 && o[1] == 0 && o[2] == 16807 && o[3] == 0 && o[4] == 3125 && o[5] == 81 &&
              o[6] == 0 && o[7] == -343,
          "int pow with negative exponents: %lld %lld %lld", (long long)o[0], (long long)o[1],
          (long long)o[6]);
    CHECK(tide_pow_i64(3, 41) == INT64_C(-420491770248316829), "3 ^ 41 wraps as PyTorch's");
    CHECK(tide_pow_i64(-2, 3) == -8 && tide_pow_i64(7, 0) == 1 &&
              tide_pow_i32(2, 31) == INT32_MIN && tide_pow_u8(3, 5) == 243 &&
              tide_pow_u8(2, 9) == 0 && tide_pow_i64(-1, -3) == -1 && tide_pow_i64(1, -5) == 1 &&
              tide_pow_i64(2, -1) == 0 && tide_pow_b(0, 0) == 1 && tide_pow_b(0, 1) == 0,
          "int pow edge cases");
    CHECK_OK(B->binary(&dev0, TIDE_OP_SUB, &vo, &va, &vb));
    CHECK(o[3] == INT64_MIN + 1 && o[0] == -9, "int sub");
    /* int32 wraps instead of trapping */
    int32_t    i1[2] = {INT32_MAX, INT32_MIN}, i2[2] = {1, -1}, i3[2];
    int64_t    n2[1] = {2};
    tide_kview v1 = kv(i1, TIDE_DTYPE_I32, 1, n2, NULL), v2 = kv(i2, TIDE_DTYPE_I32, 1, n2, NULL),
               v3 = kv(i3, TIDE_DTYPE_I32, 1, n2, NULL);
    CHECK_OK(B->binary(&dev0, TIDE_OP_ADD, &v3, &v1, &v2));
    CHECK(i3[0] == INT32_MIN && i3[1] == INT32_MAX, "int32 add wraps");
    CHECK_OK(B->binary(&dev0, TIDE_OP_FLOORDIV, &v3, &v1, &v2));
    CHECK(i3[0] == INT32_MAX && i3[1] == INT32_MIN, "int32 MIN // -1 == MIN");
    /* uint8 and bool */
    uint8_t    u1[3] = {1, 200, 9}, u2[3] = {2, 100, 0}, u3[3];
    int64_t    n3[1] = {3};
    tide_kview w1 = kv(u1, TIDE_DTYPE_U8, 1, n3, NULL), w2 = kv(u2, TIDE_DTYPE_U8, 1, n3, NULL),
               w3 = kv(u3, TIDE_DTYPE_U8, 1, n3, NULL);
    CHECK_OK(B->binary(&dev0, TIDE_OP_SUB, &w3, &w1, &w2));
    CHECK(u3[0] == 255 && u3[1] == 100 && u3[2] == 9, "uint8 sub wraps");
    CHECK_OK(B->binary(&dev0, TIDE_OP_ADD, &w3, &w1, &w2));
    CHECK(u3[1] == 44, "uint8 add wraps: %d", u3[1]);
    u3[0] = 77;
    CHECK(B->binary(&dev0, TIDE_OP_REMAINDER, &w3, &w1, &w2) == TIDE_EINVAL && u3[0] == 77,
          "uint8 remainder by zero raises");
    u2[2] = 4;
    CHECK_OK(B->binary(&dev0, TIDE_OP_REMAINDER, &w3, &w1, &w2));
    CHECK(u3[0] == 1 && u3[1] == 0 && u3[2] == 1, "uint8 remainder");
    uint8_t    bl1[3] = {1, 1, 0}, bl2[3] = {1, 0, 0}, bl3[3];
    tide_kview x1 = kv(bl1, TIDE_DTYPE_BOOL, 1, n3, NULL),
               x2 = kv(bl2, TIDE_DTYPE_BOOL, 1, n3, NULL),
               x3 = kv(bl3, TIDE_DTYPE_BOOL, 1, n3, NULL);
    CHECK_OK(B->binary(&dev0, TIDE_OP_ADD, &x3, &x1, &x2));
    CHECK(bl3[0] == 1 && bl3[1] == 1 && bl3[2] == 0, "bool add is or, stays 0/1");
}

static void test_compare_scalar(void) {
    int64_t    n[1] = {4};
    float      a[4] = {1, 2, 3, NAN}, b[4] = {2, 2, 2, 2};
    uint8_t    o[4];
    tide_kview vo = kv(o, TIDE_DTYPE_BOOL, 1, n, NULL), va = kv(a, TIDE_DTYPE_F32, 1, n, NULL),
               vb = kv(b, TIDE_DTYPE_F32, 1, n, NULL);
    CHECK_OK(B->binary(&dev0, TIDE_OP_LT, &vo, &va, &vb));
    CHECK(o[0] == 1 && o[1] == 0 && o[2] == 0 && o[3] == 0, "lt -> bool");
    CHECK_OK(B->binary(&dev0, TIDE_OP_GE, &vo, &va, &vb));
    CHECK(o[0] == 0 && o[1] == 1 && o[2] == 1 && o[3] == 0, "ge -> bool");
    CHECK_OK(B->binary_scalar(&dev0, TIDE_OP_NE, &vo, &va, 2.0, 0));
    CHECK(o[0] == 1 && o[1] == 0 && o[3] == 1, "ne scalar, NaN != 2");
    float      r[4];
    tide_kview vr = kv(r, TIDE_DTYPE_F32, 1, n, NULL);
    CHECK_OK(B->binary_scalar(&dev0, TIDE_OP_SUB, &vr, &va, 1.0, 0));
    CHECK(r[0] == 0 && r[2] == 2, "a - 1");
    CHECK_OK(B->binary_scalar(&dev0, TIDE_OP_SUB, &vr, &va, 1.0, 1));
    CHECK(r[0] == 0 && r[2] == -2, "1 - a (reverse)");
    CHECK_OK(B->binary_scalar(&dev0, TIDE_OP_DIV, &vr, &va, 2.0, 1));
    CHECK(r[0] == 2 && r[1] == 1, "2 / a");
    CHECK_OK(B->binary_scalar(&dev0, TIDE_OP_POW, &vr, &va, 2.0, 0));
    CHECK(r[2] == 9, "a ^ 2");
    int64_t    ia[4] = {5, -5, 6, 0}, io[4];
    tide_kview via = kv(ia, TIDE_DTYPE_I64, 1, n, NULL), vio = kv(io, TIDE_DTYPE_I64, 1, n, NULL);
    CHECK_OK(B->binary_scalar(&dev0, TIDE_OP_FLOORDIV, &vio, &via, 2, 0));
    CHECK(io[0] == 2 && io[1] == -3 && io[2] == 3, "int // 2");
    CHECK(B->binary_scalar(&dev0, TIDE_OP_REMAINDER, &vio, &via, 0, 1) == TIDE_EINVAL,
          "0 %% int with a zero divisor raises");
    ia[3] = 4;
    CHECK_OK(B->binary_scalar(&dev0, TIDE_OP_REMAINDER, &vio, &via, 0, 1));
    CHECK(io[0] == 0 && io[3] == 0, "0 %% int");
    /* an expanded scalar-like operand (all strides 0) on the left */
    int64_t    sh[2] = {2, 2}, z[2] = {0, 0};
    float      one = 10, m[4] = {1, 2, 3, 4}, mo[4];
    tide_kview vone = kv(&one, TIDE_DTYPE_F32, 2, sh, z), vm = kv(m, TIDE_DTYPE_F32, 2, sh, NULL),
               vmo = kv(mo, TIDE_DTYPE_F32, 2, sh, NULL);
    CHECK_OK(B->binary(&dev0, TIDE_OP_SUB, &vmo, &vone, &vm));
    CHECK(mo[0] == 9 && mo[3] == 6, "scalar-left sub");
}

/* ---- unary -------------------------------------------------------------------------------- */

static void test_unary(void) {
    int64_t    n[1] = {4};
    float      a[4] = {-2, -0.5f, 0, 3}, o[4];
    tide_kview vo = kv(o, TIDE_DTYPE_F32, 1, n, NULL), va = kv(a, TIDE_DTYPE_F32, 1, n, NULL);
    CHECK_OK(B->unary(&dev0, TIDE_OP_RELU, &vo, &va, NULL));
    CHECK(o[0] == 0 && o[1] == 0 && o[3] == 3, "relu");
    CHECK_OK(B->unary(&dev0, TIDE_OP_SIGMOID, &vo, &va, NULL));
    CHECK(close_f(o[2], 0.5, 1e-7) && close_f(o[0], 1 / (1 + exp(2.0)), 1e-6), "sigmoid");
    CHECK_OK(B->unary(&dev0, TIDE_OP_EXP, &vo, &va, NULL));
    CHECK(close_f(o[3], exp(3.0), 1e-6), "exp");
    CHECK_OK(B->unary(&dev0, TIDE_OP_GELU, &vo, &va, NULL));
    CHECK(close_f(o[3], 3 * 0.5 * (1 + erf(3 / sqrt(2.0))), 1e-6), "gelu");
    double lohi[2] = {-1, 1};
    CHECK_OK(B->unary(&dev0, TIDE_OP_CLAMP, &vo, &va, lohi));
    CHECK(o[0] == -1 && o[1] == -0.5f && o[3] == 1, "clamp");
    double lo_only[2] = {0, INFINITY};
    CHECK_OK(B->unary(&dev0, TIDE_OP_CLAMP, &vo, &va, lo_only));
    CHECK(o[0] == 0 && o[3] == 3, "clamp min only");
    CHECK_OK(B->unary(&dev0, TIDE_OP_SIGN, &vo, &va, NULL));
    CHECK(o[0] == -1 && o[2] == 0 && o[3] == 1, "sign");
    /* in place on a strided view: negate column 1 of a [2, 2] */
    float      m[4] = {1, 2, 3, 4};
    int64_t    c[1] = {2}, cs[1] = {2};
    tide_kview col = kv(m + 1, TIDE_DTYPE_F32, 1, c, cs);
    CHECK_OK(B->unary(&dev0, TIDE_OP_NEG, &col, &col, NULL));
    CHECK(m[0] == 1 && m[1] == -2 && m[2] == 3 && m[3] == -4, "in-place strided neg");
    int64_t    ia[4] = {-3, INT64_MIN, 0, 9}, io[4];
    tide_kview via = kv(ia, TIDE_DTYPE_I64, 1, n, NULL), vio = kv(io, TIDE_DTYPE_I64, 1, n, NULL);
    CHECK_OK(B->unary(&dev0, TIDE_OP_ABS, &vio, &via, NULL));
    CHECK(io[0] == 3 && io[1] == INT64_MIN && io[3] == 9, "int abs (MIN wraps)");
    double ib[2] = {0.5, 2.5};
    CHECK_OK(B->unary(&dev0, TIDE_OP_CLAMP, &vio, &via, ib));
    CHECK(io[0] == 1 && io[2] == 1 && io[3] == 2, "int clamp rounds bounds inwards");
    CHECK(B->unary(&dev0, TIDE_OP_SQRT, &vio, &via, NULL) == TIDE_ENOTSUP &&
              strstr(tide_errmsg(), "sqrt: int64 is not supported on the CPU"),
          "int sqrt refused: %s", tide_errmsg());
    double     d[2] = {1e-3, -40}, dout[2];
    int64_t    n2[1] = {2};
    tide_kview vd = kv(d, TIDE_DTYPE_F64, 1, n2, NULL), vdo = kv(dout, TIDE_DTYPE_F64, 1, n2, NULL);
    CHECK_OK(B->unary(&dev0, TIDE_OP_TANH, &vdo, &vd, NULL));
    CHECK(close_f(dout[0], tanh(1e-3), 1e-15) && dout[1] == -1, "f64 tanh");
    CHECK_OK(B->unary(&dev0, TIDE_OP_RSQRT, &vdo, &vd, NULL));
    CHECK(close_f(dout[0], 1 / sqrt(1e-3), 1e-15) && isnan(dout[1]), "f64 rsqrt");
    /* a large exp runs on several threads; each element must match the float32 row's math
     * (vec_math.h's exp, which test_vec_math checks against libm) */
    int64_t big = 2 * CPU_PAR_GRAIN_HEAVY + 1000; /* threaded */
    float  *bx = malloc(sizeof(float) * (size_t)big), *by = malloc(sizeof(float) * (size_t)big);
    for (int64_t q = 0; q < big; q++)
        bx[q] = (float)(q % 200) / 20.0f - 5.0f;
    tide_kview vbx = kv(bx, TIDE_DTYPE_F32, 1, &big, NULL),
               vby = kv(by, TIDE_DTYPE_F32, 1, &big, NULL);
    CHECK_OK(B->unary(&dev0, TIDE_OP_EXP, &vby, &vbx, NULL));
    int ok = 1;
    for (int64_t q = 0; q < big; q++)
        ok &= by[q] == cpu_vexpf(bx[q]);
    CHECK(ok, "threaded exp matches cpu_vexpf everywhere");
    free(bx);
    free(by);
}

/* ---- copy / fill -------------------------------------------------------------------------- */

static void test_copy_fill(void) {
    int64_t    n[1] = {5};
    float      f[5] = {3.7f, -3.7f, NAN, 1e20f, -1e20f};
    int32_t    i[5];
    tide_kview vf = kv(f, TIDE_DTYPE_F32, 1, n, NULL), vi = kv(i, TIDE_DTYPE_I32, 1, n, NULL);
    CHECK_OK(B->copy(&dev0, &vi, &vf));
    CHECK(i[0] == 3 && i[1] == -3 && i[2] == 0 && i[3] == INT32_MAX && i[4] == INT32_MIN,
          "float -> int32 truncates and saturates: %d %d %d %d", i[0], i[1], i[2], i[3]);
    uint8_t    u[5] = {0, 1, 2, 255, 7}, bl[5];
    tide_kview vu = kv(u, TIDE_DTYPE_U8, 1, n, NULL), vb = kv(bl, TIDE_DTYPE_BOOL, 1, n, NULL);
    CHECK_OK(B->copy(&dev0, &vb, &vu));
    CHECK(bl[0] == 0 && bl[1] == 1 && bl[2] == 1 && bl[3] == 1, "uint8 -> bool normalises");
    int64_t    l[5] = {1, -2, (int64_t)1 << 40, 0, 5};
    double     d[5];
    tide_kview vl = kv(l, TIDE_DTYPE_I64, 1, n, NULL), vd = kv(d, TIDE_DTYPE_F64, 1, n, NULL);
    CHECK_OK(B->copy(&dev0, &vd, &vl));
    CHECK(d[1] == -2 && d[2] == 1099511627776.0, "int64 -> float64");
    /* float16 / bfloat16 conversions */
    float      hs[6] = {1.0f, -2.5f, 65504.0f, 70000.0f, 5.9604645e-8f, 0.1f}, back[6];
    uint16_t   h[6];
    int64_t    n6[1] = {6};
    tide_kview vhs = kv(hs, TIDE_DTYPE_F32, 1, n6, NULL), vh = kv(h, TIDE_DTYPE_F16, 1, n6, NULL),
               vback = kv(back, TIDE_DTYPE_F32, 1, n6, NULL);
    CHECK_OK(B->copy(&dev0, &vh, &vhs));
    CHECK(h[0] == 0x3c00 && h[1] == 0xc100 && h[2] == 0x7bff && h[3] == 0x7c00 && h[4] == 0x0001 &&
              h[5] == 0x2e66,
          "float16 bits: %04x %04x %04x %04x %04x %04x", h[0], h[1], h[2], h[3], h[4], h[5]);
    CHECK_OK(B->copy(&dev0, &vback, &vh));
    CHECK(back[0] == 1 && back[1] == -2.5f && back[2] == 65504 && isinf(back[3]) &&
              back[4] == 5.9604645e-8f && close_f(back[5], 0.1, 1e-3),
          "float16 round trip");
    uint16_t   bf[6];
    tide_kview vbf = kv(bf, TIDE_DTYPE_BF16, 1, n6, NULL);
    CHECK_OK(B->copy(&dev0, &vbf, &vhs));
    CHECK(bf[0] == 0x3f80 && bf[1] == 0xc020, "bfloat16 bits %04x %04x", bf[0], bf[1]);
    /* transposed source into a contiguous destination (what contiguous() does) */
    float      m[6] = {1, 2, 3, 4, 5, 6}, t[6];
    int64_t    sh[2] = {3, 2}, st[2] = {1, 3};
    tide_kview vm = kv(m, TIDE_DTYPE_F32, 2, sh, st), vt = kv(t, TIDE_DTYPE_F32, 2, sh, NULL);
    CHECK_OK(B->copy(&dev0, &vt, &vm));
    float e[6] = {1, 4, 2, 5, 3, 6};
    CHECK(all_close_f(t, e, 6, 0), "transposed copy");
    /* broadcast source (stride 0) with conversion */
    int64_t    one = 7, z[2] = {0, 0};
    tide_kview vone = kv(&one, TIDE_DTYPE_I64, 2, sh, z);
    CHECK_OK(B->copy(&dev0, &vt, &vone));
    CHECK(t[0] == 7 && t[5] == 7, "broadcast copy with conversion");
    /* fill: a strided column, then int and bool */
    float      g[6] = {0};
    int64_t    c[1] = {3}, cs[1] = {2};
    tide_kview col = kv(g + 1, TIDE_DTYPE_F32, 1, c, cs);
    CHECK_OK(B->fill(&dev0, &col, 2.5));
    CHECK(g[0] == 0 && g[1] == 2.5f && g[3] == 2.5f && g[5] == 2.5f && g[4] == 0, "strided fill");
    int64_t    gl[3];
    tide_kview vgl = kv(gl, TIDE_DTYPE_I64, 1, c, NULL);
    CHECK_OK(B->fill(&dev0, &vgl, -3));
    CHECK(gl[0] == -3 && gl[2] == -3, "int64 fill");
    CHECK_OK(B->fill(&dev0, &vgl, 0));
    CHECK(gl[0] == 0 && gl[2] == 0, "zero fill");
    uint8_t    gb[3];
    tide_kview vgb = kv(gb, TIDE_DTYPE_BOOL, 1, c, NULL);
    CHECK_OK(B->fill(&dev0, &vgb, 5));
    CHECK(gb[0] == 1 && gb[2] == 1, "bool fill normalises");
    /* a large contiguous copy takes the threaded path and stays exact */
    int64_t big = 300000;
    float  *src = malloc(sizeof(float) * (size_t)big);
    double *dst = malloc(sizeof(double) * (size_t)big);
    for (int64_t k = 0; k < big; k++)
        src[k] = (float)k;
    tide_kview vs = kv(src, TIDE_DTYPE_F32, 1, &big, NULL),
               vdd = kv(dst, TIDE_DTYPE_F64, 1, &big, NULL);
    CHECK_OK(B->copy(&dev0, &vdd, &vs));
    int ok = 1;
    for (int64_t k = 0; k < big; k++)
        ok &= dst[k] == (double)k;
    CHECK(ok, "large threaded copy");
    free(src);
    free(dst);
}

/* ---- reduce ------------------------------------------------------------------------------- */

static void test_reduce(void) {
    int64_t    sh[2] = {2, 3};
    float      a[6] = {1, 5, 3, 4, 2, 6};
    tide_kview va = kv(a, TIDE_DTYPE_F32, 2, sh, NULL);
    float      r2[2];
    int64_t    i2[2], s21[2] = {2, 1};
    tide_kview vr = kv(r2, TIDE_DTYPE_F32, 2, s21, NULL), vi = kv(i2, TIDE_DTYPE_I64, 2, s21, NULL);
    CHECK_OK(B->reduce(&dev0, TIDE_OP_SUM, &vr, NULL, &va, 1));
    CHECK(r2[0] == 9 && r2[1] == 12, "row sums");
    CHECK_OK(B->reduce(&dev0, TIDE_OP_MAX, &vr, &vi, &va, 1));
    CHECK(r2[0] == 5 && r2[1] == 6 && i2[0] == 1 && i2[1] == 2, "row max with indices");
    CHECK_OK(B->reduce(&dev0, TIDE_OP_ARGMIN, NULL, &vi, &va, 1));
    CHECK(i2[0] == 0 && i2[1] == 1, "argmin");
    CHECK_OK(B->reduce(&dev0, TIDE_OP_MEAN, &vr, NULL, &va, 1));
    CHECK(r2[0] == 3 && r2[1] == 4, "mean");
    CHECK_OK(B->reduce(&dev0, TIDE_OP_PROD, &vr, NULL, &va, 1));
    CHECK(r2[0] == 15 && r2[1] == 48, "prod");
    /* over dim 0 */
    float      r3[3];
    int64_t    i3[3], s13[2] = {1, 3};
    tide_kview vr3 = kv(r3, TIDE_DTYPE_F32, 2, s13, NULL),
               vi3 = kv(i3, TIDE_DTYPE_I64, 2, s13, NULL);
    CHECK_OK(B->reduce(&dev0, TIDE_OP_SUM, &vr3, NULL, &va, 0));
    CHECK(r3[0] == 5 && r3[1] == 7 && r3[2] == 9, "column sums");
    CHECK_OK(B->reduce(&dev0, TIDE_OP_ARGMAX, NULL, &vi3, &va, 0));
    CHECK(i3[0] == 1 && i3[1] == 0 && i3[2] == 1, "argmax over dim 0");
    /* transposed input: rows of the transpose are the columns */
    int64_t    sht[2] = {3, 2}, stt[2] = {1, 3}, s31[2] = {3, 1};
    tide_kview vt = kv(a, TIDE_DTYPE_F32, 2, sht, stt), vr31 = kv(r3, TIDE_DTYPE_F32, 2, s31, NULL);
    CHECK_OK(B->reduce(&dev0, TIDE_OP_MIN, &vr31, NULL, &vt, 1));
    CHECK(r3[0] == 1 && r3[1] == 2 && r3[2] == 3, "min over a transposed view");
    /* ties: the first extreme wins; NaN wins max */
    float      tie[4] = {2, 7, 7, 1}, nanr[4] = {1, NAN, 9, NAN};
    int64_t    s14[2] = {1, 4}, s11[2] = {1, 1};
    float      rv;
    int64_t    ri;
    tide_kview vtie = kv(tie, TIDE_DTYPE_F32, 2, s14, NULL),
               vnan = kv(nanr, TIDE_DTYPE_F32, 2, s14, NULL),
               vrv = kv(&rv, TIDE_DTYPE_F32, 2, s11, NULL),
               vri = kv(&ri, TIDE_DTYPE_I64, 2, s11, NULL);
    CHECK_OK(B->reduce(&dev0, TIDE_OP_MAX, &vrv, &vri, &vtie, 1));
    CHECK(rv == 7 && ri == 1, "first max wins: %lld", (long long)ri);
    CHECK_OK(B->reduce(&dev0, TIDE_OP_MAX, &vrv, &vri, &vnan, 1));
    CHECK(isnan(rv) && ri == 1, "NaN is the max, first NaN index");
    /* integer sum into int64; int32 max stays int32 */
    int32_t    ia[6] = {INT32_MAX, INT32_MAX, 2, -1, -2, -3};
    int64_t    isum[2];
    tide_kview via = kv(ia, TIDE_DTYPE_I32, 2, sh, NULL),
               visum = kv(isum, TIDE_DTYPE_I64, 2, s21, NULL);
    CHECK_OK(B->reduce(&dev0, TIDE_OP_SUM, &visum, NULL, &via, 1));
    CHECK(isum[0] == 2 * (int64_t)INT32_MAX + 2 && isum[1] == -6, "int32 sum in int64");
    int32_t    imax[2];
    tide_kview vimax = kv(imax, TIDE_DTYPE_I32, 2, s21, NULL);
    CHECK_OK(B->reduce(&dev0, TIDE_OP_MAX, &vimax, NULL, &via, 1));
    CHECK(imax[0] == INT32_MAX && imax[1] == -1, "int32 max");
    /* a bigger column sum (the accumulator-block path) against a naive loop, 3-d, middle dim */
    int64_t shb[3] = {3, 50, 700}, sho[3] = {3, 1, 700};
    float  *x = malloc(sizeof(float) * 3 * 50 * 700), *y = malloc(sizeof(float) * 3 * 700);
    for (int k = 0; k < 3 * 50 * 700; k++)
        x[k] = (float)((k * 37) % 101) / 7.0f;
    tide_kview vx = kv(x, TIDE_DTYPE_F32, 3, shb, NULL), vy = kv(y, TIDE_DTYPE_F32, 3, sho, NULL);
    CHECK_OK(B->reduce(&dev0, TIDE_OP_MEAN, &vy, NULL, &vx, 1));
    int ok = 1;
    for (int b0 = 0; b0 < 3; b0++)
        for (int j = 0; j < 700; j++) {
            double s = 0;
            for (int k = 0; k < 50; k++)
                s += x[(b0 * 50 + k) * 700 + j];
            ok &= close_f(y[b0 * 700 + j], s / 50, 1e-6);
        }
    CHECK(ok, "middle-dim mean matches a naive loop");
    free(x);
    free(y);
    /* a full reduction arrives as dim 0 of a 1-d view; large enough for threads */
    int64_t nb = 1000000, one = 1;
    float  *big = malloc(sizeof(float) * (size_t)nb);
    for (int64_t k = 0; k < nb; k++)
        big[k] = (float)(k % 10);
    float      total;
    tide_kview vbig = kv(big, TIDE_DTYPE_F32, 1, &nb, NULL),
               vtot = kv(&total, TIDE_DTYPE_F32, 1, &one, NULL);
    CHECK_OK(B->reduce(&dev0, TIDE_OP_SUM, &vtot, NULL, &vbig, 0));
    CHECK(total == 4500000.0f, "sum of 1e6 elements exact: %f", total);
    free(big);
    /* empty dim: sum is 0, max is an error */
    int64_t    s0[1] = {0};
    tide_kview vemp = kv(a, TIDE_DTYPE_F32, 1, s0, NULL);
    CHECK_OK(B->reduce(&dev0, TIDE_OP_SUM, &vtot, NULL, &vemp, 0));
    CHECK(total == 0, "empty sum is 0");
    CHECK(B->reduce(&dev0, TIDE_OP_MAX, &vtot, NULL, &vemp, 0) == TIDE_EINVAL, "empty max fails");
    CHECK(strstr(tide_errmsg(), "tide: max:") != NULL, "message: %s", tide_errmsg());
}

/* ---- matmul ------------------------------------------------------------------------------- */

/* out[b] = a[b] @ bm[b] by the definition, any strides */
static void naive_mm(const float *a, const int64_t *as, const float *bm, const int64_t *bs,
                     float *out, int64_t Bn, int64_t M, int64_t K, int64_t N) {
    for (int64_t b = 0; b < Bn; b++)
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) {
                double s = 0;
                for (int64_t k = 0; k < K; k++)
                    s += (double)a[b * as[0] + i * as[1] + k * as[2]] *
                         bm[b * bs[0] + k * bs[1] + j * bs[2]];
                out[(b * M + i) * N + j] = (float)s;
            }
}

static void fill_pattern(float *p, int64_t n, int seed) {
    for (int64_t i = 0; i < n; i++)
        p[i] = (float)(((i * 7 + seed * 13) % 17) - 8) / 4.0f;
}

static void mm_case(const char *what, int64_t Bn, int64_t M, int64_t K, int64_t N,
                    const int64_t *as, const int64_t *bs, int64_t alen, int64_t blen) {
    float *a = malloc(sizeof(float) * (size_t)alen), *b = malloc(sizeof(float) * (size_t)blen);
    float *o = malloc(sizeof(float) * (size_t)(Bn * M * N)),
          *e = malloc(sizeof(float) * (size_t)(Bn * M * N));
    fill_pattern(a, alen, 1);
    fill_pattern(b, blen, 2);
    for (int64_t i = 0; i < Bn * M * N; i++) /* gemm's beta = 0 must not read the output */
        o[i] = NAN;
    int64_t    ash[3] = {Bn, M, K}, bsh[3] = {Bn, K, N}, osh[3] = {Bn, M, N};
    tide_kview va = kv(a, TIDE_DTYPE_F32, 3, ash, as), vb = kv(b, TIDE_DTYPE_F32, 3, bsh, bs),
               vo = kv(o, TIDE_DTYPE_F32, 3, osh, NULL);
    CHECK_OK(B->matmul(&dev0, &vo, &va, &vb));
    naive_mm(a, as, b, bs, e, Bn, M, K, N);
    CHECK(all_close_f(o, e, Bn * M * N, 1e-5), "matmul %s", what);
    free(a);
    free(b);
    free(o);
    free(e);
}

static void test_matmul(void) {
    /* contiguous [2, 3, 4] @ [2, 4, 5] */
    int64_t ac[3] = {12, 4, 1}, bc[3] = {20, 5, 1};
    mm_case("contiguous batched", 2, 3, 4, 5, ac, bc, 24, 40);
    /* a transposed (stored [B, K, M]) and b transposed (stored [B, N, K]): no copies */
    int64_t at[3] = {12, 1, 3}, bt[3] = {20, 1, 4};
    mm_case("transposed a and b", 2, 3, 4, 5, at, bt, 24, 40);
    /* b broadcast over the batch (stride 0) */
    int64_t b0[3] = {0, 5, 1};
    mm_case("batch-broadcast b", 3, 3, 4, 5, (int64_t[3]){12, 4, 1}, b0, 36, 20);
    /* non-unit strides in both dims: every other element -> packed copy */
    int64_t as2[3] = {24, 8, 2};
    mm_case("strided a (copy path)", 2, 3, 4, 5, as2, bc, 48, 40);
    /* a row vector and a column: M = 1, N = 1 */
    mm_case("1 x K @ K x 1", 1, 1, 6, 1, (int64_t[3]){6, 6, 1}, (int64_t[3]){6, 1, 1}, 6, 6);
    /* larger, odd sizes through BLAS */
    mm_case("65 x 33 @ 33 x 17", 1, 65, 33, 17, (int64_t[3]){0, 33, 1}, (int64_t[3]){0, 17, 1},
            65 * 33, 33 * 17);
    /* products of at least 2^19 multiply-adds go to oneDNN where it is built in: every layout,
     * and a batch with b broadcast (the values are multiples of 1/16: exact in any order) */
    enum { LM = 100, LK = 90, LN = 70 };
    int64_t lac[3] = {LM * LK, LK, 1}, lat[3] = {LM * LK, 1, LM};
    int64_t lbc[3] = {LK * LN, LN, 1}, lbt[3] = {LK * LN, 1, LK}, lb0[3] = {0, LN, 1};
    mm_case("large a @ b", 1, LM, LK, LN, lac, lbc, LM * LK, LK * LN);
    mm_case("large a^T @ b", 1, LM, LK, LN, lat, lbc, LM * LK, LK * LN);
    mm_case("large a @ b^T", 1, LM, LK, LN, lac, lbt, LM * LK, LK * LN);
    mm_case("large a^T @ b^T", 1, LM, LK, LN, lat, lbt, LM * LK, LK * LN);
    mm_case("large batched, b broadcast", 3, LM, LK, LN, lac, lb0, 3 * LM * LK, LK * LN);
    /* float64 and int64 */
    double     da[4] = {1, 2, 3, 4}, db[4] = {5, 6, 7, 8}, dout[4];
    int64_t    s122[3] = {1, 2, 2};
    tide_kview vda = kv(da, TIDE_DTYPE_F64, 3, s122, NULL),
               vdb = kv(db, TIDE_DTYPE_F64, 3, s122, NULL),
               vdo = kv(dout, TIDE_DTYPE_F64, 3, s122, NULL);
    CHECK_OK(B->matmul(&dev0, &vdo, &vda, &vdb));
    CHECK(dout[0] == 19 && dout[1] == 22 && dout[2] == 43 && dout[3] == 50, "dgemm");
    int64_t    la[4] = {1, 2, 3, 4}, lb[4] = {5, 6, 7, 8}, lo[4];
    tide_kview vla = kv(la, TIDE_DTYPE_I64, 3, s122, NULL),
               vlb = kv(lb, TIDE_DTYPE_I64, 3, s122, NULL),
               vlo = kv(lo, TIDE_DTYPE_I64, 3, s122, NULL);
    CHECK_OK(B->matmul(&dev0, &vlo, &vla, &vlb));
    CHECK(lo[0] == 19 && lo[1] == 22 && lo[2] == 43 && lo[3] == 50, "int64 matmul");
    /* K = 0 gives zeros */
    float      fo[4] = {9, 9, 9, 9};
    int64_t    ak[3] = {1, 2, 0}, bk[3] = {1, 0, 2};
    tide_kview vak = kv(da, TIDE_DTYPE_F32, 3, ak, NULL), vbk = kv(db, TIDE_DTYPE_F32, 3, bk, NULL),
               vfo = kv(fo, TIDE_DTYPE_F32, 3, s122, NULL);
    CHECK_OK(B->matmul(&dev0, &vfo, &vak, &vbk));
    CHECK(fo[0] == 0 && fo[3] == 0, "K = 0 gives zeros");
}

/* ---- softmax / index / where -------------------------------------------------------------- */

/* the kernel row softmax (or softmax_backward: two inputs) on contiguous views, as the core's
 * dispatch calls it: each row's lines [len, inner] with d = len * inner */
static tide_status run_softmax_row(tide_kernel k, tide_kview *out, tide_kview *a, tide_kview *g,
                                   int64_t rows, int64_t d, int64_t inner, int log) {
    tide_kernel_call c = {.kernel = k, .dtype = a->dtype, .rows = rows, .d = d};
    c.in[0] = a, c.in[1] = g, c.out[0] = out;
    c.p[0].i = d, c.p[1].i = inner, c.p[2].i = log;
    return B->kernels[k](&dev0, &c);
}

static void test_softmax(void) {
    int64_t    sh[2] = {2, 3};
    float      a[6] = {1, 2, 3, 1000, 1001, 1002}, o[6];
    tide_kview va = kv(a, TIDE_DTYPE_F32, 2, sh, NULL), vo = kv(o, TIDE_DTYPE_F32, 2, sh, NULL);
    CHECK_OK(run_softmax_row(TIDE_K_SOFTMAX, &vo, &va, NULL, 2, 3, 1, 0));
    double z = exp(-2.0) + exp(-1.0) + 1;
    float  e[6] = {(float)(exp(-2.0) / z), (float)(exp(-1.0) / z), (float)(1 / z),
                   (float)(exp(-2.0) / z), (float)(exp(-1.0) / z), (float)(1 / z)};
    CHECK(all_close_f(o, e, 6, 1e-6), "softmax rows, stable at 1000");
    CHECK_OK(run_softmax_row(TIDE_K_SOFTMAX, &vo, &va, NULL, 2, 3, 1, 1));
    CHECK(close_f(o[2], -log(z), 1e-6) && close_f(o[3], -2 - log(z), 1e-6), "log_softmax");
    /* over the first dim of the transpose [3, 2]: one row of 3 lines 2 apart */
    float      at[6] = {1, 1000, 2, 1001, 3, 1002};
    tide_kview vt = kv(at, TIDE_DTYPE_F32, 2, (int64_t[]){3, 2}, NULL);
    tide_kview vot = kv(o, TIDE_DTYPE_F32, 2, (int64_t[]){3, 2}, NULL);
    CHECK_OK(run_softmax_row(TIDE_K_SOFTMAX, &vot, &vt, NULL, 1, 6, 2, 0));
    CHECK(close_f(o[0], e[0], 1e-6) && close_f(o[4], e[2], 1e-6) && close_f(o[5], e[5], 1e-6),
          "softmax over the lines of inner 2");
    CHECK(run_softmax_row(TIDE_K_SOFTMAX, &vot, &vt, NULL, 1, 6, 4, 0) == TIDE_EINVAL &&
              strstr(tide_errmsg(), "softmax: inner 4 does not divide the row's 6") != NULL,
          "inner not dividing d: %s", tide_errmsg());
    /* float64, with -inf (a masked entry) giving exactly 0 */
    double     d[3] = {0, -INFINITY, log(3.0)}, dout[3];
    int64_t    n3[1] = {3};
    tide_kview vd = kv(d, TIDE_DTYPE_F64, 1, n3, NULL), vdo = kv(dout, TIDE_DTYPE_F64, 1, n3, NULL);
    CHECK_OK(run_softmax_row(TIDE_K_SOFTMAX, &vdo, &vd, NULL, 1, 3, 1, 0));
    CHECK(close_f(dout[0], 0.25, 1e-15) && dout[1] == 0 && close_f(dout[2], 0.75, 1e-15),
          "f64 softmax with -inf: %g %g %g", dout[0], dout[1], dout[2]);
    CHECK_OK(run_softmax_row(TIDE_K_SOFTMAX, &vdo, &vd, NULL, 1, 3, 1, 1));
    CHECK(close_f(dout[0], log(0.25), 1e-15) && isinf(dout[1]) && dout[1] < 0,
          "f64 log_softmax with -inf");
    /* the gradient from softmax's y = {0.25, 0, 0.75} and g = {1, 2, 3}: y (g - sum(g y)) */
    double     g[3] = {1, 2, 3}, dx[3];
    tide_kview vg = kv(g, TIDE_DTYPE_F64, 1, n3, NULL), vdx = kv(dx, TIDE_DTYPE_F64, 1, n3, NULL);
    double     y[3] = {0.25, 0, 0.75};
    tide_kview vy = kv(y, TIDE_DTYPE_F64, 1, n3, NULL);
    CHECK_OK(run_softmax_row(TIDE_K_SOFTMAX_BACKWARD, &vdx, &vy, &vg, 1, 3, 1, 0));
    CHECK(close_f(dx[0], 0.25 * (1 - 2.5), 1e-15) && dx[1] == 0 &&
              close_f(dx[2], 0.75 * (3 - 2.5), 1e-15),
          "softmax_backward: %g %g %g", dx[0], dx[1], dx[2]);
}

static void test_index_where(void) {
    int64_t    sh[2] = {3, 2};
    float      a[6] = {1, 2, 3, 4, 5, 6};
    int64_t    idx[4] = {2, 0, 2, 1}, n4[1] = {4};
    tide_kview va = kv(a, TIDE_DTYPE_F32, 2, sh, NULL), vi = kv(idx, TIDE_DTYPE_I64, 1, n4, NULL);
    float      o[8];
    int64_t    osh[2] = {4, 2};
    tide_kview vo = kv(o, TIDE_DTYPE_F32, 2, osh, NULL);
    CHECK_OK(B->index_select(&dev0, &vo, &va, 0, &vi));
    float e[8] = {5, 6, 1, 2, 5, 6, 3, 4};
    CHECK(all_close_f(o, e, 8, 0), "index_select rows (embedding lookup)");
    int64_t    idx2[3] = {1, 1, 0}, n3[1] = {3}, o2sh[2] = {3, 3};
    float      o2[9];
    tide_kview vi2 = kv(idx2, TIDE_DTYPE_I64, 1, n3, NULL),
               vo2 = kv(o2, TIDE_DTYPE_F32, 2, o2sh, NULL);
    CHECK_OK(B->index_select(&dev0, &vo2, &va, 1, &vi2));
    float e2[9] = {2, 2, 1, 4, 4, 3, 6, 6, 5};
    CHECK(all_close_f(o2, e2, 9, 0), "index_select columns");
    /* index_add: duplicates accumulate */
    float      dst[6] = {0};
    tide_kview vd = kv(dst, TIDE_DTYPE_F32, 2, sh, NULL);
    CHECK_OK(B->index_add(&dev0, &vd, 0, &vi, &vo));
    float e3[6] = {1, 2, 3, 4, 10, 12};
    CHECK(all_close_f(dst, e3, 6, 0), "index_add accumulates duplicates");
    /* out of range: an error and nothing written */
    int64_t    bad[2] = {0, 3}, n2[1] = {2};
    tide_kview vbad = kv(bad, TIDE_DTYPE_I64, 1, n2, NULL);
    float      src2[4] = {100, 100, 100, 100};
    int64_t    s22[2] = {2, 2};
    tide_kview vs2 = kv(src2, TIDE_DTYPE_F32, 2, s22, NULL);
    CHECK(B->index_add(&dev0, &vd, 0, &vbad, &vs2) == TIDE_EINDEX, "index out of range");
    CHECK(dst[0] == 1, "failed index_add changed nothing");
    /* where with a broadcast condition column */
    uint8_t    cond[3] = {1, 0, 1};
    int64_t    cst[2] = {1, 0};
    float      b[6] = {-1, -2, -3, -4, -5, -6}, w[6];
    tide_kview vc = kv(cond, TIDE_DTYPE_BOOL, 2, sh, cst), vb = kv(b, TIDE_DTYPE_F32, 2, sh, NULL),
               vw = kv(w, TIDE_DTYPE_F32, 2, sh, NULL);
    CHECK_OK(B->where(&dev0, &vw, &vc, &va, &vb));
    float e4[6] = {1, 2, -3, -4, 5, 6};
    CHECK(all_close_f(w, e4, 6, 0), "where");
    int64_t    la[6] = {1, 2, 3, 4, 5, 6}, lb = -7, lw[6], z2[2] = {0, 0};
    tide_kview vla = kv(la, TIDE_DTYPE_I64, 2, sh, NULL), vlb = kv(&lb, TIDE_DTYPE_I64, 2, sh, z2),
               vlw = kv(lw, TIDE_DTYPE_I64, 2, sh, NULL);
    CHECK_OK(B->where(&dev0, &vlw, &vc, &vla, &vlb));
    CHECK(lw[0] == 1 && lw[2] == -7 && lw[3] == -7 && lw[5] == 6, "where int64, scalar b");
}

/* ---- random / arange ---------------------------------------------------------------------- */

static void test_random(void) {
    /* two threads' worth: counters must not depend on the split */
    int64_t    n = 2 * CPU_PAR_GRAIN_HEAVY + 1000;
    float     *x = malloc(sizeof(float) * (size_t)n);
    tide_kview vx = kv(x, TIDE_DTYPE_F32, 1, &n, NULL);
    CHECK_OK(B->random(&dev0, &vx, TIDE_RANDOM_UNIFORM, -1, 3, 42, 7));
    int    ok = 1;
    double sum = 0;
    for (int64_t i = 0; i < n; i++) {
        ok &= x[i] >= -1 && x[i] < 3;
        ok &= x[i] == (float)(-1 + 4 * tide_rng_uniform(42, 7 + (uint64_t)i));
        sum += x[i];
    }
    CHECK(ok, "uniform: element i from counter offset + i, in [lo, hi)");
    /* every word of random bits maps into the open interval (0, 1), and seed 0 draws no zero */
    CHECK(tide_rng_unit(0) > 0 && tide_rng_unit(~0ULL) < 1 && tide_rng_unit(~0ULL) > 0.999,
          "unit: %.17g .. %.17g", tide_rng_unit(0), tide_rng_unit(~0ULL));
    CHECK(tide_rng_bits(0, 0) != 0 && fabs(tide_rng_normal(0, 0)) < 8.6, "seed 0: %g",
          tide_rng_normal(0, 0));
    CHECK(tide_rng_in_range_d(1, 2, tide_rng_unit(~0ULL)) < 2 &&
              tide_rng_in_range_f(0, 1, tide_rng_unit(~0ULL)) < 1,
          "uniform ranges stay below hi after rounding");
    CHECK(fabs(sum / n - 1) < 0.02, "uniform mean %f", sum / n);
    CHECK_OK(B->random(&dev0, &vx, TIDE_RANDOM_NORMAL, 2, 0.5, 1, 0));
    double s1 = 0, s2 = 0;
    for (int64_t i = 0; i < n; i++) {
        s1 += x[i];
        s2 += (x[i] - 2.0) * (x[i] - 2.0);
    }
    CHECK(fabs(s1 / n - 2) < 0.01 && fabs(sqrt(s2 / n) - 0.5) < 0.01, "normal mean %f std %f",
          s1 / n, sqrt(s2 / n));
    CHECK(x[5] == (float)(2 + 0.5 * tide_rng_normal(1, 5)), "normal element 5");
    /* a transposed (non-contiguous) out gets numbers in its own row-major order */
    double     m[6];
    int64_t    sh[2] = {2, 3}, st[2] = {1, 2};
    tide_kview vm = kv(m, TIDE_DTYPE_F64, 2, sh, st);
    CHECK_OK(B->random(&dev0, &vm, TIDE_RANDOM_UNIFORM, 0, 1, 9, 100));
    CHECK(m[0] == tide_rng_uniform(9, 100) && m[2] == tide_rng_uniform(9, 101) &&
              m[1] == tide_rng_uniform(9, 103),
          "row-major counters on a transposed out");
    free(x);
    float      r[5];
    int64_t    n5 = 5;
    tide_kview vr = kv(r, TIDE_DTYPE_F32, 1, &n5, NULL);
    CHECK_OK(B->arange(&dev0, &vr, 1, 0.5));
    CHECK(r[0] == 1 && r[4] == 3, "arange float");
    int64_t    l[5];
    tide_kview vl = kv(l, TIDE_DTYPE_I64, 1, &n5, NULL);
    CHECK_OK(B->arange(&dev0, &vl, 10, -3));
    CHECK(l[0] == 10 && l[4] == -2, "arange int64 negative step");
}

/* ---- im2col / col2im / pooling ------------------------------------------------------------ */

/* the WINDOW rows (include/tide_kernels.def) through the CPU's kernel table, called as the
 * dispatch calls them: the views already checked, the window in the parameters */
static tide_status window_row(tide_kernel k, const tide_kview *in0, const tide_kview *in1,
                              const tide_kview *out0, const tide_kview *out1, tide_pool_geom g) {
    tide_kernel_call c;
    memset(&c, 0, sizeof c);
    c.kernel = k;
    c.dtype = in0->dtype;
    c.in[0] = in0, c.in[1] = in1, c.out[0] = out0, c.out[1] = out1;
    int v[9] = {g.kh, g.kw, g.sh, g.sw, g.ph, g.pw, g.dh, g.dw, g.ceil_mode};
    for (int i = 0; i < 9; i++)
        c.p[i].i = v[i];
    return B->kernels[k](&dev0, &c);
}
static tide_status im2col_row(const tide_kview *cols, const tide_kview *x, tide_conv_geom g) {
    tide_pool_geom w = {g.kh, g.kw, g.sh, g.sw, g.ph, g.pw, g.dh, g.dw, 0};
    return window_row(TIDE_K_UNFOLD2D, x, NULL, cols, NULL, w);
}
static tide_status col2im_row(const tide_kview *out, const tide_kview *cols, tide_conv_geom g) {
    tide_pool_geom w = {g.kh, g.kw, g.sh, g.sw, g.ph, g.pw, g.dh, g.dw, 0};
    return window_row(TIDE_K_FOLD2D, cols, NULL, out, NULL, w);
}
static tide_status maxpool_row(const tide_kview *out, const tide_kview *indices,
                               const tide_kview *x, tide_pool_geom g) {
    return window_row(TIDE_K_MAX_POOL2D, x, NULL, out, indices, g);
}
static tide_status maxpool_backward_row(const tide_kview *grad_in, const tide_kview *grad_out,
                                        const tide_kview *indices) {
    tide_pool_geom hw = {(int)grad_in->shape[2], (int)grad_in->shape[3], 0, 0, 0, 0, 0, 0, 0};
    return window_row(TIDE_K_MAX_POOL2D_BACKWARD, grad_out, indices, grad_in, NULL, hw);
}

static void test_im2col(void) {
    /* 1 x 1 x 3 x 3, kernel 2, stride 1: 4 rows (kernel positions) x 4 columns */
    float          x[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9}, c[16];
    int64_t        xs[4] = {1, 1, 3, 3}, cs[3] = {1, 4, 4};
    tide_conv_geom g = {2, 2, 1, 1, 0, 0, 1, 1};
    tide_kview     vx = kv(x, TIDE_DTYPE_F32, 4, xs, NULL), vc = kv(c, TIDE_DTYPE_F32, 3, cs, NULL);
    CHECK_OK(im2col_row(&vc, &vx, g));
    float e[16] = {1, 2, 4, 5, 2, 3, 5, 6, 4, 5, 7, 8, 5, 6, 8, 9};
    CHECK(all_close_f(c, e, 16, 0), "im2col 3x3 k2");
    /* col2im sums overlaps: all-ones columns count how many windows cover each pixel */
    float ones[16], back[9];
    for (int i = 0; i < 16; i++)
        ones[i] = 1;
    tide_kview vones = kv(ones, TIDE_DTYPE_F32, 3, cs, NULL),
               vback = kv(back, TIDE_DTYPE_F32, 4, xs, NULL);
    CHECK_OK(col2im_row(&vback, &vones, g));
    float e2[9] = {1, 2, 1, 2, 4, 2, 1, 2, 1};
    CHECK(all_close_f(back, e2, 9, 0), "col2im coverage counts");
    /* padding 1, stride 2 on 2 x 3 x 5 x 4: <im2col(x), y> == <x, col2im(y)> */
    tide_conv_geom g2 = {3, 2, 2, 2, 1, 1, 1, 1};
    int64_t        N = 2, C = 3, H = 5, W = 4;
    int64_t        OH = (H + 2 - 3) / 2 + 1, OW = (W + 2 - 2) / 2 + 1, L = OH * OW, R = C * 6;
    int64_t        xs2[4] = {N, C, H, W}, cs2[3] = {N, R, L};
    double        *X = malloc(sizeof(double) * (size_t)(N * C * H * W));
    double        *Y = malloc(sizeof(double) * (size_t)(N * R * L));
    double        *CX = malloc(sizeof(double) * (size_t)(N * R * L));
    double        *XY = malloc(sizeof(double) * (size_t)(N * C * H * W));
    for (int64_t i = 0; i < N * C * H * W; i++)
        X[i] = sin((double)i);
    for (int64_t i = 0; i < N * R * L; i++)
        Y[i] = cos((double)i * 0.7);
    tide_kview vX = kv(X, TIDE_DTYPE_F64, 4, xs2, NULL), vY = kv(Y, TIDE_DTYPE_F64, 3, cs2, NULL),
               vCX = kv(CX, TIDE_DTYPE_F64, 3, cs2, NULL),
               vXY = kv(XY, TIDE_DTYPE_F64, 4, xs2, NULL);
    CHECK_OK(im2col_row(&vCX, &vX, g2));
    CHECK_OK(col2im_row(&vXY, &vY, g2));
    double lhs = 0, rhs = 0;
    for (int64_t i = 0; i < N * R * L; i++)
        lhs += CX[i] * Y[i];
    for (int64_t i = 0; i < N * C * H * W; i++)
        rhs += X[i] * XY[i];
    CHECK(close_f(lhs, rhs, 1e-12), "im2col/col2im adjoint: %.15g vs %.15g", lhs, rhs);
    free(X);
    free(Y);
    free(CX);
    free(XY);
}

/* dilation: 1 x 1 x 4 x 4, kernel 2, dilation 2 taps (h, w), (h, w+2), (h+2, w), (h+2, w+2) */
static void test_im2col_dilation(void) {
    float          x[16], c[16];
    int64_t        xs[4] = {1, 1, 4, 4}, cs[3] = {1, 4, 4};
    tide_conv_geom g = {2, 2, 1, 1, 0, 0, 2, 2};
    for (int i = 0; i < 16; i++)
        x[i] = (float)(i + 1);
    tide_kview vx = kv(x, TIDE_DTYPE_F32, 4, xs, NULL), vc = kv(c, TIDE_DTYPE_F32, 3, cs, NULL);
    CHECK_OK(im2col_row(&vc, &vx, g));
    float e[16] = {1, 2, 5, 6, 3, 4, 7, 8, 9, 10, 13, 14, 11, 12, 15, 16};
    CHECK(all_close_f(c, e, 16, 0), "im2col dilation 2");
    /* adjoint on both walks (stride 1 runs, strided loop) with padding and unequal dilations */
    tide_conv_geom gs[2] = {{3, 2, 1, 1, 2, 1, 2, 3}, {2, 3, 2, 3, 1, 2, 3, 2}};
    for (int k = 0; k < 2; k++) {
        tide_conv_geom q = gs[k];
        int64_t        N = 2, C = 2, H = 7, W = 6;
        int64_t        OH = (H + 2 * q.ph - q.dh * (q.kh - 1) - 1) / q.sh + 1;
        int64_t        OW = (W + 2 * q.pw - q.dw * (q.kw - 1) - 1) / q.sw + 1;
        int64_t        L = OH * OW, R = C * q.kh * q.kw, xn = N * C * H * W, cn = N * R * L;
        int64_t        xs2[4] = {N, C, H, W}, cs2[3] = {N, R, L};
        double *X = malloc(sizeof(double) * (size_t)xn), *XY = malloc(sizeof(double) * (size_t)xn);
        double *Y = malloc(sizeof(double) * (size_t)cn), *CX = malloc(sizeof(double) * (size_t)cn);
        for (int64_t i = 0; i < xn; i++)
            X[i] = sin((double)i);
        for (int64_t i = 0; i < cn; i++)
            Y[i] = cos((double)i * 0.7);
        tide_kview vX = kv(X, TIDE_DTYPE_F64, 4, xs2, NULL),
                   vY = kv(Y, TIDE_DTYPE_F64, 3, cs2, NULL),
                   vCX = kv(CX, TIDE_DTYPE_F64, 3, cs2, NULL),
                   vXY = kv(XY, TIDE_DTYPE_F64, 4, xs2, NULL);
        CHECK_OK(im2col_row(&vCX, &vX, q));
        CHECK_OK(col2im_row(&vXY, &vY, q));
        double lhs = 0, rhs = 0;
        for (int64_t i = 0; i < cn; i++)
            lhs += CX[i] * Y[i];
        for (int64_t i = 0; i < xn; i++)
            rhs += X[i] * XY[i];
        CHECK(close_f(lhs, rhs, 1e-12), "dilated im2col/col2im adjoint %d: %.15g vs %.15g", k, lhs,
              rhs);
        free(X);
        free(Y);
        free(CX);
        free(XY);
    }
}

static void test_maxpool(void) {
    float          x[16] = {1, 3, 2, 0, 4, 2, 8, 1, 0, 0, 5, 6, 9, 1, 7, 5};
    int64_t        xs[4] = {1, 1, 4, 4}, os[4] = {1, 1, 2, 2};
    float          o[4];
    int64_t        ix[4];
    tide_pool_geom g = {2, 2, 2, 2, 0, 0, 1, 1, 0};
    tide_kview     vx = kv(x, TIDE_DTYPE_F32, 4, xs, NULL), vo = kv(o, TIDE_DTYPE_F32, 4, os, NULL),
               vi = kv(ix, TIDE_DTYPE_I64, 4, os, NULL);
    CHECK_OK(maxpool_row(&vo, &vi, &vx, g));
    CHECK(o[0] == 4 && o[1] == 8 && o[2] == 9 && o[3] == 7, "maxpool values");
    CHECK(ix[0] == 4 && ix[1] == 6 && ix[2] == 12 && ix[3] == 14, "maxpool indices h*W+w");
    /* padding is -inf: an all-negative input never yields a padded 0 */
    float          neg[4] = {-5, -2, -3, -4};
    int64_t        ns[4] = {1, 1, 2, 2}, nos[4] = {1, 1, 2, 2};
    float          no[4];
    int64_t        ni[4];
    tide_pool_geom gp = {2, 2, 1, 1, 1, 1, 1, 1, 0};
    /* OH = (2 + 2 - 2)/1 + 1 = 3: use a 3x3 output */
    int64_t    nos3[4] = {1, 1, 3, 3};
    float      no3[9];
    int64_t    ni3[9];
    tide_kview vn = kv(neg, TIDE_DTYPE_F32, 4, ns, NULL),
               vno3 = kv(no3, TIDE_DTYPE_F32, 4, nos3, NULL),
               vni3 = kv(ni3, TIDE_DTYPE_I64, 4, nos3, NULL);
    CHECK_OK(maxpool_row(&vno3, &vni3, &vn, gp));
    CHECK(no3[0] == -5 && ni3[0] == 0 && no3[4] == -2 && ni3[4] == 1 && no3[8] == -4 && ni3[8] == 3,
          "padded windows ignore padding: %g %g %g", no3[0], no3[4], no3[8]);
    (void)no;
    (void)ni;
    (void)nos;
    /* backward: overlapping windows (stride 1) accumulate on the shared max */
    float      gout[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1}, gin[4];
    tide_kview vgo = kv(gout, TIDE_DTYPE_F32, 4, nos3, NULL),
               vgi = kv(gin, TIDE_DTYPE_F32, 4, ns, NULL);
    CHECK_OK(maxpool_backward_row(&vgi, &vgo, &vni3));
    /* argmaxes: [0]:0 [1]:1 [2]:1 [3]:0? computed: each window's max position */
    float cnt[4] = {0, 0, 0, 0};
    for (int i = 0; i < 9; i++)
        cnt[ni3[i]] += 1;
    CHECK(all_close_f(gin, cnt, 4, 0), "maxpool backward scatters per index");
    CHECK(cnt[1] == 4, "-2 is the max of all 4 windows covering it: %g", cnt[1]);
}

/* the kernel against a plain loop of the documented rule (first largest in row-major order, the
 * last NaN over anything, as PyTorch's, -inf and -1 for an empty window), on data with ties, NaNs
 * and -infs: the branch-free 2x2 path and the general one (dilation, ceil_mode, padding) */
static void maxpool_against_loop(tide_pool_geom g, int64_t H, int64_t W) {
    enum { MAXN = 2 * 3 * 16 * 16 };
    static float   x[MAXN], o[MAXN];
    static int64_t ix[MAXN];
    int64_t        N = 2, C = 3;
    for (int64_t i = 0; i < N * C * H * W; i++) {
        unsigned r = (unsigned)(i * 2654435761u) >> 7;
        x[i] = r % 17 == 0 ? NAN : r % 13 == 0 ? -INFINITY : (float)(r % 9) - 4;
    }
    int64_t OH = tide_pool_out_size(H, g.kh, g.sh, g.ph, g.dh, g.ceil_mode),
            OW = tide_pool_out_size(W, g.kw, g.sw, g.pw, g.dw, g.ceil_mode);
    int64_t    xs[4] = {N, C, H, W}, os[4] = {N, C, OH, OW};
    tide_kview vx = kv(x, TIDE_DTYPE_F32, 4, xs, NULL), vo = kv(o, TIDE_DTYPE_F32, 4, os, NULL),
               vi = kv(ix, TIDE_DTYPE_I64, 4, os, NULL);
    CHECK_OK(maxpool_row(&vo, &vi, &vx, g));
    int bad = 0;
    for (int64_t pl = 0; pl < N * C; pl++)
        for (int64_t oh = 0; oh < OH; oh++)
            for (int64_t ow = 0; ow < OW; ow++) {
                float   best = -INFINITY;
                int64_t bi = -1;
                for (int i = 0; i < g.kh; i++)
                    for (int j = 0; j < g.kw; j++) {
                        int64_t h = oh * g.sh - g.ph + i * g.dh, w = ow * g.sw - g.pw + j * g.dw;
                        if (h < 0 || h >= H || w < 0 || w >= W)
                            continue;
                        float v = x[pl * H * W + h * W + w];
                        if (bi < 0 || v > best || isnan(v)) {
                            best = v;
                            bi = h * W + w;
                        }
                    }
                int64_t at = pl * OH * OW + oh * OW + ow;
                float   got = o[at];
                if (ix[at] != bi || !(got == best || (isnan(got) && isnan(best))))
                    bad++;
            }
    CHECK(bad == 0, "maxpool k%dx%d s%d d%d p%d ceil %d on %lldx%lld: %d windows differ", g.kh,
          g.kw, g.sh, g.dh, g.ph, g.ceil_mode, (long long)H, (long long)W, bad);
}

static void test_maxpool_paths(void) {
    maxpool_against_loop((tide_pool_geom){2, 2, 2, 2, 0, 0, 1, 1, 0}, 16, 16);
    maxpool_against_loop((tide_pool_geom){2, 2, 2, 2, 0, 0, 1, 1, 0}, 11, 13);
    maxpool_against_loop((tide_pool_geom){2, 2, 2, 2, 0, 0, 1, 1, 1}, 11, 13);
    maxpool_against_loop((tide_pool_geom){3, 3, 2, 2, 1, 1, 1, 1, 0}, 15, 14);
    maxpool_against_loop((tide_pool_geom){3, 2, 2, 1, 1, 1, 2, 3, 1}, 16, 15);
    maxpool_against_loop((tide_pool_geom){2, 2, 3, 3, 1, 1, 2, 2, 1}, 8, 8);
    maxpool_against_loop((tide_pool_geom){3, 3, 1, 1, 1, 1, 1, 1, 0}, 9, 10);
    maxpool_against_loop((tide_pool_geom){2, 2, 1, 1, 1, 1, 3, 3, 1}, 2, 5); /* empty windows */
    maxpool_against_loop((tide_pool_geom){4, 4, 1, 1, 2, 2, 1, 1, 1}, 3, 3); /* no interior */
}

/* ---- errors ------------------------------------------------------------------------------- */

static void test_errors(void) {
    int32_t    i[2] = {1, 2}, io[2];
    int64_t    n2[1] = {2}, n3[1] = {3};
    tide_kview vi = kv(i, TIDE_DTYPE_I32, 1, n2, NULL), vio = kv(io, TIDE_DTYPE_I32, 1, n2, NULL);
    CHECK(run_softmax_row(TIDE_K_SOFTMAX, &vio, &vi, NULL, 1, 2, 1, 0) == TIDE_ENOTSUP,
          "int32 softmax unsupported");
    CHECK(strstr(tide_errmsg(), "tide: softmax: int32 is not supported on the CPU yet") != NULL,
          "message: %s", tide_errmsg());
    float      f[3] = {1, 2, 3}, fo[3];
    tide_kview v2 = kv(f, TIDE_DTYPE_F32, 1, n2, NULL), v3 = kv(fo, TIDE_DTYPE_F32, 1, n3, NULL);
    CHECK(B->binary(&dev0, TIDE_OP_MUL, &v3, &v2, &v2) == TIDE_EINVAL, "shape mismatch refused");
    CHECK(strstr(tide_errmsg(), "tide: mul:") != NULL, "message: %s", tide_errmsg());
}

/* the copy entry's float16 / bfloat16 <-> float32 rows (hardware F16C where the CPU has it,
 * eight at a time, typed bit conversions otherwise) give the bit conversions' values: every
 * float16 pattern widened, and float32 values across float16's range (ties, subnormals,
 * overflow) rounded, in rows long enough for the vector loops and their tails */
static void test_half_rows(void) {
    enum { N = 65536 };
    uint16_t  *h = malloc(N * sizeof *h), *h2 = malloc(N * sizeof *h2);
    float     *f = malloc(N * sizeof *f);
    int64_t    n[1] = {N};
    tide_kview vh = kv(h, TIDE_DTYPE_F16, 1, n, NULL), vf = kv(f, TIDE_DTYPE_F32, 1, n, NULL);
    for (int i = 0; i < N; i++)
        h[i] = (uint16_t)i;
    CHECK_OK(B->copy(&dev0, &vf, &vh));
    int bad = 0;
    for (int i = 0; i < N && !bad; i++) {
        float want = tide_half_to_float(h[i]);
        bad = want == want ? f[i] != want : f[i] == f[i];
        if (bad)
            CHECK(0, "float16 %04x widened to %g, expected %g", h[i], f[i], want);
    }
    /* float32 values around every float16 step: exact, halfway (ties to even), just off */
    for (int i = 0; i < N; i++) {
        float base = tide_half_to_float((uint16_t)(i & 0x7bff)),
              next = tide_half_to_float((uint16_t)((i & 0x7bff) + 1));
        float v = (i % 4 == 0)   ? base
                  : (i % 4 == 1) ? base + (next - base) / 2
                  : (i % 4 == 2) ? nextafterf(base + (next - base) / 2, 0)
                                 : base * 70000.0f;
        f[i] = (i & 0x8000) ? -v : v;
    }
    CHECK_OK(B->copy(&dev0, &vh, &vf));
    bad = 0;
    for (int i = 0; i < N && !bad; i++) {
        uint16_t want = tide_float_to_half(f[i]);
        bad = h[i] != want;
        if (bad)
            CHECK(0, "%.9g rounded to float16 %04x, expected %04x", f[i], h[i], want);
    }
    tide_kview vb = kv(h2, TIDE_DTYPE_BF16, 1, n, NULL);
    CHECK_OK(B->copy(&dev0, &vb, &vf));
    bad = 0;
    for (int i = 0; i < N && !bad; i++) {
        bad = h2[i] != tide_float_to_bf16(f[i]);
        if (bad)
            CHECK(0, "%.9g rounded to bfloat16 %04x", f[i], h2[i]);
    }
    free(h);
    free(h2);
    free(f);
}

/* float64 -> float16 / bfloat16 rounds once, as CUDA's __double2half does: a double a hair off
 * a half-way point (which float32 would round onto the point, to tie to even) goes to its
 * side; one exactly on it ties to even. Every positive finite float16 step, and bfloat16's
 * from its subnormals up to 2^120. */
static uint16_t nearest_of(double d, uint16_t lo, double vlo, double vhi) {
    double mid = vlo + (vhi - vlo) / 2; /* exact: both are doubles with short significands */
    if (d != mid)
        return d > mid ? (uint16_t)(lo + 1) : lo;
    return (lo & 1) ? (uint16_t)(lo + 1) : lo;
}
static void test_double_to_half_rows(void) {
    enum { N = 3 * 0x7bff };
    double    *d = malloc(N * sizeof *d);
    uint16_t  *h = malloc(N * sizeof *h), *want = malloc(N * sizeof *want);
    int64_t    n[1] = {N};
    tide_kview vd = kv(d, TIDE_DTYPE_F64, 1, n, NULL), vh = kv(h, TIDE_DTYPE_F16, 1, n, NULL);
    for (int bf = 0; bf <= 1; bf++) {
        for (int i = 0; i < N; i++) {
            uint16_t lo = (uint16_t)(i / 3); /* float16 to 65504, bfloat16 to 2^120 */
            double   vlo = bf ? tide_bf16_to_float(lo) : tide_half_to_float(lo);
            double   vhi = bf ? tide_bf16_to_float((uint16_t)(lo + 1))
                              : tide_half_to_float((uint16_t)(lo + 1));
            double   mid = vlo + (vhi - vlo) / 2, off = (vhi - vlo) * 0x1p-30;
            d[i] = i % 3 == 0 ? mid + off : i % 3 == 1 ? mid - off : mid;
            want[i] = nearest_of(d[i], lo, vlo, vhi);
        }
        vh.dtype = bf ? TIDE_DTYPE_BF16 : TIDE_DTYPE_F16;
        CHECK_OK(B->copy(&dev0, &vh, &vd));
        int bad = 0;
        for (int i = 0; i < N && !bad; i++) {
            bad = h[i] != want[i];
            if (bad)
                CHECK(0, "%.17g to %s: %04x, expected %04x", d[i], bf ? "bfloat16" : "float16",
                      h[i], want[i]);
        }
        /* doubles that round to a zero float32 (below 2^-150) are zeros of their sign; the
         * round-to-odd step once turned +0's bits into a NaN's (0xfe00, 0xffff) */
        const double tiny[6] = {1e-46, 1e-300, 0x1p-1074, -1e-46, -1e-300, -0x1p-1074};
        int64_t      n6[1] = {6};
        tide_kview   vt = kv((void *)tiny, TIDE_DTYPE_F64, 1, n6, NULL), vt16 = vh;
        vt16.shape[0] = 6;
        CHECK_OK(B->copy(&dev0, &vt16, &vt));
        for (int i = 0; i < 6; i++)
            CHECK(h[i] == (i < 3 ? 0x0000 : 0x8000), "%g to %s: %04x", tiny[i],
                  bf ? "bfloat16" : "float16", h[i]);
    }
    free(d);
    free(h);
    free(want);
}

/* float16 and bfloat16 through the float32 kernels (src/cpu/half.c): the float32 result
 * rounded once; a broadcast input; a failed kernel leaves the output as it was */
static void test_half(void) {
    uint16_t   h[2] = {0x3c00, 0x3e00}, ho[2]; /* 1, 1.5 */
    int64_t    n2[1] = {2}, n3[1] = {3}, zero[1] = {0};
    tide_kview vh = kv(h, TIDE_DTYPE_F16, 1, n2, NULL), vho = kv(ho, TIDE_DTYPE_F16, 1, n2, NULL);
    CHECK_OK(B->binary(&dev0, TIDE_OP_ADD, &vho, &vh, &vh));
    CHECK(ho[0] == 0x4000 && ho[1] == 0x4200, "float16 1+1, 1.5+1.5: %04x %04x", ho[0], ho[1]);
    CHECK_OK(run_softmax_row(TIDE_K_SOFTMAX, &vho, &vh, NULL, 1, 2, 1, 0));
    float p0 = 1.0f / (1.0f + expf(0.5f));
    CHECK(ho[0] == tide_float_to_half(p0) && ho[1] == tide_float_to_half(1.0f - p0),
          "float16 softmax %04x %04x", ho[0], ho[1]);
    /* bfloat16: 3 * 0.1 with the scalar unrounded (0.1 in bfloat16 would give 0.30078125) */
    uint16_t   b[2] = {0x4040, 0xbf80}, bo[2]; /* 3, -1 */
    tide_kview vb = kv(b, TIDE_DTYPE_BF16, 1, n2, NULL), vbo = kv(bo, TIDE_DTYPE_BF16, 1, n2, NULL);
    CHECK_OK(B->binary_scalar(&dev0, TIDE_OP_MUL, &vbo, &vb, 0.1, 0));
    CHECK(bo[0] == tide_float_to_bf16(0.3f) && bo[1] == tide_float_to_bf16(-0.1f),
          "bfloat16 * 0.1: %04x %04x", bo[0], bo[1]);
    /* a stride-0 input: one element read for the whole row */
    uint16_t   one = 0x4000, row[3] = {0x3c00, 0x4000, 0x4200}, out3[3]; /* 2; 1, 2, 3 */
    int64_t    s0[1] = {0};
    tide_kview vone = kv(&one, TIDE_DTYPE_F16, 1, n3, s0),
               vrow = kv(row, TIDE_DTYPE_F16, 1, n3, NULL),
               vout3 = kv(out3, TIDE_DTYPE_F16, 1, n3, NULL);
    CHECK_OK(B->binary(&dev0, TIDE_OP_MUL, &vout3, &vrow, &vone));
    CHECK(out3[0] == 0x4000 && out3[1] == 0x4400 && out3[2] == 0x4600, "float16 row * 2");
    /* failures: shapes that do not match, and nothing written */
    ho[0] = ho[1] = 0x1234;
    CHECK(B->binary(&dev0, TIDE_OP_MUL, &vout3, &vh, &vh) == TIDE_EINVAL, "half shape mismatch");
    CHECK(B->binary(&dev0, TIDE_OP_ADD, &vho, &vh, &vout3) == TIDE_EINVAL, "half shape mismatch");
    CHECK(ho[0] == 0x1234 && ho[1] == 0x1234, "a failed half op wrote %04x %04x", ho[0], ho[1]);
    /* empty */
    tide_kview ve = kv(h, TIDE_DTYPE_F16, 1, zero, NULL),
               veo = kv(ho, TIDE_DTYPE_F16, 1, zero, NULL);
    CHECK_OK(B->binary(&dev0, TIDE_OP_ADD, &veo, &ve, &ve));
    CHECK(ho[0] == 0x1234, "an empty half op wrote");
}

int main(void) {
    test_iter();
    if (TIDE_ASAN)
        test_exact_alloc();
    else
        test_alloc();
    test_binary_f32();
    test_binary_int();
    test_compare_scalar();
    test_unary();
    test_copy_fill();
    test_reduce();
    test_matmul();
    test_softmax();
    test_index_where();
    test_random();
    test_im2col();
    test_im2col_dilation();
    test_maxpool();
    test_maxpool_paths();
    test_errors();
    test_half();
    test_half_rows();
    test_double_to_half_rows();
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
