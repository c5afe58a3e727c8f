/*
 * attention.c — the attention kernel rows (include/tide_kernels.def): scaled dot-product attention
 * over packed sequences, dropout(softmax(q k^T * scale)) v for each sequence and head, and its
 * gradients (attention_backward), which compute each head's weights again from q and k: nothing
 * [L, L] is kept between the two.
 *
 * q, k and v are [N, heads * d] as the projections make them, so nothing is transposed, padded or
 * masked: sequence b's tokens are rows offsets[b]..offsets[b+1]-1, and head h reads columns
 * h*d..h*d+d-1 (a row stride of heads * d, which the gemms take as their leading dimension).
 * Each (sequence, head) is one task on the OpenMP pool: two of oneDNN's sgemms on that thread
 * and a softmax over the [L, L] scores in the thread's buffer, which stays in cache at BERT's
 * lengths. float16 and bfloat16 heads are widened to float32 in the thread's buffers and rounded
 * back once, as half.c's kernels compute. The backward takes five gemms a head (the scores, dv,
 * the weights' gradient, dq, dk) and FlashAttention's softmax gradient, dS = P (dP - rowsum(P dP)).
 *
 * OpenBLAS called from inside a parallel region serializes its callers (two threads took as long
 * as one), so without oneDNN, and for float64 (dgemm), the tasks run on one thread.
 */
#include "cpu.h"
#include "scalar_math.h"
#include "dtype_convert.h"
#include "vec_math.h"
#include <cblas.h>
#ifdef TIDE_HAVE_DNNL
#include <dnnl.h>
#define PARALLEL_SGEMM 1
#else
#define PARALLEL_SGEMM 0
#endif
#include <omp.h>
#include <stdlib.h>

enum { ATTENTION_MAX_LEN = 4096 };

/* one call of either row */
typedef struct {
    const char        *q, *k, *v, *dout;   /* dout: the backward's */
    char              *out, *dq, *dk, *dv; /* out: the forward's; dq, dk, dv NULL when not asked */
    const int64_t     *offsets;
    int64_t            nseq, heads, d, ld, n; /* ld = heads * d, the row stride; n tokens */
    tide_dtype         dt;
    double             scale, inv; /* inv: a kept weight's factor, about 1 / (1 - dropout) */
    int                dropout;    /* whether any weight is dropped (dropout > 0) */
    unsigned long long key;        /* the mask's (scalar_math.h's tide_attention_keep) */
    unsigned           threshold;
} attn;

/* the rows of one head of one sequence: [len, d] at row `first`, row stride ld (elements) */
static size_t head_at(const attn *a, int64_t first, int64_t h) {
    return (size_t)((first * a->ld + h * a->d) * (int64_t)cpu_dtype_size(a->dt));
}

/* the 16-bit fields of head h's mask elements for query i and keys first..first+len-1 into
 * bits[0..len-1]: the words of their groups of four hashed in one loop, then each element's field
 * taken in another (both vectorize; a branch per element to hash each word once had cost as
 * much as the products) */
CPU_HOT static void mask_bits(const attn *a, int64_t h, int64_t i, int64_t first, int64_t len,
                              uint16_t *bits) {
    unsigned long long c0 = tide_attention_element(h, i, first, a->n), g0 = c0 >> 2;
    unsigned long long words[ATTENTION_MAX_LEN / 4 + 2];
    int64_t            nw = (int64_t)(((c0 + (unsigned long long)len - 1) >> 2) - g0) + 1;
    for (int64_t w = 0; w < nw; w++)
        words[w] = tide_attention_word(a->key, (g0 + (unsigned long long)w) << 2);
    int64_t skip = (int64_t)(c0 & 3); /* element c0's place in its word */
    for (int64_t col = 0; col < len; col++) {
        int64_t e = skip + col;
        bits[col] = (uint16_t)(words[e >> 2] >> (16 * (e & 3)));
    }
}

/* head h's dropout mask over its sequence's [len, len] weights (rows from token first), as the
 * elements' 16-bit fields */
