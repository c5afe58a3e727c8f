/*
 * elementwise.cu — the elementwise op families (binary, compare, scalar, unary, predicate,
 * bounded) and where. The kernels' op switches are generated from include/tide_ops.def and call
 * each row's shared scalar_math.h function; floats compute in float (half types too) or double,
 * integers exactly in int64 (rows whose DTYPES is ALL; the core promotes the others).
 */
#include "map.cuh"

#include <type_traits>

// ---- scalar math by compute type, generated from include/tide_ops.def ----------------------

/* Each row of the table gets overloads op_<NAME>(C...) for the compute types: float and double,
 * and int64 (every integer dtype) when the row's DTYPES is ALL; they call the row's
 * scalar_math.h function, so a missing one fails the build. */
#define CU_OVERLOAD_INT_ALL(x)   x
#define CU_OVERLOAD_INT_FLOAT(x) /* integer inputs are promoted by the core */
#define CU_WRAP_BINARY(E, fn, dtypes)                                                              \
    __device__ __forceinline__ float op_##E(float a, float b) {                                    \
        return tide_##fn##_f(a, b);                                                                \
    }                                                                                              \
    __device__ __forceinline__ double op_##E(double a, double b) {                                 \
        return tide_##fn##_d(a, b);                                                                \
    }                                                                                              \
    CU_OVERLOAD_INT_##dtypes(__device__ __forceinline__ int64_t op_##E(int64_t a, int64_t b) {     \
        return tide_##fn##_i64(a, b);                                                              \
    })
#define CU_WRAP_COMPARE(E, fn, dtypes)                                                             \
    __device__ __forceinline__ uint8_t op_##E(float a, float b) {                                  \
        return tide_##fn##_f(a, b);                                                                \
    }                                                                                              \
    __device__ __forceinline__ uint8_t op_##E(double a, double b) {                                \
        return tide_##fn##_d(a, b);                                                                \
    }                                                                                              \
    CU_OVERLOAD_INT_##dtypes(__device__ __forceinline__ uint8_t op_##E(int64_t a, int64_t b) {     \
        return tide_##fn##_i64(a, b);                                                              \
    })
#define CU_WRAP_UNARY(E, fn, dtypes)                                                               \
    __device__ __forceinline__ float op_##E(float a) {                                             \
        return tide_##fn##_f(a);                                                                   \
    }                                                                                              \
    __device__ __forceinline__ double op_##E(double a) {                                           \
        return tide_##fn##_d(a);                                                                   \
    }                                                                                              \
    CU_OVERLOAD_INT_##dtypes(                                                                      \
        __device__ __forceinline__ int64_t op_##E(int64_t a) { return tide_##fn##_i64(a); })
#define CU_WRAP_PREDICATE(E, fn, dtypes)                                                           \
    __device__ __forceinline__ uint8_t op_##E(float a) {                                           \
        return tide_##fn##_f(a);                                                                   \
    }                                                                                              \
    __device__ __forceinline__ uint8_t op_##E(double a) {                                          \
        return tide_##fn##_d(a);                                                                   \
    }                                                                                              \
    CU_OVERLOAD_INT_##dtypes(                                                                      \
        __device__ __forceinline__ uint8_t op_##E(int64_t a) { return tide_##fn##_i64(a); })
