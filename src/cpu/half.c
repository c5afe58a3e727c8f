/*
 * half.c — float16 and bfloat16 on the CPU, through the float32 kernels.
 *
 * cpu_<entry>_or_half is the CPU table's entry for each HALF row of src/backend_entries.def: it
 * calls the kernels (cpu_<entry>) straight for every other dtype, so the kernel files know
 * nothing of half and never call back here. An entry called with half operands widens each of them
 * to a float32 scratch copy, runs the float32 kernel on the copies, and rounds its results back
 * into the half outputs (to nearest, ties to even: the copy entry's conversion). That is each op
 * computed in float32 and rounded once, as PyTorch's CPU kernels compute these dtypes (their
 * "opmath" type) and as tide's CUDA kernels do: the same op gives the same values on both devices
 * but for summation order. The conversions are vectorised (elementwise.c: F16C for float16).
 * The ops a model runs most, elementwise ops and softmax, widen a block at a time in each
 * thread's cache instead of whole tensors (below), so they move half the bytes float32 would;
 * the others pay two passes over memory, at about float32's speed. A bfloat16 matmul does not
 * widen at all where oneDNN multiplies bfloat16 itself (matmul_dnnl.c), several times faster
 * than float32 on CPUs with the instructions.
 *
 * A failed kernel writes nothing back, so a half tensor is left as it was, as every other
 * tensor is (the block paths ask the float32 kernel first, on one element, whether it takes
 * the op). Inputs are widened before the kernel writes, so an output that is an input
 * (x:add_(x)) reads the old values: whole, or block by block at the same positions. (An output
 * overlapping itself, x:unfold(...):add_(1), is undefined, as in float32.) An input broadcast
 * with stride 0 is widened at its own size (one row for a bias), not at the output's.
 */
#include "cpu.h"

enum { IN = 1, OUT = 2, INOUT = IN | OUT };

typedef struct {
    tide_kview v;   /* what the kernel gets: the float32 copy, or the caller's view */
    void      *buf; /* the copy's memory, NULL when the view was not half */
    size_t     bytes;
} wide;

/* w->v: a float32 copy of h when h is half (its values when mode has IN), else h itself */
static tide_status widen(tide_device *dev, const tide_kview *h, int mode, wide *w) {
    w->buf = NULL;
    w->bytes = 0;
    if (!h)
        return TIDE_OK;
    w->v = *h;
    if (!cpu_is_half(h->dtype))
        return TIDE_OK;
    /* the values the view reaches: a stride-0 dim of an input counts once */
    tide_kview src = *h;
    int64_t    n = 1;
    for (int d = h->ndim - 1; d >= 0; d--) {
        if (mode == IN && h->strides[d] == 0)
            src.shape[d] = 1;
        w->v.strides[d] = src.shape[d] == 1 && h->shape[d] != 1 ? 0 : n;
        n *= src.shape[d];
    }
    w->v.dtype = TIDE_DTYPE_F32;
    w->bytes = (size_t)(n > 0 ? n : 1) * sizeof(float);
    TIDE_TRY(cpu_alloc(dev, w->bytes, &w->buf));
    w->v.data = w->buf;
    if (!(mode & IN) || n == 0)
        return TIDE_OK;
    /* the copy's destination: src's shape, contiguous */
    tide_kview dst = src;
    dst.data = w->buf;
    dst.dtype = TIDE_DTYPE_F32;
    int64_t step = 1;
    for (int d = h->ndim - 1; d >= 0; d--) {
        dst.strides[d] = step;
        step *= src.shape[d];
    }
    tide_status st = cpu_copy(dev, &dst, &src);
    if (st != TIDE_OK) {
        cpu_free(dev, w->buf, w->bytes);
        w->buf = NULL;
    }
    return st;
}