static void mask_of(const attn *a, uint16_t *mask, int64_t len, int64_t first, int64_t h) {
    for (int64_t r = 0; r < len; r++)
        mask_bits(a, h, first + r, first, len, mask + r * len);
}

/* out = in * inv where the mask's field is at least threshold, else 0: one row of weights (or
 * of their gradients) through dropout; out may be in */
CPU_HOT static void drop_f32(float *out, const float *in, const uint16_t *mask, int64_t n,
                             unsigned threshold, float inv) {
    for (int64_t e = 0; e < n; e++)
        out[e] = mask[e] >= threshold ? in[e] * inv : 0.0f;
}

static void drop_f64(double *out, const double *in, const uint16_t *mask, int64_t n,
                     unsigned threshold, double inv) {
    for (int64_t e = 0; e < n; e++)
        out[e] = mask[e] >= threshold ? in[e] * inv : 0.0;
}

CPU_HOT static void softmax_rows_f32(float *s, int64_t len) {
    for (int64_t i = 0; i < len; i++)
        cpu_softmax_row_f32(s + i * len, s + i * len, len, 0);
}

static void softmax_rows_f64(double *s, int64_t len) {
    for (int64_t i = 0; i < len; i++) {
        double *r = s + i * len, mx = -INFINITY, sum = 0;
        for (int64_t j = 0; j < len; j++)
            mx = r[j] > mx || r[j] != r[j] ? r[j] : mx;
        for (int64_t j = 0; j < len; j++)
            sum += r[j] = exp(r[j] - mx);
        for (int64_t j = 0; j < len; j++)
            r[j] /= sum;
    }
}

/* C = alpha op(A) op(B), row-major: oneDNN's sgemm where tide has it (OpenBLAS's serializes
 * inside a parallel region), OpenBLAS's dgemm */
static void gemm_f32(char ta, char tb, int64_t m, int64_t n, int64_t k, float alpha, const float *A,
                     int64_t lda, const float *B, int64_t ldb, float *C, int64_t ldc) {
#ifdef TIDE_HAVE_DNNL
    dnnl_sgemm(ta, tb, m, n, k, alpha, A, lda, B, ldb, 0.0f, C, ldc);
#else
    cblas_sgemm(CblasRowMajor, ta == 'T' ? CblasTrans : CblasNoTrans,
                tb == 'T' ? CblasTrans : CblasNoTrans, (int)m, (int)n, (int)k, alpha, A, (int)lda,
                B, (int)ldb, 0.0f, C, (int)ldc);
#endif
}

static void gemm_f64(char ta, char tb, int64_t m, int64_t n, int64_t k, double alpha,
                     const double *A, int64_t lda, const double *B, int64_t ldb, double *C,
                     int64_t ldc) {
    cblas_dgemm(CblasRowMajor, ta == 'T' ? CblasTrans : CblasNoTrans,
                tb == 'T' ? CblasTrans : CblasNoTrans, (int)m, (int)n, (int)k, alpha, A, (int)lda,
                B, (int)ldb, 0.0, C, (int)ldc);
}

/* One head of one sequence in float32 or float64 (T, SFX): q, k, v, dout [len, d] with row
 * stride ld, out / dq, dk, dv likewise; w, g [len, len] buffers, mask [len, len] 16-bit fields.
 *   forward:  P = softmax(scale q k^T), Z = P * mask / (1 - dropout), out = Z v
 *   backward: P again; dv = Z^T dout; dZ = dout v^T, dP = dZ * mask / (1 - dropout);
 *             dS = P (dP - rowsum(P dP)); dq = scale dS k, dk = scale dS^T q */
