/*
 * conv_dnnl.c — conv2d and its gradients through oneDNN (float32, and bfloat16 where the CPU has
 * bfloat16 instructions), when tide is built with it
 * (the Makefile defines TIDE_HAVE_DNNL where dnnl.h is installed; without it the CPU backend has
 * no conv2d entry and nn runs im2col + gemm).
 *
 * oneDNN's fast kernels (jit:avx512_core and kin) want blocked layouts (nChw16c); tide's tensors
 * are plain NCHW. Each shape gets one cache entry: the primitives of the three passes, created
 * with "any" layouts so that oneDNN picks its best and the reorders between plain and blocked,
 * kept for the next call of that shape (a training loop repeats its shapes: no primitive
 * creation in the hot path). The blocked copies of a pass live in one buffer from the device's
 * caching allocator, given back when the pass ends: the tensors made next reuse it (a small
 * CNN's 5.5 MB blocked output becomes the ReLU's output), where a buffer of oneDNN's own kept
 * that much apart for good. One mutex serializes the calls. Each call runs on OpenMP's pool
 * inside oneDNN, the pool tide's kernels and OpenBLAS share.
 */
#include "cpu.h"

#ifdef TIDE_HAVE_DNNL
#include <dnnl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* a shape and dtype: the key of a cache entry */
typedef struct {
    int64_t n, c, h, w, o, groups, bias;
    int     kh, kw, sh, sw, ph, pw, dh, dw;
    int     bf16; /* bfloat16 tensors (else float32) */
} conv_key;

/* one argument of a primitive: the user's plain buffer and the layout the primitive wants, with
 * a reorder and a blocked copy in the pass's buffer between them when the two differ */
typedef struct {
    dnnl_memory_t    user;    /* plain layout; its handle is set per call */
    dnnl_memory_t    inner;   /* the primitive's layout; == user when no reorder is needed */
    dnnl_primitive_t reorder; /* user -> inner for an input, inner -> user for an output */
    size_t           bytes;   /* inner's share of the pass's buffer (0: none) */
} conv_port;

enum { FWD, BWD_DATA, BWD_WEIGHTS, PASSES };

typedef struct {
    dnnl_primitive_desc_t pd;
    dnnl_primitive_t      prim;
    conv_port             port[3]; /* FWD: src, weights, dst; BWD_DATA: diff_dst, weights,
                                      diff_src; BWD_WEIGHTS: src, diff_dst, diff_weights */
} conv_pass;

typedef struct {
    conv_key      key;
    conv_pass     pass[PASSES];
    int           made[PASSES];
    dnnl_memory_t bias;  /* plain [O]: the bias, or the bias gradient */
    float        *spare; /* a gradient the caller does not want still needs a place */
} conv_entry;

#define CACHE_SIZE 64 /* shapes; the least recently used makes room */
static conv_entry     *cache[CACHE_SIZE];
static int             cached;
static dnnl_engine_t   engine;
static dnnl_stream_t   stream;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static tide_status dnnl_fail(const char *what, dnnl_status_t s) {
    if (s == dnnl_out_of_memory)
        return tide_seterr(TIDE_ENOMEM, "conv2d: oneDNN %s: out of memory", what);
    /* unimplemented and the rest: nn falls back to im2col + gemm */
    return tide_seterr(TIDE_ENOTSUP, "conv2d: oneDNN %s failed (status %d)", what, (int)s);
}

#define DNNL_TRY(what, expr)                                                                       \
    do {                                                                                           \
        dnnl_status_t s_ = (expr);                                                                 \
        if (s_ != dnnl_success)                                                                    \
            return dnnl_fail(what, s_);                                                            \
    } while (0)

static void port_free(conv_port *p) {
    if (p->reorder)
        dnnl_primitive_destroy(p->reorder);
    if (p->inner && p->inner != p->user)
        dnnl_memory_destroy(p->inner);
    if (p->user)
        dnnl_memory_destroy(p->user);
    memset(p, 0, sizeof *p);
}

static void pass_free(conv_pass *ps) {
    for (int k = 0; k < 3; k++)
        port_free(&ps->port[k]);
    if (ps->prim)
        dnnl_primitive_destroy(ps->prim);
    if (ps->pd)
        dnnl_primitive_desc_destroy(ps->pd);
}