/* the n views widened by mode; on a failure the ones already widened are released */
static tide_status widen_all(tide_device *dev, int n, const tide_kview *const *h, const int *mode,
                             wide *w) {
    for (int i = 0; i < n; i++) {
        tide_status st = widen(dev, h[i], mode[i], &w[i]);
        if (st != TIDE_OK) {
            while (i-- > 0)
                if (w[i].buf)
                    cpu_free(dev, w[i].buf, w[i].bytes);
            return st;
        }
    }
    return TIDE_OK;
}

/* after the kernel: its half outputs rounded back when it succeeded; every copy released */
static tide_status finish_all(tide_device *dev, int n, const tide_kview *const *h, const int *mode,
                              wide *w, tide_status st) {
    for (int i = 0; i < n; i++) {
        if (!w[i].buf)
            continue;
        if (st == TIDE_OK && (mode[i] & OUT) && tide_kview_numel(h[i]) > 0)
            st = cpu_copy(dev, h[i], &w[i].v);
        cpu_free(dev, w[i].buf, w[i].bytes);
    }
    return st;
}

/* the kernel's view of operand i: NULL stays NULL */
#define V(i) (h[i] ? &w[i].v : NULL)
/* widen the operands h[] by mode[], run CALL on V(0), V(1), ..., round the outputs back */
#define THROUGH_FLOAT(CALL)                                                                        \
    do {                                                                                           \
        enum { N = sizeof mode / sizeof mode[0] };                                                 \
        wide w[N];                                                                                 \
        TIDE_TRY(widen_all(dev, N, h, mode, w));                                                   \
        return finish_all(dev, N, h, mode, w, (CALL));                                             \
    } while (0)

/* ---- elementwise ops, a block at a time ------------------------------------------------------
 * Widening whole tensors makes an add of half tensors pass over memory three times as often as
 * the add itself (widen, compute, round back), which is most of a bfloat16 model's time beside
 * its matmuls. So binary, binary_scalar and unary (bias adds, residuals, activations) widen
 * BLOCK elements at a time on each thread's stack instead, run the float32 kernel on the block
 * (one row loop: below its thread grain, inside the iterator's threads) and round the block
 * back into the output: memory is read and written once, in half. The values are the same bit
 * for bit: each element is still the float32 op on its widened operands, rounded once. Only
 * ops whose output has the operands' dtype go this way (a comparison's bool output widens). */
enum { BLOCK = 2048, ROW_MIN = 64 };
typedef enum { EW_BINARY, EW_SCALAR, EW_UNARY } ew_kind;
typedef struct {
    ew_kind       kind;
    tide_device  *dev;
    tide_op       op;
    tide_dtype    dt; /* the half dtype of every operand */
    int           nin;
    double        s; /* binary_scalar */
    int           reverse;
    const double *params; /* unary */
} ew_arg;

/* v: n contiguous floats at p as a 1-d view (only the fields a 1-d view reads are set: this
 * runs once a block) */
static void float_row(tide_kview *v, float *p, int64_t n) {
    v->data = p;
    v->dtype = TIDE_DTYPE_F32;
    v->ndim = 1;
    v->shape[0] = n;
    v->strides[0] = 1;
}

/* the float32 kernel on n contiguous floats */
static tide_status ew_float(const ew_arg *e, float *o, float *a, float *b, int64_t n) {
    tide_kview vo, va, vb;
    float_row(&vo, o, n);
    float_row(&va, a, n);
    float_row(&vb, b, n);
    switch (e->kind) {
    case EW_BINARY:
        return cpu_binary(e->dev, e->op, &vo, &va, &vb);
    case EW_SCALAR:
        return cpu_binary_scalar(e->dev, e->op, &vo, &va, e->s, e->reverse);
    default:
        return cpu_unary(e->dev, e->op, &vo, &va, e->params);
    }
}