#define ATTENTION_HEAD(T, SFX)                                                                     \
    static void head_##SFX(const attn *a, const T *q, const T *k, const T *v, T *out, int64_t ld,  \
                           int64_t len, int64_t first, int64_t h, T *w, uint16_t *mask) {          \
        int64_t d = a->d;                                                                          \
        gemm_##SFX('N', 'T', len, len, d, (T)a->scale, q, ld, k, ld, w, len);                      \
        softmax_rows_##SFX(w, len);                                                                \
        if (a->dropout) {                                                                          \
            mask_of(a, mask, len, first, h);                                                       \
            drop_##SFX(w, w, mask, len *len, a->threshold, (T)a->inv);                             \
        }                                                                                          \
        gemm_##SFX('N', 'N', len, d, len, (T)1, w, len, v, ld, out, ld);                           \
    }                                                                                              \
    static void head_backward_##SFX(const attn *a, const T *q, const T *k, const T *v,             \
                                    const T *dout, T *dq, T *dk, T *dv, int64_t ld, int64_t len,   \
                                    int64_t first, int64_t h, T *w, T *g, uint16_t *mask) {        \
        int64_t d = a->d;                                                                          \
        T       inv = (T)a->inv;                                                                   \
        gemm_##SFX('N', 'T', len, len, d, (T)a->scale, q, ld, k, ld, w, len);                      \
        softmax_rows_##SFX(w, len);                                                                \
        if (a->dropout)                                                                            \
            mask_of(a, mask, len, first, h);                                                       \
        if (dv) {                                                                                  \
            const T *z = w;                                                                        \
            if (a->dropout) {                                                                      \
                drop_##SFX(g, w, mask, len *len, a->threshold, inv);                               \
                z = g;                                                                             \
            }                                                                                      \
            gemm_##SFX('T', 'N', len, d, len, (T)1, z, len, dout, ld, dv, ld);                     \
        }                                                                                          \
        if (!dq && !dk)                                                                            \
            return;                                                                                \
        gemm_##SFX('N', 'T', len, len, d, (T)1, dout, ld, v, ld, g, len);                          \
        for (int64_t r = 0; r < len; r++) {                                                        \
            T       *gr = g + r * len;                                                             \
            const T *pr = w + r * len;                                                             \
            T        dot = 0;                                                                      \
            if (a->dropout)                                                                        \
                drop_##SFX(gr, gr, mask + r * len, len, a->threshold, inv);                        \
            for (int64_t c = 0; c < len; c++)                                                      \
                dot += pr[c] * gr[c];                                                              \
            for (int64_t c = 0; c < len; c++)                                                      \
                gr[c] = pr[c] * (gr[c] - dot);                                                     \
        }                                                                                          \
        if (dq)                                                                                    \
            gemm_##SFX('N', 'N', len, d, len, (T)a->scale, g, len, k, ld, dq, ld);                 \
        if (dk)                                                                                    \
            gemm_##SFX('T', 'N', len, d, len, (T)a->scale, g, len, q, ld, dk, ld);                 \
    }
ATTENTION_HEAD(float, f32)
ATTENTION_HEAD(double, f64)
#undef ATTENTION_HEAD

/* a head's row of d half values to floats and back (inline: a call per row of d = 32 cost more
 * than the conversion) */
CPU_HOT static void widen_row(float *o, const uint16_t *h, int64_t d, tide_dtype dt) {
    if (dt == TIDE_DTYPE_BF16)
        for (int64_t j = 0; j < d; j++)
            o[j] = tide_bf16_to_float(h[j]);
    else
        for (int64_t j = 0; j < d; j++)
            o[j] = tide_half_to_float(h[j]);
}

CPU_HOT static void round_row(uint16_t *h, const float *f, int64_t d, tide_dtype dt) {
    if (dt == TIDE_DTYPE_BF16)
        for (int64_t j = 0; j < d; j++)
            h[j] = tide_float_to_bf16(f[j]);
    else
        for (int64_t j = 0; j < d; j++)
            h[j] = tide_float_to_half(f[j]);
}

/* a half head [len, d] (row stride ld) widened into f ([len, d] floats), and back */
static void widen_head(float *f, const char *src, const attn *a, int64_t len) {
    int64_t row = a->ld * (int64_t)cpu_dtype_size(a->dt);
    for (int64_t r = 0; r < len; r++)
        widen_row(f + r * a->d, (const uint16_t *)(src + r * row), a->d, a->dt);
}