static void entry_free(conv_entry *e) {
    for (int i = 0; i < PASSES; i++)
        pass_free(&e->pass[i]);
    if (e->bias)
        dnnl_memory_destroy(e->bias);
    free(e->spare);
    free(e);
}

/* user: the plain layout; inner: the primitive's; out: the primitive writes it */
static tide_status port_make(conv_port *p, const dnnl_memory_desc_t *user,
                             const dnnl_memory_desc_t *inner, int out) {
    DNNL_TRY("memory", dnnl_memory_create(&p->user, user, engine, DNNL_MEMORY_NONE));
    if (dnnl_memory_desc_equal(user, inner)) {
        p->inner = p->user;
        return TIDE_OK;
    }
    p->bytes = (dnnl_memory_desc_get_size(inner) + 63) / 64 * 64;
    DNNL_TRY("memory", dnnl_memory_create(&p->inner, inner, engine, DNNL_MEMORY_NONE));
    dnnl_primitive_desc_t rpd;
    DNNL_TRY("reorder", dnnl_reorder_primitive_desc_create(&rpd, out ? inner : user, engine,
                                                           out ? user : inner, engine, NULL));
    dnnl_status_t s = dnnl_primitive_create(&p->reorder, rpd);
    dnnl_primitive_desc_destroy(rpd);
    DNNL_TRY("reorder", s);
    return TIDE_OK;
}

static tide_status run(dnnl_primitive_t prim, int n, const dnnl_exec_arg_t *args) {
    DNNL_TRY("execute", dnnl_primitive_execute(prim, stream, n, args));
    return TIDE_OK;
}

/* the blocked copies of one pass: a buffer of the device's allocator */
typedef struct {
    tide_device *dev;
    char        *p;
    size_t       bytes;
} pass_buf;

/* places the blocked copies of a pass's ports in a buffer from the device's allocator; the
 * caller gives it back with pass_unbind whatever the pass's outcome */
static tide_status pass_bind(conv_pass *ps, pass_buf *b) {
    b->p = NULL;
    b->bytes = 0;
    for (int k = 0; k < 3; k++)
        b->bytes += ps->port[k].bytes;
    if (!b->bytes)
        return TIDE_OK;
    void *p;
    TIDE_TRY(cpu_alloc(b->dev, b->bytes, &p));
    b->p = p;
    size_t at = 0;
    for (int k = 0; k < 3; k++) {
        conv_port *port = &ps->port[k];
        if (!port->bytes)
            continue;
        DNNL_TRY("memory", dnnl_memory_set_data_handle(port->inner, b->p + at));
        at += port->bytes;
    }
    return TIDE_OK;
}

static void pass_unbind(pass_buf *b) {
    cpu_free(b->dev, b->p, b->bytes);
    b->p = NULL;
}

/* binds the caller's buffer; an input is brought into the primitive's layout */
static tide_status port_in(conv_port *p, const void *data) {
    DNNL_TRY("memory", dnnl_memory_set_data_handle(p->user, (void *)data));
    if (!p->reorder)
        return TIDE_OK;
    dnnl_exec_arg_t a[2] = {{DNNL_ARG_FROM, p->user}, {DNNL_ARG_TO, p->inner}};
    return run(p->reorder, 2, a);
}

static tide_status port_out(conv_port *p) {
    if (!p->reorder)
        return TIDE_OK;
    dnnl_exec_arg_t a[2] = {{DNNL_ARG_FROM, p->inner}, {DNNL_ARG_TO, p->user}};
    return run(p->reorder, 2, a);
}

/* the plain and the "any" descriptors of the source, weights and destination of k */
typedef struct {
    dnnl_memory_desc_t src, wei, dst, bias, src_any, wei_any, dst_any;
    dnnl_dims_t        strides, dilates, pad_l, pad_r;
} conv_mds;

