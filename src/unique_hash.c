/* unique_hash.c — torch.unique of a CPU tensor's elements by a hash table of its distinct values,
 * as PyTorch 1.13's CPU kernel: one pass over the elements (each gets its value's id), a sort of
 * the k distinct values, one pass that turns ids into ranks for the inverse. ops_count.c's
 * device-agnostic way sorts all n elements with their positions and took 2.5x to 8x PyTorch's
 * time on 10^6 values with few distinct ones. A NaN (each NaN a value of its own, sort's order
 * places them) or more than HASH_MAX distinct values leave it to ops_count.c. */
#include "tide_impl.h"

#include <stdlib.h>
#include <string.h>

enum { HASH_MAX = 1 << 17 }; /* distinct values: the table then has at most 2^18 slots, 4 MB */

typedef struct hash_table {
    uint64_t *ord;  /* a slot's value as its order key */
    int64_t  *id;   /* a slot's id + 1; 0: empty */
    int       bits; /* 2^bits slots */
} hash_table;

/* the order key of an element: unsigned integers in the elements' sort order, one per value
 * (-0.0 the key of 0.0); a float's from its bits as ops_count.c's sort (src/cpu/select.c) */
#define ORD_INT(v) ((uint64_t)(int64_t)(v) ^ ((uint64_t)1 << 63))
#define ORD_U8(v)  ((uint64_t)(v))
static inline uint64_t ord_f32(float v) {
    uint32_t u = 0;
    if (v != 0)
        memcpy(&u, &v, sizeof u);
    return u & 0x80000000u ? ~u : u | 0x80000000u;
}
static inline uint64_t ord_f64(double v) {
    const uint64_t sign = (uint64_t)1 << 63;
    uint64_t       u = 0;
    if (v != 0)
        memcpy(&u, &v, sizeof u);
    return u & sign ? ~u : u | sign;
}

static inline uint64_t slot_of(uint64_t ord, int bits) {
    return (ord * 0x9e3779b97f4a7c15u) >> (64 - bits);
}

static bool table_init(hash_table *h, int bits) {
    h->bits = bits;
    h->ord = malloc(sizeof *h->ord << bits);
    h->id = calloc((size_t)1 << bits, sizeof *h->id);
    return h->ord && h->id;
}

static void table_free(hash_table *h) {
    free(h->ord);
    free(h->id);
}

/* the table twice as large, its ids kept */
static bool table_grow(hash_table *h) {
    hash_table g;
    if (!table_init(&g, h->bits + 1)) {
        table_free(&g);
        return false;
    }
    uint64_t mask = ((uint64_t)1 << g.bits) - 1;
    for (uint64_t s = 0; s < (uint64_t)1 << h->bits; s++) {
        if (!h->id[s])
            continue;
        uint64_t t = slot_of(h->ord[s], g.bits);
        while (g.id[t])
            t = (t + 1) & mask;
        g.ord[t] = h->ord[s];
        g.id[t] = h->id[s];
    }
    table_free(h);
    *h = g;
    return true;
}

typedef struct pass_out {
    int64_t *ids;   /* the id of each element's value (n) */
    int64_t *first; /* each id's first element, its count (HASH_MAX) */
    int64_t *count;
    int64_t  k;
} pass_out;

/* 1: done; 0: a NaN or too many values; -1: out of memory */
#define DEFINE_PASS(NAME, T, ORD, ISNAN)                                                           \
    static int NAME(hash_table *h, const T *x, int64_t n, pass_out *o) {                           \
        uint64_t mask = ((uint64_t)1 << h->bits) - 1;                                              \
        for (int64_t i = 0; i < n; i++) {                                                          \
            T v = x[i];                                                                            \
            if (ISNAN(v))                                                                          \
                return 0;                                                                          \
            uint64_t ord = ORD(v), s = slot_of(ord, h->bits);                                      \
            while (h->id[s] && h->ord[s] != ord)                                                   \
                s = (s + 1) & mask;                                                                \
            if (!h->id[s]) {                                                                       \
                if (o->k == HASH_MAX)                                                              \
                    return 0;                                                                      \
                if (2 * (o->k + 1) > (int64_t)mask + 1) { /* half full: twice the slots */         \
                    if (!table_grow(h))                                                            \
                        return -1;                                                                 \
                    mask = ((uint64_t)1 << h->bits) - 1;                                           \
                    for (s = slot_of(ord, h->bits); h->id[s]; s = (s + 1) & mask)                  \
                        ;                                                                          \
                }                                                                                  \
                h->ord[s] = ord;                                                                   \
                h->id[s] = ++o->k;                                                                 \
                o->first[o->k - 1] = i;                                                            \
                o->count[o->k - 1] = 0;                                                            \
            }                                                                                      \
            int64_t id = h->id[s] - 1;                                                             \
            o->count[id]++;                                                                        \
            o->ids[i] = id;                                                                        \
        }                                                                                          \
        return 1;                                                                                  \
    }
#define FLOAT_NAN(v) ((v) != (v))
#define NO_NAN(v)    0
DEFINE_PASS(pass_f32, float, ord_f32, FLOAT_NAN)
DEFINE_PASS(pass_f64, double, ord_f64, FLOAT_NAN)
DEFINE_PASS(pass_i32, int32_t, ORD_INT, NO_NAN)
DEFINE_PASS(pass_i64, int64_t, ORD_INT, NO_NAN)
DEFINE_PASS(pass_u8, uint8_t, ORD_U8, NO_NAN)

