/*
 * bandwidth.c — elementwise add of 1e7 float32 through tide against a plain C triad loop over
 * the same arrays, in the same process (issue 2 target: tide >= 0.8x the loop's bandwidth).
 *
 * Bytes moved per call: 2 reads + 1 write of N floats (write-allocate traffic not counted, the
 * same for every variant). Each figure is the median of REPS timed calls after a warm-up.
 */
#include "bench_util.h"
#include <omp.h>
#include <string.h>

#define N    10000000
#define REPS 21

static double bytes_per_call(void) {
    return 3.0 * sizeof(float) * N;
}

/* STREAM's triad: c = a + s * b (the same traffic as an add) */
static void triad_1t(float *restrict c, const float *restrict a, const float *restrict b) {
    for (long i = 0; i < N; i++)
        c[i] = a[i] + 1.0f * b[i];
}

static void triad_omp(float *restrict c, const float *restrict a, const float *restrict b) {
#pragma omp parallel for simd schedule(static)
    for (long i = 0; i < N; i++)
        c[i] = a[i] + 1.0f * b[i];
}

typedef void (*triad_fn)(float *restrict, const float *restrict, const float *restrict);

/* One repetition runs every variant in turn, so that a slow moment of the machine hits all of
 * them; the first two repetitions warm up (page faults, the allocator's cache). */
enum { V_1T, V_OMP, V_FRESH, V_INTO, NV };

static void time_all(float *c, const tide_tensor *a, const tide_tensor *b, tide_tensor *out,
                     double med[NV]) {
    const float *pa = tide_tensor_data(a), *pb = tide_tensor_data(b);
    double       t[NV][REPS];
    for (int r = -2; r < REPS; r++) {
        double t0 = now_s();
        triad_1t(c, pa, pb);
        double       t1 = now_s();
        tide_tensor *fresh = NULL;
        must(tide_binary(NULL, TIDE_OP_ADD, a, b, &fresh), "tide_binary(add)");
        double t2 = now_s();
        tide_tensor_release(fresh);
        double t3 = now_s();
        must(tide_binary(NULL, TIDE_OP_ADD, a, b, &out), "tide_binary(add, out)");
        double t4 = now_s();
        /* last: a tide call right after this program's own OpenMP region measured up to 2x
         * slower here (the two thread teams meeting), which would not be tide's bandwidth */
        triad_omp(c, pa, pb);
        double t5 = now_s();
        if (r >= 0) {
            t[V_1T][r] = t1 - t0;
            t[V_FRESH][r] = t2 - t1;
            t[V_INTO][r] = t4 - t3;
            t[V_OMP][r] = t5 - t4;
        }
    }
    for (int v = 0; v < NV; v++)
        med[v] = median(t[v], REPS);
}

static void row(const char *name, double secs, double ref) {
    double gbs = bytes_per_call() / secs / 1e9;
    printf("  %-34s %8.2f ms  %7.1f GB/s", name, secs * 1e3, gbs);
    if (ref > 0)
        printf("  %5.2fx", ref / secs);
    printf("\n");
}

int main(void) {
    must(tide_init(), "tide_init");
    tide_device *cpu;
    must(tide_device_get("cpu", &cpu), "tide_device_get");
    int64_t      shape[1] = {N};
    tide_tensor *a = NULL, *b = NULL, *out = NULL;
    must(tide_tensor_empty(NULL, cpu, TIDE_DTYPE_F32, 1, shape, &a), "tide_tensor_empty");
    must(tide_tensor_empty(NULL, cpu, TIDE_DTYPE_F32, 1, shape, &b), "tide_tensor_empty");
    must(tide_tensor_empty(NULL, cpu, TIDE_DTYPE_F32, 1, shape, &out), "tide_tensor_empty");
    must(tide_random_(NULL, a, TIDE_RANDOM_UNIFORM, 0, 1), "tide_random_");
    must(tide_random_(NULL, b, TIDE_RANDOM_UNIFORM, 0, 1), "tide_random_");
    must(tide_fill_(NULL, out, 0), "tide_fill_");
    float *pa = tide_tensor_data(a), *pb = tide_tensor_data(b), *pc = tide_tensor_data(out);

    /* the C loops write into a separate buffer of their own, touched first */
    float *c = malloc(sizeof(float) * N);
    if (!c) {
        fprintf(stderr, "bench: out of memory\n");
        return 1;
    }
    memset(c, 0, sizeof(float) * N);

    double med[NV];
    time_all(c, a, b, out, med);
    double t1 = med[V_1T], tn = med[V_OMP], tf = med[V_FRESH], ti = med[V_INTO];
    double ref = t1 < tn ? t1 : tn;

    /* check the result once, so a fast wrong kernel cannot pass */
    for (long i = 0; i < N; i += 99991)
        if (pc[i] != pa[i] + pb[i]) {
            fprintf(stderr, "bench: tide add gave %g at %ld, expected %g\n", pc[i], i,
                    pa[i] + pb[i]);
            return 1;
        }

    printf("bandwidth: c = a + b, %d float32, median of %d (%d OpenMP threads)\n", N, REPS,
           omp_get_max_threads());
    printf("  %-34s %11s  %12s  %s\n", "", "time", "bandwidth", "vs best C loop");
    row("C triad loop, 1 thread", t1, 0);
    row("C triad loop, OpenMP", tn, 0);
    row("tide add, fresh output", tf, ref);
    row("tide add, into out", ti, ref);
    printf("  target: tide >= 0.80x the best C loop; reached %.2fx (fresh output)\n", ref / tf);

    free(c);
    tide_tensor_release(a);
    tide_tensor_release(b);
    tide_tensor_release(out);
    return 0;
}
