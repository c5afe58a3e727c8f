/*
 * select.c — CPU sort, topk and kthvalue (with the two medians), the kernel rows of
 * include/tide_kernels.def: each line along the middle dim of a [rows, len, inner] input in the
 * order of a stable sort (NaN largest), all of it, its first k, or its k-th element, the last
 * two without sorting the line. Float16 and bfloat16 come as float32 copies (HALF).
 *
 * Each value becomes an unsigned key whose integer order is sort's order (a float by its bits,
 * -0 as 0, every NaN one key above +inf; a signed integer with its sign bit flipped; descending:
 * the complement), paired with its position in the row. The pair (key, position) orders the
 * elements as the stable sort does, equal values by position, and no two pairs are equal, so a
 * selection or sort that is not stable itself still gives the stable sort's answer. Keys of 32
 * bits (float32, int32, uint8, bool) pack with the position into one uint64, key << 32 |
 * position, in rows below 2^32; float64 and int64 keys pair with it in a struct (wk).
 *
 * sort: a radix sort of the keys on long rows (a million float32 in 46 ms, where a merge sort of
 * 24-byte keys took 198 and PyTorch's sort 110-170), an introsort on short ones. A row's k smallest
 * pairs: a heap of k over one pass when k is small beside the row (as PyTorch's topk), else a
 * quickselect for the k-th and a sort of the k before it; both fall back to a heapsort past a depth
 * limit, so no input takes quadratic time.
 */
#include "cpu.h"
#include <omp.h>

#include <stdlib.h>
#include <string.h>

typedef uint64_t pk; /* key << 32 | position */
typedef struct wk {
    uint64_t key, at;
} wk;

#define PK_LESS(a, b) ((a) < (b))
#define WK_LESS(a, b) ((a).key < (b).key || ((a).key == (b).key && (a).at < (b).at))
#define PK_AT(x)      ((int64_t)((x)&0xffffffffu))
#define WK_AT(x)      ((int64_t)(x).at)
#define PK_MAKE(k, j) ((uint64_t)(uint32_t)(k) << 32 | (uint64_t)(j))
#define WK_MAKE(k, j) ((wk){(k), (uint64_t)(j)})

static inline uint32_t key_f32(float v) {
    if (v != v)
        return UINT32_MAX;
    if (v == 0)
        return 0x80000000u; /* -0 and 0 are equal values */
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    return u & 0x80000000u ? ~u : u | 0x80000000u;
}

static inline uint64_t key_f64(double v) {
    const uint64_t sign = (uint64_t)1 << 63;
    if (v != v)
        return UINT64_MAX;
    if (v == 0)
        return sign;
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    return u & sign ? ~u : u | sign;
}

/* The row's pairs into v (flip: the mask that complements a key, 0 ascending); the count of
 * NaN in the row. step: the row's stride in bytes. */