static tide_status mds_make(const conv_key *k, conv_mds *m) {
    int64_t     oh = (k->h + 2 * (int64_t)k->ph - (int64_t)k->dh * (k->kh - 1) - 1) / k->sh + 1;
    int64_t     ow = (k->w + 2 * (int64_t)k->pw - (int64_t)k->dw * (k->kw - 1) - 1) / k->sw + 1;
    dnnl_dims_t src = {k->n, k->c, k->h, k->w}, dst = {k->n, k->o, oh, ow}, bias = {k->o};
    dnnl_dims_t wei = {k->o, k->c, k->kh, k->kw};
    dnnl_dims_t gwei = {k->groups, k->o / k->groups, k->c / k->groups, k->kh, k->kw};
    int         g = k->groups > 1;
    dnnl_data_type_t dt = k->bf16 ? dnnl_bf16 : dnnl_f32;
    DNNL_TRY("memory desc", dnnl_memory_desc_init_by_tag(&m->src, 4, src, dt, dnnl_nchw));
    DNNL_TRY("memory desc", dnnl_memory_desc_init_by_tag(&m->dst, 4, dst, dt, dnnl_nchw));
    DNNL_TRY("memory desc", dnnl_memory_desc_init_by_tag(&m->bias, 1, bias, dt, dnnl_x));
    DNNL_TRY("memory desc", dnnl_memory_desc_init_by_tag(&m->wei, g ? 5 : 4, g ? gwei : wei, dt,
                                                         g ? dnnl_goihw : dnnl_oihw));
    DNNL_TRY("memory desc",
             dnnl_memory_desc_init_by_tag(&m->src_any, 4, src, dt, dnnl_format_tag_any));
    DNNL_TRY("memory desc",
             dnnl_memory_desc_init_by_tag(&m->dst_any, 4, dst, dt, dnnl_format_tag_any));
    DNNL_TRY("memory desc", dnnl_memory_desc_init_by_tag(&m->wei_any, g ? 5 : 4, g ? gwei : wei, dt,
                                                         dnnl_format_tag_any));
    /* oneDNN counts dilation from 0; symmetric padding (its output size rounds down as ours) */
    int64_t geo[8] = {k->sh, k->sw, k->dh - 1, k->dw - 1, k->ph, k->pw, k->ph, k->pw};
    for (int i = 0; i < 2; i++) {
        m->strides[i] = geo[i];
        m->dilates[i] = geo[2 + i];
        m->pad_l[i] = geo[4 + i];
        m->pad_r[i] = geo[6 + i];
    }
    return TIDE_OK;
}

static const dnnl_memory_desc_t *md(dnnl_primitive_desc_t pd, dnnl_query_t q) {
    return dnnl_primitive_desc_query_md(pd, q, 0);
}

/* the forward pass: every entry has it (the backward passes take it as their hint) */
static tide_status make_fwd(conv_entry *e, const conv_mds *m) {
    conv_pass              *ps = &e->pass[FWD];
    dnnl_convolution_desc_t d;
    DNNL_TRY("forward", dnnl_dilated_convolution_forward_desc_init(
                            &d, dnnl_forward_training, dnnl_convolution_direct, &m->src_any,
                            &m->wei_any, e->key.bias ? &m->bias : NULL, &m->dst_any, m->strides,
                            m->dilates, m->pad_l, m->pad_r));
    DNNL_TRY("forward", dnnl_primitive_desc_create(&ps->pd, &d, NULL, engine, NULL));
    DNNL_TRY("forward", dnnl_primitive_create(&ps->prim, ps->pd));
    TIDE_TRY(port_make(&ps->port[0], &m->src, md(ps->pd, dnnl_query_src_md), 0));
    TIDE_TRY(port_make(&ps->port[1], &m->wei, md(ps->pd, dnnl_query_weights_md), 0));
    TIDE_TRY(port_make(&ps->port[2], &m->dst, md(ps->pd, dnnl_query_dst_md), 1));
    return TIDE_OK;
}

