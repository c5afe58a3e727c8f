/*
 * elementwise.c — CPU kernels of the elementwise op families (BINARY, COMPARE, UNARY, PREDICATE,
 * BOUNDED), copy and fill.
 *
 * The kernel switches are generated from include/tide_ops.def: each row becomes one case that
 * runs its scalar function from scalar_math.h (shared with CUDA) in a row loop, for the float
 * dtypes and, when the row's DTYPES is ALL, the integer ones. A row whose function is missing
 * fails the build; an op or dtype without a case is refused before any work (has_kernel). The
 * row loops have three fast paths the compiler vectorizes (all contiguous, scalar second
 * operand, scalar first operand) and a strided fallback; the iterator in iter.c feeds them rows.
 * The row functions are in elementwise_binary.c and elementwise_unary.c (elementwise_rows.h).
 */
#include "elementwise_rows.h"
#include "scalar_math.h"
#include <string.h>
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h> /* F16C: float16 conversions (f16_to_f32_row, below) */
#define HAVE_F16C_PATH 1
#endif

/* the cases above, as a question: does op have a kernel for oa->dt among the families run by
 * a one-input (arity 1) or two-input switch */
static int has_kernel(int arity, const op_arg *oa) {
    if (arity == 2) {
        switch (oa->op) {
#define X(E, family, name, fn, dtypes, flags) BIN_##family(E, fn, dtypes, HAS_LOOP, OP_CASE)
#include "tide_ops.def"
#undef X
        default:
            break;
        }
    } else {
        switch (oa->op) {
#define X(E, family, name, fn, dtypes, flags) UN_##family(E, fn, dtypes, HAS_LOOP, OP_CASE)
#include "tide_ops.def"
#undef X
#define X(E, family, name, fn, dtypes, flags) BD_##family(E, fn, dtypes, HAS_LOOP, OP_CASE)
#include "tide_ops.def"
#undef X
        default:
            break;
        }
    }
    return 0;
}

/* ---- binary, binary_scalar ---------------------------------------------------------------- */

static int same_shape(const tide_kview *x, const tide_kview *y) {
    if (x->ndim != y->ndim)
        return 0;
    for (int d = 0; d < x->ndim; d++)
        if (x->shape[d] != y->shape[d])
            return 0;
    return 1;
}

/* the row's CHEAP flag: exp, tanh, gelu... cost tens of cycles, worth threads sooner */
static int64_t grain(tide_op op) {
    return (tide_op_flags(op) & TIDE_OPF_CHEAP) ? CPU_PAR_GRAIN : CPU_PAR_GRAIN_HEAVY;
}

/* ---- integer division by zero ------------------------------------------------------------- */

static int is_int_division(tide_op op, tide_dtype dt) {
    return (tide_op_flags(op) & TIDE_OPF_INT_DIVISION) && dt != TIDE_DTYPE_F32 &&
           dt != TIDE_DTYPE_F64;
}

/* the integer operand's elements that raise: a zero divisor (an exponent tensor's negative
 * elements do not: PyTorch raises only for a number exponent, tide_binary_scalar_x) */
typedef struct bad_arg {
    size_t es;
    int    negative; /* look for negatives rather than zeros */
    int    found;
} bad_arg;

static void bad_row(char **p, const int64_t *s, int64_t n, int64_t index, void *arg) {
    (void)index;
    bad_arg    *ba = arg;
    const char *pb = p[0];
    for (int64_t i = 0; i < n && !ba->found; i++, pb += s[0]) {
        int64_t v = ba->es == 8   ? *(const int64_t *)pb
                    : ba->es == 4 ? *(const int32_t *)pb
                                  : *(const uint8_t *)pb;
        ba->found = ba->negative ? v < 0 : v == 0;
    }
}

static int found_in(const char *name, const tide_kview *b, int negative, tide_status *st) {
    const tide_kview *v[1] = {b};
    cpu_iter          it;
    *st = cpu_iter_init(&it, name, 1, v);
    if (*st != TIDE_OK)
        return 0;
    bad_arg ba = {cpu_dtype_size(b->dtype), negative, 0};
    cpu_iter_run(&it, 0, bad_row, &ba);
    return ba.found;
}

