/* test_sanitizer_inputs.c — the minimal inputs that made the sanitizers report undefined
 * behaviour (issue 10, items 12 to 15), kept as regressions with their bytes inline: empty
 * tensors with huge other sizes, from_blob and DLPack geometries whose extent, offset or
 * alignment is wrong, IDX headers, and an allocation no host can give; and (issue 27) indices
 * and sums at the limits of the integer types, and a scatter whose src is too small for its
 * 0-d index. `make asan` runs this under clang's ASan+UBSan (whose UBSan reports NULL + 0). */
#include "tide.h"
#include "tide_dlpack.h"
#include "tide_io.h"
#include "test_util.h"

#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#define TWO(n) ((int64_t)1 << (n))

static tide_device *cpu(void) {
    tide_device *d = NULL;
    tide_device_get("cpu", &d);
    return d;
}

/* the sum over dims of (size - 1) * stride, size-0 dims aside, fits in int64 (every view's
 * offset arithmetic stays inside it) */
static int reach_fits(const tide_tensor *t) {
    int64_t reach = 0, step;
    for (int i = 0; i < tide_tensor_ndim(t); i++) {
        int64_t n = tide_tensor_shape(t)[i], s = tide_tensor_strides(t)[i];
        if (n && (__builtin_mul_overflow(n - 1, s, &step) ||
                  __builtin_add_overflow(reach, step, &reach)))
            return 0;
    }
    return 1;
}

static int strides_are(const tide_tensor *t, const int64_t *want) {
    for (int i = 0; i < tide_tensor_ndim(t); i++)
        if (tide_tensor_strides(t)[i] != want[i])
            return 0;
    return 1;
}

/* ---- item 12: a zero size beside huge ones ------------------------------------------------ */

/* tide.zeros({0, 1 << 32, 1 << 32}): no element, so any size is legal beside the zero, in any
 * order; the strides stay within int64 (the dims whose reach would not fit get stride 0) */
static void test_empty_huge_shapes(void) {
    static const struct {
        int     ndim;
        int64_t shape[4], strides[4];
    } cases[] = {
        {3, {0, TWO(32), TWO(32)}, {0, 0, 1}},
        {3, {TWO(32), TWO(32), 0}, {0, 1, 1}},
        {3, {TWO(32), 0, TWO(32)}, {0, TWO(32), 1}},
        {4, {TWO(40), TWO(40), TWO(40), 0}, {0, 0, 1, 1}},
        {3, {0, TWO(62), TWO(62)}, {0, 0, 1}},
        {2, {INT64_MAX, 0}, {1, 1}},
        {2, {0, 3}, {3, 1}}, /* small ones keep PyTorch's strides */
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        tide_tensor *t = NULL;
        CHECK_OK(tide_tensor_empty(NULL, cpu(), TIDE_DTYPE_F32, cases[k].ndim, cases[k].shape, &t));
        if (!t)
            continue;
        CHECK(tide_tensor_numel(t) == 0 && tide_tensor_nbytes(t) == 0);
        CHECK(tide_tensor_is_contiguous(t));
        CHECK(strides_are(t, cases[k].strides));
        CHECK(reach_fits(t));
        CHECK(tide_tensor_data(t) == NULL); /* item 14: no NULL + 0 on the way */
        tide_tensor_release(t);
    }
    /* still refused: a shape without a zero whose product does not fit */
    int64_t      big[3] = {TWO(32), TWO(32), 2};
    tide_tensor *t = NULL;
    CHECK_ERR(tide_tensor_empty(NULL, cpu(), TIDE_DTYPE_F32, 3, big, &t), TIDE_ESHAPE,
              "tide: empty: shape [4294967296, 4294967296, 2] has more elements than fit in 64 "
              "bits");
    CHECK(t == NULL);
}

