/*
 * omp_wait.c — part of build/lua/tide/preload.so: tide's OpenMP wait default for Lua programs.
 *
 * libgomp reads its wait policy once, when it is loaded, and it is loaded with core.so: after
 * each parallel region its workers spin for about 300,000 iterations (OMP_WAIT_POLICY unset).
 * On a machine with more runnable threads than cores those spins take the cores the work
 * needs: a Fashion-MNIST MLP epoch on 12,800 images took 6.6-10 s against 0.7-0.9 s with
 * GOMP_SPINCOUNT=3000 or OMP_WAIT_POLICY=PASSIVE (2 cores at load 9, issue 15). A spin of 3,000
 * iterations (microseconds) still catches the next kernel of a training step on a quiet
 * machine. The constructor runs before core.so loads (preload.h); a policy the user set
 * (OMP_WAIT_POLICY or GOMP_SPINCOUNT) is kept.
 */
#include "preload.h"
#include <stdlib.h>

static int spincount_set_here;

__attribute__((constructor)) static void tide_omp_wait_default(void) {
    if (getenv("OMP_WAIT_POLICY") || getenv("GOMP_SPINCOUNT"))
        return;
    spincount_set_here = setenv("GOMP_SPINCOUNT", "3000", 0) == 0;
}

void tide_omp_wait_restore_env(void) {
    if (spincount_set_here)
        unsetenv("GOMP_SPINCOUNT");
    spincount_set_here = 0;
}
