/*
 * attention.c — the attention kernel row (include/tide_kernels.def): scaled dot-product attention
 * over packed sequences, softmax(q k^T * scale) v for each sequence and head.
 *
 * q, k and v are [N, heads * d] as the projections make them, so nothing is transposed, padded or
 * masked: sequence b's tokens are rows offsets[b]..offsets[b+1]-1, and head h reads columns
 * h*d..h*d+d-1 (a row stride of heads * d, which the gemms take as their leading dimension).
 * Each (sequence, head) is one task on the OpenMP pool: two of oneDNN's sgemms on that thread
 * and a softmax over the [L, L] scores in the thread's buffer, which stays in cache at BERT's
 * lengths. float16 and bfloat16 heads are widened to float32 in the thread's buffers and rounded
 * back once, as half.c's kernels compute.
 *
 * OpenBLAS called from inside a parallel region serializes its callers (two threads took as long
 * as one), so without oneDNN, and for float64 (dgemm), the tasks run on one thread.
 */
#include "cpu.h"
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

typedef struct {
    const char    *q, *k, *v;
    char          *out;
    const int64_t *offsets;
    int64_t        nseq, heads, d, ld; /* ld = heads * d, the row stride in elements */
    tide_dtype     dt;
    double         scale;
} attn;

/* the rows of one head of one sequence: [len, d] at row `first`, row stride ld (elements) */
static size_t head_at(const attn *a, int64_t first, int64_t h) {
    return (size_t)((first * a->ld + h * a->d) * (int64_t)cpu_dtype_size(a->dt));
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

/* one float32 head: q, k, v [len, d] with row stride ld, out likewise; s [len, len] */
static void head_f32(const float *q, const float *k, const float *v, float *out, int64_t ld,
                     int64_t len, int64_t d, float scale, float *s) {
#ifdef TIDE_HAVE_DNNL
    dnnl_sgemm('N', 'T', len, len, d, scale, q, ld, k, ld, 0.0f, s, len);
    softmax_rows_f32(s, len);
    dnnl_sgemm('N', 'N', len, d, len, 1.0f, s, len, v, ld, 0.0f, out, ld);
#else
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)len, (int)len, (int)d, scale, q,
                (int)ld, k, (int)ld, 0.0f, s, (int)len);
    softmax_rows_f32(s, len);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)len, (int)d, (int)len, 1.0f, s,
                (int)len, v, (int)ld, 0.0f, out, (int)ld);
#endif
}

static void head_f64(const double *q, const double *k, const double *v, double *out, int64_t ld,
                     int64_t len, int64_t d, double scale, double *s) {
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)len, (int)len, (int)d, scale, q,
                (int)ld, k, (int)ld, 0.0, s, (int)len);
    softmax_rows_f64(s, len);
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)len, (int)d, (int)len, 1.0, s,
                (int)len, v, (int)ld, 0.0, out, (int)ld);
}

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

/* task t = (sequence, head) with the thread's buffer buf: the scores, and for half dtypes the
 * head's q, k, v and out widened ([len, d] floats each, row stride d) */
static void run_task(const attn *a, int64_t t, void *buf) {
    int64_t b = t / a->heads, h = t % a->heads, first = a->offsets[b];
    int64_t len = a->offsets[b + 1] - first, d = a->d;
    if (len == 0)
        return;
    size_t at = head_at(a, first, h);
    if (a->dt == TIDE_DTYPE_F64) {
        head_f64((const double *)(a->q + at), (const double *)(a->k + at),
                 (const double *)(a->v + at), (double *)(a->out + at), a->ld, len, d, a->scale,
                 buf);
        return;
    }
    if (a->dt == TIDE_DTYPE_F32) {
        head_f32((const float *)(a->q + at), (const float *)(a->k + at), (const float *)(a->v + at),
                 (float *)(a->out + at), a->ld, len, d, (float)a->scale, buf);
        return;
    }
    float  *s = buf, *w[4]; /* q, k, v, out as [len, d] floats */
    int64_t esz = (int64_t)cpu_dtype_size(a->dt), row = a->ld * esz;
    for (int i = 0; i < 4; i++)
        w[i] = s + len * len + i * len * d;
    const char *src[3] = {a->q + at, a->k + at, a->v + at};
    for (int i = 0; i < 3; i++)
        for (int64_t r = 0; r < len; r++)
            widen_row(w[i] + r * d, (const uint16_t *)(src[i] + r * row), d, a->dt);
    head_f32(w[0], w[1], w[2], w[3], d, len, d, (float)a->scale, s);
    for (int64_t r = 0; r < len; r++)
        round_row((uint16_t *)(a->out + at + r * row), w[3] + r * d, d, a->dt);
}

tide_status cpu_attention(tide_device *dev, const tide_kernel_call *c) {
    (void)dev;
    static const char op[] = "attention";
    tide_dtype        dt = c->dtype;
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
    /* each thread holds a [L, L] block of scores outside the allocator: longer sequences go to
     * the composite, whose memory the allocator counts (4,096 tokens: 64 MiB a thread) */
    if (longest > ATTENTION_MAX_LEN || heads * d > INT32_MAX)
        return tide_seterr(TIDE_ENOTSUP,
                           "attention: the cpu kernel takes sequences of up to %d tokens, got %lld",
                           ATTENTION_MAX_LEN, (long long)longest);
    /* per thread: the [L, L] scores, and four [L, d] float heads for half dtypes */
    size_t  elems = (size_t)(longest * longest + (cpu_is_half(dt) ? 4 * longest * d : 0));
    size_t  bytes = elems * (dt == TIDE_DTYPE_F64 ? sizeof(double) : sizeof(float));
    attn    a = {(const char *)c->in[0]->data,
                 (const char *)c->in[1]->data,
                 (const char *)c->in[2]->data,
                 (char *)c->out[0]->data,
                 o,
                 nseq,
                 heads,
                 d,
                 heads * d,
                 dt,
                 c->p[2].f};
    int64_t tasks = nseq * heads;
    int     failed = 0;
    /* threads when the heads hold enough work for two (about 2 * len^2 * d multiply-adds each) */
    int par = PARALLEL_SGEMM && dt != TIDE_DTYPE_F64 && tasks > 1 &&
              (double)(c->rows / heads) * (double)longest * (double)c->rows >= CPU_PAR_GRAIN;
#pragma omp parallel if (par) reduction(| : failed)
    {
        void *buf = malloc(bytes ? bytes : 1);
        if (!buf)
            failed = 1;
#pragma omp for schedule(dynamic)
        for (int64_t t = 0; t < tasks; t++)
            if (buf)
                run_task(&a, t, buf);
        free(buf);
    }
    if (failed)
        return tide_seterr(TIDE_ENOMEM, "attention: out of memory for a %lld x %lld score block",
                           (long long)longest, (long long)longest);
    return TIDE_OK;
}
