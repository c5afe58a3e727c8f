/*
 * softmax.cu — softmax and log_softmax over one dim: three passes over each row (max, sum of
 * exp(x - max), write), in float for float32/float16/bfloat16 and double for float64, with the
 * exp/log of scalar_math.h. A warp per row for rows up to 1024 long, a block per row beyond.
 * Their gradient from the result y: one sum per row, then dx in one more pass. The kernel rows
 * softmax and softmax_backward (include/tide_kernels.def) see their contiguous lines as a
 * [rows, len, inner] view, the dim in the middle.
 */
#include "map.cuh"
#include "rows.cuh"

TIDE_CUDA_FLOAT_OVERLOADS(sm_exp, exp)
TIDE_CUDA_FLOAT_OVERLOADS(sm_log, log)

/* N views walked along dim: operand 0 is written (out, dx), 1 is the input whose shape rules (a,
 * y), 2 is g */
template <int N> struct smparams {
    tide_iter<N> it; /* over the rows (every dim but dim) */
    uint32_t     rows;
    int64_t      R, stride[N]; /* each row's length, each operand's stride along dim */
    int          log;
};

/* enters dev and fills p for the views v along dim; *empty when there is nothing to do */
template <int N>
static tide_status sm_make(tide_device *dev, const char *name, const tide_kview *const *v, int dim,
                           int log, cudaStream_t *stream, smparams<N> *p, bool *empty) {
    if (dim < 0 || dim >= v[1]->ndim)
        return tide_cuda_seterr(TIDE_EINVAL, "%s: dim %d out of range for %d dims", name, dim,
                                v[1]->ndim);
    TIDE_TRY(tide_cuda_enter(dev, stream));
    tide_kview        rows_of[N];
    const tide_kview *views[N];
    for (int k = 0; k < N; k++) {
        rows_of[k] = *v[k];
        rows_of[k].shape[dim] = 1;
        views[k] = &rows_of[k];
    }
    int64_t rows = tide_cuda_numel(&rows_of[1]);
    *empty = rows == 0 || v[1]->shape[dim] == 0;
    if (*empty)
        return TIDE_OK;
    if (rows > INT32_MAX)
        return tide_cuda_seterr(TIDE_ENOTSUP, "%s: more than 2^31 rows on cuda", name);
    p->it = tide_iter_make<N>(views);
    p->rows = (uint32_t)rows;
    p->R = v[1]->shape[dim];
    for (int k = 0; k < N; k++)
        p->stride[k] = v[k]->strides[dim];
    p->log = log;
    return TIDE_OK;
}

/* threads of a row group: a warp (ROW_THREADS = 32, several rows per block) or the block */
template <int DT, int ROW_THREADS>
__global__ void k_softmax(smparams<2> p, typename tide_dt<DT>::T *out,
                          const typename tide_dt<DT>::T *a) {
    typedef typename tide_dt<DT>::C C;
    int                             lane, nthreads;
    uint32_t                        row = row_of<ROW_THREADS>(&lane, &nthreads);
    if (row >= p.rows)
        return; /* whole warps leave together: the shuffles below stay full */
    int64_t off[2];
    tide_iter_offsets<2, uint32_t>(p.it, row, off);
    const typename tide_dt<DT>::T *x = a + off[1];
    typename tide_dt<DT>::T       *y = out + off[0];

    C m = -INFINITY;
    for (int64_t r = lane; r < p.R; r += nthreads)
        m = sm_max(m, (C)tide_load<DT>(x[r * p.stride[1]]));
    m = row_max<C, ROW_THREADS>(m);
    C s = 0;
    for (int64_t r = lane; r < p.R; r += nthreads)
        s += sm_exp((C)tide_load<DT>(x[r * p.stride[1]]) - m);
    s = row_sum<C, ROW_THREADS>(s);
    C ls = sm_log(s), inv = (C)1 / s;
    for (int64_t r = lane; r < p.R; r += nthreads) {
        C v = (C)tide_load<DT>(x[r * p.stride[1]]) - m;
        y[r * p.stride[0]] = tide_store<DT>(p.log ? v - ls : sm_exp(v) * inv);
    }
}

struct run_softmax {
    template <int DT>
    static tide_status run(cudaStream_t stream, smparams<2> p, const tide_kview *out,
                           const tide_kview *a) {
        typedef typename tide_dt<DT>::T T;
        T                              *po = (T *)out->data;
        const T                        *pa = (const T *)a->data;
        launch_rows(stream, p.rows, p.R, k_softmax<DT, 32>, k_softmax<DT, 0>, p, po, pa);
        TIDE_CUDA_LAUNCHED(k_softmax);
        return TIDE_OK;
    }
};

static tide_status softmax_dim(tide_device *dev, const tide_kview *out, const tide_kview *a,
                               int dim, int log) {
    const char       *name = log ? "log_softmax" : "softmax";
    const tide_kview *v[2] = {out, a};
    cudaStream_t      stream = NULL;
    smparams<2>       p;
    bool              empty = true;
    TIDE_TRY(sm_make(dev, name, v, dim, log, &stream, &p, &empty));
    if (empty)
        return TIDE_OK;
    TIDE_CUDA_DISPATCH_FLOAT(a->dtype, run_softmax, stream, p, out, a);
    return tide_cuda_notsup(name, a->dtype);
}