/* what a script does with such a tensor: views, copies, ops, fills; all empty, none overflows */
static void test_empty_huge_ops(void) {
    int64_t      shape[3] = {0, TWO(32), TWO(32)}, rshape[3] = {TWO(32), 0, TWO(32)};
    int          rev[3] = {2, 1, 0};
    tide_tensor *t = NULL, *v = NULL, *w = NULL, *r = NULL;
    CHECK_OK(tide_tensor_full(NULL, cpu(), TIDE_DTYPE_F64, 3, shape, tide_scalar_f(0.0), &t));
    if (!t)
        return;
    CHECK_OK(tide_tensor_permute(t, rev, &v));
    CHECK(v && tide_tensor_numel(v) == 0 && tide_tensor_is_contiguous(v) && reach_fits(v));
    CHECK_OK(tide_tensor_select(v, 0, TWO(32) - 1, &w));
    CHECK(w && tide_tensor_numel(w) == 0 && reach_fits(w));
    tide_tensor_release(w), w = NULL;
    CHECK_OK(tide_tensor_select(t, 1, TWO(32) - 1, &w));
    CHECK(w && tide_tensor_numel(w) == 0);
    tide_tensor_release(w), w = NULL;
    CHECK_OK(tide_tensor_narrow(t, 2, TWO(32) - 2, 2, &w));
    tide_tensor_release(w), w = NULL;
    for (int d = 0; d <= 3; d++) {
        CHECK_OK(tide_tensor_unsqueeze(t, d, &w));
        CHECK(w && tide_tensor_ndim(w) == 4 && reach_fits(w));
        tide_tensor_release(w), w = NULL;
    }
    CHECK_OK(tide_tensor_reshape(NULL, t, 3, rshape, &w));
    CHECK(w && tide_tensor_numel(w) == 0 && reach_fits(w));
    tide_tensor_release(w), w = NULL;
    CHECK_OK(tide_tensor_contiguous(NULL, v, &w));
    tide_tensor_release(w), w = NULL;
    CHECK_OK(tide_tensor_clone(NULL, v, &w));
    tide_tensor_release(w), w = NULL;
    CHECK_OK(tide_fill_(NULL, t, 1.0)); /* stride-0 dims of an empty output are no expansion */
    CHECK_OK(tide_binary(NULL, TIDE_OP_ADD, t, t, &w));
    CHECK(w && tide_tensor_numel(w) == 0);
    tide_tensor_release(w), w = NULL;
    CHECK_OK(tide_tensor_copy_(NULL, t, t));
    double sum = -1;
    CHECK_OK(tide_reduce(NULL, TIDE_OP_SUM, v, TIDE_ALL_DIMS, 0, &r, NULL));
    CHECK(r && tide_tensor_item(NULL, r, &sum) == TIDE_OK && sum == 0.0);
    tide_tensor_release(r), r = NULL;
    CHECK_OK(tide_reduce(NULL, TIDE_OP_SUM, t, 1, 0, &r, NULL));
    CHECK(r && tide_tensor_ndim(r) == 2 && tide_tensor_numel(r) == 0);
    tide_tensor_release(r), r = NULL;
    /* and through DLPack, out and back in */
    DLManagedTensor *m = NULL;
    CHECK_OK(tide_tensor_to_dlpack(v, &m));
    CHECK_OK(tide_tensor_from_dlpack(NULL, m, &w));
    CHECK(w && tide_tensor_numel(w) == 0 && tide_tensor_shape(w)[0] == TWO(32));
    tide_tensor_release(w);
    tide_tensor_release(v);
    tide_tensor_release(t);
}

/* ---- item 13: from_blob extents, pointers and alignment ------------------------------------ */

static int  deleted;
static void on_delete(void *ud) {
    (void)ud;
    deleted++;
}

