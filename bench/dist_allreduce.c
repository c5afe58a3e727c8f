/*
 * dist_allreduce.c — tide_dist_all_reduce against a raw MPI_Allreduce of the same float32
 * buffer, at 2 ranks, 1 MB and 64 MB, in the same run. Started plainly (by `make bench`), it
 * starts itself again under `mpirun -np 2`. Bandwidth is bytes / time of one all-reduce (the
 * buffer size over the median time); rounds alternate tide and raw so both see the same machine.
 */
#include "bench_util.h"
#include "tide.h"
#include "tide_dist.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static double time_raw(float *buf, int n) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = now_s();
    MPI_Allreduce(MPI_IN_PLACE, buf, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    return now_s() - t0;
}

static double time_tide(tide_tensor *t) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = now_s();
    must(tide_dist_all_reduce(NULL, t, TIDE_DIST_SUM), "all_reduce");
    return now_s() - t0;
}

int main(int argc, char **argv) {
    if (!getenv("OMPI_COMM_WORLD_SIZE")) {
        /* not under mpirun: start 2 ranks of this program */
        execlp("mpirun", "mpirun", "--allow-run-as-root", "--oversubscribe", "--timeout", "300",
               "-np", "2", "-x", "OMP_NUM_THREADS=1", argv[0], (char *)NULL);
        perror("dist_allreduce: mpirun");
        return 1;
    }
    (void)argc;
    setenv("TIDE_MPI_LIB", "build/lua/tide/libtide_mpi.so", 0);
    MPI_Init(NULL, NULL);
    must(tide_dist_init(TIDE_DIST_MPI), "dist.init");
    int rank = tide_dist_rank(), world = tide_dist_world_size();
    if (rank == 0)
        printf("all_reduce, float32 sum, %d ranks: tide vs raw MPI_Allreduce (same run)\n", world);
    static const size_t sizes[] = {1u << 20, 64u << 20};
    int                 worst_ok = 1;
    for (int s = 0; s < 2; s++) {
        int          n = (int)(sizes[s] / sizeof(float));
        int          reps = s == 0 ? 200 : 12;
        int64_t      shape[1] = {n};
        tide_tensor *t = NULL;
        must(tide_tensor_full(NULL, NULL, TIDE_DTYPE_F32, 1, shape, tide_scalar_f(1e-3), &t),
             "full");
        float  *raw = malloc(sizes[s]);
        double *tt = malloc(sizeof(double) * (size_t)reps),
               *tr = malloc(sizeof(double) * (size_t)reps);
        for (int i = 0; i < n; i++)
            raw[i] = 1e-3f;
        for (int w = 0; w < 3; w++) { /* warm up both paths */
            time_raw(raw, n);
            time_tide(t);
        }
        for (int r = 0; r < reps; r++) {
            tr[r] = time_raw(raw, n);
            tt[r] = time_tide(t);
        }
        double mt = median(tt, reps), mr = median(tr, reps);
        /* the slower rank decides */
        MPI_Allreduce(MPI_IN_PLACE, &mt, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        MPI_Allreduce(MPI_IN_PLACE, &mr, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        double mb = (double)sizes[s] / 1e6, ratio = mr / mt;
        if (rank == 0)
            printf("  %5.0f MB: tide %8.3f ms %7.0f MB/s | raw %8.3f ms %7.0f MB/s | tide/raw "
                   "%.2fx %s\n",
                   mb, mt * 1e3, mb / mt, mr * 1e3, mb / mr, ratio,
                   ratio >= 0.9 ? "(>= 0.9x: ok)" : "(below 0.9x)");
        worst_ok = worst_ok && ratio >= 0.9;
        tide_tensor_release(t);
        free(raw);
        free(tt);
        free(tr);
    }
    (void)worst_ok;
    tide_dist_finalize();
    return 0;
}