/* A zero divisor raises before anything is written. Here the check is one compare per element
 * next to a division; a GPU backend would need a device synchronisation (docs/API.md). */
static tide_status check_divisor(const char *name, const tide_kview *b) {
    tide_status st;
    if (found_in(name, b, 0, &st))
        return tide_seterr(TIDE_EINVAL,
                           "%s: integer division by zero; the divisor holds a 0 (convert to a "
                           "float dtype for inf/nan results, or replace the zeros with where)",
                           name);
    return st;
}

tide_status cpu_binary(tide_device *dev, tide_op op, const tide_kview *out, const tide_kview *a,
                       const tide_kview *b) {
    (void)dev;
    const char *name = cpu_op_name(op);
    op_arg      oa = {.op = op, .dt = a->dtype};
    if (!has_kernel(2, &oa))
        return cpu_notsup(name, a->dtype); /* the core promotes or refuses first */
    tide_dtype want = tide_op_family_of(op) == TIDE_FAMILY_COMPARE ? TIDE_DTYPE_BOOL : a->dtype;
    if (b->dtype != a->dtype || out->dtype != want)
        return tide_seterr(TIDE_EDTYPE,
                           "%s: cpu kernel got mixed dtypes ; promote operands to one dtype first",
                           name);
    if (is_int_division(op, a->dtype))
        TIDE_TRY(check_divisor(name, b));
    /* the common case first: three contiguous operands of one shape, below the thread grain,
     * are one row; the iterator's setup cost more than a small op's loop */
    int64_t n = cpu_numel(out);
    if (n < CPU_PAR_GRAIN && same_shape(out, a) && same_shape(out, b) && cpu_is_contiguous(out) &&
        cpu_is_contiguous(a) && cpu_is_contiguous(b)) {
        if (n > 0) {
            char   *p[3] = {(char *)out->data, (char *)a->data, (char *)b->data};
            int64_t es = (int64_t)cpu_dtype_size(a->dtype);
            int64_t st[3] = {(int64_t)cpu_dtype_size(out->dtype), es, es};
            cpu_bin_row(p, st, n, 0, &oa);
        }
        return TIDE_OK;
    }
    const tide_kview *v[3] = {out, a, b};
    cpu_iter          it;
    TIDE_TRY(cpu_iter_init(&it, name, 3, v));
    cpu_iter_run(&it, grain(op), cpu_bin_row, &oa);
    return TIDE_OK;
}

/* ---- pow of a float by 2, 3, -2, 0.5, -0.5 or -1 ----------------------------------------------
 * PyTorch's exponents with a kernel of their own (pow_tensor_scalar): products, a square root
 * or a reciprocal, not libm's scalar pow (50x slower on a million floats): x * x, x * x * x,
 * 1 / (x * x), sqrt(x) (so pow(-0, 0.5) is -0 and pow(-inf, 0.5) NaN, as PyTorch's), 1 /
 * sqrt(x), 1 / x. */
typedef enum { POW_2, POW_3, POW_M2, POW_HALF, POW_MHALF, POW_M1, POW_OTHER } pow_kind;

static pow_kind pow_kind_of(double s) {
    return s == 2      ? POW_2
           : s == 3    ? POW_3
           : s == -2   ? POW_M2
           : s == 0.5  ? POW_HALF
           : s == -0.5 ? POW_MHALF
           : s == -1   ? POW_M1
                       : POW_OTHER;
}

#define POW_F(T, SQRT, x, k)                                                                       \
    ((k) == POW_2       ? (x) * (x)                                                                \
     : (k) == POW_3     ? (x) * (x) * (x)                                                          \
     : (k) == POW_M2    ? (T)1 / ((x) * (x))                                                       \
     : (k) == POW_HALF  ? SQRT(x)                                                                  \
     : (k) == POW_MHALF ? (T)1 / SQRT(x)                                                           \
                        : (T)1 / (x))

