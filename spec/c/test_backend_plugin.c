/* test_backend_plugin.c — a backend added without touching the core: spec/c/fake_backend.c,
 * built into build/fake_backend/libtide_fake.so, is registered through the generic path
 * (tide_backend_register) with a device type of its own; tensors are allocated on it, copied to
 * and from the cpu, between its devices, into its own pinned memory (a non-blocking copy to the
 * host, pin_memory), and every block is freed by the backend that allocated it. The CUDA line
 * is pointed at a missing file first, so nothing here depends on CUDA. */
#include "tide.h"
#include "tide_dlpack.h"
#include "backend.h" /* TIDE_BACKEND_ABI */
#include "test_util.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>

typedef struct fake_counts {
    int allocs, frees, pinned_allocs, pinned_frees, to_host, from_host, syncs;
} fake_counts;

static void (*counts_fn)(fake_counts *);

static fake_counts counts(void) {
    fake_counts c = {0};
    if (counts_fn)
        counts_fn(&c);
    return c;
}

/* 1 when t holds 1, 2, ..., n (float32, on the host) */
static int holds_ramp(const tide_tensor *t, int n) {
    const float *p = tide_tensor_data(t);
    for (int i = 0; i < n; i++)
        if (p[i] != (float)(i + 1))
            return 0;
    return 1;
}

