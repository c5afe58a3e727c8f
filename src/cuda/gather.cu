/*
 * gather.cu — gather, scatter / scatter_add (PyTorch's, with an index of the input's rank) and
 * sort along one dim.
 *
 * gather/scatter: one thread per element of the index; the walked side (out of gather, src of
 * scatter) is read at the element's coordinates, the indexed side at the same coordinates with
 * index's value at dim. scatter's duplicate targets race (the winner is unspecified, as in
 * PyTorch); scatter_add sums them with atomicAdd (uint8 and bool, which have none, run in one
 * thread in index order). sort (the kernel row): one thread per line, a stable merge sort of
 * the line's positions in a scratch buffer (n log n per line; lines sort in parallel, one line's
 * work is serial).
 */
#include "pick.cuh"

// --- gather / scatter --------------------------------------------------------------------------

/* over the index's shape */
struct gsparams : pick_geom {
    int64_t istride[TIDE_MAX_DIMS];
};

__device__ __forceinline__ void pick_offsets(const gsparams &p, int64_t i, const int64_t *index,
                                             int64_t *yoff, int64_t *xoff) {
    int64_t y = 0, x = 0, io = 0, cdim = 0;
    for (int d = p.ndim - 1; d >= 0; d--) {
        int64_t c = i % p.shape[d];
        i /= p.shape[d];
        y += c * p.ystride[d];
        io += c * p.istride[d];
        if (d != p.dim)
            x += c * p.xstride[d];
    }
    cdim = index[io];
    *yoff = y;
    *xoff = x + cdim * p.xstride[p.dim];
}

static gsparams gs_make(const tide_kview *index, const tide_kview *y, const tide_kview *x,
                        int dim) {
    gsparams p;
    pick_geom_fill(&p, index, y, x, dim);
    for (int d = 0; d < index->ndim; d++)
        p.istride[d] = index->strides[d];
    return p;
}

/* uint8 wraps and bool ors, in index order: launched as a single thread */
template <int DT>
__global__ void k_scatter_add_serial(gsparams p, typename tide_dt<DT>::T *dst,
                                     const typename tide_dt<DT>::T *src, const int64_t *index) {
    if (TIDE_GTID != 0)
        return;
    for (int64_t i = 0; i < p.n; i++) {
        int64_t yo, xo;
        pick_offsets(p, i, index, &yo, &xo);
        dst[xo] = tide_store<DT>(tide_load<DT>(dst[xo]) + tide_load<DT>(src[yo]));
    }
}

extern "C" tide_status tide_cuda_gather(tide_device *dev, const tide_kview *out,
                                        const tide_kview *a, int dim, const tide_kview *index) {
    if (index->dtype != TIDE_DTYPE_I64 || index->ndim != a->ndim)
        return tide_cuda_seterr(TIDE_EINVAL, "gather: cuda kernel needs an int64 index of %d dims",
                                a->ndim);
    cudaStream_t stream = NULL;
    TIDE_TRY(tide_cuda_enter(dev, &stream));
    gsparams p = gs_make(index, out, a, dim);
    if (p.n == 0)
        return TIDE_OK;
    return tide_cuda_by_size(a->dtype, "gather", [&](auto z) {
        return pick<PICK_READ, decltype(z)>(stream, p, out, a, index);
    });
}

template <int DT>
static tide_status scatter_add_serial(cudaStream_t stream, const gsparams &p, const tide_kview *dst,
                                      const tide_kview *src, const tide_kview *index) {
    typedef typename tide_dt<DT>::T T;
    TIDE_LAUNCH(k_scatter_add_serial<DT>, 1, 1, 0, stream, p, (T *)dst->data, (const T *)src->data,
                (const int64_t *)index->data);
    TIDE_CUDA_LAUNCHED(k_scatter_add_serial);
    return TIDE_OK;
}

extern "C" tide_status tide_cuda_scatter(tide_device *dev, const tide_kview *dst, int dim,
                                         const tide_kview *index, const tide_kview *src,
                                         int accumulate) {
    const char *name = accumulate ? "scatter_add_" : "scatter_";
    if (accumulate > TIDE_SCATTER_ADD) /* (tide.indexing's scatter_reduce sorts there) */
        return tide_cuda_seterr(TIDE_ENOTSUP, "scatter_reduce_: amax and amin have no cuda kernel");
    if (index->dtype != TIDE_DTYPE_I64 || index->ndim != dst->ndim || src->dtype != dst->dtype)
        return tide_cuda_seterr(TIDE_EINVAL, "%s: cuda kernel got views it cannot take", name);
    cudaStream_t stream = NULL;
    TIDE_TRY(tide_cuda_enter(dev, &stream));
    gsparams p = gs_make(index, src, dst, dim);
    if (p.n == 0)
        return TIDE_OK;
    if (!accumulate)
        return tide_cuda_by_size(dst->dtype, name, [&](auto z) {
            return pick<PICK_WRITE, decltype(z)>(stream, p, dst, src, index);
        });
    return pick_add_by_dtype(
        dst->dtype, name,
        [&](auto z) { return pick<PICK_ADD, decltype(z)>(stream, p, dst, src, index); },
        [&](auto dt) {
            return scatter_add_serial<decltype(dt)::value>(stream, p, dst, src, index);
        });
}