static void ew_row(char **p, const int64_t *s, int64_t n, int64_t index, void *arg) {
    (void)index;
    const ew_arg *e = arg;
    float         buf[3][BLOCK];
    for (int64_t at = 0; at < n; at += BLOCK) {
        int64_t m = n - at < BLOCK ? n - at : BLOCK;
        for (int k = 1; k <= e->nin; k++)
            cpu_convert_row(TIDE_DTYPE_F32, (char *)buf[k], sizeof(float), e->dt, p[k] + at * s[k],
                            s[k], m);
        (void)ew_float(e, buf[0], buf[1], buf[2], m); /* cannot fail: probed by ew_run */
        cpu_convert_row(e->dt, p[0] + at * s[0], s[0], TIDE_DTYPE_F32, (const char *)buf[0],
                        sizeof(float), m);
    }
}

/* 1 when the op ran a block at a time (*st its status), 0 when it must widen whole tensors */
static int ew_run(ew_arg *e, const tide_kview *out, const tide_kview *a, const tide_kview *b,
                  tide_status *st) {
    if (out->dtype != a->dtype || (b && b->dtype != a->dtype))
        return 0;
    /* the kernel's refusals (an op without a float kernel) come before anything is written */
    float one[3] = {1.0f, 1.0f, 1.0f};
    *st = ew_float(e, &one[0], &one[1], &one[2], 1);
    if (*st != TIDE_OK)
        return 1;
    const tide_kview *v[3] = {out, a, b};
    cpu_iter          it;
    *st = cpu_iter_init(&it, cpu_op_name(e->op), 1 + e->nin, v);
    if (*st != TIDE_OK)
        return 1;
    /* short strided rows would cost a kernel call each: whole tensors then */
    if (it.ndim > 1 && it.shape[it.ndim - 1] < ROW_MIN)
        return 0;
    cpu_iter_run(&it, CPU_PAR_GRAIN_HEAVY, ew_row, e);
    return 1;
}

tide_status cpu_binary_or_half(tide_device *dev, tide_op op, const tide_kview *out,
                               const tide_kview *a, const tide_kview *b) {
    if (!cpu_is_half(a->dtype))
        return cpu_binary(dev, op, out, a, b);
    ew_arg      e = {.kind = EW_BINARY, .dev = dev, .op = op, .dt = a->dtype, .nin = 2};
    tide_status st;
    if (ew_run(&e, out, a, b, &st))
        return st;
    const tide_kview *h[] = {out, a, b};
    const int         mode[] = {OUT, IN, IN};
    THROUGH_FLOAT(cpu_binary(dev, op, V(0), V(1), V(2)));
}

/* the scalar stays a double: the float32 kernel rounds it once, to float32, not to half */
tide_status cpu_binary_scalar_or_half(tide_device *dev, tide_op op, const tide_kview *out,
                                      const tide_kview *a, double s, int reverse) {
    if (!cpu_is_half(a->dtype))
        return cpu_binary_scalar(dev, op, out, a, s, reverse);
    ew_arg      e = {.kind = EW_SCALAR,
                     .dev = dev,
                     .op = op,
                     .dt = a->dtype,
                     .nin = 1,
                     .s = s,
                     .reverse = reverse};
    tide_status st;
    if (ew_run(&e, out, a, NULL, &st))
        return st;
    const tide_kview *h[] = {out, a};
    const int         mode[] = {OUT, IN};
    THROUGH_FLOAT(cpu_binary_scalar(dev, op, V(0), V(1), s, reverse));
}

tide_status cpu_unary_or_half(tide_device *dev, tide_op op, const tide_kview *out,
                              const tide_kview *a, const double *params) {
    if (!cpu_is_half(a->dtype))
        return cpu_unary(dev, op, out, a, params);
    ew_arg e = {.kind = EW_UNARY, .dev = dev, .op = op, .dt = a->dtype, .nin = 1, .params = params};
    tide_status st;
    if (ew_run(&e, out, a, NULL, &st))
        return st;
    const tide_kview *h[] = {out, a};
    const int         mode[] = {OUT, IN};
    THROUGH_FLOAT(cpu_unary(dev, op, V(0), V(1), params));
}