/* from_blob(data, dt, shape, strides) must fail with code and message, without the deleter */
static void blob_refused(const void *data, tide_dtype dt, int ndim, const int64_t *shape,
                         const int64_t *strides, tide_status code, const char *msg, int line) {
    tide_tensor *t = NULL;
    int          before = deleted;
    tide_status  st = tide_tensor_from_blob(NULL, (void *)data, dt, ndim, shape, strides, cpu(),
                                            on_delete, NULL, &t);
    if (st == code && strstr(tide_errmsg(), msg) && !t && deleted == before) {
        tu_pass++;
    } else {
        tu_fail++;
        fprintf(stderr, "%s:%d: expected %s \"%s\", got %s \"%s\"\n", __FILE__, line,
                tide_status_name(code), msg, tide_status_name(st), tide_errmsg());
        tide_tensor_release(t);
    }
}
#define BLOB_REFUSED(data, dt, ndim, shape, strides, code, msg)                                    \
    blob_refused(data, dt, ndim, shape, strides, code, msg, __LINE__)

static void test_blob_extent(void) {
    double buf[4] = {0};
    /* 2^62 elements, whose strides reach 1 + (2^61 - 1) * 8 elements: past int64 */
    int64_t s1[2] = {2, TWO(61)}, st1[2] = {1, 8};
    BLOB_REFUSED(buf, TIDE_DTYPE_F32, 2, s1, st1, TIDE_ESHAPE,
                 "tide: from_blob: shape [2, 2305843009213693952] with strides [1, 8] spans more "
                 "elements than fit in 64 bits; strides count elements, not bytes");
    /* elements that fit, bytes that do not: 2^61 float64 */
    int64_t s2[1] = {TWO(61)};
    BLOB_REFUSED(buf, TIDE_DTYPE_F64, 1, s2, NULL, TIDE_ESHAPE,
                 "tide: from_blob: shape [2305843009213693952] with strides [1] spans more bytes "
                 "of float64 than fit in 64 bits");
    /* an empty tensor's other dims are still indexed by views (select 4 * INT64_MAX) */
    int64_t s3[2] = {0, 5}, st3[2] = {1, INT64_MAX};
    BLOB_REFUSED(buf, TIDE_DTYPE_F32, 2, s3, st3, TIDE_ESHAPE,
                 "tide: from_blob: shape [0, 5] with strides [1, 9223372036854775807] spans more "
                 "elements than fit in 64 bits");
    /* the sum, not each term, must fit */
    int64_t s4[2] = {2, 2}, st4[2] = {INT64_MAX / 2 + 1, INT64_MAX / 2 + 1};
    BLOB_REFUSED(buf, TIDE_DTYPE_U8, 2, s4, st4, TIDE_ESHAPE, "spans more elements");
}

static void test_blob_pointer(void) {
    double buf[4] = {0};
    /* 32 bytes from 16 bytes below the top of the address space */
    int64_t     s1[1] = {4};
    const void *top = (const void *)(UINTPTR_MAX - 15);
    BLOB_REFUSED(top, TIDE_DTYPE_F64, 1, s1, NULL, TIDE_EINVAL,
                 "plus the 32 bytes its shape and strides span wraps around the address space");
    CHECK(strncmp(tide_errmsg(), "tide: from_blob: data 0x", 24) == 0);
    /* a float32 one byte into a buffer: misaligned loads in every kernel */
    BLOB_REFUSED((const char *)buf + 1, TIDE_DTYPE_F32, 1, s1, NULL, TIDE_EINVAL,
                 "is not aligned to the 4-byte elements of float32; copy it to memory aligned to "
                 "4 bytes");
    /* still accepted: huge strides on an empty dim, and views of it */
    int64_t      s2[2] = {0, 2}, st2[2] = {INT64_MAX, INT64_MAX};
    tide_tensor *t = NULL, *v = NULL;
    CHECK_OK(tide_tensor_from_blob(NULL, buf, TIDE_DTYPE_F64, 2, s2, st2, cpu(), NULL, NULL, &t));
    CHECK_OK(tide_tensor_select(t, 1, 1, &v)); /* offset INT64_MAX elements: no byte count */
    CHECK(v && tide_tensor_numel(v) == 0 && tide_tensor_data(v) == (void *)buf);
    tide_tensor_release(v);
    tide_tensor_release(t);
    /* and NULL data for no elements, with any sizes beside the zero */
    int64_t s3[3] = {TWO(32), 0, TWO(32)};
    CHECK_OK(tide_tensor_from_blob(NULL, NULL, TIDE_DTYPE_F32, 3, s3, NULL, cpu(), NULL, NULL, &t));
    CHECK(t && tide_tensor_data(t) == NULL && reach_fits(t));
    tide_tensor_release(t);
}

