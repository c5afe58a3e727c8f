/*
 * index.cu — index_select (a gather along one dim) and index_add (the scatter-add that is its
 * gradient; duplicates accumulate through atomicAdd, so float sums are unordered).
 */
#include "map.cuh"

/* what the kernels need of two views and an index: the element i of `it` (over shape) is at
 * off in `x` (the gathered/scattered side: its coordinate along dim replaced by index[c]) */
struct ixparams {
    int     ndim, dim;
    int64_t shape[TIDE_MAX_DIMS];
    int64_t ystride[TIDE_MAX_DIMS]; /* the side walked in order (out of index_select, src) */
    int64_t xstride[TIDE_MAX_DIMS]; /* the indexed side (a of index_select, dst) */
    int64_t istride;                /* stride of the 1-D index */
    int64_t n;
};

__device__ __forceinline__ void ix_offsets(const ixparams &p, int64_t i, const int64_t *index,
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

template <typename T>
__global__ void k_index_select(ixparams p, T *out, const T *a, const int64_t *index) {
    for (int64_t i = TIDE_GTID; i < p.n; i += TIDE_GSTRIDE) {
        int64_t yo, xo;
        ix_offsets(p, i, index, &yo, &xo);
        out[yo] = a[xo];
    }
}

template <typename T>
__global__ void k_index_add(ixparams p, T *dst, const T *src, const int64_t *index) {
    for (int64_t i = TIDE_GTID; i < p.n; i += TIDE_GSTRIDE) {
        int64_t yo, xo;
        ix_offsets(p, i, index, &yo, &xo);
        atomic_add(dst + xo, src[yo]);
    }
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
    p.ndim = y->ndim;
    p.dim = dim;
    for (int d = 0; d < y->ndim; d++) {
        p.shape[d] = y->shape[d];
        p.ystride[d] = y->strides[d];
        p.xstride[d] = x->strides[d];
    }
    p.istride = index->ndim > 0 ? index->strides[0] : 0;
    p.n = tide_cuda_numel(y);
    return p;
}

template <typename T>
static tide_status select_bytes(cudaStream_t stream, const ixparams &p, const tide_kview *out,
                                const tide_kview *a, const tide_kview *index) {
    TIDE_LAUNCH(k_index_select<T>, tide_map_grid(p.n), TIDE_CUDA_THREADS, 0, stream, p,
                (T *)out->data, (const T *)a->data, (const int64_t *)index->data);
    TIDE_CUDA_LAUNCHED(k_index_select);
    return TIDE_OK;
}

extern "C" tide_status tide_cuda_index_select(tide_device *dev, const tide_kview *out,
                                              const tide_kview *a, int dim,
                                              const tide_kview *index) {
    if (index->dtype != TIDE_DTYPE_I64)
        return tide_cuda_seterr(TIDE_EDTYPE, "index_select: index must be int64, got %s",
                                tide_cuda_dtype_name(index->dtype));
    cudaStream_t stream = NULL;
    TIDE_TRY_ST(tide_cuda_enter(dev, &stream));
    ixparams p = ix_make(out, a, dim, index);
    if (p.n == 0)
        return TIDE_OK;
    switch (tide_cuda_dtype_size(a->dtype)) {
    case 1:
        return select_bytes<uint8_t>(stream, p, out, a, index);
    case 2:
        return select_bytes<uint16_t>(stream, p, out, a, index);
    case 4:
        return select_bytes<uint32_t>(stream, p, out, a, index);
    case 8:
        return select_bytes<uint64_t>(stream, p, out, a, index);
    default:
        return tide_cuda_notsup("index_select", a->dtype);
    }
}

template <typename T>
static tide_status add_typed(cudaStream_t stream, const ixparams &p, const tide_kview *dst,
                             const tide_kview *src, const tide_kview *index) {
    TIDE_LAUNCH(k_index_add<T>, tide_map_grid(p.n), TIDE_CUDA_THREADS, 0, stream, p, (T *)dst->data,
                (const T *)src->data, (const int64_t *)index->data);
    TIDE_CUDA_LAUNCHED(k_index_add);
    return TIDE_OK;
}

extern "C" tide_status tide_cuda_index_add(tide_device *dev, const tide_kview *dst, int dim,
                                           const tide_kview *index, const tide_kview *src) {
    if (index->dtype != TIDE_DTYPE_I64)
        return tide_cuda_seterr(TIDE_EDTYPE, "index_add_: index must be int64, got %s",
                                tide_cuda_dtype_name(index->dtype));
    cudaStream_t stream = NULL;
    TIDE_TRY_ST(tide_cuda_enter(dev, &stream));
    ixparams p = ix_make(src, dst, dim, index);
    if (p.n == 0)
        return TIDE_OK;
    switch (dst->dtype) {
    case TIDE_DTYPE_F32:
        return add_typed<float>(stream, p, dst, src, index);
    case TIDE_DTYPE_F64:
        return add_typed<double>(stream, p, dst, src, index);
    case TIDE_DTYPE_F16:
        return add_typed<__half>(stream, p, dst, src, index);
    case TIDE_DTYPE_BF16:
        return add_typed<__nv_bfloat16>(stream, p, dst, src, index);
    case TIDE_DTYPE_I32:
        return add_typed<int32_t>(stream, p, dst, src, index);
    case TIDE_DTYPE_I64:
        return add_typed<int64_t>(stream, p, dst, src, index);
    case TIDE_DTYPE_U8:
        return add_ordered<TIDE_DTYPE_U8>(stream, p, dst, src, index);
    case TIDE_DTYPE_BOOL:
        return add_ordered<TIDE_DTYPE_BOOL>(stream, p, dst, src, index);
    default:
        return tide_cuda_notsup("index_add_", dst->dtype);
    }
}