#define CU_WRAP_BOUNDED(E, fn, dtypes)                                                             \
    __device__ __forceinline__ float op_##E(float a, float lo, float hi) {                         \
        return tide_##fn##_f(a, lo, hi);                                                           \
    }                                                                                              \
    __device__ __forceinline__ double op_##E(double a, double lo, double hi) {                     \
        return tide_##fn##_d(a, lo, hi);                                                           \
    }                                                                                              \
    CU_OVERLOAD_INT_##dtypes(__device__ __forceinline__ int64_t op_##E(                            \
        int64_t a, int64_t lo, int64_t hi) { return tide_##fn##_i64(a, lo, hi); })
#define CU_WRAP_REDUCE(E, fn, dtypes)         /* src/cuda/reduce.cu */
#define X(E, family, name, fn, dtypes, flags) CU_WRAP_##family(E, fn, dtypes)
#include "tide_ops.def"
#undef X

/* row E runs in the switch of family FAM for compute type C: its overload exists */
#define CU_RUNS(C, FAM, family, dtypes)                                                            \
    (TIDE_FAMILY_##family == FAM &&                                                                \
     (!std::is_same<C, int64_t>::value || TIDE_OP_DTYPES_##dtypes == TIDE_OP_DTYPES_ALL))

/* A case per row; discarded (if constexpr) where the family differs or the overload does not
 * exist. CHEAP rows are inlined into every kernel; the others are out-of-line calls shared by
 * the kernels of every dtype: inlined, they multiplied the size of this file's machine code (and
 * its build time) many times over for no measurable gain. The defaults are unreachable:
 * tide_cuda_binary and tide_cuda_unary refuse an op without a case first (has_kernel). */
template <typename C> __device__ __noinline__ C bin_heavy(int op, C a, C b) {
    switch (op) {
#define X(E, family, name, fn, dtypes, flags)                                                      \
    case TIDE_OP_##E:                                                                              \
        if constexpr (CU_RUNS(C, TIDE_FAMILY_BINARY, family, dtypes))                              \
            return op_##E(a, b);                                                                   \
        break;
#include "tide_ops.def"
#undef X
    default:
        break;
    }
    return 0;
}

template <typename C> __device__ __forceinline__ C bin_apply(int op, C a, C b) {
    switch (op) {
#define X(E, family, name, fn, dtypes, flags)                                                      \
    case TIDE_OP_##E:                                                                              \
        if constexpr (CU_RUNS(C, TIDE_FAMILY_BINARY, family, dtypes))                              \
            return ((flags)&TIDE_OPF_CHEAP) ? op_##E(a, b) : bin_heavy(op, a, b);                  \
        break;
#include "tide_ops.def"
#undef X
    default:
        break;
    }
    return 0;
}

template <typename C> __device__ __forceinline__ uint8_t cmp_apply(int op, C a, C b) {
    switch (op) {
#define X(E, family, name, fn, dtypes, flags)                                                      \
    case TIDE_OP_##E:                                                                              \
        if constexpr (CU_RUNS(C, TIDE_FAMILY_COMPARE, family, dtypes))                             \
            return op_##E(a, b);                                                                   \
        break;
#include "tide_ops.def"
#undef X
    default:
        break;
    }
    return 0;
}

template <typename C> __device__ __noinline__ C un_heavy(int op, C a) {
    switch (op) {
#define X(E, family, name, fn, dtypes, flags)                                                      \
    case TIDE_OP_##E:                                                                              \
        if constexpr (CU_RUNS(C, TIDE_FAMILY_UNARY, family, dtypes))                               \
            return op_##E(a);                                                                      \
        break;
#include "tide_ops.def"
#undef X
    default:
        break;
    }
    return 0;
}

template <typename C> __device__ __forceinline__ C un_apply(int op, C a) {
    switch (op) {
#define X(E, family, name, fn, dtypes, flags)                                                      \
    case TIDE_OP_##E:                                                                              \
        if constexpr (CU_RUNS(C, TIDE_FAMILY_UNARY, family, dtypes))                               \
            return ((flags)&TIDE_OPF_CHEAP) ? op_##E(a) : un_heavy(op, a);                         \
        break;
#include "tide_ops.def"
#undef X
    default:
        break;
    }
    return 0;
}

template <typename C> __device__ __forceinline__ uint8_t pred_apply(int op, C a) {
    switch (op) {
#define X(E, family, name, fn, dtypes, flags)                                                      \
    case TIDE_OP_##E:                                                                              \
        if constexpr (CU_RUNS(C, TIDE_FAMILY_PREDICATE, family, dtypes))                           \
            return op_##E(a);                                                                      \
        break;
#include "tide_ops.def"
#undef X
    default:
        break;
    }
    return 0;
}

template <typename C> __device__ __forceinline__ C bounded_apply(int op, C a, C lo, C hi) {
    switch (op) {
#define X(E, family, name, fn, dtypes, flags)                                                      \
    case TIDE_OP_##E:                                                                              \
        if constexpr (CU_RUNS(C, TIDE_FAMILY_BOUNDED, family, dtypes))                             \
            return op_##E(a, lo, hi);                                                              \
        break;
#include "tide_ops.def"
#undef X
    default:
        break;
    }
    return 0;
}

// ---- functors -------------------------------------------------------------------------------

template <int DT> struct binary_fn {
    typedef typename tide_dt<DT>::T T;
    typedef typename tide_dt<DT>::C C;
    int                             op;
    __device__ __forceinline__ T    operator()(T a, T b) const {
           return tide_store<DT>(bin_apply(op, tide_load<DT>(a), tide_load<DT>(b)));
    }
};

template <int DT> struct compare_fn {
    typedef typename tide_dt<DT>::T    T;
    int                                op;
    __device__ __forceinline__ uint8_t operator()(T a, T b) const {
        return cmp_apply(op, tide_load<DT>(a), tide_load<DT>(b));
    }
};

template <int DT> struct scalar_fn {
    typedef typename tide_dt<DT>::T T;
    typedef typename tide_dt<DT>::C C;
    int                             op;
    C                               s;
    int                             reverse;
    __device__ __forceinline__ T    operator()(T a) const {
           C x = tide_load<DT>(a);
           return tide_store<DT>(reverse ? bin_apply(op, s, x) : bin_apply(op, x, s));
    }
};

/* integer tensors compare in int64 with the scalar as the dtype holds it (scalar_int), as the
 * CPU does: exact beyond 2^53, where a compare in double says 2^53 + 1 == 2^53 (the core compares
 * a fractional or out-of-range scalar in float64: `x < 2.5` never reaches an integer kernel) */
template <int DT> struct scalar_cmp_fn {
    typedef typename tide_dt<DT>::T    T;
    typedef typename tide_dt<DT>::C    C;
    int                                op;
    C                                  s;
    int                                reverse;
    __device__ __forceinline__ uint8_t operator()(T a) const {
        C x = tide_load<DT>(a);
        return reverse ? cmp_apply(op, s, x) : cmp_apply(op, x, s);
    }
};

template <int DT> struct unary_fn {
    typedef typename tide_dt<DT>::T T;
    int                             op;
    __device__ __forceinline__ T    operator()(T a) const {
           return tide_store<DT>(un_apply(op, tide_load<DT>(a)));
    }
};

template <int DT> struct predicate_fn {
    typedef typename tide_dt<DT>::T    T;
    int                                op;
    __device__ __forceinline__ uint8_t operator()(T a) const {
        return pred_apply(op, tide_load<DT>(a));
    }
};

template <int DT> struct bounded_fn {
    typedef typename tide_dt<DT>::T T;
    typedef typename tide_dt<DT>::C C;
    int                             op;
    C                               lo, hi;
    __device__ __forceinline__ T    operator()(T a) const {
           return tide_store<DT>(bounded_apply(op, tide_load<DT>(a), lo, hi));
    }
};

template <typename T> struct where_fn {
    __device__ __forceinline__ T operator()(uint8_t c, T a, T b) const {
        return c ? a : b;
    }
};

// ---- binary ---------------------------------------------------------------------------------

/* the op is a kernel argument: a uniform branch costs nothing next to the memory traffic, and
 * one kernel per op and dtype would multiply the build time */
struct run_binary {
    template <int DT>
    static tide_status run(tide_device *dev, tide_op op, const tide_kview *out, const tide_kview *a,
                           const tide_kview *b) {
        typedef typename tide_dt<DT>::T T;
        if (tide_op_family_of_cuda(op) == TIDE_FAMILY_COMPARE)
            return tide_map2<compare_fn<DT>, uint8_t, T, T>(dev, {op}, out, a, b);
        return tide_map2<binary_fn<DT>, T, T, T>(dev, {op}, out, a, b);
    }
};

/* the switches above have a case for op in one of the families fams and for dtype dt: every
 * float dtype, and the integer ones when the row's DTYPES is ALL */
static bool has_kernel(tide_op op, tide_dtype dt, tide_op_family f1, tide_op_family f2) {
    tide_op_family f = tide_op_family_of_cuda(op);
    if ((unsigned)op >= TIDE_OP_COUNT || (f != f1 && f != f2))
        return false;
    bool is_float = dt == TIDE_DTYPE_F32 || dt == TIDE_DTYPE_F64 || dt == TIDE_DTYPE_F16 ||
                    dt == TIDE_DTYPE_BF16;
    return is_float || !(tide_cuda_op_flags(op) & TIDE_OPF_FLOAT_ONLY);
}

extern "C" tide_status tide_cuda_binary(tide_device *dev, tide_op op, const tide_kview *out,
                                        const tide_kview *a, const tide_kview *b) {
    if (!has_kernel(op, a->dtype, TIDE_FAMILY_BINARY, TIDE_FAMILY_COMPARE))
        return tide_cuda_notsup(tide_cuda_op_name(op), a->dtype);
    TIDE_CUDA_DISPATCH_ALL(a->dtype, run_binary, dev, op, out, a, b);
    return tide_cuda_notsup(tide_cuda_op_name(op), a->dtype);
}

struct run_binary_scalar {
    template <int DT>
    static tide_status run(tide_device *dev, tide_op op, const tide_kview *out, const tide_kview *a,
                           double s, int reverse) {
        typedef typename tide_dt<DT>::T T;
        typedef typename tide_dt<DT>::C C;
        /* the scalar as the CPU stores it in the dtype: an integer saturates (a plain cast of
         * 1e19 to int64 is undefined) */
        C c;
        if constexpr (tide_dt_is_float<DT>())
            c = (C)s;
        else
            c = tide_cuda_scalar_int((tide_dtype)DT, s);
        if (tide_op_family_of_cuda(op) == TIDE_FAMILY_COMPARE)
            return tide_map1<scalar_cmp_fn<DT>, uint8_t, T>(dev, {op, c, reverse}, out, a);
        return tide_map1<scalar_fn<DT>, T, T>(dev, {op, c, reverse}, out, a);
    }
};

extern "C" tide_status tide_cuda_binary_scalar(tide_device *dev, tide_op op, const tide_kview *out,
                                               const tide_kview *a, double s, int reverse) {
    if (!has_kernel(op, a->dtype, TIDE_FAMILY_BINARY, TIDE_FAMILY_COMPARE))
        return tide_cuda_notsup(tide_cuda_op_name(op), a->dtype);
    TIDE_CUDA_DISPATCH_ALL(a->dtype, run_binary_scalar, dev, op, out, a, s, reverse);
    return tide_cuda_notsup(tide_cuda_op_name(op), a->dtype);
}

// ---- unary ----------------------------------------------------------------------------------

/* an integer dtype's clamp bound as the CPU takes it: rounded inwards (clamp(int, 0.5, 2.5)
 * keeps 1..2), then saturated to the dtype (u8 clamp(300, 400) is 255, not 300 cast to 44) */
static int64_t clamp_bound(tide_dtype dt, double v, bool lo) {
    if (dt == TIDE_DTYPE_BOOL)
        return lo ? v > 0 : v >= 1;
    return tide_cuda_scalar_int(dt, lo ? ceil(v) : floor(v));
}

struct run_unary {
    template <int DT>
    static tide_status run(tide_device *dev, tide_op op, const tide_kview *out, const tide_kview *a,
                           const double *params) {
        typedef typename tide_dt<DT>::T T;
        typedef typename tide_dt<DT>::C C;
        tide_op_family                  fam = tide_op_family_of_cuda(op);
        if (fam == TIDE_FAMILY_PREDICATE)
            return tide_map1<predicate_fn<DT>, uint8_t, T>(dev, {op}, out, a);
        if (fam == TIDE_FAMILY_UNARY)
            return tide_map1<unary_fn<DT>, T, T>(dev, {op}, out, a);
        double lo = params ? params[0] : -INFINITY, hi = params ? params[1] : INFINITY;
        if constexpr (tide_dt_is_float<DT>())
            return tide_map1<bounded_fn<DT>, T, T>(dev, {op, (C)lo, (C)hi}, out, a);
        else
            return tide_map1<bounded_fn<DT>, T, T>(
                dev,
                {op, clamp_bound((tide_dtype)DT, lo, true), clamp_bound((tide_dtype)DT, hi, false)},
                out, a);
    }
};

extern "C" tide_status tide_cuda_unary(tide_device *dev, tide_op op, const tide_kview *out,
                                       const tide_kview *a, const double *params) {
    if (!has_kernel(op, a->dtype, TIDE_FAMILY_UNARY, TIDE_FAMILY_PREDICATE) &&
        !has_kernel(op, a->dtype, TIDE_FAMILY_BOUNDED, TIDE_FAMILY_BOUNDED))
        return tide_cuda_notsup(tide_cuda_op_name(op), a->dtype);
    TIDE_CUDA_DISPATCH_ALL(a->dtype, run_unary, dev, op, out, a, params);
    return tide_cuda_notsup(tide_cuda_op_name(op), a->dtype);
}

// ---- where ----------------------------------------------------------------------------------

template <typename T>
static tide_status where_bytes(tide_device *dev, const tide_kview *out, const tide_kview *cond,
                               const tide_kview *a, const tide_kview *b) {
    return tide_map3<where_fn<T>, T, uint8_t, T, T>(dev, where_fn<T>(), out, cond, a, b);
}

extern "C" tide_status tide_cuda_where(tide_device *dev, const tide_kview *out,
                                       const tide_kview *cond, const tide_kview *a,
                                       const tide_kview *b) {
    return tide_cuda_by_size(out->dtype, "where", [&](auto z) {
        return where_bytes<decltype(z)>(dev, out, cond, a, b);
    });
}