/* ---- item 13: DLPack byte_offset and geometry ---------------------------------------------- */

typedef struct producer {
    DLManagedTensor m;
    int             deleted;
    int64_t         shape[3], strides[3];
} producer;

static void producer_deleter(DLManagedTensor *m) {
    ((producer *)m->manager_ctx)->deleted++;
}

/* a 1-d float64 tensor of n elements at data + byte_offset */
static void producer_init(producer *p, void *data, uint64_t byte_offset, int64_t n) {
    memset(p, 0, sizeof *p);
    p->shape[0] = n;
    p->strides[0] = 1;
    p->m.dl_tensor = (DLTensor){.data = data,
                                .device = {kDLCPU, 0},
                                .ndim = 1,
                                .dtype = {kDLFloat, 64, 1},
                                .shape = p->shape,
                                .strides = p->strides,
                                .byte_offset = byte_offset};
    p->m.manager_ctx = p;
    p->m.deleter = producer_deleter;
}

static void dlpack_refused(producer *p, tide_status code, const char *msg, int line) {
    tide_tensor *t = NULL;
    tide_status  st = tide_tensor_from_dlpack(NULL, &p->m, &t);
    if (st == code && strstr(tide_errmsg(), msg) && !t && p->deleted == 0) {
        tu_pass++;
    } else {
        tu_fail++;
        fprintf(stderr, "%s:%d: expected %s \"%s\", got %s \"%s\"\n", __FILE__, line,
                tide_status_name(code), msg, tide_status_name(st), tide_errmsg());
        tide_tensor_release(t);
    }
}
#define DLPACK_REFUSED(p, code, msg) dlpack_refused(p, code, msg, __LINE__)

static void test_dlpack_import_checks(void) {
    double   buf[4] = {1, 2, 3, 4};
    producer p;
    /* half a float64 in: every load would straddle two elements */
    producer_init(&p, buf, 4, 2);
    DLPACK_REFUSED(&p, TIDE_EINVAL,
                   "tide: from_dlpack: byte_offset 4 is not a multiple of the 8-byte elements of "
                   "float64");
    /* an offset that wraps the pointer around */
    producer_init(&p, buf, UINT64_MAX - 7, 1);
    DLPACK_REFUSED(&p, TIDE_EINVAL, "byte_offset 18446744073709551608 wraps around the address");
    /* shape and strides whose reach overflows int64 */
    producer_init(&p, buf, 0, 2);
    p.m.dl_tensor.ndim = 2;
    p.shape[1] = TWO(61), p.strides[1] = 8;
    DLPACK_REFUSED(&p, TIDE_ESHAPE,
                   "tide: from_dlpack: shape [2, 2305843009213693952] with strides [1, 8] spans "
                   "more elements than fit in 64 bits");
    /* an aligned offset is fine: the first element is buf[1] */
    tide_tensor *t = NULL;
    producer_init(&p, buf, 8, 3);
    CHECK_OK(tide_tensor_from_dlpack(NULL, &p.m, &t));
    CHECK(t && tide_tensor_data(t) == (void *)&buf[1]);
    tide_tensor_release(t);
    CHECK(p.deleted == 1);
    /* a PyTorch-style empty tensor with huge sizes and no strides (compact row-major) */
    producer_init(&p, NULL, 0, 0);
    p.m.dl_tensor.ndim = 3;
    p.m.dl_tensor.strides = NULL;
    p.shape[0] = 0, p.shape[1] = TWO(32), p.shape[2] = TWO(32);
    CHECK_OK(tide_tensor_from_dlpack(NULL, &p.m, &t));
    CHECK(t && tide_tensor_numel(t) == 0 && reach_fits(t) && tide_tensor_data(t) == NULL);
    tide_tensor_release(t);
}

