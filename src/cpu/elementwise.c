/*
 * elementwise.c — CPU kernels of the BINARY, COMPARE and UNARY families, copy and fill.
 *
 * Floating math comes from scalar_math.h (shared with CUDA). Each dtype gets a typed row loop
 * with three fast paths the compiler vectorizes (all contiguous, scalar second operand, scalar
 * first operand) and a strided fallback; the iterator in iter.c feeds it rows.
 */
#include "cpu.h"
#include "scalar_math.h"
#include <string.h>

/* ---- integer math: wrapping like C unsigned arithmetic, never trapping ------------------- */

/* floor_divide, remainder and fmod are scalar_math.h's (one definition with CUDA); a zero
 * divisor never reaches them here (cpu_binary raises first) */
#define DEF_INT_OPS(S, T, U)                                                                       \
    static inline T S##_add(T a, T b) {                                                            \
        return (T)((U)a + (U)b);                                                                   \
    }                                                                                              \
    static inline T S##_sub(T a, T b) {                                                            \
        return (T)((U)a - (U)b);                                                                   \
    }                                                                                              \
    static inline T S##_mul(T a, T b) {                                                            \
        return (T)((U)a * (U)b);                                                                   \
    }                                                                                              \
    static inline T S##_floordiv(T a, T b) {                                                       \
        return tide_floordiv_##S(a, b);                                                            \
    }                                                                                              \
    static inline T S##_remainder(T a, T b) {                                                      \
        return tide_remainder_##S(a, b);                                                           \
    }                                                                                              \
    static inline T S##_fmod(T a, T b) {                                                           \
        return tide_fmod_##S(a, b);                                                                \
    }                                                                                              \
    static inline T S##_div(T a, T b) {                                                            \
        return S##_floordiv(a, b);                                                                 \
    }                                                                                              \
    static inline T S##_pow(T a, T b) {                                                            \
        if (b < 0) /* only 1 and -1 have integral negative powers */                               \
            return (T)(a == 1 ? 1 : (a == -1 ? ((b & 1) ? -1 : 1) : 0));                           \
        U r = 1, x = (U)a;                                                                         \
        while (b) {                                                                                \
            if (b & 1)                                                                             \
                r *= x;                                                                            \
            x *= x;                                                                                \
            b = (T)(b >> 1);                                                                       \
        }                                                                                          \
        return (T)r;                                                                               \
    }                                                                                              \
    static inline T S##_maximum(T a, T b) {                                                        \
        return a > b ? a : b;                                                                      \
    }                                                                                              \
    static inline T S##_minimum(T a, T b) {                                                        \
        return a < b ? a : b;                                                                      \
    }                                                                                              \
    static inline T S##_neg(T a) {                                                                 \
        return (T)(0 - (U)a);                                                                      \
    }                                                                                              \
    static inline T S##_abs(T a) {                                                                 \
        return a < 0 ? (T)(0 - (U)a) : a;                                                          \
    }                                                                                              \
    static inline T S##_sign(T a) {                                                                \
        return (T)((a > 0) - (a < 0));                                                             \
    }                                                                                              \
    static inline T S##_relu(T a) {                                                                \
        return a > 0 ? a : 0;                                                                      \
    }

DEF_INT_OPS(i32, int32_t, uint32_t)
DEF_INT_OPS(i64, int64_t, uint64_t)

/* uint8: unsigned, so floor division is plain division */
static inline uint8_t u8_add(uint8_t a, uint8_t b) {
    return (uint8_t)(a + b);
}
static inline uint8_t u8_sub(uint8_t a, uint8_t b) {
    return (uint8_t)(a - b);
}
static inline uint8_t u8_mul(uint8_t a, uint8_t b) {
    return (uint8_t)(a * b);
}
static inline uint8_t u8_floordiv(uint8_t a, uint8_t b) {
    return tide_floordiv_u8(a, b);
}
static inline uint8_t u8_div(uint8_t a, uint8_t b) {
    return u8_floordiv(a, b);
}
static inline uint8_t u8_remainder(uint8_t a, uint8_t b) {
    return tide_remainder_u8(a, b);
}
static inline uint8_t u8_fmod(uint8_t a, uint8_t b) {
    return tide_fmod_u8(a, b);
}
static inline uint8_t u8_pow(uint8_t a, uint8_t b) {
    unsigned r = 1, x = a;
    while (b) {
        if (b & 1)
            r = (r * x) & 0xff;
        x = (x * x) & 0xff;
        b >>= 1;
    }
    return (uint8_t)r;
}
static inline uint8_t u8_maximum(uint8_t a, uint8_t b) {
    return a > b ? a : b;
}
static inline uint8_t u8_minimum(uint8_t a, uint8_t b) {
    return a < b ? a : b;
}
static inline uint8_t u8_neg(uint8_t a) {
    return (uint8_t)(0u - a);
}
static inline uint8_t u8_abs(uint8_t a) {
    return a;
}
static inline uint8_t u8_sign(uint8_t a) {
    return a > 0;
}
static inline uint8_t u8_relu(uint8_t a) {
    return a;
}

