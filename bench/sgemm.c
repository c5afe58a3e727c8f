/*
 * sgemm.c — tide_matmul of two 1024x1024 float32 matrices against raw cblas_sgemm on the same
 * arrays, in the same process (issue 2 target: tide >= 0.9x). Also B given as a transposed
 * view, which tide should hand to BLAS as a transpose flag rather than copy.
 */
#include "bench_util.h"
#include <cblas.h>
#include <math.h>

#define M    1024
#define REPS 11

static double gflops(double secs) {
    return 2.0 * M * M * M / secs / 1e9;
}

/* One repetition times raw BLAS then tide, in turn, so that a slow moment of the machine hits
 * both; tide's outputs are freed at once (the allocator's cache gives the block back). */
static void time_pair(const float *pa, const float *pb, float *pc, const tide_tensor *a,
                      const tide_tensor *b, int trans_b, tide_tensor **keep, double *tb,
                      double *tt) {
    double blas[REPS], tide[REPS];
    for (int r = -1; r < REPS; r++) {
        double t0 = now_s();
        cblas_sgemm(CblasRowMajor, CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans, M, M, M, 1.0f,
                    pa, M, pb, M, 0.0f, pc, M);
        double       t1 = now_s();
        tide_tensor *out = NULL;
        must(tide_matmul(NULL, a, b, &out), "tide_matmul");
        double t2 = now_s();
        if (r >= 0) {
            blas[r] = t1 - t0;
            tide[r] = t2 - t1;
        }
        tide_tensor_release(*keep);
        *keep = out;
    }
    *tb = median(blas, REPS);
    *tt = median(tide, REPS);
}

/* largest |x - y| over the matrices: the two paths must agree */
static double maxdiff(const float *x, const float *y) {
    double d = 0;
    for (long i = 0; i < (long)M * M; i++)
        d = fmax(d, fabs((double)x[i] - (double)y[i]));
    return d;
}

int main(void) {
    must(tide_init(), "tide_init");
    tide_device *cpu;
    must(tide_device_get("cpu", &cpu), "tide_device_get");
    int64_t      shape[2] = {M, M};
    tide_tensor *a = NULL, *b = NULL, *c = NULL, *bt = NULL, *out = NULL, *out_t = NULL;
    must(tide_tensor_empty(NULL, cpu, TIDE_DTYPE_F32, 2, shape, &a), "tide_tensor_empty");
    must(tide_tensor_empty(NULL, cpu, TIDE_DTYPE_F32, 2, shape, &b), "tide_tensor_empty");
    must(tide_tensor_empty(NULL, cpu, TIDE_DTYPE_F32, 2, shape, &c), "tide_tensor_empty");
    must(tide_random_(NULL, a, TIDE_RANDOM_UNIFORM, -1, 1), "tide_random_");
    must(tide_random_(NULL, b, TIDE_RANDOM_UNIFORM, -1, 1), "tide_random_");
    must(tide_tensor_transpose(b, 0, 1, &bt), "tide_tensor_transpose");
    const float *pa = tide_tensor_data(a), *pb = tide_tensor_data(b);
    float       *pc = tide_tensor_data(c);

    double tb, tt, tbt, ttt;
    time_pair(pa, pb, pc, a, b, 0, &out, &tb, &tt);
    double dn = maxdiff(pc, tide_tensor_data(out));
    time_pair(pa, pb, pc, a, bt, 1, &out_t, &tbt, &ttt);
    double dt = maxdiff(pc, tide_tensor_data(out_t));

    printf("sgemm: %dx%d float32, median of %d\n", M, M, REPS);
    printf("  %-30s %9.2f ms  %7.1f GFLOP/s\n", "cblas_sgemm", tb * 1e3, gflops(tb));
    printf("  %-30s %9.2f ms  %7.1f GFLOP/s  %5.2fx  (max |diff| %.1e)\n", "tide_matmul", tt * 1e3,
           gflops(tt), tb / tt, dn);
    printf("  %-30s %9.2f ms  %7.1f GFLOP/s\n", "cblas_sgemm, B transposed", tbt * 1e3,
           gflops(tbt));
    printf("  %-30s %9.2f ms  %7.1f GFLOP/s  %5.2fx  (max |diff| %.1e)\n",
           "tide_matmul, B = b:t() view", ttt * 1e3, gflops(ttt), tbt / ttt, dt);
    printf("  target: tide >= 0.90x cblas_sgemm; reached %.2fx\n", tb / tt);

    tide_tensor_release(a);
    tide_tensor_release(b);
    tide_tensor_release(c);
    tide_tensor_release(bt);
    tide_tensor_release(out);
    tide_tensor_release(out_t);
    if (dn > 1e-3 || dt > 1e-3) {
        fprintf(stderr, "bench: tide_matmul disagrees with cblas_sgemm\n");
        return 1;
    }
    return 0;
}
