/*
 * elementwise_rows.h — what the CPU's elementwise kernels share: the row loops, the switches
 * generated from include/tide_ops.def, and the two row functions the iterator runs. The row
 * functions live in files of their own (elementwise_binary.c, elementwise_unary.c), a function
 * per op: every op times every dtype, they are most of the build's compile time, and apart
 * they compile in parallel. elementwise.c holds the entry points.
 */
#ifndef TIDE_CPU_ELEMENTWISE_ROWS_H
#define TIDE_CPU_ELEMENTWISE_ROWS_H

#include "cpu.h"

/* what a row loop needs besides the operands; clamp's bounds already in each dtype */
typedef struct op_arg {
    tide_op    op;
    tide_dtype dt;
    struct {
        float   f;
        double  d;
        int32_t i32;
        int64_t i64;
        uint8_t u8, b;
    } lo, hi;
} op_arg;

/* ---- row loops: LOOP(input type, output type, scalar function, dtype suffix) -------------- */

/* o = F(a, b) over one row; p/s from the iterator (byte strides) */
#define BIN_LOOP(TA, TO, F, S)                                                                     \
    do {                                                                                           \
        TO       *o_ = (TO *)p[0];                                                                 \
        const TA *a_ = (const TA *)p[1], *b_ = (const TA *)p[2];                                   \
        if (s[0] == sizeof(TO) && s[1] == sizeof(TA) && s[2] == sizeof(TA)) {                      \
            for (int64_t i = 0; i < n; i++)                                                        \
                o_[i] = F(a_[i], b_[i]);                                                           \
        } else if (s[0] == sizeof(TO) && s[1] == sizeof(TA) && s[2] == 0) {                        \
            const TA y_ = *b_;                                                                     \
            for (int64_t i = 0; i < n; i++)                                                        \
                o_[i] = F(a_[i], y_);                                                              \
        } else if (s[0] == sizeof(TO) && s[1] == 0 && s[2] == sizeof(TA)) {                        \
            const TA x_ = *a_;                                                                     \
            for (int64_t i = 0; i < n; i++)                                                        \
                o_[i] = F(x_, b_[i]);                                                              \
        } else {                                                                                   \
            char *po_ = p[0], *pa_ = p[1], *pb_ = p[2];                                            \
            for (int64_t i = 0; i < n; i++, po_ += s[0], pa_ += s[1], pb_ += s[2])                 \
                *(TO *)po_ = F(*(const TA *)pa_, *(const TA *)pb_);                                \
        }                                                                                          \
    } while (0)

/* o = F(a) over one row */
#define UN_LOOP(TA, TO, F, S)                                                                      \
    do {                                                                                           \
        TO       *o_ = (TO *)p[0];                                                                 \
        const TA *a_ = (const TA *)p[1];                                                           \
        if (s[0] == sizeof(TO) && s[1] == sizeof(TA)) {                                            \
            for (int64_t i = 0; i < n; i++)                                                        \
                o_[i] = F(a_[i]);                                                                  \
        } else {                                                                                   \
            char *po_ = p[0], *pa_ = p[1];                                                         \
            for (int64_t i = 0; i < n; i++, po_ += s[0], pa_ += s[1])                              \
                *(TO *)po_ = F(*(const TA *)pa_);                                                  \
        }                                                                                          \
    } while (0)

/* o = F(a, lo, hi) over one row */
#define BOUNDED_LOOP(TA, TO, F, S)                                                                 \
    do {                                                                                           \
        const TA lo_ = oa->lo.S, hi_ = oa->hi.S;                                                   \
        if (s[0] == sizeof(TO) && s[1] == sizeof(TA)) {                                            \
            TO       *o_ = (TO *)p[0];                                                             \
            const TA *a_ = (const TA *)p[1];                                                       \
            for (int64_t i = 0; i < n; i++)                                                        \
                o_[i] = F(a_[i], lo_, hi_);                                                        \
        } else {                                                                                   \
            char *po_ = p[0], *pa_ = p[1];                                                         \
            for (int64_t i = 0; i < n; i++, po_ += s[0], pa_ += s[1])                              \
                *(TO *)po_ = F(*(const TA *)pa_, lo_, hi_);                                        \
        }                                                                                          \
    } while (0)

/* for has_kernel: a case exists */
#define HAS_LOOP(TA, TO, F, S) return 1

/* ---- the generated switches ----------------------------------------------------------------
 * KERNEL_<FAMILY>(LOOP, op row) expands to the row's case when LOOP's switch runs that family,
 * and DTYPES_<ALL|FLOAT|INTEGRAL|INTEGER> to the dtype cases the row has (its result type: SAME
 * or BOOL). */