#define DEFINE_LOAD(T, MAKE)                                                                       \
    static int64_t T##_load(T *v, tide_dtype dt, const char *row, int64_t step, int64_t n,         \
                            uint64_t flip) {                                                       \
        int64_t nan = 0;                                                                           \
        switch (dt) {                                                                              \
        case TIDE_DTYPE_F32:                                                                       \
            for (int64_t j = 0; j < n; j++) {                                                      \
                float x = *(const float *)(row + j * step);                                        \
                nan += x != x;                                                                     \
                v[j] = MAKE(key_f32(x) ^ flip, j);                                                 \
            }                                                                                      \
            break;                                                                                 \
        case TIDE_DTYPE_F64:                                                                       \
            for (int64_t j = 0; j < n; j++) {                                                      \
                double x = *(const double *)(row + j * step);                                      \
                nan += x != x;                                                                     \
                v[j] = MAKE(key_f64(x) ^ flip, j);                                                 \
            }                                                                                      \
            break;                                                                                 \
        case TIDE_DTYPE_I32:                                                                       \
            for (int64_t j = 0; j < n; j++)                                                        \
                v[j] = MAKE(((uint32_t) * (const int32_t *)(row + j * step) ^ 0x80000000u) ^ flip, \
                            j);                                                                    \
            break;                                                                                 \
        case TIDE_DTYPE_I64:                                                                       \
            for (int64_t j = 0; j < n; j++)                                                        \
                v[j] = MAKE(                                                                       \
                    ((uint64_t) * (const int64_t *)(row + j * step) ^ ((uint64_t)1 << 63)) ^ flip, \
                    j);                                                                            \
            break;                                                                                 \
        case TIDE_DTYPE_BOOL:                                                                      \
            for (int64_t j = 0; j < n; j++)                                                        \
                v[j] = MAKE((uint64_t)(*(const uint8_t *)(row + j * step) != 0) ^ flip, j);        \
            break;                                                                                 \
        default: /* uint8 */                                                                       \
            for (int64_t j = 0; j < n; j++)                                                        \
                v[j] = MAKE((uint64_t) * (const uint8_t *)(row + j * step) ^ flip, j);             \
            break;                                                                                 \
        }                                                                                          \
        return nan;                                                                                \
    }

/* T_sort (ascending), T_nth (v[nth] in its sorted place, the smaller ones before it, the larger
 * after) and T_smallest (the k smallest, sorted, in v[0..k)) */
