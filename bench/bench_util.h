/* bench_util.h — timing and checking helpers shared by the C benchmarks in bench/. */
#ifndef TIDE_BENCH_UTIL_H
#define TIDE_BENCH_UTIL_H

#include "tide.h"
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static inline double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* benchmarks are programs, not the library: a failed tide call ends them with its message */
static inline void must(tide_status st, const char *what) {
    if (st != TIDE_OK) {
        fprintf(stderr, "bench: %s failed: %s\n", what, tide_errmsg());
        exit(1);
    }
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static inline double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

#endif