static tide_status make_bwd(conv_entry *e, const conv_mds *m, int which) {
    conv_pass              *ps = &e->pass[which];
    dnnl_convolution_desc_t d;
    if (which == BWD_DATA) {
        DNNL_TRY("backward data", dnnl_dilated_convolution_backward_data_desc_init(
                                      &d, dnnl_convolution_direct, &m->src_any, &m->wei_any,
                                      &m->dst_any, m->strides, m->dilates, m->pad_l, m->pad_r));
    } else {
        DNNL_TRY("backward weights", dnnl_dilated_convolution_backward_weights_desc_init(
                                         &d, dnnl_convolution_direct, &m->src_any, &m->wei_any,
                                         e->key.bias ? &m->bias : NULL, &m->dst_any, m->strides,
                                         m->dilates, m->pad_l, m->pad_r));
    }
    DNNL_TRY("backward", dnnl_primitive_desc_create(&ps->pd, &d, NULL, engine, e->pass[FWD].pd));
    DNNL_TRY("backward", dnnl_primitive_create(&ps->prim, ps->pd));
    if (which == BWD_DATA) {
        TIDE_TRY(port_make(&ps->port[0], &m->dst, md(ps->pd, dnnl_query_diff_dst_md), 0));
        TIDE_TRY(port_make(&ps->port[1], &m->wei, md(ps->pd, dnnl_query_weights_md), 0));
        TIDE_TRY(port_make(&ps->port[2], &m->src, md(ps->pd, dnnl_query_diff_src_md), 1));
    } else {
        TIDE_TRY(port_make(&ps->port[0], &m->src, md(ps->pd, dnnl_query_src_md), 0));
        TIDE_TRY(port_make(&ps->port[1], &m->dst, md(ps->pd, dnnl_query_diff_dst_md), 0));
        TIDE_TRY(port_make(&ps->port[2], &m->wei, md(ps->pd, dnnl_query_diff_weights_md), 1));
    }
    return TIDE_OK;
}

/* the entry of key with the passes in need made (under lock) */
static tide_status entry_get(const conv_key *key, int need_data, int need_weights,
                             conv_entry **out) {
    if (!stream) {
        if (!engine)
            DNNL_TRY("engine", dnnl_engine_create(&engine, dnnl_cpu, 0));
        DNNL_TRY("stream", dnnl_stream_create(&stream, engine, dnnl_stream_default_flags));
    }
    conv_entry *e = NULL;
    for (int i = 0; i < cached && !e; i++) {
        if (memcmp(&cache[i]->key, key, sizeof *key) == 0) { /* the most recent goes last */
            e = cache[i];
            memmove(cache + i, cache + i + 1, sizeof cache[0] * (size_t)(cached - i - 1));
            cache[cached - 1] = e;
        }
    }
    conv_mds    m;
    tide_status st;
    TIDE_TRY(mds_make(key, &m));
    if (!e) {
        e = calloc(1, sizeof *e);
        if (!e)
            return tide_seterr(TIDE_ENOMEM, "conv2d: no memory for a oneDNN cache entry");
        e->key = *key;
        e->spare = malloc(sizeof(float) *
                          (size_t)(key->o * (key->c / key->groups) * key->kh * key->kw + key->o));
        dnnl_status_t s = dnnl_memory_create(&e->bias, &m.bias, engine, DNNL_MEMORY_NONE);
        st = !e->spare ? tide_seterr(TIDE_ENOMEM, "conv2d: no memory for a oneDNN cache entry")
             : s != dnnl_success ? dnnl_fail("memory", s)
                                 : make_fwd(e, &m);
        if (st != TIDE_OK) {
            entry_free(e);
            return st;
        }
        e->made[FWD] = 1;
        if (cached == CACHE_SIZE) {
            entry_free(cache[0]);
            memmove(cache, cache + 1, sizeof cache[0] * (CACHE_SIZE - 1));
            cached--;
        }
        cache[cached++] = e;
    }
    int want[PASSES] = {0, need_data, need_weights};
    for (int p = BWD_DATA; p < PASSES; p++) {
        if (!want[p] || e->made[p])
            continue;
        st = make_bwd(e, &m, p);
        if (st != TIDE_OK) { /* leave the pass unmade for the next try */
            pass_free(&e->pass[p]);
            memset(&e->pass[p], 0, sizeof e->pass[p]);
            return st;
        }
        e->made[p] = 1;
    }
    *out = e;
    return TIDE_OK;
}