#define POW_LOOP(T, SQRT)                                                                          \
    do {                                                                                           \
        if (s[0] == sizeof(T) && s[1] == sizeof(T)) {                                              \
            T       *o = (T *)p[0];                                                                \
            const T *x = (const T *)p[1];                                                          \
            for (int64_t i = 0; i < n; i++)                                                        \
                o[i] = POW_F(T, SQRT, x[i], k);                                                    \
        } else {                                                                                   \
            for (int64_t i = 0; i < n; i++) {                                                      \
                T x = *(const T *)(p[1] + i * s[1]);                                               \
                *(T *)(p[0] + i * s[0]) = POW_F(T, SQRT, x, k);                                    \
            }                                                                                      \
        }                                                                                          \
    } while (0)

typedef struct pow_arg {
    tide_dtype dt;
    pow_kind   k;
} pow_arg;

/* one loop per kind, so that each vectorizes without a select between the six */
CPU_HOT static void pow_row(char **p, const int64_t *s, int64_t n, int64_t index, void *arg) {
    (void)index;
    const pow_arg *pa = arg;
    switch (pa->k) {
#define POW_CASE(K)                                                                                \
    case K: {                                                                                      \
        const pow_kind k = K;                                                                      \
        if (pa->dt == TIDE_DTYPE_F32)                                                              \
            POW_LOOP(float, sqrtf);                                                                \
        else                                                                                       \
            POW_LOOP(double, sqrt);                                                                \
        break;                                                                                     \
    }
        POW_CASE(POW_2)
        POW_CASE(POW_3)
        POW_CASE(POW_M2)
        POW_CASE(POW_HALF)
        POW_CASE(POW_MHALF)
        POW_CASE(POW_M1)
#undef POW_CASE
    default:
        break;
    }
}

static tide_status pow_special(const tide_kview *out, const tide_kview *a, pow_kind k) {
    pow_arg           pa = {a->dtype, k};
    const tide_kview *v[2] = {out, a};
    cpu_iter          it;
    TIDE_TRY(cpu_iter_init(&it, "pow", 2, v));
    cpu_iter_run(&it, CPU_PAR_GRAIN, pow_row, &pa);
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
    if (op == TIDE_OP_POW && !reverse && out->dtype == a->dtype &&
        (a->dtype == TIDE_DTYPE_F32 || a->dtype == TIDE_DTYPE_F64) && pow_kind_of(s) != POW_OTHER)
        return pow_special(out, a, pow_kind_of(s));
    memset(&box, 0, sizeof box);
    if ((unsigned)a->dtype < TIDE_DTYPE_COUNT)
        tide_store_d(a->dtype, &box, s);
    tide_kview sv = *a;
    sv.data = &box;
    for (int d = 0; d < sv.ndim; d++)
        sv.strides[d] = 0;
    return reverse ? cpu_binary(dev, op, out, &sv, a) : cpu_binary(dev, op, out, a, &sv);
}

/* ---- unary, predicate, bounded ------------------------------------------------------------ */

/* clamp's bounds in every dtype: integer bounds round inwards (clamp(int, 0.5, 2.5) keeps
 * 1..2), then saturate into the dtype (u8 clamp(300, 400) is 255, not 300 cast to 44) */
static void set_bounds(op_arg *oa, double lo, double hi) {
    oa->lo.f = (float)lo;
    oa->hi.f = (float)hi;
    oa->lo.d = lo;
    oa->hi.d = hi;
    lo = ceil(lo);
    hi = floor(hi);
    oa->lo.i32 = tide_sat_i32(lo);
    oa->hi.i32 = tide_sat_i32(hi);
    oa->lo.i64 = tide_sat_i64(lo);
    oa->hi.i64 = tide_sat_i64(hi);
    oa->lo.u8 = oa->lo.b = tide_sat_u8(lo);
    oa->hi.u8 = oa->hi.b = tide_sat_u8(hi);
}