#define OUT_SAME(T) T
#define OUT_BOOL(T) uint8_t
/* dtype E's case: LOOP over C type T, with the row's function tide_<fn>_<S> */
#define DT_CASE(E, T, S, LOOP, fn, OUT)                                                            \
    case TIDE_DTYPE_##E:                                                                           \
        LOOP(T, OUT(T), tide_##fn##_##S, S);                                                       \
        break;
#define FLOAT_CASES(LOOP, fn, OUT)                                                                 \
    DT_CASE(F32, float, f, LOOP, fn, OUT)                                                          \
    DT_CASE(F64, double, d, LOOP, fn, OUT)
#define INT_CASES(LOOP, fn, OUT)                                                                   \
    DT_CASE(I32, int32_t, i32, LOOP, fn, OUT)                                                      \
    DT_CASE(I64, int64_t, i64, LOOP, fn, OUT)                                                      \
    DT_CASE(U8, uint8_t, u8, LOOP, fn, OUT)                                                        \
    DT_CASE(BOOL, uint8_t, b, LOOP, fn, OUT)
#define DTYPES_ALL(LOOP, fn, OUT)                                                                  \
    switch (oa->dt) {                                                                              \
        FLOAT_CASES(LOOP, fn, OUT)                                                                 \
        INT_CASES(LOOP, fn, OUT)                                                                   \
    default:                                                                                       \
        break;                                                                                     \
    }
#define DTYPES_FLOAT(LOOP, fn, OUT)                                                                \
    switch (oa->dt) {                                                                              \
        FLOAT_CASES(LOOP, fn, OUT)                                                                 \
    default:                                                                                       \
        break;                                                                                     \
    }
#define DTYPES_INTEGRAL(LOOP, fn, OUT)                                                             \
    switch (oa->dt) {                                                                              \
        INT_CASES(LOOP, fn, OUT)                                                                   \
    default:                                                                                       \
        break;                                                                                     \
    }
#define DTYPES_INTEGER(LOOP, fn, OUT)                                                              \
    switch (oa->dt) {                                                                              \
        DT_CASE(I32, int32_t, i32, LOOP, fn, OUT)                                                  \
        DT_CASE(I64, int64_t, i64, LOOP, fn, OUT)                                                  \
        DT_CASE(U8, uint8_t, u8, LOOP, fn, OUT)                                                    \
    default:                                                                                       \
        break;                                                                                     \
    }
#define OP_CASE(E, LOOP, fn, dtypes, OUT)                                                          \
    case TIDE_OP_##E:                                                                              \
        DTYPES_##dtypes(LOOP, fn, OUT) break;
/* A row function per op, called from the row function's switch: compilers' register and
 * redundancy passes grow faster than a function's size, and one function holding every op's
 * loops inline took 40 s to compile (three target clones; the sanitizer build as long). Not
 * inlined, so that clang, which makes no clones, keeps them apart too. */
#define OP_ROW_FN(E, LOOP, fn, dtypes, OUT)                                                        \
    static CPU_HOT __attribute__((noinline)) void row_##E(char **p, const int64_t *s, int64_t n,   \
                                                          const op_arg *oa) {                      \
        (void)oa;                                                                                  \
        DTYPES_##dtypes(LOOP, fn, OUT)                                                             \
    }
#define OP_ROW_CALL(E, LOOP, fn, dtypes, OUT)                                                      \
    case TIDE_OP_##E:                                                                              \
        row_##E(p, s, n, oa);                                                                      \
        break;

/* the families each switch runs, each row made by MAKE (OP_CASE, OP_ROW_FN or OP_ROW_CALL); the
 * others expand to nothing */
#define BIN_BINARY(E, fn, dtypes, LOOP, MAKE)    MAKE(E, LOOP, fn, dtypes, OUT_SAME)
#define BIN_COMPARE(E, fn, dtypes, LOOP, MAKE)   MAKE(E, LOOP, fn, dtypes, OUT_BOOL)
#define BIN_UNARY(E, fn, dtypes, LOOP, MAKE)     /* */
#define BIN_PREDICATE(E, fn, dtypes, LOOP, MAKE) /* */
#define BIN_BOUNDED(E, fn, dtypes, LOOP, MAKE)   /* */
#define BIN_REDUCE(E, fn, dtypes, LOOP, MAKE)    /* */
#define UN_BINARY(E, fn, dtypes, LOOP, MAKE)     /* */
#define UN_COMPARE(E, fn, dtypes, LOOP, MAKE)    /* */
#define UN_UNARY(E, fn, dtypes, LOOP, MAKE)      MAKE(E, LOOP, fn, dtypes, OUT_SAME)
#define UN_PREDICATE(E, fn, dtypes, LOOP, MAKE)  MAKE(E, LOOP, fn, dtypes, OUT_BOOL)
#define UN_BOUNDED(E, fn, dtypes, LOOP, MAKE)    /* */
#define UN_REDUCE(E, fn, dtypes, LOOP, MAKE)     /* */
#define BD_BINARY(E, fn, dtypes, LOOP, MAKE)     /* */
#define BD_COMPARE(E, fn, dtypes, LOOP, MAKE)    /* */
#define BD_UNARY(E, fn, dtypes, LOOP, MAKE)      /* */
#define BD_PREDICATE(E, fn, dtypes, LOOP, MAKE)  /* */
#define BD_BOUNDED(E, fn, dtypes, LOOP, MAKE)    MAKE(E, LOOP, fn, dtypes, OUT_SAME)
#define BD_REDUCE(E, fn, dtypes, LOOP, MAKE)     /* */

/* the iterator's row functions (cpu_iter_run): BINARY and COMPARE rows; UNARY, PREDICATE and
 * BOUNDED rows */
void cpu_bin_row(char **p, const int64_t *s, int64_t n, int64_t index, void *arg);
void cpu_un_row(char **p, const int64_t *s, int64_t n, int64_t index, void *arg);

#endif
