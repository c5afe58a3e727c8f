/*
 * blas_loader.cu — cuBLAS, opened with dlopen on the first gemm.
 *
 * Linked at build time, cuBLAS would be mapped as soon as the core loads this backend, which it
 * does to answer tide.cuda.is_available(): ~150 MB of address space and a quarter second for a
 * host that may never run a gemm on the GPU. It is looked for next to this library first (the
 * emulated cuBLAS of the tests lies there), then by the loader's search, which includes this
 * library's RUNPATH (the toolkit's lib64, set by cuda.mk).
 */
#include "common.cuh"

#include <dlfcn.h>
#include <mutex>
#include <stdio.h>

#define TIDE_STR_(x) #x
#define TIDE_STR(x)  TIDE_STR_(x) /* expands first: cublasCreate is cublasCreate_v2 */

#ifndef TIDE_CUBLAS_LIB
#define TIDE_CUBLAS_LIB "libcublas.so." TIDE_STR(CUBLAS_VER_MAJOR)
#endif

tide_cublas_api tide_cublas;

static std::once_flag g_once;
static bool           g_ok;
static char           g_reason[512];

static void *open_cublas(void) {
    Dl_info info;
    if (dladdr((void *)&tide_cuda_load_cublas, &info) && info.dli_fname) {
        const char *slash = strrchr(info.dli_fname, '/');
        char        path[4096];
        if (slash) {
            snprintf(path, sizeof path, "%.*s/%s", (int)(slash - info.dli_fname), info.dli_fname,
                     TIDE_CUBLAS_LIB);
            if (void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL))
                return h;
        }
    }
    return dlopen(TIDE_CUBLAS_LIB, RTLD_NOW | RTLD_LOCAL);
}

static void load_once() {
    void *h = open_cublas();
    if (!h) {
        const char *e = dlerror();
        snprintf(g_reason, sizeof g_reason, "%.400s", e ? e : TIDE_CUBLAS_LIB " not found");
        return;
    }
    struct {
        void      **slot;
        const char *name;
    } syms[] = {
        {(void **)&tide_cublas.create, TIDE_STR(cublasCreate)},
        {(void **)&tide_cublas.set_stream, TIDE_STR(cublasSetStream)},
        {(void **)&tide_cublas.status_string, TIDE_STR(cublasGetStatusString)},
        {(void **)&tide_cublas.sgemm, TIDE_STR(cublasSgemm)},
        {(void **)&tide_cublas.dgemm, TIDE_STR(cublasDgemm)},
        {(void **)&tide_cublas.sgemm_batched, TIDE_STR(cublasSgemmStridedBatched)},
        {(void **)&tide_cublas.dgemm_batched, TIDE_STR(cublasDgemmStridedBatched)},
        {(void **)&tide_cublas.gemm_ex, TIDE_STR(cublasGemmEx)},
        {(void **)&tide_cublas.gemm_batched_ex, TIDE_STR(cublasGemmStridedBatchedEx)},
    };
    for (auto &s : syms) {
        void *p = dlsym(h, s.name);
        if (!p) {
            snprintf(g_reason, sizeof g_reason, "%s does not export %s", TIDE_CUBLAS_LIB, s.name);
            tide_cublas = tide_cublas_api{}; /* all or nothing */
            return;
        }
        memcpy(s.slot, &p, sizeof p);
    }
    g_ok = true;
}

tide_status tide_cuda_load_cublas(void) {
    std::call_once(g_once, load_once);
    if (g_ok)
        return TIDE_OK;
    return tide_cuda_seterr(TIDE_EBACKEND,
                            "matmul: cuBLAS could not be loaded (%s); install the CUDA toolkit's "
                            "cuBLAS (%s) or put its directory on LD_LIBRARY_PATH",
                            g_reason, TIDE_CUBLAS_LIB);
}
