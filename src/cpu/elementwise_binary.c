/* elementwise_binary.c — the row function of the BINARY and COMPARE families (see
 * elementwise_rows.h). */
#include "elementwise_rows.h"
#include "scalar_math.h"
#include "vec_math.h"

/* float32 atan2 by vec_math.h's cpu_vatan2f, which vectorizes (libm's atan2f: a call an
 * element); float16 and bfloat16 reach it through half.c's float32 rows */
static CPU_HOT __attribute__((noinline)) void atan2_row_f32(char **p, const int64_t *s, int64_t n) {
    BIN_LOOP(float, float, cpu_vatan2f, f);
}

#define X(E, family, name, fn, dtypes, flags) BIN_##family(E, fn, dtypes, BIN_LOOP, OP_ROW_FN)
#include "tide_ops.def"
#undef X

void cpu_bin_row(char **p, const int64_t *s, int64_t n, int64_t index, void *arg) {
    (void)index;
    const op_arg *oa = arg;
    if (oa->dt == TIDE_DTYPE_F32 &&
        (oa->op == TIDE_OP_FMOD || oa->op == TIDE_OP_REMAINDER || oa->op == TIDE_OP_FLOORDIV) &&
        cpu_fmod_row_f32(oa->op, p, s, n))
        return;
    if (oa->dt == TIDE_DTYPE_F32 && oa->op == TIDE_OP_ATAN2) {
        atan2_row_f32(p, s, n);
        return;
    }
    switch (oa->op) {
#define X(E, family, name, fn, dtypes, flags) BIN_##family(E, fn, dtypes, BIN_LOOP, OP_ROW_CALL)
#include "tide_ops.def"
#undef X
    default: /* refused by has_kernel before the run */
        break;
    }
}
