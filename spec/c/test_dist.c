/*
 * test_dist.c — tide_dist_* without a job and without Lua: the plug-ins' unavailable paths and
 * the errors of collectives called before tide_dist_init. (The collectives themselves run under
 * mpirun: spec/dist/.) The NCCL plug-in is the one built next to the Lua module; it loads the
 * toolkit's libnccl where there is one, and reports NCCL unavailable for want of a CUDA device.
 */
#include "test_util.h"
#include "tide.h"
#include "tide_dist.h"

#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv) {
    (void)argc;
    char        nccl[4096];
    const char *slash = strrchr(argv[0], '/');
    snprintf(nccl, sizeof nccl, "%.*s/lua/tide/libtide_nccl.so", slash ? (int)(slash - argv[0]) : 1,
             slash ? argv[0] : ".");
    setenv("TIDE_NCCL_LIB", nccl, 1);
    setenv("TIDE_MPI_LIB", "/nonexistent/libtide_mpi.so", 1);

    /* MPI's plug-in missing: the reason names it and what to install */
    CHECK(!tide_dist_is_available(TIDE_DIST_MPI));
    CHECK_STR(tide_dist_unavailable_reason(TIDE_DIST_MPI),
              "tide was built without its MPI plug-in (/nonexistent/libtide_mpi.so not found); "
              "install Open MPI (apt-get install openmpi-bin libopenmpi-dev) and rebuild tide");
    CHECK_ERR(tide_dist_init(TIDE_DIST_MPI), TIDE_EBACKEND,
              "dist.init: MPI is not available: tide was built without its MPI plug-in");
    CHECK(!tide_dist_is_initialized());

    /* NCCL: the plug-in loads (built on every machine); without a CUDA device it is unavailable,
     * with CUDA's own reason; asked twice, the same answer */
    if (access(nccl, F_OK) == 0 && !tide_cuda_is_available()) {
        const char *r = tide_dist_unavailable_reason(TIDE_DIST_NCCL);
        CHECK(r && strncmp(r, "NCCL needs a CUDA device: ", 26) == 0);
        CHECK(r && strstr(r, tide_cuda_unavailable_reason()) != NULL);
        CHECK(!tide_dist_is_available(TIDE_DIST_NCCL));
        CHECK(r == tide_dist_unavailable_reason(TIDE_DIST_NCCL));
    }

    /* collectives before init: refused with the fix, the tensor untouched */
    tide_tensor *t = NULL, *out = NULL;
    int64_t      shape[1] = {4};
    CHECK_OK(tide_tensor_full(NULL, NULL, TIDE_DTYPE_F32, 1, shape, tide_scalar_f(2.0), &t));
    CHECK_ERR(tide_dist_all_reduce(NULL, t, TIDE_DIST_SUM), TIDE_EINVAL,
              "all_reduce: the job is not started; call dist.init() first, in a program started "
              "by mpirun -np N");
    CHECK_ERR(tide_dist_broadcast(NULL, t, 0), TIDE_EINVAL, "broadcast: the job is not started");
    CHECK_ERR(tide_dist_all_gather(NULL, t, &out), TIDE_EINVAL, "all_gather: the job is not");
    CHECK(out == NULL);
    CHECK_ERR(tide_dist_reduce_scatter(NULL, t, TIDE_DIST_SUM, &out), TIDE_EINVAL,
              "reduce_scatter: the job is not started");
    tide_dist_work *w = NULL;
    CHECK_ERR(tide_dist_all_reduce_start(t, TIDE_DIST_SUM, &w), TIDE_EINVAL,
              "all_reduce: the job is not started");
    CHECK(w == NULL);
    CHECK_OK(tide_dist_wait(NULL));
    CHECK_ERR(tide_dist_barrier(), TIDE_EINVAL, "barrier: the job is not started");
    CHECK_OK(tide_dist_finalize()); /* nothing started: nothing to end */
    int64_t i0[1] = {3};
    double  v = 0;
    CHECK_OK(tide_tensor_get(t, i0, &v));
    CHECK_NEAR(v, 2.0, 0);
    CHECK(tide_dist_rank() == 0 && tide_dist_world_size() == 1);

    /* the timeout: seconds, 0 for none, never negative */
    CHECK_NEAR(tide_dist_timeout(), 300.0, 0);
    tide_dist_set_timeout(-5);
    CHECK_NEAR(tide_dist_timeout(), 0.0, 0);
    tide_dist_set_timeout(2.5);
    CHECK_NEAR(tide_dist_timeout(), 2.5, 0);

    tide_tensor_release(t);
    return tu_finish();
}