static tide_status key_of(const char *name, const tide_kview *input, const tide_kview *weight,
                          int has_bias, tide_conv_geom g, int groups, conv_key *k) {
    /* bfloat16 where the CPU multiplies it in hardware (tide_cpu_bf16_gemm: AMX, AVX512-BF16;
     * products exact, sums in float32, as the widened im2col path computes) */
    int bf16 = input->dtype == TIDE_DTYPE_BF16 && tide_cpu_bf16_gemm();
    if ((input->dtype != TIDE_DTYPE_F32 && !bf16) || weight->dtype != input->dtype)
        return cpu_notsup(name, input->dtype);
    /* oneDNN's kernels index in 32 bits: a padded input or a dilated kernel that spans more goes
     * to im2col + gemm, which indexes in 64 */
    int64_t dh = g.dh ? g.dh : 1, dw = g.dw ? g.dw : 1;
    if (input->shape[2] + 2 * (int64_t)g.ph > INT32_MAX ||
        input->shape[3] + 2 * (int64_t)g.pw > INT32_MAX || dh * (g.kh - 1) + 1 > INT32_MAX ||
        dw * (g.kw - 1) + 1 > INT32_MAX)
        return tide_seterr(TIDE_ENOTSUP, "%s: the geometry exceeds oneDNN's 32-bit indexing", name);
    memset(k, 0, sizeof *k); /* the key is compared bytewise */
    k->n = input->shape[0];
    k->c = input->shape[1];
    k->h = input->shape[2];
    k->w = input->shape[3];
    k->o = weight->shape[0];
    k->groups = groups;
    k->bias = has_bias;
    k->kh = g.kh;
    k->kw = g.kw;
    k->sh = g.sh;
    k->sw = g.sw;
    k->ph = g.ph;
    k->pw = g.pw;
    k->dh = g.dh ? g.dh : 1;
    k->dw = g.dw ? g.dw : 1;
    k->bf16 = bf16;
    return TIDE_OK;
}

static tide_status forward_pass(conv_entry *e, const tide_kview *out, const tide_kview *input,
                                const tide_kview *weight, const tide_kview *bias, pass_buf *b) {
    conv_pass *ps = &e->pass[FWD];
    TIDE_TRY(pass_bind(ps, b));
    TIDE_TRY(port_in(&ps->port[0], input->data));
    TIDE_TRY(port_in(&ps->port[1], weight->data));
    DNNL_TRY("memory", dnnl_memory_set_data_handle(ps->port[2].user, out->data));
    if (bias)
        DNNL_TRY("memory", dnnl_memory_set_data_handle(e->bias, bias->data));
    dnnl_exec_arg_t a[4] = {{DNNL_ARG_SRC, ps->port[0].inner},
                            {DNNL_ARG_WEIGHTS, ps->port[1].inner},
                            {DNNL_ARG_DST, ps->port[2].inner},
                            {DNNL_ARG_BIAS, e->bias}};
    TIDE_TRY(run(ps->prim, bias ? 4 : 3, a));
    TIDE_TRY(port_out(&ps->port[2]));
    DNNL_TRY("wait", dnnl_stream_wait(stream));
    return TIDE_OK;
}

static tide_status forward(tide_device *dev, const tide_kview *out, const tide_kview *input,
                           const tide_kview *weight, const tide_kview *bias, const conv_key *k) {
    conv_entry *e;
    TIDE_TRY(entry_get(k, 0, 0, &e));
    pass_buf    b = {dev, NULL, 0};
    tide_status st = forward_pass(e, out, input, weight, bias, &b);
    if (st != TIDE_OK)
        (void)dnnl_stream_wait(stream); /* nothing may still write the buffer */
    pass_unbind(&b);
    return st;
}

static tide_status backward_data(conv_entry *e, const tide_kview *gx, const tide_kview *gy,
                                 const tide_kview *weight, pass_buf *b) {
    conv_pass *ps = &e->pass[BWD_DATA];
    TIDE_TRY(pass_bind(ps, b));
    TIDE_TRY(port_in(&ps->port[0], gy->data));
    TIDE_TRY(port_in(&ps->port[1], weight->data));
    DNNL_TRY("memory", dnnl_memory_set_data_handle(ps->port[2].user, gx->data));
    dnnl_exec_arg_t a[3] = {{DNNL_ARG_DIFF_DST, ps->port[0].inner},
                            {DNNL_ARG_WEIGHTS, ps->port[1].inner},
                            {DNNL_ARG_DIFF_SRC, ps->port[2].inner}};
    TIDE_TRY(run(ps->prim, 3, a));
    TIDE_TRY(port_out(&ps->port[2]));
    DNNL_TRY("wait", dnnl_stream_wait(stream));
    return TIDE_OK;
}