tide_status cpu_unary(tide_device *dev, tide_op op, const tide_kview *out, const tide_kview *a,
                      const double *params) {
    (void)dev;
    const char *name = cpu_op_name(op);
    op_arg      oa = {.op = op, .dt = a->dtype};
    if (!has_kernel(1, &oa))
        return cpu_notsup(name, a->dtype);
    tide_dtype want = tide_op_family_of(op) == TIDE_FAMILY_PREDICATE ? TIDE_DTYPE_BOOL : a->dtype;
    if (out->dtype != want)
        return tide_seterr(TIDE_EDTYPE, "%s: cpu kernel got out dtype %s for a %s input", name,
                           tide_dtype_name(out->dtype), tide_dtype_name(a->dtype));
    set_bounds(&oa, params ? params[0] : -INFINITY, params ? params[1] : INFINITY);
    const tide_kview *v[2] = {out, a};
    cpu_iter          it;
    TIDE_TRY(cpu_iter_init(&it, name, 2, v));
    cpu_iter_run(&it, grain(op), cpu_un_row, &oa);
    return TIDE_OK;
}

/* ---- copy with dtype conversion ----------------------------------------------------------- */

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

/* out of C type TO from every source dtype; FCVT for float sources, ICVT for integer ones (each
 * row: UN_LOOP, elementwise_rows.h) */
#define DEF_CVT(S, TO, FCVT, ICVT)                                                                 \
    CPU_HOT static void cvt_to_##S(tide_dtype from, char **p, const int64_t *s, int64_t n) {       \
        switch (from) {                                                                            \
        case TIDE_DTYPE_F32:                                                                       \
            UN_LOOP(float, TO, FCVT, _);                                                           \
            break;                                                                                 \
        case TIDE_DTYPE_F64:                                                                       \
            UN_LOOP(double, TO, FCVT, _);                                                          \
            break;                                                                                 \
        case TIDE_DTYPE_I32:                                                                       \
            UN_LOOP(int32_t, TO, ICVT, _);                                                         \
            break;                                                                                 \
        case TIDE_DTYPE_I64:                                                                       \
            UN_LOOP(int64_t, TO, ICVT, _);                                                         \
            break;                                                                                 \
        default: /* uint8, bool */                                                                 \
            UN_LOOP(uint8_t, TO, ICVT, _);                                                         \
            break;                                                                                 \
        }                                                                                          \
    }
DEF_CVT(f32, float, CAST_F32, CAST_F32)
DEF_CVT(f64, double, CAST_F64, CAST_F64)
DEF_CVT(i32, int32_t, SAT_I32, CAST_I32)
DEF_CVT(i64, int64_t, SAT_I64, CAST_I64)
DEF_CVT(u8, uint8_t, SAT_U8, CAST_U8)
DEF_CVT(b, uint8_t, CAST_BOOL, CAST_BOOL)

/* by out's dtype (the half types go through double, cvt_row) */
static void (*const cvt_to[TIDE_DTYPE_COUNT])(tide_dtype, char **, const int64_t *, int64_t) = {
    [TIDE_DTYPE_F32] = cvt_to_f32, [TIDE_DTYPE_F64] = cvt_to_f64, [TIDE_DTYPE_I32] = cvt_to_i32,
    [TIDE_DTYPE_I64] = cvt_to_i64, [TIDE_DTYPE_U8] = cvt_to_u8,   [TIDE_DTYPE_BOOL] = cvt_to_b,
};

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
    CPU_BY_SIZE(cpu_dtype_size(((const cvt_arg *)arg)->to), MOVE_LOOP)
}

static int is_half(tide_dtype dt) {
    return dt == TIDE_DTYPE_F16 || dt == TIDE_DTYPE_BF16;
}

/* float16 / bfloat16 <-> float32, the conversions half.c runs around every half op on the CPU:
 * the bit conversions of dtype_convert.h in typed loops (no double, no dtype switch an element;
 * bfloat16's vectorise), 3-6x the speed of the generic path below */
