/*
 * index.cu — index_select (a gather along one dim) and index_add (the scatter-add that is its
 * gradient; duplicates accumulate through atomicAdd, so float sums are unordered).
 */
#include "pick.cuh"

/* over the walked side's shape (out of index_select, src of index_add); element i of the indexed
 * side (a of index_select, dst) has its coordinate along dim replaced by index[c] */
struct ixparams : pick_geom {
    int64_t istride; /* stride of the 1-D index */
};

__device__ __forceinline__ void pick_offsets(const ixparams &p, int64_t i, const int64_t *index,
                                             int64_t *yoff, int64_t *xoff) {
    int64_t y = 0, x = 0;
    for (int d = p.ndim - 1; d >= 0; d--) {
        int64_t c = i % p.shape[d];
        i /= p.shape[d];
        y += c * p.ystride[d];
        x += (d == p.dim ? index[c * p.istride] : c) * p.xstride[d];
    }
    *yoff = y;
    *xoff = x;
}

/* uint8 and bool have no atomicAdd (and a CAS loop on the enclosing word would be slow and
 * order-dependent): one thread per position outside dim walks the index in order, so duplicate
 * indices accumulate (uint8 wraps, bool is an or) exactly as on the CPU */
template <int DT>
__global__ void k_index_add_ordered(ixparams p, int64_t slices, typename tide_dt<DT>::T *dst,
                                    const typename tide_dt<DT>::T *src, const int64_t *index) {
    for (int64_t i = TIDE_GTID; i < slices; i += TIDE_GSTRIDE) {
        int64_t rest = i, y = 0, x = 0;
        for (int d = p.ndim - 1; d >= 0; d--) {
            if (d == p.dim)
                continue;
            int64_t c = rest % p.shape[d];
            rest /= p.shape[d];
            y += c * p.ystride[d];
            x += c * p.xstride[d];
        }
        for (int64_t j = 0; j < p.shape[p.dim]; j++) {
            typename tide_dt<DT>::T *px = dst + x + index[j * p.istride] * p.xstride[p.dim];
            *px = tide_store<DT>(tide_load<DT>(*px) + tide_load<DT>(src[y + j * p.ystride[p.dim]]));
        }
    }
}

template <int DT>
static tide_status add_ordered(cudaStream_t stream, const ixparams &p, const tide_kview *dst,
                               const tide_kview *src, const tide_kview *index) {
    typedef typename tide_dt<DT>::T T;
    int64_t                         slices = p.n / p.shape[p.dim];
    TIDE_LAUNCH(k_index_add_ordered<DT>, tide_map_grid(slices), TIDE_CUDA_THREADS, 0, stream, p,
                slices, (T *)dst->data, (const T *)src->data, (const int64_t *)index->data);
    TIDE_CUDA_LAUNCHED(k_index_add_ordered);
    return TIDE_OK;
}

static ixparams ix_make(const tide_kview *y, const tide_kview *x, int dim,
                        const tide_kview *index) {
    ixparams p;
    pick_geom_fill(&p, y, y, x, dim);
    p.istride = index->ndim > 0 ? index->strides[0] : 0;
    return p;
}

/* f(stream, p) on dev with the params of y (the walked side) and x (the indexed side) along dim;
 * nothing when there is no element; EDTYPE naming op unless index is int64 */
template <typename F>
static tide_status run_indexed(tide_device *dev, const char *op, const tide_kview *y,
                               const tide_kview *x, int dim, const tide_kview *index, F f) {
    if (index->dtype != TIDE_DTYPE_I64)
        return tide_cuda_seterr(TIDE_EDTYPE, "%s: index must be int64, got %s", op,
                                tide_cuda_dtype_name(index->dtype));
    cudaStream_t stream = NULL;
    TIDE_TRY(tide_cuda_enter(dev, &stream));
    ixparams p = ix_make(y, x, dim, index);
    if (p.n == 0)
        return TIDE_OK;
    return f(stream, p);
}

extern "C" tide_status tide_cuda_index_select(tide_device *dev, const tide_kview *out,
                                              const tide_kview *a, int dim,
                                              const tide_kview *index) {
    static const char op[] = "index_select";
    return run_indexed(dev, op, out, a, dim, index, [&](cudaStream_t stream, const ixparams &p) {
        return tide_cuda_by_size(a->dtype, op, [&](auto z) {
            return pick<PICK_READ, decltype(z)>(stream, p, out, a, index);
        });
    });
}

extern "C" tide_status tide_cuda_index_add(tide_device *dev, const tide_kview *dst, int dim,
                                           const tide_kview *index, const tide_kview *src) {
    static const char op[] = "index_add_";
    return run_indexed(dev, op, src, dst, dim, index, [&](cudaStream_t stream, const ixparams &p) {
        return pick_add_by_dtype(
            dst->dtype, op,
            [&](auto z) { return pick<PICK_ADD, decltype(z)>(stream, p, dst, src, index); },
            [&](auto dt) { return add_ordered<decltype(dt)::value>(stream, p, dst, src, index); });
    });
}
