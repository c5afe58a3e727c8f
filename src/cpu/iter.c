/*
 * iter.c — the CPU backend's strided N-d iterator and small dtype helpers.
 */
#include "cpu.h"
#include <omp.h>
#include <string.h>

static const char *dtname(tide_dtype dt) {
    static const char *names[] = {"float32", "float64", "float16", "bfloat16",
                                  "int32",   "int64",   "uint8",   "bool"};
    return (unsigned)dt < sizeof names / sizeof names[0] ? names[dt] : "unknown dtype";
}

const char *cpu_op_name(tide_op op) {
    static const char *names[] = {
#define X(e, family, name, ...) name,
#include "tide_ops.def"
#undef X
    };
    return (unsigned)op < TIDE_OP_COUNT ? names[op] : "op";
}

tide_status cpu_notsup(const char *op, tide_dtype dt) {
    return tide_seterr(TIDE_ENOTSUP,
                       "%s: %s is not supported on the CPU yet; convert with :float() first", op,
                       dtname(dt));
}

tide_status cpu_iter_init(cpu_iter *it, const char *op, int nops, const tide_kview *const *views) {
    const tide_kview *o = views[0];
    int               nd = o->ndim;
    int64_t           es[CPU_MAX_OPS];
    int               contig = 1;
    for (int k = 0; k < nops; k++) {
        const tide_kview *v = views[k];
        int               same = v->ndim == nd;
        for (int d = 0; same && d < nd; d++)
            same = v->shape[d] == o->shape[d];
        if (!same)
            return tide_seterr(TIDE_EINVAL,
                               "%s: operand %d has a different shape from the output (cpu "
                               "kernel) ; expand operands to the output's shape first",
                               op, k);
        es[k] = (int64_t)cpu_dtype_size(v->dtype);
        it->base[k] = (char *)v->data;
        contig = contig && cpu_is_contiguous(v);
    }
    it->nops = nops;
    it->numel = cpu_numel(o);
    if (contig) { /* the common case: one row */
        it->ndim = 1;
        it->shape[0] = it->numel;
        for (int k = 0; k < nops; k++)
            it->strides[k][0] = es[k];
        return TIDE_OK;
    }
    /* drop size-1 dims, then merge an outer dim into the next inner one when every operand's
     * outer stride equals inner stride * inner size */
    int n = 0;
    for (int d = 0; d < nd; d++) {
        if (o->shape[d] == 1)
            continue;
        int merge = n > 0;
        for (int k = 0; merge && k < nops; k++)
            merge = it->strides[k][n - 1] == views[k]->strides[d] * es[k] * o->shape[d];
        if (merge) {
            it->shape[n - 1] *= o->shape[d];
            for (int k = 0; k < nops; k++)
                it->strides[k][n - 1] = views[k]->strides[d] * es[k];
            continue;
        }
        it->shape[n] = o->shape[d];
        for (int k = 0; k < nops; k++)
            it->strides[k][n] = views[k]->strides[d] * es[k];
        n++;
    }
    if (n == 0) { /* a scalar: one row of one element */
        it->shape[0] = 1;
        for (int k = 0; k < nops; k++)
            it->strides[k][0] = 0;
        n = 1;
    }
    it->ndim = n;
    return TIDE_OK;
}

/* walks the row-major positions [begin, end) row by row */
static void run_range(const cpu_iter *it, int64_t begin, int64_t end, cpu_loop_fn fn, void *arg) {
    int     nd = it->ndim, last = nd - 1, nops = it->nops;
    int64_t idx[TIDE_MAX_DIMS], s[CPU_MAX_OPS];
    char   *p[CPU_MAX_OPS];
    for (int k = 0; k < nops; k++)
        s[k] = it->strides[k][last];
    if (nd == 1) { /* one row: no index arithmetic */
        for (int k = 0; k < nops; k++)
            p[k] = it->base[k] + begin * s[k];
        fn(p, s, end - begin, begin, arg);
        return;
    }
    int64_t rem = begin;
    for (int d = last; d >= 0; d--) {
        idx[d] = rem % it->shape[d];
        rem /= it->shape[d];
    }
    int64_t cur = begin;
    while (cur < end) {
        for (int k = 0; k < nops; k++) {
            char *q = it->base[k];
            for (int d = 0; d < nd; d++)
                q += idx[d] * it->strides[k][d];
            p[k] = q;
        }
        int64_t n = it->shape[last] - idx[last];
        if (n > end - cur)
            n = end - cur;
        fn(p, s, n, cur, arg);
        cur += n;
        idx[last] = 0;
        for (int d = last - 1; d >= 0; d--) {
            if (++idx[d] < it->shape[d])
                break;
            idx[d] = 0;
        }
    }
}

void cpu_iter_run(const cpu_iter *it, int64_t grain, cpu_loop_fn fn, void *arg) {
    int64_t total = it->numel;
    if (total <= 0)
        return;
    if (grain <= 0 || total < grain || omp_get_max_threads() < 2 || omp_in_parallel()) {
        run_range(it, 0, total, fn, arg);
        return;
    }
    int64_t nt = total / grain; /* no thread gets less than a grain */
    if (nt > omp_get_max_threads())
        nt = omp_get_max_threads();
#pragma omp parallel num_threads((int)nt)
    {
        int64_t t = omp_get_thread_num(), tn = omp_get_num_threads();
        /* chunk edges rounded to 16 elements so threads do not share cache lines */
        int64_t b = (total * t / tn) & ~(int64_t)15, e = (total * (t + 1) / tn) & ~(int64_t)15;
        if (t == tn - 1)
            e = total;
        if (b < e)
            run_range(it, b, e, fn, arg);
    }
}

int cpu_threads(void) {
    return omp_get_max_threads();
}
