/* ops_count.c — nonzero, unique and repeat_interleave: the ops whose result's size depends on
 * values. Each counts on the host first (it reads a mask, the sorted order or the repeats, as
 * masked_select does; PyTorch synchronizes for these too), checks the size against the memory
 * limit, allocates its result once, and leaves the element work to kernels every backend has
 * (compare, sort, index_select): a device with those has these ops, with no entry of its own. */
#include "tide_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- helpers ------------------------------------------------------------------------------ */

/* "1.5 GB": n bytes for a message (as lua/tide/op_args.lua's check_budget writes them) */
static void bytes_str(char *buf, size_t len, uint64_t n) {
    static const char *const units[] = {"bytes", "KB", "MB", "GB", "TB", "PB", "EB"};
    double                   v = (double)n;
    int                      i = 0;
    while (v >= 1024 && i < 6) {
        v /= 1024;
        i++;
    }
    if (i == 0)
        snprintf(buf, len, "%llu bytes", (unsigned long long)n);
    else
        snprintf(buf, len, "%.1f %s", v, units[i]);
}

/* Refuses, before anything is allocated, a result of bytes that would not fit the memory
 * budget (tide_ctx_memory_budget, as lua/tide/op_args.lua's check_budget), so a huge repeat count
 * fails at once instead of eating the machine. what: the result, for the message; fix: what to do
 * instead. */
static tide_status check_fits(tide_ctx *ctx, const char *op, const char *what, uint64_t bytes,
                              const char *fix) {
    size_t   limit = tide_ctx_memory_limit(ctx);
    uint64_t budget = tide_ctx_memory_budget(ctx);
    if (bytes <= budget)
        return TIDE_OK;
    char need[32], have[32];
    bytes_str(need, sizeof need, bytes);
    bytes_str(have, sizeof have, budget);
    return tide_seterr(
        TIDE_ELIMIT, "%s: %s would take %s, more than the %s this process may use (%s); %s%s", op,
        what, need, have, limit ? "what tide.memory_limit() leaves" : "the machine's memory", fix,
        limit ? ", or raise the limit with tide.set_memory_limit" : "");
}

/* A new int64 tensor on dev whose elements the caller writes on the host through o->buf: the
 * tensor's own memory on a host device, else a staging buffer copied over by idx_end. */
typedef struct host_idx {
    tide_tensor *t;
    int64_t     *buf;
    bool         staged;
} host_idx;

static tide_status idx_begin(tide_ctx *ctx, const char *op, tide_device *dev, int ndim,
                             const int64_t *shape, host_idx *o) {
    memset(o, 0, sizeof *o);
    TIDE_TRY(tide_tensor_alloc(ctx, op, dev, TIDE_DTYPE_I64, ndim, shape, &o->t));
    size_t n = tide_tensor_nbytes(o->t);
    if (dev->type == TIDE_DEVICE_CPU) {
        o->buf = tide_tensor_data(o->t);
        return TIDE_OK;
    }
    o->staged = true;
    o->buf = malloc(n ? n : 1);
    if (!o->buf) {
        tide_tensor_release(o->t);
        o->t = NULL;
        return tide_seterr(TIDE_ENOMEM, "%s: out of host memory (%zu bytes)", op, n);
    }
    return TIDE_OK;
}

/* copies a staged buffer to the device; on failure (st or the copy) releases the tensor */
static tide_status idx_end(host_idx *o, tide_status st) {
    if (st == TIDE_OK && o->staged) {
        tide_device *host = NULL;
        st = tide_device_get_index(TIDE_DEVICE_CPU, 0, &host);
        if (st == TIDE_OK)
            st = tide_copy_bytes(o->t->storage->dev, tide_tensor_data(o->t), host, o->buf,
                                 tide_tensor_nbytes(o->t), 0);
    }
    if (o->staged)
        free(o->buf);
    o->buf = NULL;
    if (st != TIDE_OK) {
        tide_tensor_release(o->t);
        o->t = NULL;
    }
    return st;
}

/* a new int64 tensor on dev holding n host values */
static tide_status idx_from(tide_ctx *ctx, const char *op, tide_device *dev, int ndim,
                            const int64_t *shape, const int64_t *v, tide_tensor **out) {
    host_idx o;
    TIDE_TRY(idx_begin(ctx, op, dev, ndim, shape, &o));
    size_t n = tide_tensor_nbytes(o.t);
    if (n)
        memcpy(o.buf, v, n);
    TIDE_TRY(idx_end(&o, TIDE_OK));
    *out = o.t;
    return TIDE_OK;
}

