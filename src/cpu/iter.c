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
#define X(e, family, name) name,
#include "tide_ops.def"
#undef X
    };
    return (unsigned)op < TIDE_OP_COUNT ? names[op] : "op";
}

tide_status cpu_notsup(const char *op, tide_dtype dt) {
    return tide_seterr(TIDE_ENOTSUP,
                       "%s: %s is not supported on the CPU yet ; convert with :float() first", op,
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

/* ---- conversions -------------------------------------------------------------------------- */

float cpu_half_to_float(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
    if (exp == 0x1f) {
        bits = sign | 0x7f800000u | (man << 13); /* inf / nan */
    } else if (exp != 0) {
        bits = sign | ((exp + 112) << 23) | (man << 13);
    } else if (man == 0) {
        bits = sign;
    } else { /* subnormal: normalise */
        int e = -1;
        do {
            e++;
            man <<= 1;
        } while (!(man & 0x400));
        bits = sign | ((uint32_t)(112 - e) << 23) | ((man & 0x3ff) << 13);
    }
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

uint16_t cpu_float_to_half(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000, ax = x & 0x7fffffffu;
    if (ax >= 0x7f800000u) /* inf or nan (keep nan quiet) */
        return (uint16_t)(sign | 0x7c00 | (ax > 0x7f800000u ? 0x200 : 0));
    if (ax >= 0x477ff000u) /* rounds to >= 65520: overflow */
        return (uint16_t)(sign | 0x7c00);
    if (ax < 0x38800000u) { /* below the smallest normal: subnormal or zero */
        if (ax < 0x33000000u)
            return (uint16_t)sign;
        /* value = m * 2^(e-150) = r * 2^-24: r = m >> (126 - e), rounded to nearest even */
        uint32_t e = ax >> 23, m = (ax & 0x7fffff) | 0x800000;
        uint32_t drop = 126 - e, rem = m & ((1u << drop) - 1), half = 1u << (drop - 1);
        uint32_t r = m >> drop;
        if (rem > half || (rem == half && (r & 1)))
            r++;
        return (uint16_t)(sign | r);
    }
    uint32_t r = ((ax >> 13) - (112 << 10)), rem = ax & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (r & 1)))
        r++;
    return (uint16_t)(sign | r);
}

float cpu_bf16_to_float(uint16_t h) {
    uint32_t bits = (uint32_t)h << 16;
    float    f;
    memcpy(&f, &bits, 4);
    return f;
}

uint16_t cpu_float_to_bf16(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    if ((x & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((x >> 16) | 0x40);
    x += 0x7fff + ((x >> 16) & 1);
    return (uint16_t)(x >> 16);
}

double cpu_load_d(tide_dtype dt, const void *p) {
    switch (dt) {
    case TIDE_DTYPE_F32:
        return *(const float *)p;
    case TIDE_DTYPE_F64:
        return *(const double *)p;
    case TIDE_DTYPE_F16:
        return cpu_half_to_float(*(const uint16_t *)p);
    case TIDE_DTYPE_BF16:
        return cpu_bf16_to_float(*(const uint16_t *)p);
    case TIDE_DTYPE_I32:
        return *(const int32_t *)p;
    case TIDE_DTYPE_I64:
        return (double)*(const int64_t *)p;
    default:
        return *(const uint8_t *)p;
    }
}

void cpu_store_d(tide_dtype dt, void *p, double v) {
    switch (dt) {
    case TIDE_DTYPE_F32:
        *(float *)p = (float)v;
        break;
    case TIDE_DTYPE_F64:
        *(double *)p = v;
        break;
    case TIDE_DTYPE_F16:
        *(uint16_t *)p = cpu_float_to_half((float)v);
        break;
    case TIDE_DTYPE_BF16:
        *(uint16_t *)p = cpu_float_to_bf16((float)v);
        break;
    case TIDE_DTYPE_I32:
        *(int32_t *)p = cpu_sat_i32(v);
        break;
    case TIDE_DTYPE_I64:
        *(int64_t *)p = cpu_sat_i64(v);
        break;
    case TIDE_DTYPE_U8:
        *(uint8_t *)p = cpu_sat_u8(v);
        break;
    default:
        *(uint8_t *)p = v != 0;
        break;
    }
}