/* ---- the gradient ------------------------------------------------------------------------- */

/* dx = y * (g - sum(g * y)), or g - exp(y) * sum(g) for log_softmax's y */
template <int DT, int ROW_THREADS>
__global__ void k_softmax_backward(smparams<3> p, typename tide_dt<DT>::T *dx,
                                   const typename tide_dt<DT>::T *y,
                                   const typename tide_dt<DT>::T *g) {
    typedef typename tide_dt<DT>::C C;
    int                             lane, nthreads;
    uint32_t                        row = row_of<ROW_THREADS>(&lane, &nthreads);
    if (row >= p.rows)
        return; /* whole warps leave together: the shuffles below stay full */
    int64_t off[3];
    tide_iter_offsets<3, uint32_t>(p.it, row, off);
    const typename tide_dt<DT>::T *yr = y + off[1], *gr = g + off[2];
    typename tide_dt<DT>::T       *o = dx + off[0];

    C s = 0;
    for (int64_t r = lane; r < p.R; r += nthreads) {
        C gv = (C)tide_load<DT>(gr[r * p.stride[2]]);
        s += p.log ? gv : gv * (C)tide_load<DT>(yr[r * p.stride[1]]);
    }
    s = row_sum<C, ROW_THREADS>(s);
    for (int64_t r = lane; r < p.R; r += nthreads) {
        C gv = (C)tide_load<DT>(gr[r * p.stride[2]]), yv = (C)tide_load<DT>(yr[r * p.stride[1]]);
        o[r * p.stride[0]] = tide_store<DT>(p.log ? gv - sm_exp(yv) * s : yv * (gv - s));
    }
}

struct run_softmax_backward {
    template <int DT>
    static tide_status run(cudaStream_t stream, smparams<3> p, const tide_kview *dx,
                           const tide_kview *y, const tide_kview *g) {
        typedef typename tide_dt<DT>::T T;
        T                              *po = (T *)dx->data;
        const T                        *py = (const T *)y->data, *pg = (const T *)g->data;
        launch_rows(stream, p.rows, p.R, k_softmax_backward<DT, 32>, k_softmax_backward<DT, 0>, p,
                    po, py, pg);
        TIDE_CUDA_LAUNCHED(k_softmax_backward);
        return TIDE_OK;
    }
};

static tide_status softmax_backward_dim(tide_device *dev, const tide_kview *dx, const tide_kview *y,
                                        const tide_kview *g, int dim, int log) {
    const char *name = log ? "log_softmax_backward" : "softmax_backward";
    if (dx->dtype != y->dtype || g->dtype != y->dtype)
        return tide_cuda_seterr(TIDE_EDTYPE, "%s: cuda kernel needs dx, y and g of one dtype",
                                name);
    const tide_kview *v[3] = {dx, y, g};
    cudaStream_t      stream = NULL;
    smparams<3>       p;
    bool              empty = true;
    TIDE_TRY(sm_make(dev, name, v, dim, log, &stream, &p, &empty));
    if (empty)
        return TIDE_OK;
    TIDE_CUDA_DISPATCH_FLOAT(y->dtype, run_softmax_backward, stream, p, dx, y, g);
    return tide_cuda_notsup(name, y->dtype);
}

/* ---- the kernel rows softmax and softmax_backward ----------------------------------------- */

/* the row's tensors as [rows, len, inner] (backend.h), or the one error */
static tide_status sm_lines_view(const char *op, const tide_kernel_call *c, const tide_kview *v,
                                 tide_kview *v3) {
    if (!tide_lines_view(c, 1, v, v3))
        return tide_cuda_seterr(TIDE_EINVAL, "%s: inner %lld does not divide the row's %lld", op,
                                (long long)c->p[1].i, (long long)c->d);
    return TIDE_OK;
}

extern "C" tide_status tide_cuda_softmax(tide_device *dev, const tide_kernel_call *c) {
    int        log = (int)c->p[2].i;
    tide_kview y3 = {}, x3 = {};
    TIDE_TRY(sm_lines_view("softmax", c, c->out[0], &y3));
    TIDE_TRY(sm_lines_view("softmax", c, c->in[0], &x3));
    return softmax_dim(dev, &y3, &x3, 1, log);
}

extern "C" tide_status tide_cuda_softmax_backward(tide_device *dev, const tide_kernel_call *c) {
    int        log = (int)c->p[2].i;
    tide_kview dx3 = {}, y3 = {}, g3 = {};
    TIDE_TRY(sm_lines_view("softmax_backward", c, c->out[0], &dx3));
    TIDE_TRY(sm_lines_view("softmax_backward", c, c->in[0], &y3));
    TIDE_TRY(sm_lines_view("softmax_backward", c, c->in[1], &g3));
    return softmax_backward_dim(dev, &dx3, &y3, &g3, 1, log);
}