/* ---- nonzero ------------------------------------------------------------------------------ */

/* the 0-based indices of a's nonzero elements (NaN included), row-major, int64 [n, ndim] */
tide_status tide_nonzero(tide_ctx *ctx, const tide_tensor *a, tide_tensor **out) {
    static const char op[] = "nonzero";
    int               nd = a->ndim;
    int64_t           total = tide_tensor_numel(a), n = 0;
    tide_tensor      *m = NULL;
    uint8_t          *h = NULL;
    tide_status       st = tide_binary_scalar_x(ctx, TIDE_OP_NE, a, tide_scalar_i(0), 0, &m);
    if (st == TIDE_OK)
        st = tide_read_host(ctx, op, m, (void **)&h);
    tide_tensor_release(m);
    if (st != TIDE_OK)
        return tide_err_op(st, op);
    for (int64_t i = 0; i < total; i++)
        n += h[i] != 0;
    int64_t  shape[2] = {n, nd};
    host_idx o;
    st = idx_begin(ctx, op, a->storage->dev, 2, shape, &o);
    if (st == TIDE_OK && n && nd) { /* [n, 0] for a 0-d a: nothing to write */
        int64_t c[TIDE_MAX_DIMS] = {0}, *w = o.buf;
        for (int64_t i = 0; i < total; i++) {
            if (h[i]) {
                memcpy(w, c, (size_t)nd * sizeof *c);
                w += nd;
            }
            for (int d = nd - 1; d >= 0 && ++c[d] == a->shape[d]; d--) /* the next position */
                c[d] = 0;
        }
    }
    free(h);
    if (st == TIDE_OK)
        st = idx_end(&o, st);
    if (st != TIDE_OK)
        return tide_err_op(st, op);
    *out = o.t;
    return TIDE_OK;
}

/* ---- unique ------------------------------------------------------------------------------- */

/* perm: the stable lexicographic order of x2's rows ([n, rest]), by one stable sort a column
 * from the last to the first (the sort's own order: NaN largest); *sorted: x2's rows in that
 * order when one sort made them (rest 1: its values), else NULL */
static tide_status lex_order(tide_ctx *ctx, const tide_tensor *x2, tide_tensor **perm,
                             tide_tensor **sorted) {
    int64_t      n = x2->shape[0], rest = x2->shape[1];
    tide_tensor *p = NULL;
    *sorted = NULL;
    tide_status st = TIDE_OK;
    if (rest == 0)
        return tide_arange(ctx, x2->storage->dev, TIDE_DTYPE_I64, 0, (double)n, 1, perm);
    for (int64_t c = rest - 1; st == TIDE_OK && c >= 0; c--) {
        tide_tensor *col = NULL, *keys = NULL, *flat = NULL, *v = NULL, *i = NULL, *np = NULL;
        st = tide_tensor_narrow(x2, 1, c, 1, &col);
        if (st == TIDE_OK && p)
            st = tide_index_select(ctx, col, 0, p, &keys);
        if (st == TIDE_OK)
            st = tide_tensor_reshape(ctx, keys ? keys : col, 1, &n, &flat);
        if (st == TIDE_OK)
            st = tide_sort(ctx, flat, 0, 0, &v, &i);
        if (st == TIDE_OK && rest == 1)
            st = tide_tensor_reshape(ctx, v, 2, x2->shape, sorted);
        if (st == TIDE_OK && p)
            st = tide_index_select(ctx, p, 0, i, &np);
        if (st == TIDE_OK) {
            tide_tensor_release(p);
            p = np ? np : i;
            if (np)
                tide_tensor_release(i);
        } else {
            tide_tensor_release(i);
        }
        tide_tensor *all[] = {col, keys, flat, v};
        for (size_t k = 0; k < sizeof all / sizeof *all; k++)
            tide_tensor_release(all[k]);
    }
    if (st != TIDE_OK) {
        tide_tensor_release(p);
        tide_tensor_release(*sorted);
        *sorted = NULL;
        return st;
    }
    *perm = p;
    return TIDE_OK;
}

