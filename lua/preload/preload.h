/*
 * preload.h — build/lua/tide/preload.so: environment defaults for the libraries core.so loads
 * (libgomp, OpenBLAS), set by constructors before core.so loads them and taken back by
 * tide_preload_restore once they have read them. No Lua headers: the object serves every Lua
 * version, and the one function Lua calls ignores its argument.
 */
#ifndef TIDE_PRELOAD_H
#define TIDE_PRELOAD_H

enum {
    TIDE_CPU_AVX2 = 1u << 0,
    TIDE_CPU_FMA = 1u << 1,
    TIDE_CPU_AVX512F = 1u << 2,
    TIDE_CPU_AVX512BW = 1u << 3,
    TIDE_CPU_AVX512VL = 1u << 4,
    TIDE_CPU_AVX512DQ = 1u << 5,
    TIDE_CPU_AVX512CD = 1u << 6,
};

unsigned    tide_cpu_features(void);                   /* TIDE_CPU_* bits of this CPU */
const char *tide_blas_coretype_for(unsigned features); /* OPENBLAS_CORETYPE value, or NULL */
void        tide_blas_core_restore(void);
void        tide_omp_wait_restore_env(void);

struct lua_State;
int tide_preload_restore(struct lua_State *L); /* a lua_CFunction for package.loadlib */

#endif
