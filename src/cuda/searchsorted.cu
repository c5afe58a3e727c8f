/*
 * searchsorted.cu — the searchsorted kernel row (include/tide_kernels.def) on CUDA: a thread per
 * value, PyTorch's binary search in its row of the sorted sequence (the same loop as
 * src/cpu/searchsorted.c; spec/searching_spec.lua runs it on the device under test).
 */
#include "common.cuh"
#include "map.cuh"

template <int DT>
__global__ void k_searchsorted(const typename tide_dt<DT>::T *vals,
                               const typename tide_dt<DT>::T *seq, int64_t *pos, int64_t total,
                               int64_t d, int64_t n, int right) {
    for (int64_t i = TIDE_GTID; i < total; i += TIDE_GSTRIDE) {
        const typename tide_dt<DT>::T *row = seq + (i / d) * n;
        typename tide_dt<DT>::C        v = tide_load<DT>(vals[i]);
        int64_t                        lo = 0, hi = n;
        while (lo < hi) {
            int64_t                 mid = lo + ((hi - lo) >> 1);
            typename tide_dt<DT>::C e = tide_load<DT>(row[mid]);
            bool                    before = right ? !(e > v) : !(e >= v);
            lo = before ? mid + 1 : lo;
            hi = before ? hi : mid;
        }
        pos[i] = lo;
    }
}

struct run_searchsorted {
    template <int DT> static tide_status run(tide_device *dev, const tide_kernel_call *c) {
        typedef typename tide_dt<DT>::T T;
        cudaStream_t                    stream = NULL;
        TIDE_TRY(tide_cuda_enter(dev, &stream));
        int64_t total = c->rows * c->d;
        TIDE_LAUNCH(k_searchsorted<DT>, tide_map_grid(total), TIDE_CUDA_THREADS, 0, stream,
                    (const T *)c->in[0]->data, (const T *)c->in[1]->data,
                    (int64_t *)c->out[0]->data, total, c->d, c->n, (int)c->p[2].i);
        TIDE_CUDA_LAUNCHED(k_searchsorted);
        return TIDE_OK;
    }
};

extern "C" tide_status tide_cuda_searchsorted(tide_device *dev, const tide_kernel_call *c) {
    if (c->dtype != TIDE_DTYPE_BOOL)
        TIDE_CUDA_DISPATCH_ALL(c->dtype, run_searchsorted, dev, c);
    return tide_cuda_notsup("searchsorted", c->dtype);
}