typedef struct ranked {
    uint64_t ord;
    int64_t  id;
} ranked;

static int by_ord(const void *p, const void *q) {
    uint64_t a = ((const ranked *)p)->ord, b = ((const ranked *)q)->ord;
    return (a > b) - (a < b);
}

/* the distinct values' ids in sorted order, from the table */
static ranked *sorted_ids(const hash_table *h, int64_t k) {
    ranked *r = malloc((size_t)(k ? k : 1) * sizeof *r);
    if (!r)
        return NULL;
    int64_t j = 0;
    for (uint64_t s = 0; s < (uint64_t)1 << h->bits; s++)
        if (h->id[s])
            r[j++] = (ranked){h->ord[s], h->id[s] - 1};
    qsort(r, (size_t)k, sizeof *r, by_ord);
    return r;
}

/* the outputs from the pass: values (the first element of each value, its bits kept: -0.0 when
 * that came first, as the sort's stable order gives), counts, and the ids made ranks in place
 * (ids is the inverse's memory) */
static tide_status make_outputs(tide_ctx *ctx, const char *op, const tide_tensor *c,
                                const hash_table *h, pass_out *o, tide_tensor **values,
                                tide_tensor **counts) {
    int64_t  k = o->k, n = tide_tensor_numel(c);
    ranked  *r = sorted_ids(h, k);
    int64_t *rank = malloc((size_t)(k ? k : 1) * sizeof *rank);
    if (!r || !rank) {
        free(r);
        free(rank);
        return tide_seterr(TIDE_ENOMEM, "%s: out of host memory", op);
    }
    tide_tensor *v = NULL, *cnt = NULL;
    tide_status  st = tide_tensor_alloc(ctx, op, c->storage->dev, c->dtype, 1, &k, &v);
    if (st == TIDE_OK && counts)
        st = tide_tensor_alloc(ctx, op, c->storage->dev, TIDE_DTYPE_I64, 1, &k, &cnt);
    if (st == TIDE_OK) {
        size_t      es = tide_dtype_size(c->dtype);
        const char *x = tide_tensor_data(c);
        char       *vo = tide_tensor_data(v);
        for (int64_t j = 0; j < k; j++) {
            int64_t id = r[j].id;
            rank[id] = j;
            memcpy(vo + (size_t)j * es, x + (size_t)o->first[id] * es, es);
            if (cnt)
                ((int64_t *)tide_tensor_data(cnt))[j] = o->count[id];
        }
        for (int64_t i = 0; i < n; i++)
            o->ids[i] = rank[o->ids[i]];
    }
    free(r);
    free(rank);
    if (st != TIDE_OK) {
        tide_tensor_release(v);
        tide_tensor_release(cnt);
        return st;
    }
    *values = v;
    if (counts)
        *counts = cnt;
    return TIDE_OK;
}

tide_status tide_unique_hashed(tide_ctx *ctx, const tide_tensor *a, tide_tensor **values,
                               tide_tensor **inverse, tide_tensor **counts) {
    static const char op[] = "unique";
    tide_dtype        dt = a->dtype;
    if (a->storage->dev->type != TIDE_DEVICE_CPU ||
        (dt != TIDE_DTYPE_F32 && dt != TIDE_DTYPE_F64 && dt != TIDE_DTYPE_I32 &&
         dt != TIDE_DTYPE_I64 && dt != TIDE_DTYPE_U8))
        return TIDE_ENOTSUP;
    tide_tensor *c = NULL, *inv = NULL;
    hash_table   h = {0};
    pass_out     o = {0};
    int64_t      n = tide_tensor_numel(a);
    TIDE_TRY(tide_tensor_contiguous(ctx, a, &c));
    /* the ids go where the inverse goes; without one, to a buffer of its own */
    tide_status st = inverse ? tide_tensor_alloc(ctx, op, a->storage->dev, TIDE_DTYPE_I64, a->ndim,
                                                 a->shape, &inv)
                             : TIDE_OK;
    int         done = -1;
    if (st == TIDE_OK) {
        o.ids = inv ? tide_tensor_data(inv) : malloc((size_t)(n ? n : 1) * sizeof *o.ids);
        o.first = malloc(HASH_MAX * sizeof *o.first);
        o.count = malloc(HASH_MAX * sizeof *o.count);
        if ((o.ids || !n) && o.first && o.count && table_init(&h, 10)) {
            const void *x = tide_tensor_data(c);
            done = dt == TIDE_DTYPE_F32   ? pass_f32(&h, x, n, &o)
                   : dt == TIDE_DTYPE_F64 ? pass_f64(&h, x, n, &o)
                   : dt == TIDE_DTYPE_I32 ? pass_i32(&h, x, n, &o)
                   : dt == TIDE_DTYPE_I64 ? pass_i64(&h, x, n, &o)
                                          : pass_u8(&h, x, n, &o);
        }
        if (done < 0)
            st = tide_seterr(TIDE_ENOMEM, "%s: out of host memory", op);
        else if (!done)
            st = TIDE_ENOTSUP;
    }
    if (st == TIDE_OK)
        st = make_outputs(ctx, op, c, &h, &o, values, counts);
    if (!inv)
        free(o.ids);
    free(o.first);
    free(o.count);
    table_free(&h);
    tide_tensor_release(c);
    if (st != TIDE_OK) {
        tide_tensor_release(inv);
        return st;
    }
    if (inverse)
        *inverse = inv;
    return TIDE_OK;
}