static void round_head(char *dst, const float *f, const attn *a, int64_t len) {
    int64_t row = a->ld * (int64_t)cpu_dtype_size(a->dt);
    for (int64_t r = 0; r < len; r++)
        round_row((uint16_t *)(dst + r * row), f + r * a->d, a->d, a->dt);
}

/* the thread's buffer for sequences of up to len tokens: [len, len] weights (and the backward's
 * second [len, len] block), the [len, d] float heads of a half dtype (q, k, v, out; the backward:
 * q, k, v, dout, dq, dk, dv), then the dropout mask's [len, len] 16-bit fields */
static size_t buffer_bytes(const attn *a, int64_t len, int backward) {
    size_t esz = a->dt == TIDE_DTYPE_F64 ? sizeof(double) : sizeof(float);
    size_t sq = (size_t)len * (size_t)len;
    size_t heads = cpu_is_half(a->dt) ? (backward ? 7u : 4u) * (size_t)len * (size_t)a->d : 0;
    return (sq * (backward ? 2u : 1u) + heads) * esz + sq * sizeof(uint16_t);
}

/* task t = (sequence, head) of the forward (backward: the gradients) with the thread's buffer */
static void run_task(const attn *a, int64_t t, void *buf, int backward) {
    int64_t b = t / a->heads, h = t % a->heads, first = a->offsets[b];
    int64_t len = a->offsets[b + 1] - first, d = a->d;
    if (len == 0)
        return;
    size_t    at = head_at(a, first, h), sq = (size_t)(len * len);
    uint16_t *mask = (uint16_t *)((char *)buf + (buffer_bytes(a, len, backward) - 2 * sq));
    char     *dq = a->dq ? a->dq + at : NULL, *dk = a->dk ? a->dk + at : NULL;
    char     *dv = a->dv ? a->dv + at : NULL;
    if (a->dt == TIDE_DTYPE_F64 || a->dt == TIDE_DTYPE_F32) {
        if (a->dt == TIDE_DTYPE_F64 && backward)
            head_backward_f64(a, (const double *)(a->q + at), (const double *)(a->k + at),
                              (const double *)(a->v + at), (const double *)(a->dout + at),
                              (double *)dq, (double *)dk, (double *)dv, a->ld, len, first, h, buf,
                              (double *)buf + sq, mask);
        else if (a->dt == TIDE_DTYPE_F64)
            head_f64(a, (const double *)(a->q + at), (const double *)(a->k + at),
                     (const double *)(a->v + at), (double *)(a->out + at), a->ld, len, first, h,
                     buf, mask);
        else if (backward)
            head_backward_f32(a, (const float *)(a->q + at), (const float *)(a->k + at),
                              (const float *)(a->v + at), (const float *)(a->dout + at),
                              (float *)dq, (float *)dk, (float *)dv, a->ld, len, first, h, buf,
                              (float *)buf + sq, mask);
        else
            head_f32(a, (const float *)(a->q + at), (const float *)(a->k + at),
                     (const float *)(a->v + at), (float *)(a->out + at), a->ld, len, first, h, buf,
                     mask);
        return;
    }
    /* half: the heads widened to [len, d] floats after the [len, len] blocks */
    float *w = buf, *f = w + sq * (backward ? 2 : 1), *hd[7];
    for (int i = 0; i < (backward ? 7 : 4); i++)
        hd[i] = f + (size_t)i * (size_t)(len * d);
    const char *src[4] = {a->q + at, a->k + at, a->v + at, backward ? a->dout + at : NULL};
    for (int i = 0; i < (backward ? 4 : 3); i++)
        widen_head(hd[i], src[i], a, len);
    if (!backward) {
        head_f32(a, hd[0], hd[1], hd[2], hd[3], d, len, first, h, w, mask);
        round_head(a->out + at, hd[3], a, len);
        return;
    }
    head_backward_f32(a, hd[0], hd[1], hd[2], hd[3], dq ? hd[4] : NULL, dk ? hd[5] : NULL,
                      dv ? hd[6] : NULL, d, len, first, h, w, w + sq, mask);
    char *dst[3] = {dq, dk, dv};
    for (int i = 0; i < 3; i++)
        if (dst[i])
            round_head(dst[i], hd[4 + i], a, len);
}

