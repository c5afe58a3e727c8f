/*
 * random.c — CPU random fills and arange.
 *
 * Element i (row-major in out) takes counter offset + i of the counter-based generator in
 * scalar_math.h, so a seed gives the same numbers on every device and for any thread split.
 */
#include "cpu.h"
#include "scalar_math.h"

typedef struct rnd_arg {
    tide_dtype       dt;
    tide_random_kind kind;
    double           lo, hi;
    uint64_t         seed, offset;
} rnd_arg;

static void rnd_row(char **p, const int64_t *s, int64_t n, int64_t index, void *arg) {
    const rnd_arg *ra = arg;
    char          *po = p[0];
    for (int64_t i = 0; i < n; i++, po += s[0]) {
        unsigned long long c = ra->offset + (uint64_t)(index + i);
        if (ra->kind == TIDE_RANDOM_NORMAL) {
            double v = ra->lo + ra->hi * tide_rng_normal(ra->seed, c);
            if (ra->dt == TIDE_DTYPE_F32)
                *(float *)po = (float)v;
            else
                *(double *)po = v;
        } else {
            double u = tide_rng_uniform(ra->seed, c);
            if (ra->dt == TIDE_DTYPE_F32)
                *(float *)po = tide_rng_in_range_f(ra->lo, ra->hi, u);
            else
                *(double *)po = tide_rng_in_range_d(ra->lo, ra->hi, u);
        }
    }
}

tide_status cpu_random(tide_device *dev, const tide_kview *out, tide_random_kind kind, double lo,
                       double hi, uint64_t seed, uint64_t offset) {
    (void)dev;
    const char *name = kind == TIDE_RANDOM_UNIFORM ? "uniform_" : "normal_";
    if (out->dtype != TIDE_DTYPE_F32 && out->dtype != TIDE_DTYPE_F64)
        return cpu_notsup(name, out->dtype);
    const tide_kview *v[1] = {out};
    cpu_iter          it;
    CPU_TRY(cpu_iter_init(&it, name, 1, v));
    rnd_arg ra = {out->dtype, kind, lo, hi, seed, offset};
    cpu_iter_run(&it, CPU_PAR_GRAIN_HEAVY, rnd_row, &ra);
    return TIDE_OK;
}

tide_status cpu_arange(tide_device *dev, const tide_kview *out, double start, double step) {
    (void)dev;
    if (out->ndim != 1)
        return tide_seterr(TIDE_EINVAL, "arange: cpu kernel needs a 1-d out");
    if ((unsigned)out->dtype >= TIDE_DTYPE_COUNT)
        return tide_seterr(TIDE_EDTYPE, "arange: unknown dtype (cpu kernel)");
    int64_t n = out->shape[0], es = (int64_t)cpu_dtype_size(out->dtype);
    char   *po = out->data;
    for (int64_t i = 0; i < n; i++)
        tide_store_d(out->dtype, po + i * out->strides[0] * es, start + (double)i * step);
    return TIDE_OK;
}