tide_status cpu_reduce_or_half(tide_device *dev, tide_op op, const tide_kview *out,
                               const tide_kview *indices, const tide_kview *a, int dim) {
    if (!cpu_is_half(a->dtype))
        return cpu_reduce(dev, op, out, indices, a, dim);
    const tide_kview *h[] = {out, indices, a};
    const int         mode[] = {OUT, OUT, IN};
    THROUGH_FLOAT(cpu_reduce(dev, op, V(0), V(1), V(2), dim));
}

tide_status cpu_matmul_or_half(tide_device *dev, const tide_kview *out, const tide_kview *a,
                               const tide_kview *bm) {
    if (!cpu_is_half(a->dtype))
        return cpu_matmul(dev, out, a, bm);
    if (cpu_matmul_bf16(dev, out, a, bm)) /* bfloat16 in hardware, where oneDNN takes it */
        return TIDE_OK;
    const tide_kview *h[] = {out, a, bm};
    const int         mode[] = {OUT, IN, IN};
    THROUGH_FLOAT(cpu_matmul(dev, V(0), V(1), V(2)));
}

/* ---- softmax and its gradient, rows at a time ------------------------------------------------
 * The same for softmax over a dim: each thread widens as many whole rows (the dim's elements)
 * as fit in ROWS_BLOCK floats, runs the float32 kernel on them as one [rows, len] block and rounds
 * them back. A dim longer than the block widens whole tensors. */
enum { ROWS_BLOCK = 4096 };
typedef struct {
    tide_device *dev;
    tide_dtype   dt;
    int          nin; /* 1: softmax (out, a); 2: its gradient (dx, y, g) */
    int          log;
    int64_t      len;
    int64_t      step[3]; /* byte strides along the dim */
} sm_arg;

/* the float32 kernel on rows x len contiguous floats, over the rows (only the fields a 2-d view
 * reads are set: this runs once a block) */
static tide_status sm_float(const sm_arg *e, float *o, float *a, float *b, int64_t rows,
                            int64_t len) {
    tide_kview v[3];
    float     *p[3] = {o, a, b};
    for (int k = 0; k < 3; k++) {
        v[k].data = p[k];
        v[k].dtype = TIDE_DTYPE_F32;
        v[k].ndim = 2;
        v[k].shape[0] = rows;
        v[k].shape[1] = len;
        v[k].strides[0] = len;
        v[k].strides[1] = 1;
    }
    return e->nin == 1 ? cpu_softmax_dim(e->dev, &v[0], &v[1], 1, e->log)
                       : cpu_softmax_backward_dim(e->dev, &v[0], &v[1], &v[2], 1, e->log);
}

static void sm_rows(char **p, const int64_t *s, int64_t n, int64_t index, void *arg) {
    (void)index;
    const sm_arg *e = arg;
    float         buf[3][ROWS_BLOCK];
    int64_t       per = ROWS_BLOCK / e->len;
    for (int64_t at = 0; at < n; at += per) {
        int64_t r = n - at < per ? n - at : per;
        for (int k = 1; k <= e->nin; k++)
            for (int64_t i = 0; i < r; i++)
                cpu_convert_row(TIDE_DTYPE_F32, (char *)(buf[k] + i * e->len), sizeof(float), e->dt,
                                p[k] + (at + i) * s[k], e->step[k], e->len);
        (void)sm_float(e, buf[0], buf[1], buf[2], r, e->len); /* cannot fail: probed by sm_run */
        for (int64_t i = 0; i < r; i++)
            cpu_convert_row(e->dt, p[0] + (at + i) * s[0], e->step[0], TIDE_DTYPE_F32,
                            (const char *)(buf[0] + i * e->len), sizeof(float), e->len);
    }
}