/* both rows: the call's geometry, the threads' buffers, one task per (sequence, head) */
static tide_status run_attention(const tide_kernel_call *c, int backward) {
    const char *op = backward ? "attention_backward" : "attention";
    tide_dtype  dt = c->dtype;
    if (dt != TIDE_DTYPE_F32 && dt != TIDE_DTYPE_F64 && !cpu_is_half(dt))
        return cpu_notsup(op, dt);
    int64_t heads = c->p[1].i, d = c->d;
    /* the core has checked the offsets (a PACKED row): they rise from 0 to the tokens */
    const tide_kview *off = c->in[3];
    const int64_t    *o = off->data;
    int64_t           nseq = off->shape[0] - 1, longest = 0;
    for (int64_t b = 0; b < nseq; b++)
        if (o[b + 1] - o[b] > longest)
            longest = o[b + 1] - o[b];
    /* each thread holds [L, L] blocks outside the allocator: longer sequences go to the
     * composite, whose memory the allocator counts (4,096 tokens: 64 MiB a block) */
    if (longest > ATTENTION_MAX_LEN || heads * d > INT32_MAX)
        return tide_seterr(TIDE_ENOTSUP,
                           "%s: the cpu kernel takes sequences of up to %d tokens, "
                           "got %lld",
                           op, ATTENTION_MAX_LEN, (long long)longest);
    double p = c->p[3].f;
    attn   a = {
          .q = c->in[0]->data,
          .k = c->in[1]->data,
          .v = c->in[2]->data,
          .dout = backward ? c->in[4]->data : NULL,
          .out = backward ? NULL : c->out[0]->data,
          .dq = backward && c->out[0] ? c->out[0]->data : NULL,
          .dk = backward && c->out[1] ? c->out[1]->data : NULL,
          .dv = backward && c->out[2] ? c->out[2]->data : NULL,
          .offsets = o,
          .nseq = nseq,
          .heads = heads,
          .d = d,
          .ld = heads * d,
          .n = c->rows / heads,
          .dt = dt,
          .scale = c->p[2].f,
          .inv = tide_attention_inverse(tide_attention_threshold(p)),
          .dropout = p > 0,
          .key = tide_rng_fmix((unsigned long long)c->p[4].i + 0x9E3779B97F4A7C15ULL),
          .threshold = tide_attention_threshold(p),
    };
    size_t  bytes = buffer_bytes(&a, longest, backward);
    int64_t tasks = nseq * heads;
    int     failed = 0;
    /* threads when the heads hold enough work for two (about 2 * len^2 * d multiply-adds each) */
    int par = PARALLEL_SGEMM && dt != TIDE_DTYPE_F64 && tasks > 1 &&
              (double)a.n * (double)longest * (double)c->rows >= CPU_PAR_GRAIN;
#pragma omp parallel if (par) reduction(| : failed)
    {
        void *buf = malloc(bytes ? bytes : 1);
        if (!buf)
            failed = 1;
#pragma omp for schedule(dynamic)
        for (int64_t t = 0; t < tasks; t++)
            if (buf)
                run_task(&a, t, buf, backward);
        free(buf);
    }
    if (failed)
        return tide_seterr(TIDE_ENOMEM, "%s: out of memory for a %lld x %lld score block", op,
                           (long long)longest, (long long)longest);
    return TIDE_OK;
}

tide_status cpu_attention(tide_device *dev, const tide_kernel_call *c) {
    (void)dev;
    return run_attention(c, 0);
}

tide_status cpu_attention_backward(tide_device *dev, const tide_kernel_call *c) {
    (void)dev;
    return run_attention(c, 1);
}