/* t's elements on the host: a contiguous CPU tensor's own memory (*copied false), else a copy
 * the caller frees (a million int64 copied cost unique 8% of its time) */
static tide_status host_elements(tide_ctx *ctx, const char *op, const tide_tensor *t, void **out,
                                 bool *copied) {
    *copied = t->storage->dev->type != TIDE_DEVICE_CPU || !tide_tensor_is_contiguous(t);
    if (*copied)
        return tide_read_host(ctx, op, t, out);
    *out = tide_tensor_data(t);
    return TIDE_OK;
}

/* the unique rows of x2 [n, rest] in sorted order: *rows [k, rest]; counts as a host array of
 * k, and the group of each row of x2 written into inverse (begun by the caller; may be NULL) */
static tide_status unique_rows(tide_ctx *ctx, const char *op, const tide_tensor *x2,
                               tide_tensor **rows, int64_t *k_out, int64_t **counts_out,
                               host_idx *inverse) {
    int64_t      n = x2->shape[0], rest = x2->shape[1], k = 0;
    tide_tensor *perm = NULL, *s = NULL, *hi = NULL, *lo = NULL, *ne = NULL, *sd = NULL;
    uint8_t     *diff = NULL;
    int64_t     *starts = NULL, *counts = NULL, *ph = NULL;
    bool         diff_copied = false, ph_copied = false;
    tide_status  st = lex_order(ctx, x2, &perm, &s);
    if (st == TIDE_OK && !s)
        st = tide_index_select(ctx, x2, 0, perm, &s);
    if (st == TIDE_OK && n > 1) {
        st = tide_tensor_narrow(s, 0, 1, n - 1, &hi);
        if (st == TIDE_OK)
            st = tide_tensor_narrow(s, 0, 0, n - 1, &lo);
        if (st == TIDE_OK)
            st = tide_binary(ctx, TIDE_OP_NE, hi, lo, &ne); /* NaN differs from itself */
        if (st == TIDE_OK)
            st = host_elements(ctx, op, ne, (void **)&diff, &diff_copied);
    }
    if (st == TIDE_OK && inverse)
        st = host_elements(ctx, op, perm, (void **)&ph, &ph_copied);
    if (st == TIDE_OK) {
        size_t sz = (size_t)(n ? n : 1) * sizeof(int64_t);
        starts = malloc(sz);
        counts = malloc(sz);
        if (!starts || !counts)
            st = tide_seterr(TIDE_ENOMEM, "%s: out of host memory", op);
    }
    if (st == TIDE_OK) {
        int64_t *inv = inverse ? inverse->buf : NULL;
        for (int64_t i = 0; i < n; i++) {
            bool first = i == 0;
            for (int64_t j = 0; !first && j < rest; j++) /* row i differs from row i - 1 */
                first = diff[(i - 1) * rest + j] != 0;
            if (first) {
                starts[k] = i;
                counts[k++] = 0;
            }
            counts[k - 1]++;
            if (inv)
                inv[ph[i]] = k - 1;
        }
        st = idx_from(ctx, op, x2->storage->dev, 1, &k, starts, &sd);
    }
    if (st == TIDE_OK)
        st = tide_index_select(ctx, s, 0, sd, rows);
    if (diff_copied)
        free(diff);
    if (ph_copied)
        free(ph);
    tide_tensor *all[] = {perm, s, hi, lo, ne, sd};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        tide_tensor_release(all[i]);
    free(starts);
    if (st != TIDE_OK) {
        free(counts);
        return st;
    }
    *k_out = k;
    *counts_out = counts;
    return TIDE_OK;
}

/* the product of a's sizes but dim's: a tensor with elements bounds it, but one with a 0 in its
 * shape may have others whose product overflows ({2^32, 2^32, 0}); past a 0 among them, an
 * overflow means the 0 is dim's own: no elements, so 0 as well */
static int64_t other_dims_numel(const tide_tensor *a, int dim) {
    int64_t rest = 1;
    for (int d = 0; d < a->ndim && rest; d++)
        if (d != dim && a->shape[d] == 0)
            rest = 0;
    for (int d = 0; d < a->ndim && rest; d++)
        if (d != dim && __builtin_mul_overflow(rest, a->shape[d], &rest))
            rest = 0;
    return rest;
}

/* torch.unique, sorted: over the flattened a (dim == TIDE_ALL_DIMS) or the slices along dim
 * (0-based, may be negative); inverse (a's shape, or [size of dim]) and counts ([k]) int64, each
 * may be NULL. NaN differs from every value, itself included. */
