/*
 * test_cuda_unavailable.c — loads the built libtide_cuda.so the way the core does and checks
 * its contract without Lua:
 *   - it exports tide_cuda_backend_open and tide_cuda_backend_abi (this core's version) and
 *     nothing else of its own (nor the CUDA runtime's);
 *   - without a driver or a device, opening fails with a reason and does not crash, every time;
 *     the core then reports CUDA unavailable with that reason;
 *   - with a GPU, the vtable is complete and a few kernels give hand-computed values.
 * The library is looked for next to this binary (BUILD/lua/tide/), or given as the argument (the
 * test suite passes the emulated backend, build/cuda-emu/libtide_cuda.so, to run the GPU part);
 * where it was not built (no CUDA toolkit, or the sanitizer build) the test reports itself
 * pending.
 */
#include "backend.h"
#include "scalar_math.h"
#include "test_util.h"
#include "tide.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <unistd.h>

static char lib_path[4096];

static void find_lib(const char *argv0) {
    const char *slash = strrchr(argv0, '/');
    int         n = slash ? (int)(slash - argv0) : 1;
    snprintf(lib_path, sizeof lib_path, "%.*s/lua/tide/libtide_cuda.so", n, slash ? argv0 : ".");
}

static tide_kview kv(void *data, tide_dtype dt, int ndim, const int64_t *shape) {
    tide_kview v;
    memset(&v, 0, sizeof v);
    v.data = data;
    v.dtype = dt;
    v.ndim = ndim;
    int64_t s = 1;
    for (int d = ndim - 1; d >= 0; d--) {
        v.shape[d] = shape[d];
        v.strides[d] = s;
        s *= shape[d];
    }
    return v;
}

/* a GPU is present: run a few kernels through the vtable against hand-computed values */
static void gpu_smoke(const tide_backend *be, int count) {
    CHECK(count >= 1);
    CHECK_STR(be->name, "cuda");
    CHECK(be->alloc && be->free && be->copy_to_host && be->copy_from_host && be->copy_peer &&
          be->synchronize && be->memory_stats && be->empty_cache && be->alloc_pinned &&
          be->free_pinned && be->binary && be->binary_scalar && be->unary && be->copy && be->fill &&
          be->reduce && be->matmul && be->index_select && be->index_add && be->where &&
          be->random && be->arange);
    CHECK(be->nkernels > TIDE_K_SOFTMAX_BACKWARD && be->kernels[TIDE_K_SOFTMAX] &&
          be->kernels[TIDE_K_SOFTMAX_BACKWARD]);
    CHECK(be->nkernels > TIDE_K_FOLD2D && be->kernels[TIDE_K_MAX_POOL2D] &&
          be->kernels[TIDE_K_MAX_POOL2D_BACKWARD] && be->kernels[TIDE_K_UNFOLD2D] &&
          be->kernels[TIDE_K_FOLD2D]);
    tide_device dev;
    memset(&dev, 0, sizeof dev);
    dev.type = TIDE_DEVICE_CUDA;
    dev.index = 0;
    dev.backend = be;
    snprintf(dev.name, sizeof dev.name, "cuda:0");

    /* a [2, 3] @ b [3, 2], a + b^T, sum over dim 1 */
    float   ha[6] = {1, 2, 3, 4, 5, 6}, hb[6] = {7, 8, 9, 10, 11, 12};
    void   *da = NULL, *db = NULL, *dc = NULL, *ds = NULL;
    int64_t s23[2] = {2, 3}, s22[3] = {1, 2, 2}, b23[3] = {1, 2, 3}, b32[3] = {1, 3, 2},
            s21[2] = {2, 1};
    CHECK_OK(be->alloc(&dev, sizeof ha, &da));
    CHECK_OK(be->alloc(&dev, sizeof hb, &db));
    CHECK_OK(be->alloc(&dev, 4 * sizeof(float), &dc));
    CHECK_OK(be->alloc(&dev, 2 * sizeof(float), &ds));
    if (!da || !db || !dc || !ds)
        return;
    tide_memory_stats ms;
    CHECK_OK(be->memory_stats(&dev, &ms));
    CHECK(ms.allocated == sizeof ha + sizeof hb + 6 * sizeof(float));
    CHECK(ms.reserved >= ms.allocated);
    CHECK_OK(be->copy_from_host(&dev, da, ha, sizeof ha, 0));
    CHECK_OK(be->copy_from_host(&dev, db, hb, sizeof hb, 0));

    tide_kview a3 = kv(da, TIDE_DTYPE_F32, 3, b23), b3 = kv(db, TIDE_DTYPE_F32, 3, b32),
               c3 = kv(dc, TIDE_DTYPE_F32, 3, s22);
    CHECK_OK(be->matmul(&dev, &c3, &a3, &b3));
    float hc[4] = {0};
    CHECK_OK(be->copy_to_host(&dev, hc, dc, sizeof hc, 0));
    CHECK_NEAR(hc[0], 58, 1e-4);  /* 1*7 + 2*9 + 3*11 */
    CHECK_NEAR(hc[1], 64, 1e-4);  /* 1*8 + 2*10 + 3*12 */
    CHECK_NEAR(hc[2], 139, 1e-4); /* 4*7 + 5*9 + 6*11 */
    CHECK_NEAR(hc[3], 154, 1e-4);

    /* a + b^T: b viewed [2, 3] with strides (1, 2) is the transpose of b [3, 2] */
    tide_kview a2 = kv(da, TIDE_DTYPE_F32, 2, s23), bt = kv(db, TIDE_DTYPE_F32, 2, s23),
               o2 = kv(db, TIDE_DTYPE_F32, 2, s23);
    bt.strides[0] = 1;
    bt.strides[1] = 2;
    void *dsum = NULL;
    CHECK_OK(be->alloc(&dev, sizeof ha, &dsum));
    o2.data = dsum;
    CHECK_OK(be->binary(&dev, TIDE_OP_ADD, &o2, &a2, &bt));
    float hs[6] = {0};
    CHECK_OK(be->copy_to_host(&dev, hs, dsum, sizeof hs, 0));
    CHECK_NEAR(hs[0], 1 + 7, 0);
    CHECK_NEAR(hs[1], 2 + 9, 0);
    CHECK_NEAR(hs[2], 3 + 11, 0);
    CHECK_NEAR(hs[3], 4 + 8, 0);
    CHECK_NEAR(hs[5], 6 + 12, 0);

    tide_kview r = kv(ds, TIDE_DTYPE_F32, 2, s21);
    CHECK_OK(be->reduce(&dev, TIDE_OP_SUM, &r, NULL, &a2, 1));
    float hr[2] = {0};
    CHECK_OK(be->copy_to_host(&dev, hr, ds, sizeof hr, 0));
    CHECK_NEAR(hr[0], 6, 0);
    CHECK_NEAR(hr[1], 15, 0);

    /* the same counter-based draw as the CPU's formula */
    CHECK_OK(be->random(&dev, &a2, TIDE_RANDOM_UNIFORM, 0, 1, 42, 0));
    CHECK_OK(be->copy_to_host(&dev, hs, da, sizeof hs, 0));
    CHECK_NEAR(hs[3], (float)tide_rng_uniform(42, 3), 0);

    be->free(&dev, da, sizeof ha);
    be->free(&dev, db, sizeof hb);
    be->free(&dev, dc, 4 * sizeof(float));
    be->free(&dev, ds, 2 * sizeof(float));
    be->free(&dev, dsum, sizeof ha);
    CHECK_OK(be->memory_stats(&dev, &ms));
    CHECK(ms.allocated == 0);
    CHECK_OK(be->empty_cache(&dev));
    CHECK_OK(be->memory_stats(&dev, &ms));
    CHECK(ms.reserved == 0);
}

