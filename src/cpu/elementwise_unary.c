/* elementwise_unary.c — the row function of the UNARY, PREDICATE and BOUNDED families (see
 * elementwise_rows.h). */
#include "elementwise_rows.h"
#include "scalar_math.h"
#include "vec_math.h"

/* float32 GELU without libm's scalar erff (a transformer's feed-forward runs it over 4x the
 * width): vec_math.h's, within 2e-6 of x Phi(x) where libm's 1 + erf cancels */
static CPU_HOT __attribute__((noinline)) void gelu_row_f32(char **p, const int64_t *s, int64_t n) {
    if (s[0] == sizeof(float) && s[1] == sizeof(float)) {
        float       *o = (float *)p[0];
        const float *a = (const float *)p[1];
        for (int64_t i = 0; i < n; i++)
            o[i] = cpu_vgeluf(a[i]);
    } else {
        for (int64_t i = 0; i < n; i++)
            *(float *)(p[0] + i * s[0]) = cpu_vgeluf(*(const float *)(p[1] + i * s[1]));
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
    if (oa->op == TIDE_OP_GELU && oa->dt == TIDE_DTYPE_F32) {
        gelu_row_f32(p, s, n);
        return;
    }
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
