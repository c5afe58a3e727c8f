/*
 * elementwise.cu — the elementwise op families (binary, compare, scalar, unary, predicate,
 * bounded) and where. The kernels' op switches are generated from include/tide_ops.def and call
 * each row's shared scalar_math.h function; floats compute in float (half types too) or double,
 * integers exactly in int64 (rows whose DTYPES is ALL; the core promotes the others).
 */
#include "map.cuh"

#include <type_traits>

// ---- scalar math by compute type, generated from include/tide_ops.def ----------------------

/* Each row of the table gets overloads op_<NAME>(C a, C...) for the compute types: float and
 * double unless the row's DTYPES is INTEGRAL or INTEGER, and int64 (every integer dtype) unless
 * it is FLOAT (the core promotes or refuses the others); they call the row's scalar_math.h
 * function with the same arguments (one input, two, or the input and clamp's bounds), so a
 * missing one fails the build. REDUCE rows have their kernels in reduce.cu. */
#define CU_FLOAT_OPS(E, fn)                                                                        \
    template <typename... A> __device__ __forceinline__ auto op_##E(float a, A... rest) {          \
        return tide_##fn##_f(a, rest...);                                                          \
    }                                                                                              \
    template <typename... A> __device__ __forceinline__ auto op_##E(double a, A... rest) {         \
        return tide_##fn##_d(a, rest...);                                                          \
    }
#define CU_INT_OPS(E, fn)                                                                          \
    template <typename... A> __device__ __forceinline__ auto op_##E(int64_t a, A... rest) {        \
        return tide_##fn##_i64(a, rest...);                                                        \
    }
#define CU_OVERLOAD_ALL(E, fn)      CU_FLOAT_OPS(E, fn) CU_INT_OPS(E, fn)
#define CU_OVERLOAD_FLOAT(E, fn)    CU_FLOAT_OPS(E, fn)
#define CU_OVERLOAD_INTEGRAL(E, fn) CU_INT_OPS(E, fn)
#define CU_OVERLOAD_INTEGER(E, fn)  CU_INT_OPS(E, fn)
#define CU_WRAP(E, fn, dtypes)      CU_OVERLOAD_##dtypes(E, fn)
#define CU_WRAP_BINARY              CU_WRAP
#define CU_WRAP_COMPARE             CU_WRAP
#define CU_WRAP_UNARY               CU_WRAP
#define CU_WRAP_PREDICATE           CU_WRAP
#define CU_WRAP_BOUNDED             CU_WRAP
#define CU_WRAP_REDUCE(E, fn, dtypes)
#define X(E, family, name, fn, dtypes, flags) CU_WRAP_##family(E, fn, dtypes)
#include "tide_ops.def"
#undef X

