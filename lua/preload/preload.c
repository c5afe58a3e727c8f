/*
 * preload.c — build/lua/tide/preload.so's one entry point: tide/init.lua loads the object
 * with package.loadlib before require "tide.core" (so the constructors of omp_wait.c and
 * blas_core.c set their defaults before libgomp and OpenBLAS read the environment) and calls
 * this once core.so is loaded, so the defaults do not reach processes the program starts.
 */
#include "preload.h"

int tide_preload_restore(struct lua_State *L) {
    (void)L;
    tide_omp_wait_restore_env();
    tide_blas_core_restore();
    return 0;
}
