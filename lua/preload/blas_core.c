/*
 * blas_core.c — part of build/lua/tide/preload.so: the OpenBLAS kernel family for Lua programs.
 *
 * Debian 12's OpenBLAS (0.3.21, DYNAMIC_ARCH) picks its kernels from a table of CPU models at
 * load time and falls back to "Prescott" (SSE3) for a model it does not know: on a Sapphire
 * Rapids host that is a 1024^2 sgemm at 60 GFLOP/s instead of 300 (issue 15). OpenBLAS reads
 * OPENBLAS_CORETYPE once, when it loads, and it loads with core.so; tide/init.lua loads this
 * object first (its constructor runs before) and calls tide_preload_restore after, so the
 * setting does not reach processes the program starts. The choice is the kernel family
 * OpenBLAS itself uses for such CPUs (every AVX-512 Intel core from Skylake-X on runs the
 * SkylakeX sgemm kernels, AVX2 cores from Haswell and Zen the Haswell ones), from the CPU's
 * own feature bits, so a model newer than the library still gets its vector units. A value the
 * user set is kept.
 */
#include "preload.h"
#include <stdlib.h>

static int coretype_set_here;

const char *tide_blas_coretype_for(unsigned features) {
    const unsigned avx512 = TIDE_CPU_AVX512F | TIDE_CPU_AVX512BW | TIDE_CPU_AVX512VL |
                            TIDE_CPU_AVX512DQ | TIDE_CPU_AVX512CD;
    if ((features & avx512) == avx512)
        return "SkylakeX";
    if ((features & (TIDE_CPU_AVX2 | TIDE_CPU_FMA)) == (TIDE_CPU_AVX2 | TIDE_CPU_FMA))
        return "Haswell";
    return NULL; /* OpenBLAS's own choice is as good as any */
}

unsigned tide_cpu_features(void) {
    unsigned f = 0;
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    __builtin_cpu_init();
    f |= __builtin_cpu_supports("avx2") ? TIDE_CPU_AVX2 : 0;
    f |= __builtin_cpu_supports("fma") ? TIDE_CPU_FMA : 0;
    f |= __builtin_cpu_supports("avx512f") ? TIDE_CPU_AVX512F : 0;
    f |= __builtin_cpu_supports("avx512bw") ? TIDE_CPU_AVX512BW : 0;
    f |= __builtin_cpu_supports("avx512vl") ? TIDE_CPU_AVX512VL : 0;
    f |= __builtin_cpu_supports("avx512dq") ? TIDE_CPU_AVX512DQ : 0;
    f |= __builtin_cpu_supports("avx512cd") ? TIDE_CPU_AVX512CD : 0;
#endif
    return f;
}

__attribute__((constructor)) static void tide_blas_core_default(void) {
    if (getenv("OPENBLAS_CORETYPE"))
        return;
    const char *core = tide_blas_coretype_for(tide_cpu_features());
    if (core)
        coretype_set_here = setenv("OPENBLAS_CORETYPE", core, 0) == 0;
}

void tide_blas_core_restore(void) {
    if (coretype_set_here)
        unsetenv("OPENBLAS_CORETYPE");
    coretype_set_here = 0;
}