/* row E runs in the switch of family FAM for compute type C: its overload exists */
#define CU_RUNS(C, FAM, family, dtypes)                                                            \
    (TIDE_FAMILY_##family == FAM &&                                                                \
     (std::is_same<C, int64_t>::value ? !(TIDE_OP_DTYPES_##dtypes & TIDE_OPF_FLOAT_ONLY)           \
                                      : !(TIDE_OP_DTYPES_##dtypes & TIDE_OPF_INTEGER_ONLY)))

template <int FAM, typename R, typename C, typename... A>
__device__ __noinline__ R row_heavy(int op, C a, A... rest);

/* op's row of family FAM on compute type C, with result type R: a case per row, discarded (if
 * constexpr) where the family differs or the overload does not exist. With SPLIT, CHEAP rows are
 * inlined into every kernel and the others are out-of-line calls (row_heavy) shared by the
 * kernels of every dtype: inlined, they multiplied the size of this file's machine code (and its
 * build time) many times over for no measurable gain. The default is unreachable:
 * tide_cuda_binary and tide_cuda_unary refuse an op without a case first (has_kernel). */
template <int FAM, bool SPLIT, typename R, typename C, typename... A>
__device__ __forceinline__ R row_apply(int op, C a, A... rest) {
    switch (op) {
#define X(E, family, name, fn, dtypes, flags)                                                      \
    case TIDE_OP_##E:                                                                              \
        if constexpr (CU_RUNS(C, FAM, family, dtypes)) {                                           \
            if constexpr (SPLIT && !((flags)&TIDE_OPF_CHEAP))                                      \
                return row_heavy<FAM, R>(op, a, rest...);                                          \
            else                                                                                   \
                return op_##E(a, rest...);                                                         \
        }                                                                                          \
        break;
#include "tide_ops.def"
#undef X
    default:
        break;
    }
    return 0;
}

template <int FAM, typename R, typename C, typename... A>
__device__ __noinline__ R row_heavy(int op, C a, A... rest) {
    return row_apply<FAM, false, R>(op, a, rest...);
}

template <typename C> __device__ __forceinline__ C bin_apply(int op, C a, C b) {
    return row_apply<TIDE_FAMILY_BINARY, true, C>(op, a, b);
}
template <typename C> __device__ __forceinline__ uint8_t cmp_apply(int op, C a, C b) {
    return row_apply<TIDE_FAMILY_COMPARE, false, uint8_t>(op, a, b);
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

/* a op s, or s op a (reverse): a BINARY row's result in the dtype, or a COMPARE row's bool. Integer
 * tensors compare in int64 with the scalar as the dtype holds it (scalar_int), as the CPU does:
 * exact beyond 2^53, where a compare in double says 2^53 + 1 == 2^53 (the core compares a
 * fractional or out-of-range scalar in float64: `x < 2.5` never reaches an integer kernel) */
template <int DT, bool CMP> struct scalar_fn {
    typedef typename tide_dt<DT>::T                          T;
    typedef typename tide_dt<DT>::C                          C;
    typedef typename std::conditional<CMP, uint8_t, T>::type R;
    int                                                      op;
    C                                                        s;
    int                                                      reverse;

    __device__ __forceinline__ R operator()(T a) const {
        C x = tide_load<DT>(a);
        if constexpr (CMP)
            return reverse ? cmp_apply(op, s, x) : cmp_apply(op, x, s);
        else
            return tide_store<DT>(reverse ? bin_apply(op, s, x) : bin_apply(op, x, s));
    }
};

template <int DT> struct unary_fn {
    typedef typename tide_dt<DT>::T T;
    typedef typename tide_dt<DT>::C C;
    int                             op;
    __device__ __forceinline__ T    operator()(T a) const {
           return tide_store<DT>(row_apply<TIDE_FAMILY_UNARY, true, C>(op, tide_load<DT>(a)));
    }
};

template <int DT> struct predicate_fn {
    typedef typename tide_dt<DT>::T    T;
    int                                op;
    __device__ __forceinline__ uint8_t operator()(T a) const {
        return row_apply<TIDE_FAMILY_PREDICATE, false, uint8_t>(op, tide_load<DT>(a));
    }
};

template <int DT> struct bounded_fn {
    typedef typename tide_dt<DT>::T T;
    typedef typename tide_dt<DT>::C C;
    int                             op;
    C                               lo, hi;
    __device__ __forceinline__ T    operator()(T a) const {
           return tide_store<DT>(
            row_apply<TIDE_FAMILY_BOUNDED, false, C>(op, tide_load<DT>(a), lo, hi));
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

/* the switches above have a case for op in one of the families fams and for dtype dt: the
 * float dtypes unless the row's DTYPES is INTEGRAL or INTEGER, the integer ones unless it is
 * FLOAT, bool unless it is INTEGER */
static bool has_kernel(tide_op op, tide_dtype dt, tide_op_family f1, tide_op_family f2) {
    tide_op_family f = tide_op_family_of_cuda(op);
    if ((unsigned)op >= TIDE_OP_COUNT || (f != f1 && f != f2))
        return false;
    unsigned flags = tide_cuda_op_flags(op);
    if (tide_dt_is_float_rt(dt))
        return !(flags & TIDE_OPF_INTEGER_ONLY);
    return !(flags & TIDE_OPF_FLOAT_ONLY) && !(dt == TIDE_DTYPE_BOOL && (flags & TIDE_OPF_NO_BOOL));
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
            return tide_map1<scalar_fn<DT, true>, uint8_t, T>(dev, {op, c, reverse}, out, a);
        return tide_map1<scalar_fn<DT, false>, T, T>(dev, {op, c, reverse}, out, a);
    }
};

extern "C" tide_status tide_cuda_binary_scalar(tide_device *dev, tide_op op, const tide_kview *out,
                                               const tide_kview *a, double s, int reverse) {
    if (!has_kernel(op, a->dtype, TIDE_FAMILY_BINARY, TIDE_FAMILY_COMPARE))
        return tide_cuda_notsup(tide_cuda_op_name(op), a->dtype);
    /* a float to the power 2, 0.5, -0.5 or -1: x * x, sqrt, rsqrt, reciprocal, as the CPU's
     * (src/cpu/elementwise.c) and PyTorch's kernels, whose edges differ from pow's (pow(-0, 0.5)
     * is -0, pow(-inf, 0.5) NaN); 3 and -2 keep pow, within its rounding of the CPU's products */
    bool fl = a->dtype == TIDE_DTYPE_F32 || a->dtype == TIDE_DTYPE_F64 ||
              a->dtype == TIDE_DTYPE_F16 || a->dtype == TIDE_DTYPE_BF16;
    if (op == TIDE_OP_POW && !reverse && fl && out->dtype == a->dtype) {
        if (s == 2)
            return tide_cuda_binary(dev, TIDE_OP_MUL, out, a, a);
        tide_op un = s == 0.5    ? TIDE_OP_SQRT
                     : s == -0.5 ? TIDE_OP_RSQRT
                     : s == -1   ? TIDE_OP_RECIPROCAL
                                 : TIDE_OP_POW;
        if (un != TIDE_OP_POW)
            return tide_cuda_unary(dev, un, out, a, NULL);
    }
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