tide_status tide_unique(tide_ctx *ctx, const tide_tensor *a, int dim, tide_tensor **values,
                        tide_tensor **inverse, tide_tensor **counts) {
    static const char op[] = "unique";
    int               nd = a->ndim, perm[TIDE_MAX_DIMS], back[TIDE_MAX_DIMS];
    int64_t           n = tide_tensor_numel(a), rest = 1, shape2[2];
    bool              flat = dim == TIDE_ALL_DIMS;
    if (!flat)
        TIDE_TRY(tide_norm_dim(op, &dim, nd));
    if (flat) { /* the CPU's hash table of the distinct values, where it applies */
        tide_status hs = tide_unique_hashed(ctx, a, values, inverse, counts);
        if (hs != TIDE_ENOTSUP)
            return hs == TIDE_OK ? hs : tide_err_op(hs, op);
    }
    tide_tensor *moved = NULL, *x2 = NULL, *rows = NULL, *v = NULL, *cnt = NULL;
    int64_t     *ch = NULL, k = 0;
    host_idx     inv = {0};
    tide_status  st = TIDE_OK;
    if (flat) {
        shape2[0] = n;
        shape2[1] = 1;
        st = tide_tensor_reshape(ctx, a, 2, shape2, &x2);
    } else {
        /* dim first, the others in order: [n, rest] */
        perm[0] = dim;
        for (int d = 0, j = 1; d < nd; d++)
            if (d != dim)
                perm[j++] = d;
        for (int j = 0; j < nd; j++)
            back[perm[j]] = j;
        n = a->shape[dim];
        rest = other_dims_numel(a, dim);
        shape2[0] = n;
        shape2[1] = rest;
        st = tide_tensor_permute(a, perm, &moved);
        if (st == TIDE_OK)
            st = tide_tensor_reshape(ctx, moved, 2, shape2, &x2);
    }
    /* the inverse written where it goes (a CPU tensor's own memory) */
    if (st == TIDE_OK && inverse)
        st = flat ? idx_begin(ctx, op, a->storage->dev, nd, a->shape, &inv)
                  : idx_begin(ctx, op, a->storage->dev, 1, &n, &inv);
    if (st == TIDE_OK)
        st = unique_rows(ctx, op, x2, &rows, &k, &ch, inverse ? &inv : NULL);
    if (st == TIDE_OK && flat) {
        st = tide_tensor_reshape(ctx, rows, 1, &k, &v);
    } else if (st == TIDE_OK) {
        int64_t vs[TIDE_MAX_DIMS];
        vs[0] = k;
        for (int j = 1; j < nd; j++)
            vs[j] = moved->shape[j];
        tide_tensor *vv = NULL, *vb = NULL;
        st = tide_tensor_reshape(ctx, rows, nd, vs, &vv);
        if (st == TIDE_OK)
            st = tide_tensor_permute(vv, back, &vb);
        if (st == TIDE_OK)
            st = tide_tensor_contiguous(ctx, vb, &v);
        tide_tensor_release(vv);
        tide_tensor_release(vb);
    }
    if (st == TIDE_OK && counts)
        st = idx_from(ctx, op, a->storage->dev, 1, &k, ch, &cnt);
    if (inverse && inv.t)
        st = idx_end(&inv, st);
    free(ch);
    tide_tensor_release(moved);
    tide_tensor_release(x2);
    tide_tensor_release(rows);
    if (st != TIDE_OK) {
        tide_tensor_release(v);
        tide_tensor_release(cnt);
        return tide_err_op(st, op);
    }
    *values = v;
    if (inverse)
        *inverse = inv.t;
    if (counts)
        *counts = cnt;
    return TIDE_OK;
}

/* ---- repeat_interleave -------------------------------------------------------------------- */

/* the repeats as n host counts, checked (rep NULL or of one element: *count for each, and *r
 * NULL); *total: their sum */
