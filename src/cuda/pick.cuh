/*
 * pick.cuh — the element-moving kernels of gather / scatter (gather.cu) and index_select /
 * index_add (index.cu): one thread per element of the walked side. P is the op's parameters:
 * a count p.n and an overload
 *   __device__ void pick_offsets(const P &p, int64_t i, const int64_t *index, int64_t *y,
 *                                int64_t *x)
 * giving element i's offset y in the walked side (out of gather, src of scatter) and x in the
 * indexed side (the input of gather, dst of scatter).
 */
#ifndef TIDE_CUDA_PICK_CUH
#define TIDE_CUDA_PICK_CUH

#include "map.cuh"

#include <type_traits>

/* what every P holds: element i of the walked side y, over shape, and the indexed side x, with
 * their strides; n elements */
struct pick_geom {
    int     ndim, dim;
    int64_t shape[TIDE_MAX_DIMS];
    int64_t ystride[TIDE_MAX_DIMS];
    int64_t xstride[TIDE_MAX_DIMS];
    int64_t n;
};

/* g over the shape of `over`, with y's and x's strides */
static inline void pick_geom_fill(pick_geom *g, const tide_kview *over, const tide_kview *y,
                                  const tide_kview *x, int dim) {
    g->ndim = over->ndim;
    g->dim = dim;
    for (int d = 0; d < over->ndim; d++) {
        g->shape[d] = over->shape[d];
        g->ystride[d] = y->strides[d];
        g->xstride[d] = x->strides[d];
    }
    g->n = tide_cuda_numel(over);
}

enum pick_mode {
    PICK_READ,  /* w[y] = r[x]: gather, index_select */
    PICK_WRITE, /* w[x] = r[y]: scatter */
    PICK_ADD    /* w[x] += r[y] through atomic_add: scatter_add, index_add */
};

template <int MODE, typename P, typename T>
__global__ void k_pick(P p, T *w, const T *r, const int64_t *index) {
    for (int64_t i = TIDE_GTID; i < p.n; i += TIDE_GSTRIDE) {
        int64_t yo, xo;
        pick_offsets(p, i, index, &yo, &xo);
        if constexpr (MODE == PICK_READ)
            w[yo] = r[xo];
        else if constexpr (MODE == PICK_WRITE)
            w[xo] = r[yo];
        else
            atomic_add(w + xo, r[yo]);
    }
}

template <int MODE, typename T, typename P>
static tide_status pick(cudaStream_t stream, const P &p, const tide_kview *w, const tide_kview *r,
                        const tide_kview *index) {
    void (*kernel)(P, T *, const T *, const int64_t *) = k_pick<MODE, P, T>;
    TIDE_LAUNCH(kernel, tide_map_grid(p.n), TIDE_CUDA_THREADS, 0, stream, p, (T *)w->data,
                (const T *)r->data, (const int64_t *)index->data);
    TIDE_CUDA_LAUNCHED(k_pick);
    return TIDE_OK;
}

/* the adds of scatter_add and index_add by dst's dtype: add(T()) with T the storage type where
 * atomic_add has one; ordered(std::integral_constant<int, DT>()) for uint8 (wraps) and bool
 * (ors), which have none and run in index order; ENOTSUP naming op for any other dtype */
template <typename F, typename G>
static tide_status pick_add_by_dtype(tide_dtype dt, const char *op, F add, G ordered) {
    switch (dt) {
#define X(E, TS, TC)                                                                               \
    case TIDE_DTYPE_##E:                                                                           \
        if constexpr (TIDE_DTYPE_##E == TIDE_DTYPE_U8 || TIDE_DTYPE_##E == TIDE_DTYPE_BOOL)        \
            return ordered(std::integral_constant<int, TIDE_DTYPE_##E>());                         \
        else                                                                                       \
            return add(TS());
        TIDE_CUDA_DTYPES(X)
#undef X
    default:
        return tide_cuda_notsup(op, dt);
    }
}

#endif /* TIDE_CUDA_PICK_CUH */