#define DEFINE_ALGOS(T, LESS)                                                                      \
    static void T##_insertion(T *v, int64_t n) {                                                   \
        for (int64_t i = 1; i < n; i++) {                                                          \
            T       x = v[i];                                                                      \
            int64_t j = i;                                                                         \
            for (; j > 0 && LESS(x, v[j - 1]); j--)                                                \
                v[j] = v[j - 1];                                                                   \
            v[j] = x;                                                                              \
        }                                                                                          \
    }                                                                                              \
    /* a max-heap of n: v[i] down to its place */                                                  \
    static void T##_sift(T *v, int64_t i, int64_t n) {                                             \
        T x = v[i];                                                                                \
        for (int64_t c; (c = 2 * i + 1) < n; i = c) {                                              \
            if (c + 1 < n && LESS(v[c], v[c + 1]))                                                 \
                c++;                                                                               \
            if (!LESS(x, v[c]))                                                                    \
                break;                                                                             \
            v[i] = v[c];                                                                           \
        }                                                                                          \
        v[i] = x;                                                                                  \
    }                                                                                              \
    static void T##_heapsort(T *v, int64_t n) {                                                    \
        for (int64_t i = n / 2 - 1; i >= 0; i--)                                                   \
            T##_sift(v, i, n);                                                                     \
        for (int64_t e = n - 1; e > 0; e--) {                                                      \
            T x = v[0];                                                                            \
            v[0] = v[e];                                                                           \
            v[e] = x;                                                                              \
            T##_sift(v, 0, e);                                                                     \
        }                                                                                          \
    }                                                                                              \
    /* Hoare's partition of v[0..n) (n > 2) around the median of three elements at distinct        \
     * random places (the first, middle and last split a sawtooth a few elements at a time):       \
     * v[0..j] <= pivot <= v[j+1..n), both sides non-empty (the pivot is neither end) */           \
    static int64_t T##_partition(T *v, int64_t n, uint64_t *rng) {                                 \
        int64_t p0 = (int64_t)(next_rand(rng) % (uint64_t)n);                                      \
        int64_t p1 = (int64_t)(next_rand(rng) % (uint64_t)(n - 1));                                \
        p1 += p1 >= p0;                                                                            \
        int64_t lo = p0 < p1 ? p0 : p1, hi = p0 < p1 ? p1 : p0;                                    \
        int64_t p2 = (int64_t)(next_rand(rng) % (uint64_t)(n - 2));                                \
        p2 += p2 >= lo;                                                                            \
        p2 += p2 >= hi;                                                                            \
        T a = v[p0], b = v[p1], c = v[p2], p;                                                      \
        if (LESS(a, b))                                                                            \
            p = LESS(b, c) ? b : (LESS(a, c) ? c : a);                                             \
        else                                                                                       \
            p = LESS(a, c) ? a : (LESS(b, c) ? c : b);                                             \
        int64_t i = -1, j = n;                                                                     \
        for (;;) {                                                                                 \
            do                                                                                     \
                i++;                                                                               \
            while (LESS(v[i], p));                                                                 \
            do                                                                                     \
                j--;                                                                               \
            while (LESS(p, v[j]));                                                                 \
            if (i >= j)                                                                            \
                return j;                                                                          \
            T x = v[i];                                                                            \
            v[i] = v[j];                                                                           \
            v[j] = x;                                                                              \
        }                                                                                          \
    }                                                                                              \
    static void T##_intro(T *v, int64_t n, int depth, uint64_t *rng) {                             \
        while (n > 24) {                                                                           \
            if (depth-- == 0) {                                                                    \
                T##_heapsort(v, n);                                                                \
                return;                                                                            \
            }                                                                                      \
            int64_t j = T##_partition(v, n, rng) + 1;                                              \
            if (j < n - j) {                                                                       \
                T##_intro(v, j, depth, rng);                                                       \
                v += j;                                                                            \
                n -= j;                                                                            \
            } else {                                                                               \
                T##_intro(v + j, n - j, depth, rng);                                               \
                n = j;                                                                             \
            }                                                                                      \
        }                                                                                          \
        T##_insertion(v, n);                                                                       \
    }                                                                                              \
    static void T##_sort(T *v, int64_t n) {                                                        \
        uint64_t rng = RNG_SEED;                                                                   \
        T##_intro(v, n, 2 * depth_limit(n), &rng);                                                 \
    }                                                                                              \
    static void T##_nth(T *v, int64_t n, int64_t nth) {                                            \
        int      depth = 2 * depth_limit(n);                                                       \
        uint64_t rng = RNG_SEED;                                                                   \
        while (n > 24) {                                                                           \
            if (depth-- == 0) {                                                                    \
                T##_heapsort(v, n);                                                                \
                return;                                                                            \
            }                                                                                      \
            int64_t j = T##_partition(v, n, &rng) + 1;                                             \
            if (nth < j) {                                                                         \
                n = j;                                                                             \
            } else {                                                                               \
                v += j;                                                                            \
                n -= j;                                                                            \
                nth -= j;                                                                          \
            }                                                                                      \
        }                                                                                          \
        T##_insertion(v, n);                                                                       \
    }                                                                                              \
    static void T##_smallest(T *v, int64_t n, int64_t k) {                                         \
        if (k * 64 <= n) { /* a max-heap of the best k so far: most elements lose to its top */    \
            for (int64_t i = k / 2 - 1; i >= 0; i--)                                               \
                T##_sift(v, i, k);                                                                 \
            for (int64_t i = k; i < n; i++)                                                        \
                if (LESS(v[i], v[0])) {                                                            \
                    v[0] = v[i];                                                                   \
                    T##_sift(v, 0, k);                                                             \
                }                                                                                  \
            T##_heapsort(v, k);                                                                    \
            return;                                                                                \
        }                                                                                          \
        if (k < n)                                                                                 \
            T##_nth(v, n, k - 1);                                                                  \
        T##_sort(v, k);                                                                            \
    }

/* xorshift64: the pivots' places (any pivot gives the same answer: only the time depends on
 * them, so a fixed seed) */