static tide_status read_repeats(tide_ctx *ctx, const char *op, const tide_tensor *rep,
                                int64_t *count, int64_t n, int64_t **out, int64_t *total) {
    int64_t *r = NULL, len = rep ? tide_tensor_numel(rep) : 1;
    if (rep) {
        tide_tensor *r64 = NULL;
        TIDE_TRY(tide_cast(ctx, op, rep, TIDE_DTYPE_I64, &r64));
        tide_status st = tide_read_host(ctx, op, r64, (void **)&r);
        tide_tensor_release(r64);
        TIDE_TRY(st);
        for (int64_t i = 0; i < len; i++)
            if (r[i] < 0) {
                long long bad = (long long)r[i];
                free(r);
                if (len == 1)
                    return tide_seterr(TIDE_EINVAL, "%s: repeats must be non-negative, got %lld",
                                       op, bad);
                return tide_seterr(TIDE_EINVAL,
                                   "%s: repeats must be non-negative, got %lld at position %lld",
                                   op, bad, (long long)i + 1);
            }
        if (len == 1) {
            *count = r[0];
            free(r);
            r = NULL;
        }
    } else if (*count < 0) {
        return tide_seterr(TIDE_EINVAL, "%s: repeats must be non-negative, got %lld", op,
                           (long long)*count);
    }
    uint64_t sum = 0;
    if (r) {
        for (int64_t i = 0; i < len && sum <= INT64_MAX; i++)
            sum += (uint64_t)r[i]; /* each below 2^63: no wrap before the check */
    } else if (n && (uint64_t)*count > (uint64_t)INT64_MAX / (uint64_t)n) {
        sum = (uint64_t)INT64_MAX + 1;
    } else {
        sum = (uint64_t)*count * (uint64_t)n;
    }
    if (sum > INT64_MAX) {
        free(r);
        return tide_seterr(TIDE_EINVAL,
                           "%s: the repeats add up to more than 2^63 - 1 elements; ask for fewer",
                           op);
    }
    *out = r;
    *total = (int64_t)sum;
    return TIDE_OK;
}

/* the 0-based source index of each of total positions: i repeated r[i] times (r NULL: count) */
static void fill_sources(int64_t *w, const int64_t *r, int64_t count, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        int64_t c = r ? r[i] : count;
        for (int64_t j = 0; j < c; j++)
            *w++ = i;
    }
}

/* checks a repeats tensor against a dim of size n: its device, dtype, rank and length */
static tide_status check_repeats(const char *op, const tide_tensor *a, const tide_tensor *rep,
                                 int64_t n, int dim) {
    if (!rep)
        return TIDE_OK;
    TIDE_TRY(tide_check_same_device(op, a, rep));
    if (rep->dtype != TIDE_DTYPE_I64 && rep->dtype != TIDE_DTYPE_I32)
        return tide_seterr(TIDE_EDTYPE,
                           "%s: repeats must be an integer or an int64 tensor, got a %s tensor; "
                           "convert it with :long()",
                           op, tide_dtype_name(rep->dtype));
    if (rep->ndim > 1)
        return tide_seterr(TIDE_ESHAPE,
                           "%s: repeats must be a 0-d or 1-d tensor, got %d dims; flatten it "
                           "with :reshape(-1)",
                           op, rep->ndim);
    int64_t len = tide_tensor_numel(rep);
    if (len != 1 && len != n) {
        if (dim == TIDE_ALL_DIMS)
            return tide_seterr(TIDE_ESHAPE,
                               "%s: repeats has %lld elements for a tensor of %lld elements "
                               "(flattened, no dim given); give one per element or a single one",
                               op, (long long)len, (long long)n);
        return tide_seterr(TIDE_ESHAPE,
                           "%s: repeats has %lld elements for dim %d of size %lld; give one per "
                           "element of the dim or a single one",
                           op, (long long)len, dim + 1, (long long)n);
    }
    return TIDE_OK;
}

/* a repeated along dim (0-based, may be negative; TIDE_ALL_DIMS: the flattened a): element i
 * repeats[i] times (repeats: an int64/int32 tensor of the dim's size or of one element; NULL:
 * every element count times). output_size >= 0: the result's size along dim, checked against
 * the repeats. *index (may be NULL): the 0-based source along dim of each result position. */
