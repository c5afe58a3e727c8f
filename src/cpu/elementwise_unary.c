/* elementwise_unary.c — the row function of the UNARY, PREDICATE and BOUNDED families (see
 * elementwise_rows.h). */
#include "elementwise_rows.h"
#include "scalar_math.h"
#include "vec_math.h"

/* float32 exp, log, log2, log10, log1p, expm1, sigmoid, SiLU, tanh, GELU, sin, cos, tan, atan,
 * asin, acos, sinh, cosh, erf and erfc by vec_math.h's functions, which vectorize (libm's are
 * scalar calls: tide.exp of a million floats took 6x PyTorch's time, tide.sin 2.5x, tide.sinh
 * 10x); within 1-2 ulp, as PyTorch's Sleef functions (erfc 4, as CUDA's). float16 and
 * bfloat16 reach them through half.c's float32 rows. */
/* the ops and their vec_math.h function, one list for the rows and the dispatch below; sin, cos
 * and tan reduce their argument exactly up to CPU_VTRIG_MAX only, so a row holding a larger |x|, an
 * infinity or a NaN runs libm's (the last column), whose reduction holds over the whole range */
#define VEC_OPS(X)                                                                                 \
    X(EXP, cpu_vexpf, 0)                                                                           \
    X(LOG, cpu_vlogf, 0)                                                                           \
    X(LOG1P, cpu_vlog1pf, 0)                                                                       \
    X(EXPM1, cpu_vexpm1f, 0)                                                                       \
    X(SIGMOID, cpu_vsigmoidf, 0)                                                                   \
    X(SILU, cpu_vsiluf, 0)                                                                         \
    X(TANH, cpu_vtanhf, 0)                                                                         \
    X(GELU, cpu_vgeluf, 0)                                                                         \
    X(SIN, cpu_vsinf, sinf)                                                                        \
    X(COS, cpu_vcosf, cosf)                                                                        \
    X(TAN, cpu_vtanf, tanf)                                                                        \
    X(ATAN, cpu_vatanf, 0)                                                                         \
    X(ASIN, cpu_vasinf, 0)                                                                         \
    X(ACOS, cpu_vacosf, 0)                                                                         \
    X(LOG2, cpu_vlog2f, 0)                                                                         \
    X(LOG10, cpu_vlog10f, 0)                                                                       \
    X(SINH, cpu_vsinhf, 0)                                                                         \
    X(COSH, cpu_vcoshf, 0)                                                                         \
    X(ERF, cpu_verff, 0)                                                                           \
    X(ERFC, cpu_verfcf, 0)

#define VEC_ROW_F32(E, F, LIBM)                                                                    \
    static CPU_HOT                                                                                 \
        __attribute__((noinline)) void vec_row_##E(char **p, const int64_t *s, int64_t n) {        \
        float (*libm)(float) = LIBM;                                                               \
        if (libm && !vec_row_in_trig_range(p[1], s[1], n)) {                                       \
            for (int64_t i = 0; i < n; i++)                                                        \
                *(float *)(p[0] + i * s[0]) = libm(*(const float *)(p[1] + i * s[1]));             \
        } else if (s[0] == sizeof(float) && s[1] == sizeof(float)) {                               \
            float       *o = (float *)p[0];                                                        \
            const float *a = (const float *)p[1];                                                  \
            for (int64_t i = 0; i < n; i++)                                                        \
                o[i] = F(a[i]);                                                                    \
        } else {                                                                                   \
            for (int64_t i = 0; i < n; i++)                                                        \
                *(float *)(p[0] + i * s[0]) = F(*(const float *)(p[1] + i * s[1]));                \
        }                                                                                          \
    }

/* every |x| of the row within CPU_VTRIG_MAX (NaN is not) */
static CPU_HOT int vec_row_in_trig_range(const char *a, int64_t stride, int64_t n) {
    int out = 0;
    if (stride == sizeof(float)) {
        const float *x = (const float *)a;
        for (int64_t i = 0; i < n; i++)
            out |= !(fabsf(x[i]) <= CPU_VTRIG_MAX);
    } else {
        for (int64_t i = 0; i < n; i++)
            out |= !(fabsf(*(const float *)(a + i * stride)) <= CPU_VTRIG_MAX);
    }
    return !out;
}

VEC_OPS(VEC_ROW_F32)
#undef VEC_ROW_F32

/* the float32 row of an op vec_math.h has, or 0 */
static int vec_row_f32(tide_op op, char **p, const int64_t *s, int64_t n) {
    switch (op) {
#define VEC_CASE(E, F, LIBM)                                                                       \
    case TIDE_OP_##E:                                                                              \
        vec_row_##E(p, s, n);                                                                      \
        return 1;
        VEC_OPS(VEC_CASE)
#undef VEC_CASE
    default:
        return 0;
    }
}

#define X(E, family, name, fn, dtypes, flags) UN_##family(E, fn, dtypes, UN_LOOP, OP_ROW_FN)
#include "tide_ops.def"
#undef X
#define X(E, family, name, fn, dtypes, flags) BD_##family(E, fn, dtypes, BOUNDED_LOOP, OP_ROW_FN)
#include "tide_ops.def"
#undef X

void cpu_un_row(char **p, const int64_t *s, int64_t n, int64_t index, void *arg) {
    (void)index;
    const op_arg *oa = arg;
    if (oa->dt == TIDE_DTYPE_F32 && vec_row_f32(oa->op, p, s, n))
        return;
    switch (oa->op) {
#define X(E, family, name, fn, dtypes, flags) UN_##family(E, fn, dtypes, UN_LOOP, OP_ROW_CALL)
#include "tide_ops.def"
#undef X
#define X(E, family, name, fn, dtypes, flags) BD_##family(E, fn, dtypes, BOUNDED_LOOP, OP_ROW_CALL)
#include "tide_ops.def"
#undef X
    default: /* refused by has_kernel before the run */
        break;
    }
}