#define RNG_SEED 0x9e3779b97f4a7c15u
static inline uint64_t next_rand(uint64_t *s) {
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

/* log2(n) rounded up: the depth past which quicksort and quickselect hand over to heapsort */
static int depth_limit(int64_t n) {
    int d = 0;
    while (n > 1) {
        n >>= 1;
        d++;
    }
    return d + 1;
}

DEFINE_LOAD(pk, PK_MAKE)
DEFINE_LOAD(wk, WK_MAKE)
DEFINE_ALGOS(pk, PK_LESS)
DEFINE_ALGOS(wk, WK_LESS)

/* which element of a row kthvalue takes (1-based), given the row's NaN count: k itself, or the
 * lower median (the first NaN when there is one), or the lower median of the values that are
 * not NaN (the first NaN when all are) */
static int64_t kth_of(int64_t k, int64_t n, int64_t nan) {
    if (k >= 1)
        return k;
    if (k == TIDE_KTH_MEDIAN)
        return nan ? n - nan + 1 : (n - 1) / 2 + 1;
    return n > nan ? (n - nan - 1) / 2 + 1 : 1;
}

enum { BY_SORT, BY_TOPK, BY_KTH };
enum { RADIX_MIN = 256 }; /* shorter rows: the comparison sort */

typedef struct select_job {
    const tide_kview *values, *indices, *a;
    int               by, desc;
    int64_t           k, len, inner, out_len; /* out_len: len for sort, k for topk, 1 for kth */
    uint64_t          flip;
} select_job;

/* A stable LSD radix sort of v by the bytes lo..hi-1 of KEY (tmp: n more), so by (key,
 * position) from pairs in position order; a byte all keys share costs no pass (int64 values
 * below 2^24 take three). */
#define DEFINE_RADIX(T, KEY, LO, HI)                                                               \
    static void T##_radix(T *v, T *tmp, int64_t n) {                                               \
        int64_t cnt[HI - LO][256];                                                                 \
        memset(cnt, 0, sizeof cnt);                                                                \
        for (int64_t i = 0; i < n; i++) {                                                          \
            uint64_t key = KEY(v[i]);                                                              \
            for (int b = 0; b < HI - LO; b++)                                                      \
                cnt[b][(key >> (8 * (LO + b))) & 255]++;                                           \
        }                                                                                          \
        T *src = v, *dst = tmp;                                                                    \
        for (int b = 0; b < HI - LO; b++) {                                                        \
            int     shift = 8 * (LO + b);                                                          \
            int64_t at[256], sum = 0;                                                              \
            if (cnt[b][(KEY(src[0]) >> shift) & 255] == n)                                         \
                continue;                                                                          \
            for (int d = 0; d < 256; d++) {                                                        \
                at[d] = sum;                                                                       \
                sum += cnt[b][d];                                                                  \
            }                                                                                      \
            for (int64_t i = 0; i < n; i++)                                                        \
                dst[at[(KEY(src[i]) >> shift) & 255]++] = src[i];                                  \
            T *t = src;                                                                            \
            src = dst;                                                                             \
            dst = t;                                                                               \
        }                                                                                          \
        if (src != v)                                                                              \
            memcpy(v, src, (size_t)n * sizeof *v);                                                 \
    }

#define PK_KEY(x) (x)
#define WK_KEY(x) ((x).key)
DEFINE_RADIX(pk, PK_KEY, 4, 8)
DEFINE_RADIX(wk, WK_KEY, 0, 8)

/* the row's chosen pairs (from v[first]) into the outputs: positions, and values of C type CT
 * from their keys by DECODE (k: the key, flip undone; x: the element in the row). A key stands
 * for one value but for a float's zeros and NaN: those, and bools (any nonzero byte is true),
 * are read from the row, the others decoded (a read at each position missed the cache on long
 * rows: 78% of a sort of a million int64) */
#define PUT_ROW(AT, HI, CT, DECODE)                                                                \
    for (int64_t j = 0; j < s->out_len; j++) {                                                     \
        int64_t  at = base + j * s->inner, src = AT(v[first + j]);                                 \
        uint64_t k = HI(v[first + j]) ^ s->flip;                                                   \
        CT       val;                                                                              \
        DECODE(k, val, row + src * step);                                                          \
        ((int64_t *)s->indices->data)[at] = src;                                                   \
        ((CT *)s->values->data)[at] = val;                                                         \
    }