/* bool: the uint8 result normalised to 0/1 (add is or, mul is and, sub is xor) */
#define DEF_BOOL_OP(name)                                                                          \
    static inline uint8_t b_##name(uint8_t a, uint8_t b) {                                         \
        return u8_##name(a, b) != 0;                                                               \
    }
DEF_BOOL_OP(add)
DEF_BOOL_OP(sub)
DEF_BOOL_OP(mul)
DEF_BOOL_OP(div)
DEF_BOOL_OP(floordiv)
DEF_BOOL_OP(remainder)
DEF_BOOL_OP(fmod)
DEF_BOOL_OP(pow)
DEF_BOOL_OP(maximum)
DEF_BOOL_OP(minimum)

/* bool unary: through uint8, normalised */
static inline uint8_t b_neg(uint8_t a) {
    return a;
}
static inline uint8_t b_abs(uint8_t a) {
    return a;
}
static inline uint8_t b_sign(uint8_t a) {
    return a;
}
static inline uint8_t b_relu(uint8_t a) {
    return a;
}

/* transcendental ops of integer tensors: computed in double, cast back with saturation */
#define DEF_VIA_DOUBLE(S, T, SAT, NAME)                                                            \
    static inline T S##_##NAME(T a) {                                                              \
        return (T)SAT(tide_##NAME##_d((double)a));                                                 \
    }
#define DEF_ALL_VIA_DOUBLE(S, T, SAT)                                                              \
    DEF_VIA_DOUBLE(S, T, SAT, exp)                                                                 \
    DEF_VIA_DOUBLE(S, T, SAT, log)                                                                 \
    DEF_VIA_DOUBLE(S, T, SAT, sqrt)                                                                \
    DEF_VIA_DOUBLE(S, T, SAT, rsqrt)                                                               \
    DEF_VIA_DOUBLE(S, T, SAT, tanh)                                                                \
    DEF_VIA_DOUBLE(S, T, SAT, sigmoid)                                                             \
    DEF_VIA_DOUBLE(S, T, SAT, gelu)                                                                \
    DEF_VIA_DOUBLE(S, T, SAT, sin)                                                                 \
    DEF_VIA_DOUBLE(S, T, SAT, cos)
static inline uint8_t sat_bool(double v) {
    return v != 0;
}
DEF_ALL_VIA_DOUBLE(i32, int32_t, tide_sat_i32)
DEF_ALL_VIA_DOUBLE(i64, int64_t, tide_sat_i64)
DEF_ALL_VIA_DOUBLE(u8, uint8_t, tide_sat_u8)
DEF_ALL_VIA_DOUBLE(b, uint8_t, sat_bool)

/* floats: the shared scalar math under the names the row loops paste together */
#define FWD2(S, T, SFX, NAME)                                                                      \
    static inline T S##_##NAME(T a, T b) {                                                         \
        return tide_##NAME##_##SFX(a, b);                                                          \
    }
#define FWD1(S, T, SFX, NAME)                                                                      \
    static inline T S##_##NAME(T a) {                                                              \
        return tide_##NAME##_##SFX(a);                                                             \
    }