#define HALF_LOOP(TO_T, FROM_T, CONV)                                                              \
    do {                                                                                           \
        if (s[0] == sizeof(TO_T) && s[1] == sizeof(FROM_T)) {                                      \
            TO_T         *o_ = (TO_T *)p[0];                                                       \
            const FROM_T *a_ = (const FROM_T *)p[1];                                               \
            for (int64_t i = 0; i < n; i++)                                                        \
                o_[i] = CONV(a_[i]);                                                               \
        } else {                                                                                   \
            char *po_ = p[0], *pa_ = p[1];                                                         \
            for (int64_t i = 0; i < n; i++, po_ += s[0], pa_ += s[1])                              \
                *(TO_T *)po_ = CONV(*(const FROM_T *)pa_);                                         \
        }                                                                                          \
    } while (0)
/* float16 has hardware conversions (F16C, in every x86-64-v3 CPU): eight at a time, exact one
 * way and rounded to nearest even the other, as the bit conversions (a NaN keeps its payload
 * there, which the bit conversion drops; both stay NaN) */
#ifdef HAVE_F16C_PATH
static int have_f16c(void) {
    static int known = -1;
    if (known < 0)
        /* every AVX2 CPU has F16C (Haswell, Zen and later), and "avx2" is a name every
         * compiler's builtin knows ("f16c" is not, in clang 14) */
        known = __builtin_cpu_supports("avx2");
    return known;
}
__attribute__((target("avx,f16c"))) static void f16_to_f32_f16c(float *o, const uint16_t *a,
                                                                int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(o + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(a + i))));
    for (; i < n; i++)
        o[i] = tide_half_to_float(a[i]);
}
__attribute__((target("avx,f16c"))) static void f32_to_f16_f16c(uint16_t *o, const float *a,
                                                                int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128(
            (__m128i *)(o + i),
            _mm256_cvtps_ph(_mm256_loadu_ps(a + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    for (; i < n; i++)
        o[i] = tide_float_to_half(a[i]);
}
#endif

CPU_HOT static void f16_to_f32_row(char **p, const int64_t *s, int64_t n) {
#ifdef HAVE_F16C_PATH
    if (s[0] == sizeof(float) && s[1] == sizeof(uint16_t) && have_f16c())
        return f16_to_f32_f16c((float *)p[0], (const uint16_t *)p[1], n);
#endif
    HALF_LOOP(float, uint16_t, tide_half_to_float);
}
CPU_HOT static void bf16_to_f32_row(char **p, const int64_t *s, int64_t n) {
    HALF_LOOP(float, uint16_t, tide_bf16_to_float);
}
CPU_HOT static void f32_to_f16_row(char **p, const int64_t *s, int64_t n) {
#ifdef HAVE_F16C_PATH
    if (s[0] == sizeof(uint16_t) && s[1] == sizeof(float) && have_f16c())
        return f32_to_f16_f16c((uint16_t *)p[0], (const float *)p[1], n);
#endif
    HALF_LOOP(uint16_t, float, tide_float_to_half);
}
CPU_HOT static void f32_to_bf16_row(char **p, const int64_t *s, int64_t n) {
    HALF_LOOP(uint16_t, float, tide_float_to_bf16);
}

static void cvt_row(char **p, const int64_t *s, int64_t n, int64_t index, void *arg) {
    (void)index;
    const cvt_arg *ca = arg;
    tide_dtype     to = ca->to, from = ca->from;
    if (to == TIDE_DTYPE_F32 && from == TIDE_DTYPE_F16)
        return f16_to_f32_row(p, s, n);
    if (to == TIDE_DTYPE_F32 && from == TIDE_DTYPE_BF16)
        return bf16_to_f32_row(p, s, n);
    if (to == TIDE_DTYPE_F16 && from == TIDE_DTYPE_F32)
        return f32_to_f16_row(p, s, n);
    if (to == TIDE_DTYPE_BF16 && from == TIDE_DTYPE_F32)
        return f32_to_bf16_row(p, s, n);
    if (is_half(ca->to) || is_half(ca->from)) { /* rare: one element at a time through double */
        char *po = p[0], *pa = p[1];
        for (int64_t i = 0; i < n; i++, po += s[0], pa += s[1])
            tide_store_d(ca->to, po, tide_load_d(ca->from, pa));
        return;
    }
    cvt_to[ca->to](ca->from, p, s, n);
}

void cpu_convert_row(tide_dtype to, char *dst, int64_t dst_stride, tide_dtype from, const char *src,
                     int64_t src_stride, int64_t n) {
    char   *p[2] = {dst, (char *)src};
    int64_t s[2] = {dst_stride, src_stride};
    cvt_arg ca = {to, from};
    cvt_row(p, s, n, 0, &ca);
}

/* A short last dim (4 or less: an expanded pair of nearest upsampling's x:view(..., w, 1)
 * :expand(..., w, 2), a complex tensor's [..., 2]) under a longer one: the two swapped, so the
 * rows are the long dim's (a row of 2 cost a call and its address arithmetic: that expand's
 * copy took 7.6 ms for 2 million floats). A copy's rows never read their position. */
static void long_rows(cpu_iter *it) {
    int nd = it->ndim;
    if (nd < 2 || it->shape[nd - 1] > 4 || it->shape[nd - 2] < 4 * it->shape[nd - 1])
        return;
    int64_t t = it->shape[nd - 1];
    it->shape[nd - 1] = it->shape[nd - 2];
    it->shape[nd - 2] = t;
    for (int k = 0; k < it->nops; k++) {
        t = it->strides[k][nd - 1];
        it->strides[k][nd - 1] = it->strides[k][nd - 2];
        it->strides[k][nd - 2] = t;
    }
}

tide_status cpu_copy(tide_device *dev, const tide_kview *out, const tide_kview *a) {
    (void)dev;
    if ((unsigned)out->dtype >= TIDE_DTYPE_COUNT || (unsigned)a->dtype >= TIDE_DTYPE_COUNT)
        return tide_seterr(TIDE_EDTYPE, "copy: unknown dtype (cpu kernel)");
    const tide_kview *v[2] = {out, a};
    cpu_iter          it;
    TIDE_TRY(cpu_iter_init(&it, "copy", 2, v));
    if (out->dtype == a->dtype && cpu_copy_transposed(&it, cpu_dtype_size(a->dtype)))
        return TIDE_OK;
    long_rows(&it);
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

#define FILL_LOOP(T)                                                                               \
    do {                                                                                           \
        T v;                                                                                       \
        memcpy(&v, val, sizeof v);                                                                 \
        if (s[0] == (int64_t)sizeof(T)) { /* contiguous: vector stores (strided: 9x slower) */     \
            T *o = (T *)p[0];                                                                      \
            for (int64_t i = 0; i < n; i++)                                                        \
                o[i] = v;                                                                          \
            break;                                                                                 \
        }                                                                                          \
        char *po = p[0];                                                                           \
        for (int64_t i = 0; i < n; i++, po += s[0])                                                \
            *(T *)po = v;                                                                          \
    } while (0)

CPU_HOT static void fill_row(char **p, const int64_t *s, int64_t n, int64_t index, void *arg) {
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
    CPU_BY_SIZE(es, FILL_LOOP)
}

tide_status cpu_fill(tide_device *dev, const tide_kview *out, double value) {
    (void)dev;
    if ((unsigned)out->dtype >= TIDE_DTYPE_COUNT)
        return tide_seterr(TIDE_EDTYPE, "fill_: unknown dtype (cpu kernel)");
    fill_arg fa = {0, cpu_dtype_size(out->dtype)};
    tide_store_d(out->dtype, &fa.box, value);
    const tide_kview *v[1] = {out};
    cpu_iter          it;
    TIDE_TRY(cpu_iter_init(&it, "fill_", 1, v));
    cpu_iter_run(&it, CPU_PAR_GRAIN, fill_row, &fa);
    return TIDE_OK;
}