// --- sort --------------------------------------------------------------------------------------

struct sort_geom {
    int64_t shape[TIDE_MAX_DIMS], strides[TIDE_MAX_DIMS];
};

/* a goes strictly before b: ascending puts NaN last, descending first (NaN is the largest) */
template <typename C> __device__ __forceinline__ bool goes_before(C a, C b, int desc) {
    if (desc)
        return (a != a && b == b) || a > b;
    return a == a && (b != b || a < b);
}

/* one thread per row: a bottom-up merge sort of the row's positions between two scratch
 * halves (stable: the left run wins ties), then the values gathered in that order */
template <int DT>
__global__ void k_sort(int64_t rows, int64_t len, int64_t inner, int ndim, int dim, sort_geom g,
                       typename tide_dt<DT>::T *values, int64_t *indices,
                       const typename tide_dt<DT>::T *a, int64_t *scratch, int desc) {
    for (int64_t r = TIDE_GTID; r < rows; r += TIDE_GSTRIDE) {
        int64_t o = r / inner, in = r % inner, off = 0, rest = o;
        for (int d = dim - 1; d >= 0; d--) {
            off += (rest % g.shape[d]) * g.strides[d];
            rest /= g.shape[d];
        }
        rest = in;
        for (int d = ndim - 1; d > dim; d--) {
            off += (rest % g.shape[d]) * g.strides[d];
            rest /= g.shape[d];
        }
        const typename tide_dt<DT>::T *row = a + off;
        int64_t                        sd = g.strides[dim];
        int64_t                       *src = scratch + r * 2 * len, *dst = src + len;
        for (int64_t j = 0; j < len; j++)
            src[j] = j;
        for (int64_t w = 1; w < len; w *= 2) {
            for (int64_t lo = 0; lo < len; lo += 2 * w) {
                int64_t mid = lo + w < len ? lo + w : len, hi = lo + 2 * w < len ? lo + 2 * w : len;
                int64_t i = lo, j = mid, k = lo;
                while (i < mid && j < hi) {
                    bool right = goes_before(tide_load<DT>(row[src[j] * sd]),
                                             tide_load<DT>(row[src[i] * sd]), desc);
                    dst[k++] = right ? src[j++] : src[i++];
                }
                while (i < mid)
                    dst[k++] = src[i++];
                while (j < hi)
                    dst[k++] = src[j++];
            }
            int64_t *t = src;
            src = dst;
            dst = t;
        }
        int64_t                 *ix = indices + o * len * inner + in;
        typename tide_dt<DT>::T *v = values + o * len * inner + in;
        for (int64_t j = 0; j < len; j++) {
            ix[j * inner] = src[j];
            v[j * inner] = row[src[j] * sd];
        }
    }
}

struct run_sort {
    template <int DT>
    static tide_status run(tide_device *dev, cudaStream_t stream, const tide_kview *values,
                           const tide_kview *indices, const tide_kview *a, int dim, int desc) {
        typedef typename tide_dt<DT>::T T;
        int64_t                         len = a->shape[dim], inner = 1, rows = 1;
        for (int d = 0; d < a->ndim; d++)
            if (d != dim)
                rows *= a->shape[d];
        for (int d = dim + 1; d < a->ndim; d++)
            inner *= a->shape[d];
        sort_geom g;
        for (int d = 0; d < a->ndim; d++) {
            g.shape[d] = a->shape[d];
            g.strides[d] = a->strides[d];
        }
        size_t   bytes = (size_t)(rows * 2 * len) * sizeof(int64_t);
        int64_t *scratch = NULL;
        TIDE_TRY(tide_cuda_alloc(dev, bytes, (void **)&scratch));
        TIDE_LAUNCH(k_sort<DT>, tide_map_grid(rows), TIDE_CUDA_THREADS, 0, stream, rows, len, inner,
                    a->ndim, dim, g, (T *)values->data, (int64_t *)indices->data,
                    (const T *)a->data, scratch, desc);
        tide_cuda_free(dev, scratch, bytes); /* reuse is ordered on the stream */
        TIDE_CUDA_LAUNCHED(k_sort);
        return TIDE_OK;
    }
};

/* the kernel row sort: the contiguous [rows, d] input's lines along the middle dim of
 * [rows, len, inner] */
extern "C" tide_status tide_cuda_sort(tide_device *dev, const tide_kernel_call *c) {
    int64_t inner = c->p[1].i;
    if (c->d % inner)
        return tide_cuda_seterr(TIDE_EINVAL, "sort: inner %lld does not divide the row's %lld",
                                (long long)inner, (long long)c->d);
    tide_kview a = *c->in[0];
    a.ndim = 3;
    a.shape[0] = c->rows;
    a.shape[1] = c->d / inner;
    a.shape[2] = inner;
    a.strides[0] = c->d;
    a.strides[1] = inner;
    a.strides[2] = 1;
    cudaStream_t stream = NULL;
    TIDE_TRY(tide_cuda_enter(dev, &stream));
    TIDE_CUDA_DISPATCH_ALL(a.dtype, run_sort, dev, stream, c->out[0], c->out[1], &a, 1,
                           (int)c->p[2].i);
    return tide_cuda_notsup("sort", a.dtype);
}