/* 1 when the rows ran a block at a time (*st its status), 0 when whole tensors must widen */
static int sm_run(sm_arg *e, int n, const tide_kview *const *v, int dim, tide_status *st) {
    for (int k = 0; k < n; k++)
        if (v[k]->dtype != e->dt || dim < 0 || dim >= v[k]->ndim)
            return 0;
    e->len = v[0]->shape[dim];
    if (e->len == 0 || e->len > ROWS_BLOCK)
        return 0;
    /* only the last dim (or one followed by size-1 dims): the widened whole tensor gives the
     * float32 kernel rows of stride 1 there, as the blocks do, so both take its vector path;
     * across another dim the kernel sums in double, and the blocks would not be bit-identical */
    for (int d = dim + 1; d < v[0]->ndim; d++)
        if (v[0]->shape[d] != 1)
            return 0;
    /* the kernel's refusals come before anything is written: one row of one element */
    float one[3] = {1.0f, 1.0f, 1.0f};
    *st = sm_float(e, &one[0], &one[1], &one[2], 1, 1);
    if (*st != TIDE_OK)
        return 1;
    /* the iterator walks the rows' first elements: the dim collapsed to one */
    tide_kview        starts[3];
    const tide_kview *sv[3];
    for (int k = 0; k < n; k++) {
        starts[k] = *v[k];
        e->step[k] = v[k]->strides[dim] * (int64_t)cpu_dtype_size(e->dt);
        starts[k].shape[dim] = 1;
        starts[k].strides[dim] = 0;
        sv[k] = &starts[k];
    }
    cpu_iter it;
    *st = cpu_iter_init(&it, e->nin == 1 ? "softmax" : "softmax_backward", n, sv);
    if (*st == TIDE_OK)
        cpu_iter_run(&it, CPU_PAR_GRAIN_HEAVY / e->len + 1, sm_rows, e);
    return 1;
}

tide_status cpu_softmax_dim_or_half(tide_device *dev, const tide_kview *out, const tide_kview *a,
                                    int dim, int log) {
    if (!cpu_is_half(a->dtype))
        return cpu_softmax_dim(dev, out, a, dim, log);
    sm_arg            e = {.dev = dev, .dt = a->dtype, .nin = 1, .log = log};
    const tide_kview *v[] = {out, a};
    tide_status       st;
    if (sm_run(&e, 2, v, dim, &st))
        return st;
    const tide_kview *h[] = {out, a};
    const int         mode[] = {OUT, IN};
    THROUGH_FLOAT(cpu_softmax_dim(dev, V(0), V(1), dim, log));
}

tide_status cpu_softmax_backward_dim_or_half(tide_device *dev, const tide_kview *dx,
                                             const tide_kview *y, const tide_kview *g, int dim,
                                             int log) {
    if (!cpu_is_half(y->dtype))
        return cpu_softmax_backward_dim(dev, dx, y, g, dim, log);
    sm_arg            e = {.dev = dev, .dt = y->dtype, .nin = 2, .log = log};
    const tide_kview *v[] = {dx, y, g};
    tide_status       st;
    if (sm_run(&e, 3, v, dim, &st))
        return st;
    const tide_kview *h[] = {dx, y, g};
    const int         mode[] = {OUT, IN, IN};
    THROUGH_FLOAT(cpu_softmax_backward_dim(dev, V(0), V(1), V(2), dim, log));
}

tide_status cpu_index_add_or_half(tide_device *dev, const tide_kview *dst, int dim,
                                  const tide_kview *index, const tide_kview *src) {
    if (!cpu_is_half(dst->dtype))
        return cpu_index_add(dev, dst, dim, index, src);
    const tide_kview *h[] = {dst, index, src};
    const int         mode[] = {INOUT, IN, IN};
    THROUGH_FLOAT(cpu_index_add(dev, V(0), dim, V(1), V(2)));
}

tide_status cpu_where_or_half(tide_device *dev, const tide_kview *out, const tide_kview *cond,
                              const tide_kview *a, const tide_kview *b) {
    if (!cpu_is_half(a->dtype))
        return cpu_where(dev, out, cond, a, b);
    const tide_kview *h[] = {out, cond, a, b};
    const int         mode[] = {OUT, IN, IN, IN};
    THROUGH_FLOAT(cpu_where(dev, V(0), V(1), V(2), V(3)));
}