int main(int argc, char **argv) {
    if (argc > 1)
        snprintf(lib_path, sizeof lib_path, "%s", argv[1]); /* e.g. the emulated backend */
    else
        find_lib(argv[0]);
    if (access(lib_path, F_OK) != 0) {
        printf("%s not built (no CUDA toolkit, or a sanitizer build): nothing to test\n", lib_path);
        printf("0 passed, 0 failed, 1 pending\n");
        return 0;
    }
    void *h = dlopen(lib_path, RTLD_NOW | RTLD_LOCAL);
    CHECK(h != NULL);
    if (!h) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return tu_finish();
    }
    tide_backend_open_fn open_fn;
    *(void **)&open_fn = dlsym(h, "tide_cuda_backend" TIDE_BACKEND_OPEN_SUFFIX);
    CHECK(open_fn != NULL);
    /* it says which backend interface it was built for: this one */
    tide_backend_abi_fn abi_fn;
    *(void **)&abi_fn = dlsym(h, "tide_cuda_backend" TIDE_BACKEND_ABI_SUFFIX);
    CHECK(abi_fn != NULL && abi_fn() == TIDE_BACKEND_ABI);
    /* internal functions and the statically linked CUDA runtime stay hidden */
    CHECK(dlsym(h, "tide_cuda_alloc") == NULL);
    CHECK(dlsym(h, "tide_cuda_seterr") == NULL);
    CHECK(dlsym(h, "cudaMalloc") == NULL);
    if (!open_fn)
        return tu_finish();

    const tide_backend *be = (const tide_backend *)1;
    int                 count = -1;
    tide_status         st = open_fn(tide_seterr, &be, &count);
    if (st == TIDE_OK) {
        printf("a CUDA device is present: checking kernels through the vtable\n");
        gpu_smoke(be, count);
        return tu_finish();
    }
    const char *msg = tide_errmsg();
    printf("unavailable: %s\n", msg);
    CHECK(st == TIDE_EDEVICE);
    CHECK(be == NULL);
    CHECK(count == 0);
    CHECK(strncmp(msg, "tide: ", 6) == 0);
    /* one cause, stated once: a missing driver or device is the whole message, never followed
     * by the runtime's own text for the same absence ("CUDA driver version is insufficient") */
    CHECK(strcmp(msg, "tide: no CUDA driver found (libcuda.so.1 could not be loaded)") == 0 ||
          strcmp(msg, "tide: no CUDA device found") == 0 ||
          strncmp(msg, "tide: CUDA could not be initialised: ", 37) == 0);
    CHECK(strstr(msg, "insufficient") == NULL || strstr(msg, "no CUDA driver") == NULL);
    /* a second call answers the same, still without crashing */
    char first[512];
    snprintf(first, sizeof first, "%s", msg);
    be = (const tide_backend *)1;
    CHECK(open_fn(tide_seterr, &be, &count) == st);
    CHECK(be == NULL);
    CHECK_STR(tide_errmsg(), first);

    /* the core, pointed at this library, reports CUDA unavailable with the same reason */
    setenv("TIDE_CUDA_LIB", lib_path, 1);
    CHECK(tide_cuda_is_available() == 0);
    CHECK(tide_device_count(TIDE_DEVICE_CUDA) == 0);
    const char *reason = tide_cuda_unavailable_reason();
    CHECK_STR(reason, first + 6);
    tide_device *dev = NULL;
    CHECK(tide_device_get("cuda", &dev) == TIDE_EDEVICE);
    CHECK(strstr(tide_errmsg(), "CUDA is not available") != NULL);
    return tu_finish();
}
