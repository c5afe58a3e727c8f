/* test_blas_core.c — the OpenBLAS kernel family tide's preload picks from CPU feature bits
 * (lua/preload/blas_core.c): AVX-512 hosts get SkylakeX, AVX2+FMA hosts Haswell, others keep
 * OpenBLAS's own choice; spec/blas_core_spec.lua checks the environment side in a process. */
#include "../../lua/preload/preload.h"
#include "test_util.h"

#define AVX512_ALL                                                                                 \
    (TIDE_CPU_AVX512F | TIDE_CPU_AVX512BW | TIDE_CPU_AVX512VL | TIDE_CPU_AVX512DQ |                \
     TIDE_CPU_AVX512CD)

static int is(const char *got, const char *want) {
    if (!got || !want)
        return got == want;
    return strcmp(got, want) == 0;
}

int main(void) {
    /* Sapphire Rapids, Ice Lake, Skylake-X, Zen 4: every AVX-512 subset the kernels use */
    CHECK(is(tide_blas_coretype_for(AVX512_ALL | TIDE_CPU_AVX2 | TIDE_CPU_FMA), "SkylakeX"));
    /* Knights Landing has AVX512F/CD but not BW/VL/DQ: the Haswell kernels, not SkylakeX */
    CHECK(is(
        tide_blas_coretype_for(TIDE_CPU_AVX512F | TIDE_CPU_AVX512CD | TIDE_CPU_AVX2 | TIDE_CPU_FMA),
        "Haswell"));
    CHECK(is(tide_blas_coretype_for(TIDE_CPU_AVX2 | TIDE_CPU_FMA), "Haswell"));
    /* AVX2 without FMA (no such x86 core ships, but the Haswell kernels need both) */
    CHECK(is(tide_blas_coretype_for(TIDE_CPU_AVX2), NULL));
    CHECK(is(tide_blas_coretype_for(0), NULL));
    /* the bits come from this CPU: whatever it is, the mapping of its own bits is one of three */
    const char *here = tide_blas_coretype_for(tide_cpu_features());
    CHECK(here == NULL || is(here, "SkylakeX") || is(here, "Haswell"));
    printf("%d passed, %d failed\n", tu_pass, tu_fail);
    return tu_fail != 0;
}