/* element i of the float32 draw, rounded: the same stream as a float32 tensor's. A uniform
 * draw stays below hi after rounding (0.9999 would round to 1 in bfloat16): one that reaches hi
 * takes the largest half value below it, as the CUDA kernel does (src/cuda/random.cu) */
tide_status cpu_random_or_half(tide_device *dev, const tide_kview *out, tide_random_kind kind,
                               double lo, double hi, uint64_t seed, uint64_t offset) {
    if (!cpu_is_half(out->dtype))
        return cpu_random(dev, out, kind, lo, hi, seed, offset);
    const tide_kview *h[] = {out};
    const int         mode[] = {OUT};
    wide              w[1];
    TIDE_TRY(widen_all(dev, 1, h, mode, w));
    tide_status st = cpu_random(dev, V(0), kind, lo, hi, seed, offset);
    if (st == TIDE_OK && kind == TIDE_RANDOM_UNIFORM && hi > lo) {
        int     bf = out->dtype == TIDE_DTYPE_BF16;
        float  *f = w[0].v.data, below = tide_half_below(bf, hi);
        int64_t n = tide_kview_numel(out);
        for (int64_t i = 0; i < n; i++)
            if (tide_round_half(bf, f[i]) >= hi)
                f[i] = below;
    }
    return finish_all(dev, 1, h, mode, w, st);
}

tide_status cpu_arange_or_half(tide_device *dev, const tide_kview *out, double start, double step) {
    if (!cpu_is_half(out->dtype))
        return cpu_arange(dev, out, start, step);
    const tide_kview *h[] = {out};
    const int         mode[] = {OUT};
    THROUGH_FLOAT(cpu_arange(dev, V(0), start, step));
}

tide_status cpu_scatter_or_half(tide_device *dev, const tide_kview *dst, int dim,
                                const tide_kview *index, const tide_kview *src, int accumulate) {
    /* a write moves the elements' bytes: no float32 copy of dst (t[{rows}] = src of float16) */
    if (!cpu_is_half(dst->dtype) || accumulate == TIDE_SCATTER_WRITE)
        return cpu_scatter(dev, dst, dim, index, src, accumulate);
    const tide_kview *h[] = {dst, index, src};
    const int         mode[] = {INOUT, IN, IN};
    THROUGH_FLOAT(cpu_scatter(dev, V(0), dim, V(1), V(2), accumulate));
}

/* ---- kernel rows ----------------------------------------------------------------------------
 * A row's CPU kernel that computes in float32 only passes itself here: every half tensor of the
 * call is widened (inputs and inout inputs with their values, outputs without), fn runs on a
 * copy of the call that names the float32 copies, and the outputs and inout inputs are rounded
 * back once (an optimizer step: the parameter and its state rounded once per step). The row's
 * own file calls this and nothing here calls back into it. */
tide_status cpu_kernel_or_half(tide_device *dev, const tide_kernel_call *c, tide_kernel_fn fn) {
    if (!cpu_is_half(c->dtype))
        return fn(dev, c);
    const tide_kernel_info *r = tide_kernel_info_of(c->kernel);
    enum { N = 2 * TIDE_KERNEL_MAX_TENSORS };
    const tide_kview *h[N];
    int               mode[N];
    int               n = 0;
    for (int i = 0; i < r->nin; i++, n++)
        h[n] = c->in[i], mode[n] = r->in[i].inout ? INOUT : IN;
    for (int i = 0; i < r->nout; i++, n++)
        h[n] = c->out[i], mode[n] = OUT;
    wide w[N];
    TIDE_TRY(widen_all(dev, n, h, mode, w));
    tide_kernel_call f = *c;
    f.dtype = TIDE_DTYPE_F32;
    for (int i = 0; i < r->nin; i++)
        f.in[i] = V(i);
    for (int i = 0; i < r->nout; i++)
        f.out[i] = V(r->nin + i);
    return finish_all(dev, n, h, mode, w, fn(dev, &f));
}