#define DEC_READ(k, val, x) ((void)(k), memcpy(&(val), (x), sizeof(val)))
#define DEC_U8(k, val, x)   ((val) = (uint8_t)(k))
#define DEC_I32(k, val, x)  ((val) = (int32_t)((uint32_t)(k) ^ 0x80000000u))
#define DEC_I64(k, val, x)  ((val) = (int64_t)((k) ^ ((uint64_t)1 << 63)))
/* key_f32 / key_f64 undone: a key with the sign bit set is a positive value's bits */
#define DEC_FLOAT(k, val, x, UT)                                                                   \
    do {                                                                                           \
        const UT sign_ = (UT)1 << (8 * sizeof(UT) - 1), kk_ = (UT)(k);                             \
        if (kk_ == sign_ || kk_ == (UT)-1) {                                                       \
            memcpy(&(val), (x), sizeof(val));                                                      \
        } else {                                                                                   \
            UT u_ = kk_ & sign_ ? kk_ ^ sign_ : ~kk_;                                              \
            memcpy(&(val), &u_, sizeof(val));                                                      \
        }                                                                                          \
    } while (0)
#define DEC_F32(k, val, x) DEC_FLOAT(k, val, x, uint32_t)
#define DEC_F64(k, val, x) DEC_FLOAT(k, val, x, uint64_t)

/* line r of the job (of a [rows, len, inner] a: row r / inner, column r % inner) with buffer v:
 * its selection's positions and values into the outputs */
#define DEFINE_ROW(T, AT, HI)                                                                      \
    static void T##_row(const select_job *s, T *v, int64_t r) {                                    \
        const tide_kview *a = s->a;                                                                \
        size_t            es = cpu_dtype_size(a->dtype);                                           \
        int64_t           step = s->inner * (int64_t)es, n = s->len;                               \
        const char       *row =                                                                    \
            (const char *)a->data + ((r / s->inner) * n * s->inner + r % s->inner) * (int64_t)es;  \
        int64_t nan = T##_load(v, a->dtype, row, step, n, s->flip);                                \
        int64_t first = 0;                                                                         \
        if (s->by == BY_SORT && n >= RADIX_MIN) {                                                  \
            T##_radix(v, v + n, n);                                                                \
        } else if (s->by == BY_SORT) {                                                             \
            T##_sort(v, n);                                                                        \
        } else if (s->by == BY_TOPK) {                                                             \
            T##_smallest(v, n, s->k);                                                              \
        } else {                                                                                   \
            first = kth_of(s->k, n, nan) - 1;                                                      \
            T##_nth(v, n, first);                                                                  \
        }                                                                                          \
        int64_t base = (r / s->inner) * s->out_len * s->inner + r % s->inner;                      \
        switch (a->dtype) {                                                                        \
        case TIDE_DTYPE_F32:                                                                       \
            PUT_ROW(AT, HI, float, DEC_F32);                                                       \
            break;                                                                                 \
        case TIDE_DTYPE_F64:                                                                       \
            PUT_ROW(AT, HI, double, DEC_F64);                                                      \
            break;                                                                                 \
        case TIDE_DTYPE_I32:                                                                       \
            PUT_ROW(AT, HI, int32_t, DEC_I32);                                                     \
            break;                                                                                 \
        case TIDE_DTYPE_I64:                                                                       \
            PUT_ROW(AT, HI, int64_t, DEC_I64);                                                     \
            break;                                                                                 \
        case TIDE_DTYPE_U8:                                                                        \
            PUT_ROW(AT, HI, uint8_t, DEC_U8);                                                      \
            break;                                                                                 \
        default:                                                                                   \
            PUT_ROW(AT, HI, uint8_t, DEC_READ);                                                    \
            break;                                                                                 \
        }                                                                                          \
    }

#define PK_HI(x) ((x) >> 32)
#define WK_HI(x) ((x).key)
DEFINE_ROW(pk, PK_AT, PK_HI)
DEFINE_ROW(wk, WK_AT, WK_HI)