int main(int argc, char **argv) {
    (void)argc;
    char self[PATH_MAX], lib[PATH_MAX + 64], abi999[PATH_MAX + 64];
    if (!realpath(argv[0], self)) {
        fprintf(stderr, "realpath(%s) failed\n", argv[0]);
        return 1;
    }
    *strrchr(self, '/') = '\0';
    snprintf(lib, sizeof lib, "%s/fake_backend/libtide_fake.so", self);
    snprintf(abi999, sizeof abi999, "%s/fake_cuda/abi999/libtide_cuda.so", self);
    CHECK_OK(tide_cuda_set_library_path("/nonexistent/libtide_cuda.so"));

    /* ---- the registry line ---- */
    tide_device_type fake_type = TIDE_DEVICE_CPU, t2;
    CHECK_OK(tide_backend_register("fake", lib, "tide_fake_backend", &fake_type));
    CHECK(fake_type == 2); /* after cpu and cuda */
    CHECK(tide_device_type_count() == 3);
    CHECK_STR(tide_device_type_name(fake_type), "fake");
    CHECK(tide_device_type_from_name("fake", &t2) == TIDE_OK && t2 == fake_type);
    CHECK(!tide_backend_is_loaded(fake_type)); /* loaded on first use, not when registered */
    CHECK_ERR(tide_backend_register("fake", lib, "tide_fake_backend", NULL), TIDE_EINVAL,
              "tide: backend_register: a backend named \"fake\" is already registered");
    CHECK_ERR(tide_backend_register("Fake2", lib, "tide_fake_backend", NULL), TIDE_EINVAL,
              "tide: backend_register: name \"Fake2\" is not a backend name: use 1 to 11 "
              "lower-case letters and digits, starting with a letter");
    CHECK_ERR(tide_backend_register("fake3", lib, "", NULL), TIDE_EINVAL,
              "tide: backend_register: give fake3's entry: the prefix of its exports "
              "<entry>_abi and <entry>_open");

    /* ---- its devices ---- */
    tide_device *f0, *f1, *cpu;
    CHECK_OK(tide_device_get("fake:1", &f1));
    CHECK(tide_backend_is_loaded(fake_type));
    CHECK(tide_backend_is_available(fake_type) && !tide_backend_unavailable_reason(fake_type));
    CHECK_OK(tide_device_get_index(fake_type, 0, &f0));
    CHECK_OK(tide_device_get("cpu", &cpu));
    CHECK(f0 != f1 && tide_device_type_of(f1) == fake_type && tide_device_index(f1) == 1);
    CHECK_STR(tide_device_name(f0), "fake:0");
    CHECK_STR(tide_device_name(f1), "fake:1");
    tide_device *f = NULL;
    CHECK(tide_device_get("fake", &f) == TIDE_OK && f == f0);
    CHECK(tide_device_count(fake_type) == 2);
    CHECK(!tide_device_is_host(f0));
    CHECK_ERR(tide_device_get("fake:2", &f), TIDE_EDEVICE,
              "tide: device: fake:2 does not exist: there are 2 FAKE devices (fake:0 to "
              "fake:1); see tide.devices()");
    CHECK_ERR(tide_device_get("gpu", &f), TIDE_EINVAL,
              "tide: device: unknown device \"gpu\"; use \"cpu\", \"cpu:N\", \"cuda\", "
              "\"cuda:N\", \"fake\" or \"fake:N\"");
    void *h = dlopen(lib, RTLD_NOW | RTLD_NOLOAD); /* the copy the core loaded */
    CHECK(h != NULL);
    if (h)
        *(void **)&counts_fn = dlsym(h, "fake_backend_counts");
    CHECK(counts_fn != NULL);

    /* ---- cpu -> fake:1 -> fake:0 (staged through the host) -> cpu ---- */
    float               ramp[6] = {1, 2, 3, 4, 5, 6};
    int64_t             shape[2] = {2, 3};
    tide_tensor        *host = NULL, *on1 = NULL, *on0 = NULL, *back = NULL;
    tide_ctx           *ctx = tide_ctx_default();
    tide_transfer_stats ts;
    tide_ctx_reset_transfer_stats(ctx);
    CHECK_OK(
        tide_tensor_from_blob(ctx, ramp, TIDE_DTYPE_F32, 2, shape, NULL, cpu, NULL, NULL, &host));
    CHECK_OK(tide_tensor_to(ctx, host, f1, TIDE_DTYPE_F32, 0, &on1));
    CHECK(on1 && tide_tensor_device(on1) == f1);
    fake_counts c = counts();
    CHECK(c.allocs == 1 && c.from_host == 1);
    CHECK_OK(tide_tensor_to(ctx, on1, f0, TIDE_DTYPE_F32, 0, &on0));
    c = counts();
    CHECK(c.allocs == 2 && c.to_host == 1 && c.from_host == 2); /* no copy_peer: staged */
    CHECK_OK(tide_tensor_to(ctx, on0, cpu, TIDE_DTYPE_F32, 0, &back));
    CHECK(back && tide_device_is_host(tide_tensor_device(back)) && holds_ramp(back, 6));
    CHECK(back && !tide_tensor_is_pinned(back));
    tide_ctx_transfer_stats(ctx, &ts);
    CHECK(ts.h2d_count == 1 && ts.d2d_count == 1 && ts.d2h_count == 1);
    tide_tensor_release(back);

    /* ---- a non-blocking copy to the host lands in the fake's own pinned memory ---- */
    back = NULL;
    int syncs = counts().syncs;
    CHECK_OK(tide_tensor_to(ctx, on1, cpu, TIDE_DTYPE_F32, TIDE_TO_NON_BLOCKING, &back));
    CHECK(back && tide_tensor_is_pinned(back));
    CHECK(counts().pinned_allocs == 1);
    CHECK(back && holds_ramp(back, 6)); /* the first touch synchronizes fake:1 */
    CHECK(counts().syncs == syncs + 1);
    tide_tensor_release(back); /* freed by the fake's free_pinned (it aborts on a foreign block) */
    CHECK(counts().pinned_frees == 1);

    /* ---- pin_memory: the first registry line with pinned memory (CUDA is missing) ---- */
    tide_tensor *pinned = NULL;
    CHECK_OK(tide_tensor_pin_memory(ctx, host, &pinned));
    CHECK(pinned && tide_tensor_is_pinned(pinned) && holds_ramp(pinned, 6));
    CHECK(counts().pinned_allocs == 2);
    tide_tensor_release(pinned);
    CHECK(counts().pinned_frees == 2);

    /* ---- what the fake lacks is refused by name, nothing crashes ---- */
    tide_tensor *sum = NULL, *t1 = NULL;
    CHECK_ERR(tide_binary(ctx, TIDE_OP_ADD, on1, on1, &sum), TIDE_ENOTSUP,
              "not implemented on fake:1");
    CHECK(sum == NULL);
    CHECK_OK(tide_tensor_transpose(on1, 0, 1, &t1));
    CHECK_ERR(tide_tensor_contiguous(ctx, t1, &sum), TIDE_ENOTSUP, "not implemented on fake:1");
    /* a kernel row (include/tide_kernels.def): the one dispatch's answer for a backend without
     * a kernels table */
    const tide_tensor *rin[2] = {on1, NULL};
    tide_kernel_scalar rp[2] = {{.i = tide_tensor_numel(on1)}, {.f = 1e-5}};
    tide_tensor       *rout[2] = {NULL, NULL};
    CHECK_ERR(tide_kernel_run(ctx, TIDE_K_RMS_NORM, rin, rp, NULL, rout), TIDE_ENOTSUP,
              "tide: rms_norm: not implemented on fake:1");
    CHECK(rout[0] == NULL && rout[1] == NULL);
    DLManagedTensor *dl = NULL;
    CHECK_ERR(tide_tensor_to_dlpack(on1, &dl), TIDE_ENOTSUP,
              "tide: to_dlpack: fake:1 has no DLPack device type; copy the tensor to the cpu "
              "first");
    tide_tensor_release(t1);

    /* ---- every device block back to the fake ---- */
    tide_tensor_release(on0);
    tide_tensor_release(on1);
    tide_tensor_release(host);
    c = counts();
    CHECK(c.allocs == 4 && c.frees == 4); /* the outputs of the two refused ops included */

    /* ---- a registered line gets the loader's checks: the ABI version first ---- */
    tide_device_type stale;
    CHECK_OK(tide_backend_register("stale", abi999, "tide_cuda_backend", &stale));
    CHECK(!tide_backend_is_available(stale));
    const char *r = tide_backend_unavailable_reason(stale);
    char        stale_why[160];
    snprintf(stale_why, sizeof stale_why,
             "is a STALE backend of another tide (backend ABI version 999; this tide needs "
             "version %d)",
             TIDE_BACKEND_ABI);
    CHECK(r && strstr(r, stale_why));
    CHECK_ERR(tide_device_get("stale:0", &f), TIDE_EDEVICE,
              "tide: device: STALE is not available: ");
    /* one without the four entries every backend needs is refused before any use */
    char nocopy[PATH_MAX + 64];
    snprintf(nocopy, sizeof nocopy, "%s/fake_backend/libtide_fake_nocopy.so", self);
    tide_device_type broken;
    CHECK_OK(tide_backend_register("broken", nocopy, "tide_fake_backend", &broken));
    CHECK(tide_device_count(broken) == 0);
    r = tide_backend_unavailable_reason(broken);
    CHECK(r && strstr(r, "libtide_fake_nocopy.so gives no alloc, free, copy_to_host or "
                         "copy_from_host: a backend needs all four"));
    /* and CUDA itself, missing, says so through the same path */
    r = tide_cuda_unavailable_reason();
    CHECK(r && strstr(r, "the CUDA backend was not found at /nonexistent/libtide_cuda.so (given "
                         "to tide_cuda_set_library_path)"));
    return tu_finish();
}
