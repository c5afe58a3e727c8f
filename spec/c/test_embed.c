/*
 * test_embed.c — the host-facing C API without Lua: tensors over host memory (from_blob),
 * DLPack export/import, per-context memory limits, several contexts in several threads.
 */
#include "tide_dlpack.h"
#include "test_embed.h"

#include <pthread.h>
#include <stdlib.h>

static tide_device *cpu(void) {
    tide_device *d = NULL;
    tide_device_get("cpu", &d);
    return d;
}

static double at(const tide_tensor *t, int64_t i, int64_t j) {
    int64_t idx[2] = {i, j};
    double  v = NAN;
    if (tide_tensor_get(t, idx, &v) != TIDE_OK)
        return NAN;
    return v;
}

/* ---- from_blob ---------------------------------------------------------------------------- */

/* the deleter runs once, after the last reference (a view here) goes */
static void test_blob_lifetime(void) {
    float        buf[6] = {0, 1, 2, 3, 4, 5};
    atomic_int   calls = 0;
    int64_t      shape[2] = {2, 3};
    tide_tensor *t = NULL, *v = NULL;
    CHECK_OK(tide_tensor_from_blob(NULL, buf, TIDE_DTYPE_F32, 2, shape, NULL, cpu(), count_deleter,
                                   &calls, &t));
    CHECK(t && tide_tensor_data(t) == buf);
    CHECK_OK(tide_tensor_narrow(t, 1, 1, 2, &v));
    tide_tensor_release(t);
    CHECK(atomic_load(&calls) == 0);
    CHECK(v && at(v, 1, 1) == 5.0); /* still readable through the view */
    tide_tensor_release(v);
    CHECK(atomic_load(&calls) == 1);
}

/* host writes are seen by tide and tide's writes by the host: one memory, no copy */
static void test_blob_writes_both_ways(void) {
    float        buf[6] = {0, 1, 2, 3, 4, 5};
    atomic_int   calls = 0;
    int64_t      shape[2] = {2, 3};
    tide_tensor *t = NULL, *row = NULL, *twice = NULL;
    CHECK_OK(tide_tensor_from_blob(NULL, buf, TIDE_DTYPE_F32, 2, shape, NULL, cpu(), count_deleter,
                                   &calls, &t));
    buf[4] = 42.0f;
    CHECK(at(t, 1, 1) == 42.0);
    CHECK_OK(tide_tensor_select(t, 0, 0, &row));
    CHECK_OK(tide_fill_(NULL, row, 9.0));
    CHECK(buf[0] == 9.0f && buf[1] == 9.0f && buf[2] == 9.0f && buf[3] == 3.0f);
    int64_t idx[2] = {1, 2};
    CHECK_OK(tide_tensor_set(t, idx, -1.5));
    CHECK(buf[5] == -1.5f);
    /* an op makes a new tensor in tide's memory; the blob is untouched */
    CHECK_OK(tide_binary_scalar(NULL, TIDE_OP_MUL, t, 2.0, 0, &twice));
    CHECK(twice && !tide_tensor_same_storage(twice, t));
    CHECK(twice && at(twice, 0, 0) == 18.0 && at(twice, 1, 1) == 84.0 && at(twice, 1, 2) == -3.0);
    CHECK(buf[4] == 42.0f);
    /* copy_ into the blob from a tensor of the same geometry in other memory */
    CHECK_OK(tide_tensor_copy_(NULL, t, twice));
    CHECK(buf[0] == 18.0f && buf[4] == 84.0f && buf[5] == -3.0f);
    tide_tensor_release(twice);
    tide_tensor_release(row);
    CHECK(atomic_load(&calls) == 0);
    tide_tensor_release(t);
    CHECK(atomic_load(&calls) == 1);
}

/* host strides (a column-major 3x2 buffer) are honoured */
static void test_blob_strides(void) {
    double       buf[6] = {1, 2, 3, 4, 5, 6}; /* columns (1,2,3) and (4,5,6) */
    int64_t      shape[2] = {3, 2}, strides[2] = {1, 3};
    tide_tensor *t = NULL, *c = NULL;
    CHECK_OK(
        tide_tensor_from_blob(NULL, buf, TIDE_DTYPE_F64, 2, shape, strides, cpu(), NULL, NULL, &t));
    CHECK(t && !tide_tensor_is_contiguous(t));
    CHECK(t && at(t, 0, 1) == 4.0 && at(t, 2, 0) == 3.0 && at(t, 2, 1) == 6.0);
    CHECK_OK(tide_tensor_contiguous(NULL, t, &c));
    CHECK(c && ((double *)tide_tensor_data(c))[1] == 4.0 &&
          ((double *)tide_tensor_data(c))[2] == 2.0);
    tide_tensor_release(c);
    tide_tensor_release(t);
}