#define DEF_FLOAT_OPS(S, T, SFX)                                                                   \
    FWD2(S, T, SFX, add)                                                                           \
    FWD2(S, T, SFX, sub)                                                                           \
    FWD2(S, T, SFX, mul)                                                                           \
    FWD2(S, T, SFX, div)                                                                           \
    FWD2(S, T, SFX, pow)                                                                           \
    FWD2(S, T, SFX, remainder)                                                                     \
    FWD2(S, T, SFX, fmod)                                                                          \
    FWD2(S, T, SFX, floordiv)                                                                      \
    FWD2(S, T, SFX, maximum)                                                                       \
    FWD2(S, T, SFX, minimum)                                                                       \
    FWD1(S, T, SFX, neg)                                                                           \
    FWD1(S, T, SFX, abs)                                                                           \
    FWD1(S, T, SFX, exp)                                                                           \
    FWD1(S, T, SFX, log)                                                                           \
    FWD1(S, T, SFX, sqrt)                                                                          \
    FWD1(S, T, SFX, rsqrt)                                                                         \
    FWD1(S, T, SFX, tanh)                                                                          \
    FWD1(S, T, SFX, sigmoid)                                                                       \
    FWD1(S, T, SFX, relu)                                                                          \
    FWD1(S, T, SFX, gelu)                                                                          \
    FWD1(S, T, SFX, sin)                                                                           \
    FWD1(S, T, SFX, cos)                                                                           \
    FWD1(S, T, SFX, sign)
DEF_FLOAT_OPS(f32, float, f)
DEF_FLOAT_OPS(f64, double, d)

/* ---- row loops ---------------------------------------------------------------------------- */

/* o = F(a, b) over one row; p/s from the iterator (byte strides) */
#define BIN_LOOP(TA, TO, F)                                                                        \
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

#define UN_LOOP(T, F)                                                                              \
    do {                                                                                           \
        T       *o_ = (T *)p[0];                                                                   \
        const T *a_ = (const T *)p[1];                                                             \
        if (s[0] == sizeof(T) && s[1] == sizeof(T)) {                                              \
            for (int64_t i = 0; i < n; i++)                                                        \
                o_[i] = F(a_[i]);                                                                  \
        } else {                                                                                   \
            char *po_ = p[0], *pa_ = p[1];                                                         \
            for (int64_t i = 0; i < n; i++, po_ += s[0], pa_ += s[1])                              \
                *(T *)po_ = F(*(const T *)pa_);                                                    \
        }                                                                                          \
    } while (0)

#define CMP_EQ(x, y) ((uint8_t)((x) == (y)))
#define CMP_NE(x, y) ((uint8_t)((x) != (y)))
#define CMP_LT(x, y) ((uint8_t)((x) < (y)))
#define CMP_LE(x, y) ((uint8_t)((x) <= (y)))
#define CMP_GT(x, y) ((uint8_t)((x) > (y)))
#define CMP_GE(x, y) ((uint8_t)((x) >= (y)))