tide_status tide_repeat_interleave(tide_ctx *ctx, const tide_tensor *a, int dim,
                                   const tide_tensor *repeats, int64_t count, int64_t output_size,
                                   tide_tensor **out, tide_tensor **index) {
    static const char op[] = "repeat_interleave";
    bool              flat = dim == TIDE_ALL_DIMS;
    int64_t           n, rest = 1;
    if (!flat) {
        if (a->ndim == 0)
            return tide_seterr(TIDE_EINDEX,
                               "%s: dim %d out of range for a 0-d tensor; give no dim (the "
                               "flattened tensor)",
                               op, dim < 0 ? dim : dim + 1);
        TIDE_TRY(tide_norm_dim(op, &dim, a->ndim));
        n = a->shape[dim];
        rest = other_dims_numel(a, dim);
    } else {
        n = tide_tensor_numel(a);
    }
    TIDE_TRY(check_repeats(op, a, repeats, n, flat ? TIDE_ALL_DIMS : dim));
    int64_t *r = NULL, total = 0;
    TIDE_TRY(read_repeats(ctx, op, repeats, &count, n, &r, &total));
    if (output_size >= 0 && output_size != total) {
        free(r);
        return tide_seterr(TIDE_ESHAPE,
                           "%s: output_size is %lld but the repeats add up to %lld; give their "
                           "sum, or leave output_size out",
                           op, (long long)output_size, (long long)total);
    }
    /* the result and the index, before either is allocated */
    uint64_t elems = rest && (uint64_t)total > UINT64_MAX / (uint64_t)rest
                         ? UINT64_MAX
                         : (uint64_t)total * (uint64_t)rest;
    uint64_t ib = (uint64_t)total <= UINT64_MAX / 8 ? (uint64_t)total * 8 : UINT64_MAX;
    uint64_t es = tide_dtype_size(a->dtype);
    uint64_t bytes = elems > (UINT64_MAX - ib) / es ? UINT64_MAX : elems * es + ib;
    char     what[96];
    snprintf(what, sizeof what, "a result of %llu elements and its int64 source index",
             (unsigned long long)elems);
    tide_status st = check_fits(ctx, op, what, bytes, "ask for fewer repeats");
    if (st == TIDE_OK && elems > INT64_MAX)
        st = tide_seterr(TIDE_EINVAL, "%s: the result would hold more than 2^63 - 1 elements", op);
    host_idx o = {0};
    if (st == TIDE_OK)
        st = idx_begin(ctx, op, a->storage->dev, 1, &total, &o);
    if (st == TIDE_OK)
        fill_sources(o.buf, r, count, n);
    free(r);
    if (st == TIDE_OK)
        st = idx_end(&o, st);
    tide_tensor *src = NULL;
    if (st == TIDE_OK && flat)
        st = tide_tensor_reshape(ctx, a, 1, &n, &src);
    if (st == TIDE_OK)
        st = tide_index_select(ctx, flat ? src : a, flat ? 0 : dim, o.t, out);
    tide_tensor_release(src);
    if (st == TIDE_OK && index)
        *index = o.t;
    else
        tide_tensor_release(o.t);
    return st == TIDE_OK ? st : tide_err_op(st, op);
}

/* torch.repeat_interleave(repeats): i repeated repeats[i] times, 0-based, in repeats' dtype
 * (1-d int64 or int32) on its device */
tide_status tide_repeat_interleave_index(tide_ctx *ctx, const tide_tensor *repeats,
                                         int64_t output_size, tide_tensor **out) {
    static const char op[] = "repeat_interleave";
    if (repeats->dtype != TIDE_DTYPE_I64 && repeats->dtype != TIDE_DTYPE_I32)
        return tide_seterr(TIDE_EDTYPE,
                           "%s: repeats alone must be an int64 tensor, got a %s tensor; convert "
                           "it with :long(), or give the repeats after the tensor to repeat",
                           op, tide_dtype_name(repeats->dtype));
    if (repeats->ndim != 1)
        return tide_seterr(TIDE_ESHAPE,
                           "%s: repeats alone must be a 1-d tensor, got %d dims; flatten it "
                           "with :reshape(-1), or give the tensor to repeat first",
                           op, repeats->ndim);
    int64_t      n = repeats->shape[0];
    tide_tensor *ar = NULL, *idx = NULL;
    tide_status  st = tide_arange(ctx, repeats->storage->dev, repeats->dtype, 0, (double)n, 1, &ar);
    if (st == TIDE_OK)
        st = tide_repeat_interleave(ctx, ar, 0, repeats, 0, output_size, &idx, NULL);
    tide_tensor_release(ar);
    if (st != TIDE_OK)
        return st;
    *out = idx;
    return TIDE_OK;
}