/* a refused blob: an error, no tensor, and the deleter is not called (the host still owns it) */
static void test_blob_errors(void) {
    float        buf[4] = {0};
    atomic_int   calls = 0;
    int64_t      bad_shape[2] = {2, -3};
    int64_t      big_shape[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    tide_tensor *t = NULL;
    CHECK(tide_tensor_from_blob(NULL, buf, TIDE_DTYPE_F32, 2, bad_shape, NULL, cpu(), count_deleter,
                                &calls, &t) != TIDE_OK);
    CHECK_PREFIX(tide_errmsg(), "tide: ");
    CHECK(t == NULL);
    CHECK(tide_tensor_from_blob(NULL, buf, TIDE_DTYPE_F32, 9, big_shape, NULL, cpu(), count_deleter,
                                &calls, &t) != TIDE_OK);
    CHECK(t == NULL);
    int64_t shape[1] = {4};
    CHECK(tide_tensor_from_blob(NULL, NULL, TIDE_DTYPE_F32, 1, shape, NULL, cpu(), count_deleter,
                                &calls, &t) != TIDE_OK);
    CHECK(t == NULL);
    CHECK(atomic_load(&calls) == 0);
}

/* ---- DLPack ------------------------------------------------------------------------------- */

/* the exported header describes the tensor and keeps it alive after tide lets go */
static void test_dlpack_export(void) {
    tide_ctx    *ctx = NULL;
    tide_tensor *t = NULL, *tt = NULL;
    int64_t      shape[2] = {2, 3};
    CHECK_OK(tide_ctx_new(&ctx));
    CHECK_OK(tide_tensor_empty(ctx, cpu(), TIDE_DTYPE_F32, 2, shape, &t));
    for (int i = 0; i < 6; i++)
        ((float *)tide_tensor_data(t))[i] = (float)(10 * i);
    CHECK_OK(tide_tensor_transpose(t, 0, 1, &tt)); /* [3, 2], strides {1, 3} */
    tide_tensor_release(t);
    size_t in_use = tide_ctx_memory_in_use(ctx);

    DLManagedTensor *m = NULL;
    CHECK_OK(tide_tensor_to_dlpack(tt, &m));
    CHECK(m && m->dl_tensor.data == tide_tensor_data(tt) && m->dl_tensor.byte_offset == 0);
    CHECK(m && m->dl_tensor.ndim == 2 && m->dl_tensor.shape[0] == 3 && m->dl_tensor.shape[1] == 2);
    CHECK(m && m->dl_tensor.strides[0] == 1 && m->dl_tensor.strides[1] == 3);
    CHECK(m && m->dl_tensor.dtype.code == kDLFloat && m->dl_tensor.dtype.bits == 32 &&
          m->dl_tensor.dtype.lanes == 1);
    CHECK(m && m->dl_tensor.device.device_type == kDLCPU && m->dl_tensor.device.device_id == 0);
    tide_tensor_release(tt);
    CHECK(tide_ctx_memory_in_use(ctx) == in_use); /* the export holds the memory */
    /* element [2][1] = base[2*1 + 1*3] = 50 */
    CHECK(m && ((const float *)m->dl_tensor
                    .data)[2 * m->dl_tensor.strides[0] + 1 * m->dl_tensor.strides[1]] == 50.0f);
    if (m)
        m->deleter(m);
    CHECK(tide_ctx_memory_in_use(ctx) == 0);
    tide_ctx_release(ctx);
}

static void test_dlpack_export_dtypes(void) {
    static const struct {
        tide_dtype dt;
        unsigned   code, bits;
    } cases[] = {
        {TIDE_DTYPE_F32, kDLFloat, 32}, {TIDE_DTYPE_F64, kDLFloat, 64},
        {TIDE_DTYPE_F16, kDLFloat, 16}, {TIDE_DTYPE_BF16, kDLBfloat, 16},
        {TIDE_DTYPE_I32, kDLInt, 32},   {TIDE_DTYPE_I64, kDLInt, 64},
        {TIDE_DTYPE_U8, kDLUInt, 8},    {TIDE_DTYPE_BOOL, TIDE_DL_BOOL, 8},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int64_t          n = 3;
        tide_tensor     *t = NULL, *back = NULL;
        DLManagedTensor *m = NULL;
        CHECK_OK(tide_tensor_empty(NULL, cpu(), cases[i].dt, 1, &n, &t));
        CHECK_OK(tide_tensor_to_dlpack(t, &m));
        CHECK(m && m->dl_tensor.dtype.code == cases[i].code &&
              m->dl_tensor.dtype.bits == cases[i].bits);
        CHECK_OK(tide_tensor_from_dlpack(NULL, m, &back)); /* and the code maps back */
        CHECK(back && tide_tensor_dtype(back) == cases[i].dt);
        tide_tensor_release(back);
        tide_tensor_release(t);
    }
}

/* a producer's DLManagedTensor, as another framework would make it */
typedef struct producer {
    DLManagedTensor m;
    atomic_int      deleted;
    int64_t         shape[2], strides[2];
} producer;

static void producer_deleter(DLManagedTensor *m) {
    atomic_fetch_add(&((producer *)m->manager_ctx)->deleted, 1);
}

static void producer_init(producer *p, double *data, uint64_t byte_offset) {
    memset(p, 0, sizeof *p);
    p->shape[0] = 2, p->shape[1] = 3;
    p->strides[0] = 1, p->strides[1] = 2; /* column-major 2x3 */
    p->m.dl_tensor = (DLTensor){.data = data,
                                .device = {kDLCPU, 0},
                                .ndim = 2,
                                .dtype = {kDLFloat, 64, 1},
                                .shape = p->shape,
                                .strides = p->strides,
                                .byte_offset = byte_offset};
    p->m.manager_ctx = p;
    p->m.deleter = producer_deleter;
}

static void test_dlpack_import(void) {
    double       data[8] = {-1, -1, 1, 2, 3, 4, 5, 6};
    producer     p;
    tide_tensor *t = NULL, *s = NULL;
    producer_init(&p, data, 2 * sizeof(double)); /* first element at data[2] */
    CHECK_OK(tide_tensor_from_dlpack(NULL, &p.m, &t));
    CHECK(t && tide_tensor_data(t) == &data[2] && tide_tensor_dtype(t) == TIDE_DTYPE_F64);
    CHECK(t && at(t, 0, 0) == 1.0 && at(t, 1, 0) == 2.0 && at(t, 0, 2) == 5.0 &&
          at(t, 1, 2) == 6.0);
    /* tide computes on it and writes into it */
    CHECK_OK(tide_reduce(NULL, TIDE_OP_SUM, t, TIDE_ALL_DIMS, 0, &s, NULL));
    double sum = 0;
    CHECK_OK(tide_tensor_item(NULL, s, &sum));
    CHECK(sum == 21.0);
    CHECK_OK(tide_fill_(NULL, t, 0.5));
    CHECK(data[1] == -1.0 && data[2] == 0.5 && data[7] == 0.5);
    CHECK(atomic_load(&p.deleted) == 0);
    tide_tensor_release(s);
    tide_tensor_release(t);
    CHECK(atomic_load(&p.deleted) == 1);
}

/* refused imports leave the producer's tensor alone */
static void test_dlpack_import_errors(void) {
    double       data[6] = {0};
    producer     p;
    tide_tensor *t = NULL;

    producer_init(&p, data, 0);
    p.m.dl_tensor.dtype.lanes = 4;
    CHECK(tide_tensor_from_dlpack(NULL, &p.m, &t) == TIDE_EDTYPE);
    CHECK_PREFIX(tide_errmsg(), "tide: from_dlpack: ");
    CHECK_HAS(tide_errmsg(), "lanes 4");

    producer_init(&p, data, 0);
    p.m.dl_tensor.dtype = (DLDataType){kDLComplex, 64, 1};
    CHECK(tide_tensor_from_dlpack(NULL, &p.m, &t) == TIDE_EDTYPE);

    producer_init(&p, data, 0);
    p.m.dl_tensor.dtype = (DLDataType){kDLInt, 8, 1};
    CHECK(tide_tensor_from_dlpack(NULL, &p.m, &t) == TIDE_EDTYPE);

    producer_init(&p, data, 0);
    p.m.dl_tensor.ndim = TIDE_MAX_DIMS + 1;
    CHECK(tide_tensor_from_dlpack(NULL, &p.m, &t) == TIDE_ESHAPE);
    CHECK_PREFIX(tide_errmsg(), "tide: from_dlpack: ");

    producer_init(&p, data, 0);
    p.m.dl_tensor.device = (DLDevice){kDLOpenCL, 0};
    CHECK(tide_tensor_from_dlpack(NULL, &p.m, &t) == TIDE_EDEVICE);
    CHECK_HAS(tide_errmsg(), "device type 4");

    producer_init(&p, data, 0);
    p.m.dl_tensor.device = (DLDevice){kDLCPU, tide_device_count(TIDE_DEVICE_CPU)};
    CHECK(tide_tensor_from_dlpack(NULL, &p.m, &t) == TIDE_EDEVICE);
    CHECK_HAS(tide_errmsg(), "does not exist");

    producer_init(&p, data, 0);
    p.strides[1] = -2;
    CHECK(tide_tensor_from_dlpack(NULL, &p.m, &t) == TIDE_EINVAL);
    CHECK_PREFIX(tide_errmsg(), "tide: from_dlpack: stride -2 at dim 2");

    producer_init(&p, data, 0);
    p.shape[0] = -1;
    CHECK(tide_tensor_from_dlpack(NULL, &p.m, &t) == TIDE_ESHAPE);

    if (tide_device_count(TIDE_DEVICE_CUDA) == 0) {
        producer_init(&p, data, 0);
        p.m.dl_tensor.device = (DLDevice){kDLCUDA, 0};
        CHECK(tide_tensor_from_dlpack(NULL, &p.m, &t) == TIDE_EDEVICE);
    }
    CHECK(t == NULL);
    CHECK(atomic_load(&p.deleted) == 0);
}

/* tide -> DLPack -> tide: the same memory, freed once, after both sides let go */
static void test_dlpack_roundtrip(void) {
    tide_ctx    *ctx = NULL;
    tide_tensor *t = NULL, *u = NULL;
    int64_t      shape[2] = {2, 2};
    CHECK_OK(tide_ctx_new(&ctx));
    CHECK_OK(tide_tensor_empty(ctx, cpu(), TIDE_DTYPE_I64, 2, shape, &t));
    CHECK_OK(tide_fill_(ctx, t, 7));
    DLManagedTensor *m = NULL;
    CHECK_OK(tide_tensor_to_dlpack(t, &m));
    CHECK_OK(tide_tensor_from_dlpack(ctx, m, &u));
    CHECK(u && tide_tensor_data(u) == tide_tensor_data(t));
    CHECK(u && tide_tensor_dtype(u) == TIDE_DTYPE_I64 && tide_tensor_ndim(u) == 2);
    int64_t idx[2] = {1, 0};
    CHECK_OK(tide_tensor_set(u, idx, 3));
    CHECK(at(t, 1, 0) == 3.0 && at(t, 0, 0) == 7.0);
    size_t in_use = tide_ctx_memory_in_use(ctx);
    tide_tensor_release(t);
    CHECK(tide_ctx_memory_in_use(ctx) == in_use);
    CHECK(at(u, 1, 0) == 3.0);
    tide_tensor_release(u);
    CHECK(tide_ctx_memory_in_use(ctx) == 0);

    /* producer -> tide -> DLPack consumer: the producer's deleter waits for both */
    double   data[6] = {1, 2, 3, 4, 5, 6};
    producer p;
    producer_init(&p, data, 0);
    CHECK_OK(tide_tensor_from_dlpack(ctx, &p.m, &u));
    CHECK_OK(tide_tensor_to_dlpack(u, &m));
    CHECK(m && m->dl_tensor.data == data && m->dl_tensor.strides[1] == 2);
    tide_tensor_release(u);
    CHECK(atomic_load(&p.deleted) == 0);
    if (m)
        m->deleter(m);
    CHECK(atomic_load(&p.deleted) == 1);
    tide_ctx_release(ctx);
}

/* virtual CPU devices keep their identity through DLPack (device_id) and in the rules */
static void test_dlpack_virtual_device(void) {
    tide_device     *cpu1 = NULL;
    tide_tensor     *t = NULL, *u = NULL, *host = NULL, *sum = NULL;
    DLManagedTensor *m = NULL;
    int64_t          n = 4;
    CHECK(tide_device_count(TIDE_DEVICE_CPU) == 2); /* main sets TIDE_CPU_DEVICES=2 */
    CHECK_OK(tide_device_get("cpu:1", &cpu1));
    CHECK_OK(tide_tensor_empty(NULL, cpu1, TIDE_DTYPE_F32, 1, &n, &t));
    CHECK_OK(tide_fill_(NULL, t, 2.5));
    CHECK_OK(tide_tensor_to_dlpack(t, &m));
    CHECK(m && m->dl_tensor.device.device_type == kDLCPU && m->dl_tensor.device.device_id == 1);
    CHECK_OK(tide_tensor_from_dlpack(NULL, m, &u));
    CHECK(u && tide_tensor_device(u) == cpu1);
    CHECK_OK(tide_tensor_empty(NULL, cpu(), TIDE_DTYPE_F32, 1, &n, &host));
    CHECK(tide_binary(NULL, TIDE_OP_ADD, u, host, &sum) == TIDE_EDEVICE);
    CHECK_HAS(tide_errmsg(), "same device");
    CHECK(sum == NULL);
    tide_tensor_release(host);
    tide_tensor_release(u);
    tide_tensor_release(t);
}

/* device memory crosses as kDLCUDA and stays on the device (runs where CUDA is available) */
static void test_dlpack_cuda(void) {
    if (!tide_cuda_is_available()) {
        printf("  (no CUDA here: %s)\n", tide_cuda_unavailable_reason());
        return;
    }
    tide_device     *gpu = NULL;
    tide_tensor     *t = NULL, *u = NULL, *h = NULL;
    DLManagedTensor *m = NULL;
    CHECK_OK(tide_device_get("cuda:0", &gpu));
    CHECK_OK(tide_arange(NULL, gpu, TIDE_DTYPE_F32, 0, 6, 1, &t));
    CHECK_OK(tide_tensor_to_dlpack(t, &m));
    if (!m)
        return;
    CHECK(m->dl_tensor.device.device_type == kDLCUDA && m->dl_tensor.device.device_id == 0);
    CHECK(m->dl_tensor.data == tide_tensor_data(t));
    CHECK_OK(tide_tensor_from_dlpack(NULL, m, &u));
    CHECK(u && tide_tensor_device(u) == gpu && tide_tensor_data(u) == tide_tensor_data(t));
    tide_tensor_release(t);
    CHECK(u && tide_tensor_to(NULL, u, cpu(), TIDE_DTYPE_F32, 0, &h) == TIDE_OK);
    CHECK(h && ((float *)tide_tensor_data(h))[5] == 5.0f);
    tide_tensor_release(h);
    tide_tensor_release(u);
}

/* ---- isolation ---------------------------------------------------------------------------- */

/* a context's limit refuses an allocation with a tide: error; other contexts are unaffected */
static void test_memory_limit(void) {
    tide_ctx    *small = NULL, *free_ctx = NULL;
    tide_tensor *a = NULL, *b = NULL, *c = NULL;
    int64_t      n_small = 256, n_big = 4096; /* 1 KiB, 16 KiB of float32 */
    CHECK_OK(tide_ctx_new(&small));
    CHECK_OK(tide_ctx_new(&free_ctx));
    tide_ctx_set_memory_limit(small, 8192);
    CHECK(tide_ctx_memory_limit(small) == 8192);
    CHECK_OK(tide_tensor_empty(small, cpu(), TIDE_DTYPE_F32, 1, &n_small, &a));
    size_t before = tide_ctx_memory_in_use(small);
    CHECK(before >= 1024);
    CHECK(tide_tensor_empty(small, cpu(), TIDE_DTYPE_F32, 1, &n_big, &b) == TIDE_ELIMIT);
    CHECK(b == NULL);
    CHECK_PREFIX(tide_errmsg(), "tide: ");
    CHECK(tide_ctx_memory_in_use(small) == before);
    /* ops allocating their output are limited too */
    tide_tensor *big = NULL;
    CHECK_OK(tide_tensor_empty(free_ctx, cpu(), TIDE_DTYPE_F32, 1, &n_big, &big));
    CHECK(tide_binary_scalar(small, TIDE_OP_ADD, big, 1.0, 0, &c) == TIDE_ELIMIT);
    CHECK(c == NULL);
    CHECK_OK(tide_binary_scalar(free_ctx, TIDE_OP_ADD, big, 1.0, 0, &c));
    CHECK(tide_ctx_memory_in_use(free_ctx) >= 2 * 16384);
    tide_tensor_release(c);
    tide_tensor_release(big);
    tide_tensor_release(a);
    CHECK(tide_ctx_memory_in_use(small) == 0 && tide_ctx_memory_in_use(free_ctx) == 0);
    tide_ctx_release(small);
    tide_ctx_release(free_ctx);
}

#define WORKERS 4
#define ROUNDS  300

typedef struct worker {
    int   id, bad;
    float buf[1000];
} worker;

/* each thread: its own context and host buffer, ops on a blob view, checked every round */
static void *worker_main(void *arg) {
    worker   *w = arg;
    tide_ctx *ctx = NULL;
    if (tide_ctx_new(&ctx) != TIDE_OK)
        return (void *)(w->bad = 1, NULL);
    tide_ctx_set_memory_limit(ctx, 1 << 20);
    int64_t n = 1000, sq[2] = {10, 100};
    for (int r = 0; r < ROUNDS; r++) {
        for (int i = 0; i < 1000; i++)
            w->buf[i] = (float)(w->id + 1);
        atomic_int   calls = 0;
        tide_tensor *t = NULL, *m = NULL, *v = NULL, *mm = NULL, *s = NULL;
        int          ok = tide_tensor_from_blob(ctx, w->buf, TIDE_DTYPE_F32, 1, &n, NULL, cpu(),
                                                count_deleter, &calls, &t) == TIDE_OK &&
                 tide_binary_scalar(ctx, TIDE_OP_MUL, t, (double)r, 0, &m) == TIDE_OK &&
                 tide_tensor_view(m, 2, sq, &v) == TIDE_OK &&
                 tide_tensor_transpose(v, 0, 1, &s) == TIDE_OK &&
                 tide_matmul(ctx, v, s, &mm) == TIDE_OK; /* [10,100]@[100,10] */
        double  got = 0;
        int64_t idx[2] = {3, 7};
        ok = ok && tide_tensor_get(mm, idx, &got) == TIDE_OK;
        double want = 100.0 * (w->id + 1) * r * (w->id + 1) * r;
        if (!ok || fabs(got - want) > 1e-3 * (want + 1))
            w->bad++;
        tide_tensor_release(mm);
        tide_tensor_release(s);
        tide_tensor_release(v);
        tide_tensor_release(m);
        tide_tensor_release(t);
        if (atomic_load(&calls) != 1)
            w->bad++;
    }
    if (tide_ctx_memory_in_use(ctx) != 0)
        w->bad++;
    tide_ctx_release(ctx);
    return NULL;
}

static void test_threads(void) {
    static worker w[WORKERS];
    pthread_t     th[WORKERS];
    for (int i = 0; i < WORKERS; i++) {
        w[i].id = i;
        w[i].bad = 0;
        CHECK(pthread_create(&th[i], NULL, worker_main, &w[i]) == 0);
    }
    for (int i = 0; i < WORKERS; i++) {
        pthread_join(th[i], NULL);
        CHECK(w[i].bad == 0);
    }
}

int main(void) {
    setenv("TIDE_CPU_DEVICES", "2", 1); /* cpu:0 and cpu:1, read by tide_init */
    CHECK_OK(tide_init());
    RUN(test_blob_lifetime);
    RUN(test_blob_writes_both_ways);
    RUN(test_blob_strides);
    RUN(test_blob_errors);
    RUN(test_dlpack_export);
    RUN(test_dlpack_export_dtypes);
    RUN(test_dlpack_import);
    RUN(test_dlpack_import_errors);
    RUN(test_dlpack_roundtrip);
    RUN(test_dlpack_virtual_device);
    RUN(test_dlpack_cuda);
    RUN(test_memory_limit);
    RUN(test_threads);
    return checks_report();
}
