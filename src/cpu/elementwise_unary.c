/* elementwise_unary.c — the row function of the UNARY, PREDICATE and BOUNDED families (see
 * elementwise_rows.h). */
#include "elementwise_rows.h"
#include "scalar_math.h"
#include "vec_math.h"

/* float32 exp, log, log1p, expm1, sigmoid, SiLU, tanh and GELU by vec_math.h's functions, which
 * vectorize (libm's expf, logf, log1pf, expm1f, tanhf and erff are scalar calls: tide.exp of a
 * million floats took 6x PyTorch's time); within 1-2 ulp, as PyTorch's Sleef functions. float16 and
 * bfloat16 reach them through half.c's float32 rows. */
#define VEC_ROW_F32(name, F)                                                                       \
    static CPU_HOT                                                                                 \
        __attribute__((noinline)) void name##_row_f32(char **p, const int64_t *s, int64_t n) {     \
        if (s[0] == sizeof(float) && s[1] == sizeof(float)) {                                      \
            float       *o = (float *)p[0];                                                        \
            const float *a = (const float *)p[1];                                                  \
            for (int64_t i = 0; i < n; i++)                                                        \
                o[i] = F(a[i]);                                                                    \
        } else {                                                                                   \
            for (int64_t i = 0; i < n; i++)                                                        \
                *(float *)(p[0] + i * s[0]) = F(*(const float *)(p[1] + i * s[1]));                \
        }                                                                                          \
    }
VEC_ROW_F32(exp, cpu_vexpf)
VEC_ROW_F32(log, cpu_vlogf)
VEC_ROW_F32(log1p, cpu_vlog1pf)
VEC_ROW_F32(expm1, cpu_vexpm1f)
VEC_ROW_F32(sigmoid, cpu_vsigmoidf)
VEC_ROW_F32(silu, cpu_vsiluf)
VEC_ROW_F32(tanh, cpu_vtanhf)
VEC_ROW_F32(gelu, cpu_vgeluf)

/* the float32 row of an op vec_math.h has, or 0 */
static int vec_row_f32(tide_op op, char **p, const int64_t *s, int64_t n) {
    switch (op) {
    case TIDE_OP_EXP:
        exp_row_f32(p, s, n);
        return 1;
    case TIDE_OP_LOG:
        log_row_f32(p, s, n);
        return 1;
    case TIDE_OP_LOG1P:
        log1p_row_f32(p, s, n);
        return 1;
    case TIDE_OP_EXPM1:
        expm1_row_f32(p, s, n);
        return 1;
    case TIDE_OP_SIGMOID:
        sigmoid_row_f32(p, s, n);
        return 1;
    case TIDE_OP_SILU:
        silu_row_f32(p, s, n);
        return 1;
    case TIDE_OP_TANH:
        tanh_row_f32(p, s, n);
        return 1;
    case TIDE_OP_GELU:
        gelu_row_f32(p, s, n);
        return 1;
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