static tide_status select_rows(tide_device *dev, const char *op, select_job *s) {
    const tide_kview *a = s->a;
    tide_dtype        dt = a->dtype;
    int64_t           outer = a->shape[0], len = a->shape[1], inner = a->shape[2];
    if (len == 0 || outer * inner == 0 || s->out_len == 0)
        return TIDE_OK;
    int packed = dt != TIDE_DTYPE_F64 && dt != TIDE_DTYPE_I64 && len <= (int64_t)UINT32_MAX;
    s->len = len;
    s->inner = inner;
    s->flip = !s->desc ? 0 : packed ? UINT32_MAX : UINT64_MAX;
    /* the rows on the threads (topk and sort of a [256, 1000] batch), a buffer of len pairs
     * each, twice that for the radix sort's */
    int64_t rows = outer * inner;
    int     nt = rows > 1 && rows * len >= CPU_PAR_GRAIN ? omp_get_max_threads() : 1;
    nt = (int64_t)nt > rows ? (int)rows : nt;
    size_t each = (size_t)len * (packed ? sizeof(pk) : sizeof(wk)) * (s->by == BY_SORT ? 2 : 1);
    /* from the device's cache: a fresh malloc of a long row's buffers took its page faults on
     * every call (15% of a sort of a million int64) */
    void *all = NULL;
    if (cpu_alloc(dev, (size_t)nt * each, &all) != TIDE_OK)
        return tide_seterr(TIDE_ENOMEM, "%s: out of host memory for %lld keys", op, (long long)len);
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
    for (int64_t r = 0; r < rows; r++) {
        char *buf = (char *)all + (size_t)omp_get_thread_num() * each;
        if (packed)
            pk_row(s, (pk *)buf, r);
        else
            wk_row(s, (wk *)buf, r);
    }
    cpu_free(dev, all, (size_t)nt * each);
    return TIDE_OK;
}

/* the call's input as [rows, len, inner], its lines along the middle dim (d = len * inner) */
static tide_status lines_of(const char *op, const tide_kernel_call *c, tide_kview *a3) {
    int64_t inner = c->p[1].i;
    if (c->d % inner)
        return tide_seterr(TIDE_EINVAL, "%s: inner %lld does not divide the row's %lld", op,
                           (long long)inner, (long long)c->d);
    *a3 = *c->in[0];
    a3->ndim = 3;
    a3->shape[0] = c->rows;
    a3->shape[1] = c->d / inner;
    a3->shape[2] = inner;
    a3->strides[0] = c->d;
    a3->strides[1] = inner;
    a3->strides[2] = 1;
    return TIDE_OK;
}

tide_status cpu_sort(tide_device *dev, const tide_kernel_call *c) {
    tide_kview a;
    TIDE_TRY(lines_of("sort", c, &a));
    select_job s = {.values = c->out[0],
                    .indices = c->out[1],
                    .a = &a,
                    .by = BY_SORT,
                    .desc = (int)c->p[2].i,
                    .out_len = a.shape[1]};
    return select_rows(dev, "sort", &s);
}

tide_status cpu_topk(tide_device *dev, const tide_kernel_call *c) {
    tide_kview a;
    TIDE_TRY(lines_of("topk", c, &a));
    select_job s = {.values = c->out[0],
                    .indices = c->out[1],
                    .a = &a,
                    .by = BY_TOPK,
                    .desc = (int)c->p[3].i,
                    .k = c->p[2].i,
                    .out_len = c->p[2].i};
    return select_rows(dev, "topk", &s);
}

tide_status cpu_kthvalue(tide_device *dev, const tide_kernel_call *c) {
    tide_kview a;
    TIDE_TRY(lines_of("kthvalue", c, &a));
    select_job s = {.values = c->out[0],
                    .indices = c->out[1],
                    .a = &a,
                    .by = BY_KTH,
                    .k = c->p[2].i,
                    .out_len = 1};
    return select_rows(dev, "kthvalue", &s);
}
