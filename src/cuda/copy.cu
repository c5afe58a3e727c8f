/*
 * copy.cu — strided copies (with dtype conversion), fill and arange.
 */
#include "map.cuh"

// ---- kernels --------------------------------------------------------------------------------

template <typename T> struct move_fn {
    __device__ __forceinline__ T operator()(T a) const {
        return a;
    }
};

template <typename T> struct const_fn {
    T                            value;
    __device__ __forceinline__ T operator()(T) const {
        return value;
    }
};

/* conversion between run-time dtypes: integers to integers exactly, everything else through
 * double (exact for every value of every dtype but int64 beyond 2^53) */
__global__ void k_convert(tide_iter<2> it, uint32_t n, void *out, int odt, const void *in, int idt,
                          int both_int) {
    for (uint32_t i = (uint32_t)TIDE_GTID; i < n; i += (uint32_t)TIDE_GSTRIDE) {
        int64_t off[2];
        tide_iter_offsets<2, uint32_t>(it, i, off);
        if (both_int)
            tide_store_dyn_int(out, off[0], odt, tide_load_dyn_int(in, off[1], idt));
        else
            tide_store_dyn(out, off[0], odt, tide_load_dyn(in, off[1], idt));
    }
}

__global__ void k_arange(void *out, int dt, int64_t n, double start, double step) {
    for (int64_t i = TIDE_GTID; i < n; i += TIDE_GSTRIDE)
        tide_store_dyn(out, i, dt, start + (double)i * step);
}

// ---- copy -----------------------------------------------------------------------------------

template <typename T>
static tide_status move_bytes(tide_device *dev, const tide_kview *out, const tide_kview *a) {
    return tide_map1<move_fn<T>, T, T>(dev, move_fn<T>(), out, a);
}

extern "C" tide_status tide_cuda_copy(tide_device *dev, const tide_kview *out,
                                      const tide_kview *a) {
    cudaStream_t stream = NULL;
    TIDE_TRY(tide_cuda_enter(dev, &stream));
    int64_t n = tide_cuda_numel(out);
    if (n == 0)
        return TIDE_OK;
    if (out->dtype == a->dtype) {
        size_t es = tide_cuda_dtype_size(a->dtype);
        if (tide_cuda_contiguous(out) && tide_cuda_contiguous(a)) {
            TIDE_CUDA_TRY(cudaMemcpyAsync(out->data, a->data, (size_t)n * es,
                                          cudaMemcpyDeviceToDevice, stream));
            return TIDE_OK;
        }
        return tide_cuda_by_size(a->dtype, "copy_",
                                 [&](auto z) { return move_bytes<decltype(z)>(dev, out, a); });
    }
    const tide_kview *views[2] = {out, a};
    tide_iter<2>      it = tide_iter_make<2>(views);
    int               both_int = tide_dtype_is_int(out->dtype) && tide_dtype_is_int(a->dtype);
    char             *po = (char *)out->data;
    const char       *pa = (const char *)a->data;
    size_t            os = tide_cuda_dtype_size(out->dtype), as = tide_cuda_dtype_size(a->dtype);
    return tide_iter_chunks<2>(it, n, [&](const tide_iter<2> &p, uint32_t m, const int64_t *off) {
        TIDE_LAUNCH(k_convert, tide_map_grid(m), TIDE_CUDA_THREADS, 0, stream, p, m,
                    po + (off ? off[0] * (int64_t)os : 0), (int)out->dtype,
                    pa + (off ? off[1] * (int64_t)as : 0), (int)a->dtype, both_int);
        TIDE_CUDA_LAUNCHED(k_convert);
        return TIDE_OK;
    });
}

// ---- fill -----------------------------------------------------------------------------------

/* the value's bit pattern in the dtype, made on the host */
static uint64_t value_bits(tide_dtype dt, double v) {
    uint64_t bits = 0;
    switch (dt) {
    case TIDE_DTYPE_F32: {
        float f = (float)v;
        memcpy(&bits, &f, 4);
        break;
    }
    case TIDE_DTYPE_F64:
        memcpy(&bits, &v, 8);
        break;
    case TIDE_DTYPE_F16: {
        __half h = __double2half(v);
        memcpy(&bits, &h, 2);
        break;
    }
    case TIDE_DTYPE_BF16: {
        __nv_bfloat16 h = __double2bfloat16(v);
        memcpy(&bits, &h, 2);
        break;
    }
    case TIDE_DTYPE_I32: {
        int32_t x = (int32_t)tide_cuda_scalar_int(dt, v); /* saturated, as on the CPU */
        memcpy(&bits, &x, 4);
        break;
    }
    case TIDE_DTYPE_I64: {
        int64_t x = tide_cuda_scalar_int(dt, v);
        memcpy(&bits, &x, 8);
        break;
    }
    default: /* U8, BOOL */
        bits = (uint64_t)tide_cuda_scalar_int(dt, v);
        break;
    }
    return bits;
}

template <typename T>
static tide_status fill_bytes(tide_device *dev, const tide_kview *out, uint64_t bits) {
    T value;
    memcpy(&value, &bits, sizeof(T));
    /* out is also the (ignored) input, so the strided kernel walks one layout */
    return tide_map1<const_fn<T>, T, T>(dev, const_fn<T>{value}, out, out);
}

extern "C" tide_status tide_cuda_fill(tide_device *dev, const tide_kview *out, double value) {
    cudaStream_t stream = NULL;
    TIDE_TRY(tide_cuda_enter(dev, &stream));
    int64_t n = tide_cuda_numel(out);
    if (n == 0)
        return TIDE_OK;
    uint64_t bits = value_bits(out->dtype, value);
    size_t   es = tide_cuda_dtype_size(out->dtype);
    if (bits == 0 && tide_cuda_contiguous(out)) {
        TIDE_CUDA_TRY(cudaMemsetAsync(out->data, 0, (size_t)n * es, stream));
        return TIDE_OK;
    }
    return tide_cuda_by_size(out->dtype, "fill_",
                             [&](auto z) { return fill_bytes<decltype(z)>(dev, out, bits); });
}

// ---- arange ---------------------------------------------------------------------------------

extern "C" tide_status tide_cuda_arange(tide_device *dev, const tide_kview *out, double start,
                                        double step) {
    cudaStream_t stream = NULL;
    TIDE_TRY(tide_cuda_enter(dev, &stream));
    int64_t n = tide_cuda_numel(out);
    if (n == 0)
        return TIDE_OK;
    TIDE_LAUNCH(k_arange, tide_map_grid(n), TIDE_CUDA_THREADS, 0, stream, out->data,
                (int)out->dtype, n, start, step);
    TIDE_CUDA_LAUNCHED(k_arange);
    return TIDE_OK;
}
