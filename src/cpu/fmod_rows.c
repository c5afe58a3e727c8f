/*
 * fmod_rows.c — float32 fmod, remainder and floor_divide rows without libm's fmodf.
 *
 * glibc's fmodf is a loop over the exponents' difference, one call an element: remainder of a
 * 512x512 float32 tensor by a number took 15 times PyTorch's vectorized kernel. Here the
 * remainder comes from double arithmetic the compiler vectorizes, exactly: q = trunc(a / b) in
 * double is the true quotient or one more (a quotient just below an integer k rounds up to k;
 * rounding never crosses below an integer), a - q * b is exact while |q| < 2^29 (q * b has at
 * most 53 bits, and the difference at most 25 above b's last bit), and one |b| added back when
 * q was one too many. fmod's result has a's sign, zero included. Elements with |q| >= 2^29, an
 * infinite or NaN operand, or b = 0 send their chunk to fmodf. remainder and floor_divide then
 * take the scalar functions' own steps from that fmod (tide_remainder_from_fmod_f,
 * tide_floordiv_from_fmod_f), so every result is the scalar path's bit for bit.
 */
#include "cpu.h"
#include "scalar_math.h"
#include <math.h>
#include <string.h>

#define CHUNK 256

/* fmodf(a, b), exact; *slow set where it does not apply */
static inline float fmod_fast(float a, float b, int *slow) {
    double da = a, db = b, q = trunc(da / db);
    double r = da - q * db;
    *slow |= !(fabs(q) < 536870912.0) | !isfinite(db); /* 2^29; NaN q: a inf or NaN, b 0 */
    r = (r != 0 && (r < 0) != (da < 0)) ? r + copysign(fabs(db), da) : r;
    return (float)copysign(r, da);
}

/* each op's result from fmod m: the scalar functions' own steps (src/scalar_math.h; b = 0
 * went to the slow path) */
static inline float fmod_of(float a, float b, float m) {
    (void)a, (void)b;
    return m;
}

static inline float remainder_of(float a, float b, float m) {
    (void)a;
    return tide_remainder_from_fmod_f(b, m);
}

static inline float floordiv_of(float a, float b, float m) {
    return tide_floordiv_from_fmod_f(a, b, m);
}

static float reference(tide_op op, float a, float b) {
    if (op == TIDE_OP_FMOD)
        return fmodf(a, b);
    if (op == TIDE_OP_REMAINDER)
        return tide_remainder_f(a, b);
    return tide_floordiv_f(a, b);
}

/* one chunk into t: B(k) the divisor of element k, OF the op's step after fmod (a constant per
 * loop: a branch on the op inside kept remainder's loop from vectorizing) */
#define CHUNK_LOOP(B, OF)                                                                          \
    do {                                                                                           \
        for (int k = 0; k < m; k++) {                                                              \
            float x = a[k], y = (B);                                                               \
            t[k] = OF(x, y, fmod_fast(x, y, &slow));                                               \
        }                                                                                          \
        if (slow)                                                                                  \
            for (int k = 0; k < m; k++)                                                            \
                t[k] = reference(op, a[k], (B));                                                   \
    } while (0)
#define BOTH_LAYOUTS(OF)                                                                           \
    do {                                                                                           \
        if (s[2])                                                                                  \
            CHUNK_LOOP(b[k], OF);                                                                  \
        else                                                                                       \
            CHUNK_LOOP(b[0], OF);                                                                  \
    } while (0)

CPU_HOT int cpu_fmod_row_f32(tide_op op, char **p, const int64_t *s, int64_t n) {
    if (s[0] != 4 || s[1] != 4 || (s[2] != 4 && s[2] != 0))
        return 0;
    float       *o = (float *)p[0];
    const float *a0 = (const float *)p[1], *b0 = (const float *)p[2];
    float        t[CHUNK]; /* a chunk's results: out may be an input (x:fmod_(y)) */
    for (int64_t i0 = 0; i0 < n; i0 += CHUNK) {
        int          m = n - i0 < CHUNK ? (int)(n - i0) : CHUNK, slow = 0;
        const float *a = a0 + i0, *b = s[2] ? b0 + i0 : b0;
        if (op == TIDE_OP_FMOD)
            BOTH_LAYOUTS(fmod_of);
        else if (op == TIDE_OP_REMAINDER)
            BOTH_LAYOUTS(remainder_of);
        else
            BOTH_LAYOUTS(floordiv_of);
        memcpy(o + i0, t, sizeof(float) * (size_t)m);
    }
    return 1;
}