static tide_status backward_weights(conv_entry *e, const tide_kview *gw, const tide_kview *gb,
                                    const tide_kview *gy, const tide_kview *input,
                                    const conv_key *k, pass_buf *b) {
    conv_pass *ps = &e->pass[BWD_WEIGHTS];
    float     *spare_b = e->spare + k->o * (k->c / k->groups) * k->kh * k->kw;
    TIDE_TRY(pass_bind(ps, b));
    TIDE_TRY(port_in(&ps->port[0], input->data));
    TIDE_TRY(port_in(&ps->port[1], gy->data));
    DNNL_TRY("memory", dnnl_memory_set_data_handle(ps->port[2].user, gw ? gw->data : e->spare));
    if (k->bias)
        DNNL_TRY("memory", dnnl_memory_set_data_handle(e->bias, gb ? gb->data : spare_b));
    dnnl_exec_arg_t a[4] = {{DNNL_ARG_SRC, ps->port[0].inner},
                            {DNNL_ARG_DIFF_DST, ps->port[1].inner},
                            {DNNL_ARG_DIFF_WEIGHTS, ps->port[2].inner},
                            {DNNL_ARG_DIFF_BIAS, e->bias}};
    TIDE_TRY(run(ps->prim, k->bias ? 4 : 3, a));
    TIDE_TRY(port_out(&ps->port[2]));
    DNNL_TRY("wait", dnnl_stream_wait(stream));
    return TIDE_OK;
}

static tide_status backward(tide_device *dev, const tide_kview *gx, const tide_kview *gw,
                            const tide_kview *gb, const tide_kview *gy, const tide_kview *input,
                            const tide_kview *weight, const conv_key *k) {
    int         need_w = gw || (gb && k->bias);
    conv_entry *e;
    TIDE_TRY(entry_get(k, gx != NULL, need_w, &e));
    pass_buf    b = {dev, NULL, 0};
    tide_status st = TIDE_OK;
    if (gx) {
        st = backward_data(e, gx, gy, weight, &b);
        if (st != TIDE_OK)
            (void)dnnl_stream_wait(stream); /* nothing may still write the buffer */
        pass_unbind(&b);
    }
    if (st == TIDE_OK && need_w) {
        st = backward_weights(e, gw, gb, gy, input, k, &b);
        if (st != TIDE_OK)
            (void)dnnl_stream_wait(stream);
        pass_unbind(&b);
    }
    if (st == TIDE_OK && gb && !k->bias) { /* a bias gradient from a primitive made without a
                                             bias: sum gy */
        const char *g = gy->data;
        size_t      es = cpu_dtype_size(gy->dtype);
        int64_t     L = gy->shape[2] * gy->shape[3];
        for (int64_t o = 0; o < k->o; o++) {
            double acc = 0;
            for (int64_t n = 0; n < k->n; n++)
                for (int64_t i = 0; i < L; i++)
                    acc += tide_load_d(gy->dtype, g + (size_t)((n * k->o + o) * L + i) * es);
            /* through float32 (the primitive's own sums are float32), then to the dtype */
            tide_store_d(gb->dtype, (char *)gb->data + (size_t)o * es, (float)acc);
        }
    }
    return st;
}

tide_status cpu_conv2d(tide_device *dev, const tide_kview *out, const tide_kview *input,
                       const tide_kview *weight, const tide_kview *bias, tide_conv_geom g,
                       int groups) {
    conv_key k;
    TIDE_TRY(key_of("conv2d", input, weight, bias != NULL, g, groups, &k));
    pthread_mutex_lock(&lock);
    tide_status st = forward(dev, out, input, weight, bias, &k);
    pthread_mutex_unlock(&lock);
    return st;
}

tide_status cpu_conv2d_backward(tide_device *dev, const tide_kview *grad_input,
                                const tide_kview *grad_weight, const tide_kview *grad_bias,
                                const tide_kview *grad_out, const tide_kview *input,
                                const tide_kview *weight, tide_conv_geom g, int groups) {
    conv_key k;
    /* the primitive computes the bias gradient with the weights' when both are wanted */
    TIDE_TRY(key_of("conv2d_backward", input, weight, grad_bias != NULL && grad_weight != NULL, g,
                    groups, &k));
    pthread_mutex_lock(&lock);
    tide_status st = backward(dev, grad_input, grad_weight, grad_bias, grad_out, input, weight, &k);
    pthread_mutex_unlock(&lock);
    return st;
}

#endif /* TIDE_HAVE_DNNL */