/* BINARY and COMPARE ops of one dtype: T the C type, S the prefix of its functions */
#define DEF_BIN(S, T)                                                                              \
    static void bin_##S(tide_op op, char **p, const int64_t *s, int64_t n) {                       \
        switch (op) {                                                                              \
        case TIDE_OP_ADD:                                                                          \
            BIN_LOOP(T, T, S##_add);                                                               \
            break;                                                                                 \
        case TIDE_OP_SUB:                                                                          \
            BIN_LOOP(T, T, S##_sub);                                                               \
            break;                                                                                 \
        case TIDE_OP_MUL:                                                                          \
            BIN_LOOP(T, T, S##_mul);                                                               \
            break;                                                                                 \
        case TIDE_OP_DIV:                                                                          \
            BIN_LOOP(T, T, S##_div);                                                               \
            break;                                                                                 \
        case TIDE_OP_POW:                                                                          \
            BIN_LOOP(T, T, S##_pow);                                                               \
            break;                                                                                 \
        case TIDE_OP_REMAINDER:                                                                    \
            BIN_LOOP(T, T, S##_remainder);                                                         \
            break;                                                                                 \
        case TIDE_OP_FMOD:                                                                         \
            BIN_LOOP(T, T, S##_fmod);                                                              \
            break;                                                                                 \
        case TIDE_OP_FLOORDIV:                                                                     \
            BIN_LOOP(T, T, S##_floordiv);                                                          \
            break;                                                                                 \
        case TIDE_OP_MAXIMUM:                                                                      \
            BIN_LOOP(T, T, S##_maximum);                                                           \
            break;                                                                                 \
        case TIDE_OP_MINIMUM:                                                                      \
            BIN_LOOP(T, T, S##_minimum);                                                           \
            break;                                                                                 \
        case TIDE_OP_EQ:                                                                           \
            BIN_LOOP(T, uint8_t, CMP_EQ);                                                          \
            break;                                                                                 \
        case TIDE_OP_NE:                                                                           \
            BIN_LOOP(T, uint8_t, CMP_NE);                                                          \
            break;                                                                                 \
        case TIDE_OP_LT:                                                                           \
            BIN_LOOP(T, uint8_t, CMP_LT);                                                          \
            break;                                                                                 \
        case TIDE_OP_LE:                                                                           \
            BIN_LOOP(T, uint8_t, CMP_LE);                                                          \
            break;                                                                                 \
        case TIDE_OP_GT:                                                                           \
            BIN_LOOP(T, uint8_t, CMP_GT);                                                          \
            break;                                                                                 \
        case TIDE_OP_GE:                                                                           \
            BIN_LOOP(T, uint8_t, CMP_GE);                                                          \
            break;                                                                                 \
        default:                                                                                   \
            break;                                                                                 \
        }                                                                                          \
    }
DEF_BIN(f32, float)
DEF_BIN(f64, double)
DEF_BIN(i32, int32_t)
DEF_BIN(i64, int64_t)
DEF_BIN(u8, uint8_t)
DEF_BIN(b, uint8_t)

/* UNARY ops of one dtype; CLAMP gets its bounds already cast to T */
#define CLAMP_(x) ((x) < lo_ ? lo_ : ((x) > hi_ ? hi_ : (x)))
#define DEF_UN(S, T)                                                                               \
    static void un_##S(tide_op op, char **p, const int64_t *s, int64_t n, T lo_, T hi_) {          \
        switch (op) {                                                                              \
        case TIDE_OP_NEG:                                                                          \
            UN_LOOP(T, S##_neg);                                                                   \
            break;                                                                                 \
        case TIDE_OP_ABS:                                                                          \
            UN_LOOP(T, S##_abs);                                                                   \
            break;                                                                                 \
        case TIDE_OP_EXP:                                                                          \
            UN_LOOP(T, S##_exp);                                                                   \
            break;                                                                                 \
        case TIDE_OP_LOG:                                                                          \
            UN_LOOP(T, S##_log);                                                                   \
            break;                                                                                 \
        case TIDE_OP_SQRT:                                                                         \
            UN_LOOP(T, S##_sqrt);                                                                  \
            break;                                                                                 \
        case TIDE_OP_RSQRT:                                                                        \
            UN_LOOP(T, S##_rsqrt);                                                                 \
            break;                                                                                 \
        case TIDE_OP_TANH:                                                                         \
            UN_LOOP(T, S##_tanh);                                                                  \
            break;                                                                                 \
        case TIDE_OP_SIGMOID:                                                                      \
            UN_LOOP(T, S##_sigmoid);                                                               \
            break;                                                                                 \
        case TIDE_OP_RELU:                                                                         \
            UN_LOOP(T, S##_relu);                                                                  \
            break;                                                                                 \
        case TIDE_OP_GELU:                                                                         \
            UN_LOOP(T, S##_gelu);                                                                  \
            break;                                                                                 \
        case TIDE_OP_SIN:                                                                          \
            UN_LOOP(T, S##_sin);                                                                   \
            break;                                                                                 \
        case TIDE_OP_COS:                                                                          \
            UN_LOOP(T, S##_cos);                                                                   \
            break;                                                                                 \
        case TIDE_OP_SIGN:                                                                         \
            UN_LOOP(T, S##_sign);                                                                  \
            break;                                                                                 \
        case TIDE_OP_CLAMP:                                                                        \
            UN_LOOP(T, CLAMP_);                                                                    \
            break;                                                                                 \
        default:                                                                                   \
            break;                                                                                 \
        }                                                                                          \
    }
DEF_UN(f32, float)
DEF_UN(f64, double)
DEF_UN(i32, int32_t)
DEF_UN(i64, int64_t)
DEF_UN(u8, uint8_t)
DEF_UN(b, uint8_t)

/* ---- binary, binary_scalar ---------------------------------------------------------------- */

typedef struct op_arg {
    tide_op    op;
    tide_dtype dt;
    double     lo, hi; /* clamp bounds */
} op_arg;

static void bin_row(char **p, const int64_t *s, int64_t n, int64_t index, void *arg) {
    (void)index;
    const op_arg *oa = arg;
    switch (oa->dt) {
    case TIDE_DTYPE_F32:
        bin_f32(oa->op, p, s, n);
        break;
    case TIDE_DTYPE_F64:
        bin_f64(oa->op, p, s, n);
        break;
    case TIDE_DTYPE_I32:
        bin_i32(oa->op, p, s, n);
        break;
    case TIDE_DTYPE_I64:
        bin_i64(oa->op, p, s, n);
        break;
    case TIDE_DTYPE_U8:
        bin_u8(oa->op, p, s, n);
        break;
    default:
        bin_b(oa->op, p, s, n);
        break;
    }
}

static int same_shape(const tide_kview *x, const tide_kview *y) {
    if (x->ndim != y->ndim)
        return 0;
    for (int d = 0; d < x->ndim; d++)
        if (x->shape[d] != y->shape[d])
            return 0;
    return 1;
}

static int dtype_ok(tide_dtype dt) {
    return dt != TIDE_DTYPE_F16 && dt != TIDE_DTYPE_BF16 && (unsigned)dt < TIDE_DTYPE_COUNT;
}

/* ---- integer division by zero ------------------------------------------------------------- */

static int is_int_division(tide_op op, tide_dtype dt) {
    return (op == TIDE_OP_FLOORDIV || op == TIDE_OP_REMAINDER || op == TIDE_OP_FMOD) &&
           dt != TIDE_DTYPE_F32 && dt != TIDE_DTYPE_F64;
}

typedef struct zero_arg {
    size_t es;
    int    found;
} zero_arg;

static void zero_row(char **p, const int64_t *s, int64_t n, int64_t index, void *arg) {
    (void)index;
    zero_arg   *za = arg;
    const char *pb = p[0];
    for (int64_t i = 0; i < n && !za->found; i++, pb += s[0])
        za->found = za->es == 8   ? *(const int64_t *)pb == 0
                    : za->es == 4 ? *(const int32_t *)pb == 0
                                  : *(const uint8_t *)pb == 0;
}

/* A zero divisor raises before anything is written. Here the check is one compare per element
 * next to a division; a GPU backend would need a device synchronisation (docs/API.md). */
static tide_status check_divisor(const char *name, const tide_kview *b) {
    const tide_kview *v[1] = {b};
    cpu_iter          it;
    CPU_TRY(cpu_iter_init(&it, name, 1, v));
    zero_arg za = {cpu_dtype_size(b->dtype), 0};
    cpu_iter_run(&it, 0, zero_row, &za);
    if (za.found)
        return tide_seterr(TIDE_EINVAL,
                           "%s: integer division by zero; the divisor holds a 0 (convert to a "
                           "float dtype for inf/nan results, or replace the zeros with where)",
                           name);
    return TIDE_OK;
}

static int is_binary(tide_op op) {
    return op >= TIDE_OP_ADD && op <= TIDE_OP_GE;
}

static int is_compare(tide_op op) {
    return op >= TIDE_OP_EQ && op <= TIDE_OP_GE;
}

tide_status cpu_binary(tide_device *dev, tide_op op, const tide_kview *out, const tide_kview *a,
                       const tide_kview *b) {
    (void)dev;
    const char *name = cpu_op_name(op);
    if (!is_binary(op))
        return tide_seterr(TIDE_EINVAL, "%s: not a binary op (cpu kernel)", name);
    if (!dtype_ok(a->dtype))
        return cpu_notsup(name, a->dtype);
    tide_dtype want = is_compare(op) ? TIDE_DTYPE_BOOL : a->dtype;
    if (b->dtype != a->dtype || out->dtype != want)
        return tide_seterr(TIDE_EDTYPE,
                           "%s: cpu kernel got mixed dtypes ; promote operands to one dtype first",
                           name);
    if (is_int_division(op, a->dtype))
        CPU_TRY(check_divisor(name, b));
    op_arg oa = {op, a->dtype, 0, 0};
    /* the common case first: three contiguous operands of one shape, below the thread grain,
     * are one row; the iterator's setup cost more than a small op's loop */
    int64_t n = cpu_numel(out);
    if (n < CPU_PAR_GRAIN && same_shape(out, a) && same_shape(out, b) && cpu_is_contiguous(out) &&
        cpu_is_contiguous(a) && cpu_is_contiguous(b)) {
        if (n > 0) {
            char   *p[3] = {(char *)out->data, (char *)a->data, (char *)b->data};
            int64_t es = (int64_t)cpu_dtype_size(a->dtype);
            int64_t st[3] = {(int64_t)cpu_dtype_size(out->dtype), es, es};
            bin_row(p, st, n, 0, &oa);
        }
        return TIDE_OK;
    }
    const tide_kview *v[3] = {out, a, b};
    cpu_iter          it;
    CPU_TRY(cpu_iter_init(&it, name, 3, v));
    cpu_iter_run(&it, CPU_PAR_GRAIN, bin_row, &oa);
    return TIDE_OK;
}

/* The scalar becomes a one-element operand of a's dtype with stride 0 everywhere, which the
 * row loop's scalar fast path handles. */
tide_status cpu_binary_scalar(tide_device *dev, tide_op op, const tide_kview *out,
                              const tide_kview *a, double s, int reverse) {
    union {
        double  d;
        float   f;
        int64_t l;
        int32_t i;
        uint8_t u;
    } box;
    memset(&box, 0, sizeof box);
    if (dtype_ok(a->dtype))
        tide_store_d(a->dtype, &box, s);
    tide_kview sv = *a;
    sv.data = &box;
    for (int d = 0; d < sv.ndim; d++)
        sv.strides[d] = 0;
    return reverse ? cpu_binary(dev, op, out, &sv, a) : cpu_binary(dev, op, out, a, &sv);
}

/* ---- unary -------------------------------------------------------------------------------- */

static void un_row(char **p, const int64_t *s, int64_t n, int64_t index, void *arg) {
    (void)index;
    const op_arg *oa = arg;
    switch (oa->dt) {
    case TIDE_DTYPE_F32:
        un_f32(oa->op, p, s, n, (float)oa->lo, (float)oa->hi);
        break;
    case TIDE_DTYPE_F64:
        un_f64(oa->op, p, s, n, oa->lo, oa->hi);
        break;
    case TIDE_DTYPE_I32:
        un_i32(oa->op, p, s, n, tide_sat_i32(oa->lo), tide_sat_i32(oa->hi));
        break;
    case TIDE_DTYPE_I64:
        un_i64(oa->op, p, s, n, tide_sat_i64(oa->lo), tide_sat_i64(oa->hi));
        break;
    case TIDE_DTYPE_U8:
        un_u8(oa->op, p, s, n, tide_sat_u8(oa->lo), tide_sat_u8(oa->hi));
        break;
    default:
        un_b(oa->op, p, s, n, oa->lo > 0, oa->hi >= 1);
        break;
    }
}

tide_status cpu_unary(tide_device *dev, tide_op op, const tide_kview *out, const tide_kview *a,
                      const double *params) {
    (void)dev;
    const char *name = cpu_op_name(op);
    if (op < TIDE_OP_NEG || op > TIDE_OP_CLAMP)
        return tide_seterr(TIDE_EINVAL, "%s: not a unary op (cpu kernel)", name);
    if (!dtype_ok(a->dtype))
        return cpu_notsup(name, a->dtype);
    if (out->dtype != a->dtype)
        return tide_seterr(TIDE_EDTYPE, "%s: cpu kernel needs out and input of one dtype", name);
    op_arg oa = {op, a->dtype, -INFINITY, INFINITY};
    if (op == TIDE_OP_CLAMP && params) {
        oa.lo = params[0];
        oa.hi = params[1];
    }
    /* integer bounds round inwards: clamp(int, 0.5, 2.5) keeps 1..2 */
    if (!(a->dtype == TIDE_DTYPE_F32 || a->dtype == TIDE_DTYPE_F64)) {
        oa.lo = ceil(oa.lo);
        oa.hi = floor(oa.hi);
    }
    const tide_kview *v[2] = {out, a};
    cpu_iter          it;
    CPU_TRY(cpu_iter_init(&it, name, 2, v));
    /* exp, tanh, gelu... cost tens of cycles: worth threads sooner */
    int cheap = op == TIDE_OP_NEG || op == TIDE_OP_ABS || op == TIDE_OP_RELU ||
                op == TIDE_OP_SIGN || op == TIDE_OP_CLAMP;
    cpu_iter_run(&it, cheap ? CPU_PAR_GRAIN : CPU_PAR_GRAIN_HEAVY, un_row, &oa);
    return TIDE_OK;
}

/* ---- copy with dtype conversion ----------------------------------------------------------- */

#define CVT_LOOP(TI, TO, CVT)                                                                      \
    do {                                                                                           \
        if (s[0] == sizeof(TO) && s[1] == sizeof(TI)) {                                            \
            TO       *o_ = (TO *)p[0];                                                             \
            const TI *a_ = (const TI *)p[1];                                                       \
            for (int64_t i = 0; i < n; i++)                                                        \
                o_[i] = CVT(a_[i]);                                                                \
        } else {                                                                                   \
            char *po_ = p[0], *pa_ = p[1];                                                         \
            for (int64_t i = 0; i < n; i++, po_ += s[0], pa_ += s[1])                              \
                *(TO *)po_ = CVT(*(const TI *)pa_);                                                \
        }                                                                                          \
    } while (0)

/* integer sources cast plainly (int64 -> int32 wraps, as in PyTorch); float sources saturate */
#define CAST_F32(x)  ((float)(x))
#define CAST_F64(x)  ((double)(x))
#define CAST_I32(x)  ((int32_t)(x))
#define CAST_I64(x)  ((int64_t)(x))
#define CAST_U8(x)   ((uint8_t)(x))
#define CAST_BOOL(x) ((uint8_t)((x) != 0))
#define SAT_I32(x)   tide_sat_i32(x)
#define SAT_I64(x)   tide_sat_i64(x)
#define SAT_U8(x)    tide_sat_u8(x)

/* out of C type TO from every source dtype; FCVT for float sources, ICVT for integer ones */
#define DEF_CVT(S, TO, FCVT, ICVT)                                                                 \
    static void cvt_to_##S(tide_dtype from, char **p, const int64_t *s, int64_t n) {               \
        switch (from) {                                                                            \
        case TIDE_DTYPE_F32:                                                                       \
            CVT_LOOP(float, TO, FCVT);                                                             \
            break;                                                                                 \
        case TIDE_DTYPE_F64:                                                                       \
            CVT_LOOP(double, TO, FCVT);                                                            \
            break;                                                                                 \
        case TIDE_DTYPE_I32:                                                                       \
            CVT_LOOP(int32_t, TO, ICVT);                                                           \
            break;                                                                                 \
        case TIDE_DTYPE_I64:                                                                       \
            CVT_LOOP(int64_t, TO, ICVT);                                                           \
            break;                                                                                 \
        default: /* uint8, bool */                                                                 \
            CVT_LOOP(uint8_t, TO, ICVT);                                                           \
            break;                                                                                 \
        }                                                                                          \
    }
DEF_CVT(f32, float, CAST_F32, CAST_F32)
DEF_CVT(f64, double, CAST_F64, CAST_F64)
DEF_CVT(i32, int32_t, SAT_I32, CAST_I32)
DEF_CVT(i64, int64_t, SAT_I64, CAST_I64)
DEF_CVT(u8, uint8_t, SAT_U8, CAST_U8)
DEF_CVT(b, uint8_t, CAST_BOOL, CAST_BOOL)

typedef struct cvt_arg {
    tide_dtype to, from;
} cvt_arg;

/* same dtype: moves by element size */
#define MOVE_LOOP(T)                                                                               \
    do {                                                                                           \
        if (s[0] == sizeof(T) && s[1] == sizeof(T)) {                                              \
            memmove(p[0], p[1], (size_t)n * sizeof(T));                                            \
        } else {                                                                                   \
            char *po_ = p[0], *pa_ = p[1];                                                         \
            for (int64_t i = 0; i < n; i++, po_ += s[0], pa_ += s[1])                              \
                *(T *)po_ = *(const T *)pa_;                                                       \
        }                                                                                          \
    } while (0)

static void move_row(char **p, const int64_t *s, int64_t n, int64_t index, void *arg) {
    (void)index;
    switch (cpu_dtype_size(((const cvt_arg *)arg)->to)) {
    case 8:
        MOVE_LOOP(uint64_t);
        break;
    case 4:
        MOVE_LOOP(uint32_t);
        break;
    case 2:
        MOVE_LOOP(uint16_t);
        break;
    default:
        MOVE_LOOP(uint8_t);
        break;
    }
}

static int is_half(tide_dtype dt) {
    return dt == TIDE_DTYPE_F16 || dt == TIDE_DTYPE_BF16;
}

static void cvt_row(char **p, const int64_t *s, int64_t n, int64_t index, void *arg) {
    (void)index;
    const cvt_arg *ca = arg;
    if (is_half(ca->to) || is_half(ca->from)) { /* rare: one element at a time through double */
        char *po = p[0], *pa = p[1];
        for (int64_t i = 0; i < n; i++, po += s[0], pa += s[1])
            tide_store_d(ca->to, po, tide_load_d(ca->from, pa));
        return;
    }
    switch (ca->to) {
    case TIDE_DTYPE_F32:
        cvt_to_f32(ca->from, p, s, n);
        break;
    case TIDE_DTYPE_F64:
        cvt_to_f64(ca->from, p, s, n);
        break;
    case TIDE_DTYPE_I32:
        cvt_to_i32(ca->from, p, s, n);
        break;
    case TIDE_DTYPE_I64:
        cvt_to_i64(ca->from, p, s, n);
        break;
    case TIDE_DTYPE_U8:
        cvt_to_u8(ca->from, p, s, n);
        break;
    default:
        cvt_to_b(ca->from, p, s, n);
        break;
    }
}

tide_status cpu_copy(tide_device *dev, const tide_kview *out, const tide_kview *a) {
    (void)dev;
    if ((unsigned)out->dtype >= TIDE_DTYPE_COUNT || (unsigned)a->dtype >= TIDE_DTYPE_COUNT)
        return tide_seterr(TIDE_EDTYPE, "copy: unknown dtype (cpu kernel)");
    const tide_kview *v[2] = {out, a};
    cpu_iter          it;
    CPU_TRY(cpu_iter_init(&it, "copy", 2, v));
    cvt_arg ca = {out->dtype, a->dtype};
    /* bool from uint8 must normalise, so only identical dtypes move bytes */
    cpu_iter_run(&it, CPU_PAR_GRAIN, out->dtype == a->dtype ? move_row : cvt_row, &ca);
    return TIDE_OK;
}

/* ---- fill --------------------------------------------------------------------------------- */

typedef struct fill_arg {
    uint64_t box; /* the value in out's dtype */
    size_t   es;
} fill_arg;

static void fill_row(char **p, const int64_t *s, int64_t n, int64_t index, void *arg) {
    (void)index;
    const fill_arg *fa = arg;
    const char     *val = (const char *)&fa->box;
    size_t          es = fa->es;
    int             zero = 1;
    for (size_t k = 0; k < es; k++)
        zero &= val[k] == 0;
    if (s[0] == (int64_t)es && zero) {
        memset(p[0], 0, (size_t)n * es);
        return;
    }
    switch (es) {
    case 8: {
        uint64_t v;
        memcpy(&v, val, 8);
        char *po = p[0];
        for (int64_t i = 0; i < n; i++, po += s[0])
            *(uint64_t *)po = v;
        break;
    }
    case 4: {
        uint32_t v;
        memcpy(&v, val, 4);
        char *po = p[0];
        for (int64_t i = 0; i < n; i++, po += s[0])
            *(uint32_t *)po = v;
        break;
    }
    case 2: {
        uint16_t v;
        memcpy(&v, val, 2);
        char *po = p[0];
        for (int64_t i = 0; i < n; i++, po += s[0])
            *(uint16_t *)po = v;
        break;
    }
    default: {
        char *po = p[0];
        for (int64_t i = 0; i < n; i++, po += s[0])
            *po = val[0];
        break;
    }
    }
}

tide_status cpu_fill(tide_device *dev, const tide_kview *out, double value) {
    (void)dev;
    if ((unsigned)out->dtype >= TIDE_DTYPE_COUNT)
        return tide_seterr(TIDE_EDTYPE, "fill_: unknown dtype (cpu kernel)");
    fill_arg fa = {0, cpu_dtype_size(out->dtype)};
    tide_store_d(out->dtype, &fa.box, value);
    const tide_kview *v[1] = {out};
    cpu_iter          it;
    CPU_TRY(cpu_iter_init(&it, "fill_", 1, v));
    cpu_iter_run(&it, CPU_PAR_GRAIN, fill_row, &fa);
    return TIDE_OK;
}