/* ---- item 12 via IDX headers --------------------------------------------------------------- */

static char tmpdir[64];

static const char *write_tmp(const char *name, const unsigned char *bytes, size_t n) {
    static char path[128];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    FILE *fp = fopen(path, "wb");
    if (!fp || fwrite(bytes, 1, n, fp) != n) {
        perror(path);
        exit(2);
    }
    fclose(fp);
    return path;
}

/* opens and reads an IDX file into a fresh tensor; NULL and the status on failure */
static tide_tensor *idx_load(const char *path, tide_status *st) {
    tide_idx_file *f = NULL;
    tide_tensor   *t = NULL;
    *st = tide_idx_open("idx", path, 0, &f);
    if (*st != TIDE_OK)
        return NULL;
    *st =
        tide_tensor_empty(NULL, cpu(), tide_idx_dtype(f), tide_idx_ndim(f), tide_idx_shape(f), &t);
    if (*st == TIDE_OK)
        *st = tide_idx_read(f, t);
    tide_idx_close(f);
    if (*st != TIDE_OK) {
        tide_tensor_release(t);
        t = NULL;
    }
    return t;
}

static void test_idx_headers(void) {
    /* uint8, 3 dims: 0 x 0xffffffff x 0xffffffff, no data: an empty tensor */
    static const unsigned char zero_first[] = {0,    0,    8,    3,    0,    0,    0,    0,
                                               0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    /* the same sizes with the zero last (was refused as an overflow: order mattered) */
    static const unsigned char zero_last[] = {0,    0,    8,    3,    0xff, 0xff, 0xff, 0xff,
                                              0xff, 0xff, 0xff, 0xff, 0,    0,    0,    0};
    tide_status                st;
    tide_tensor *t = idx_load(write_tmp("zero_first", zero_first, sizeof zero_first), &st);
    CHECK(t && st == TIDE_OK && tide_tensor_numel(t) == 0 && reach_fits(t));
    CHECK(t && tide_tensor_shape(t)[2] == 0xffffffffLL);
    tide_tensor_release(t);
    t = idx_load(write_tmp("zero_last", zero_last, sizeof zero_last), &st);
    CHECK(t && st == TIDE_OK && tide_tensor_numel(t) == 0 && reach_fits(t));
    tide_tensor_release(t);
    /* float64, 2 dims of 0x7fffffff: 2^62 elements fit, their 2^65 bytes do not */
    static const unsigned char f64_big[] = {0,    0,    0x0e, 2,    0x7f, 0xff,
                                            0xff, 0xff, 0x7f, 0xff, 0xff, 0xff};
    const char                *p = write_tmp("f64_big", f64_big, sizeof f64_big);
    CHECK(!idx_load(p, &st) && st == TIDE_EIO);
    CHECK(strstr(tide_errmsg(), "f64_big: dims [2147483647, 2147483647] hold more bytes of float64 "
                                "than fit in 64 bits; not an IDX file"));
    /* uint8, 3 dims of 0xffffffff: the element count itself overflows */
    static const unsigned char u8_big[] = {0,    0,    8,    3,    0xff, 0xff, 0xff, 0xff,
                                           0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    CHECK(!idx_load(write_tmp("u8_big", u8_big, sizeof u8_big), &st) && st == TIDE_EIO);
    CHECK(strstr(tide_errmsg(), "tide: idx: "));
    CHECK(strstr(tide_errmsg(), "dims [4294967295, 4294967295, 4294967295] hold more bytes"));
}

/* ---- item 15: an allocation no host can give ----------------------------------------------- */

/* 32 TiB: under tide's own cap, so malloc is asked (ASan's allocator then returns NULL only with
 * allocator_may_return_null=1, which run_asan.sh sets); a host with vm.overcommit_memory=1 may
 * grant it, so the check is skipped there */
static void test_out_of_memory(void) {
    FILE *fp = fopen("/proc/sys/vm/overcommit_memory", "r");
    int   mode = 0;
    if (fp) {
        if (fscanf(fp, "%d", &mode) != 1)
            mode = 0;
        fclose(fp);
    }
    if (mode == 1) {
        fprintf(stderr, "test_out_of_memory: skipped (vm.overcommit_memory=1 grants anything)\n");
        return;
    }
    int64_t      shape[1] = {TWO(45)};
    tide_tensor *t = NULL;
    CHECK_ERR(tide_tensor_empty(NULL, cpu(), TIDE_DTYPE_U8, 1, shape, &t), TIDE_ENOMEM,
              "tide: empty: cpu alloc: out of memory allocating 35184372088832 bytes on cpu");
    CHECK(t == NULL);
    /* and the allocator still works afterwards */
    int64_t small[1] = {16};
    CHECK_OK(tide_tensor_empty(NULL, cpu(), TIDE_DTYPE_U8, 1, small, &t));
    tide_tensor_release(t);
}

/* ---- issue 27: index ops at the integer limits ---------------------------------------------- */

/* a CPU tensor over the caller's values (no deleter: they outlive it) */
static tide_tensor *blob(void *data, tide_dtype dt, int ndim, const int64_t *shape) {
    tide_tensor *t = NULL;
    CHECK_OK(tide_tensor_from_blob(NULL, data, dt, ndim, shape, NULL, cpu(), NULL, NULL, &t));
    return t;
}

/* 0-based INT64_MAX is what the binding makes of the 1-based math.mininteger (it subtracts 1,
 * wrapping): the range check's message named it as INT64_MAX + 1, a signed overflow; it names
 * the value the caller gave. INT64_MIN, the other end, is refused the same way. */
static void test_index_at_int64_limits(void) {
    float        a[3] = {1, 2, 3};
    int64_t      three[1] = {3}, one[1] = {1}, lo[1] = {INT64_MIN}, hi[1] = {INT64_MAX};
    int32_t      hi32[1] = {INT32_MAX};
    tide_tensor *t = blob(a, TIDE_DTYPE_F32, 1, three), *v = blob(a, TIDE_DTYPE_F32, 1, one);
    tide_tensor *r = NULL;
    tide_tensor *ih = blob(hi, TIDE_DTYPE_I64, 1, one), *il = blob(lo, TIDE_DTYPE_I64, 1, one);
    tide_tensor *ih32 = blob(hi32, TIDE_DTYPE_I32, 1, one);
    if (!t || !v || !ih || !il || !ih32)
        return;
    static const char min1[] = "index -9223372036854775808 is out of range for dim 1 of size 3";
    CHECK_ERR(tide_gather(NULL, t, 0, ih, &r), TIDE_EINDEX, min1);
    CHECK_ERR(tide_index_select(NULL, t, 0, ih, &r), TIDE_EINDEX, min1);
    CHECK_ERR(tide_scatter_(NULL, t, 0, ih, t, 1), TIDE_EINDEX, min1);
    CHECK_ERR(tide_index_add_(NULL, t, 0, ih, v), TIDE_EINDEX, min1);
    CHECK_ERR(tide_gather(NULL, t, 0, il, &r), TIDE_EINDEX,
              "index -9223372036854775807 is out of range");
    CHECK_ERR(tide_index_select(NULL, t, 0, il, &r), TIDE_EINDEX,
              "index -9223372036854775807 is out of range");
    /* an int32 index is named in int32: INT32_MAX is the binding's wrap of INT32_MIN */
    CHECK_ERR(tide_gather(NULL, t, 0, ih32, &r), TIDE_EINDEX, "index -2147483648 is out of range");
    CHECK_ERR(tide_index_select(NULL, t, 0, ih32, &r), TIDE_EINDEX,
              "index -2147483648 is out of range");
    CHECK(r == NULL && a[0] == 1 && a[1] == 2 && a[2] == 3);
    tide_tensor_release(ih32);
    tide_tensor_release(il);
    tide_tensor_release(ih);
    tide_tensor_release(v);
    tide_tensor_release(t);
}

/* scatter_add of int64 and int32 wraps as two's complement (PyTorch's result), no signed
 * overflow on the way */
static void test_scatter_add_wraps(void) {
    int64_t      d64[2] = {INT64_MAX, INT64_MIN}, s64[3] = {INT64_MAX, 5, -1}, ix[3] = {0, 0, 1};
    int32_t      d32[2] = {INT32_MAX, INT32_MIN}, s32[3] = {1, 0, -1};
    int64_t      two[1] = {2}, three[1] = {3};
    tide_tensor *d = blob(d64, TIDE_DTYPE_I64, 1, two), *s = blob(s64, TIDE_DTYPE_I64, 1, three);
    tide_tensor *i = blob(ix, TIDE_DTYPE_I64, 1, three);
    tide_tensor *e = blob(d32, TIDE_DTYPE_I32, 1, two), *u = blob(s32, TIDE_DTYPE_I32, 1, three);
    if (d && s && i && e && u) {
        CHECK_OK(tide_scatter_(NULL, d, 0, i, s, 1));
        CHECK(d64[0] == 3 && d64[1] == INT64_MAX); /* 2 * MAX + 5 = 2^64 + 3, MIN - 1 */
        CHECK_OK(tide_scatter_(NULL, e, 0, i, u, 1));
        CHECK(d32[0] == INT32_MIN && d32[1] == INT32_MAX);
    }
    tide_tensor_release(u);
    tide_tensor_release(e);
    tide_tensor_release(i);
    tide_tensor_release(s);
    tide_tensor_release(d);
}

/* a 0-d index beside an empty 1-d src: check_fits compares sizes only at one rank, so the
 * kernel read src[0] of no element; refused, dst unchanged */
static void test_scatter_empty_src(void) {
    float        a[3] = {1, 2, 3};
    int64_t      three[1] = {3}, none[1] = {0}, at[1] = {1};
    tide_tensor *d = blob(a, TIDE_DTYPE_F32, 1, three), *i = blob(at, TIDE_DTYPE_I64, 0, NULL);
    tide_tensor *s = NULL;
    CHECK_OK(tide_tensor_empty(NULL, cpu(), TIDE_DTYPE_F32, 1, none, &s));
    if (d && i && s)
        for (int acc = 0; acc <= 1; acc++)
            CHECK_ERR(tide_scatter_(NULL, d, 0, i, s, acc), TIDE_ESHAPE,
                      "src has 0 elements but the index needs 1");
    CHECK(a[0] == 1 && a[1] == 2 && a[2] == 3);
    tide_tensor_release(s);
    tide_tensor_release(i);
    tide_tensor_release(d);
}

int main(void) {
    snprintf(tmpdir, sizeof tmpdir, "/tmp/tide-ubsan-XXXXXX");
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 2;
    }
    tide_init();
    test_empty_huge_shapes();
    test_empty_huge_ops();
    test_blob_extent();
    test_blob_pointer();
    test_dlpack_import_checks();
    test_idx_headers();
    test_out_of_memory();
    test_index_at_int64_limits();
    test_scatter_add_wraps();
    test_scatter_empty_src();
    char cmd[96];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmpdir);
    return tu_finish();
}
