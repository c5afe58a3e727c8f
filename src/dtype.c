/* dtype.c — dtype and op tables generated from the X-macros, and type promotion. */
#include "tide_impl.h"

#include <string.h>

static const char *const dtype_names[] = {
#define X(e, ctype, name) name,
    TIDE_DTYPES(X)
#undef X
};

static const size_t dtype_sizes[] = {
#define X(e, ctype, name) sizeof(ctype),
    TIDE_DTYPES(X)
#undef X
};

const char *tide_dtype_name(tide_dtype dt) {
    return (unsigned)dt < TIDE_DTYPE_COUNT ? dtype_names[dt] : "invalid";
}

size_t tide_dtype_size(tide_dtype dt) {
    return (unsigned)dt < TIDE_DTYPE_COUNT ? dtype_sizes[dt] : 0;
}

static _Atomic int default_float = TIDE_DTYPE_F32;

tide_status tide_set_default_float(tide_dtype dt) {
    if (dt != TIDE_DTYPE_F32 && dt != TIDE_DTYPE_F64)
        return tide_seterr(TIDE_EINVAL,
                           "set_default_dtype: the default dtype is \"float32\" or \"float64\", "
                           "got %s",
                           tide_dtype_name(dt));
    default_float = dt;
    return TIDE_OK;
}

tide_dtype tide_default_float(void) {
    return (tide_dtype)default_float;
}

int tide_dtype_is_float(tide_dtype dt) {
    return dt == TIDE_DTYPE_F32 || dt == TIDE_DTYPE_F64 || dt == TIDE_DTYPE_F16 ||
           dt == TIDE_DTYPE_BF16;
}

tide_status tide_dtype_from_name(const char *name, tide_dtype *out) {
    for (int i = 0; i < TIDE_DTYPE_COUNT; i++)
        if (name && strcmp(name, dtype_names[i]) == 0) {
            *out = (tide_dtype)i;
            return TIDE_OK;
        }
    return tide_seterr(TIDE_EDTYPE,
                       "dtype: unknown dtype \"%s\"; use one of float32, float64, float16, "
                       "bfloat16, int32, int64, uint8, bool",
                       name ? name : "(null)");
}

/* bool < uint8 < int32 < int64 < float16/bfloat16 < float32 < float64 */
static int rank(tide_dtype dt) {
    switch (dt) {
    case TIDE_DTYPE_BOOL:
        return 0;
    case TIDE_DTYPE_U8:
        return 1;
    case TIDE_DTYPE_I32:
        return 2;
    case TIDE_DTYPE_I64:
        return 3;
    case TIDE_DTYPE_F16:
    case TIDE_DTYPE_BF16:
        return 4;
    case TIDE_DTYPE_F32:
        return 5;
    case TIDE_DTYPE_F64:
        return 6;
    default:
        return -1;
    }
}

tide_dtype tide_promote(tide_dtype a, tide_dtype b) {
    if (a == b)
        return a;
    int ra = rank(a), rb = rank(b);
    if (ra == rb) /* float16 with bfloat16: neither holds the other */
        return TIDE_DTYPE_F32;
    return ra > rb ? a : b;
}

/* bool 0, the integers 1, the floats 2 */
static int kind(tide_dtype dt) {
    return dt == TIDE_DTYPE_BOOL ? 0 : tide_dtype_is_float(dt) ? 2 : 1;
}

/* PyTorch's dimension categories: tensors with dims promote among themselves; a 0-d tensor
 * beside them (x * torch.tensor(0.5, dtype=float64) stays float32, a float16 model's
 * h * logit_scale.exp() float16) counts only when of a higher kind (int32 + a float64 0-d is
 * float64), as a number does */
tide_dtype tide_promote_operands(const tide_tensor *a, const tide_tensor *b) {
    bool za = a->ndim == 0, zb = b->ndim == 0;
    if (za == zb)
        return tide_promote(a->dtype, b->dtype);
    tide_dtype dims = za ? b->dtype : a->dtype, zero = za ? a->dtype : b->dtype;
    return kind(zero) > kind(dims) ? zero : dims;
}

/* ---- ops ---------------------------------------------------------------------------------- */

static const char *const op_names[] = {
#define X(e, family, name, ...) name,
#include "tide_ops.def"
#undef X
};

static const tide_op_family op_families[] = {
#define X(e, family, ...) TIDE_FAMILY_##family,
#include "tide_ops.def"
#undef X
};

static const unsigned op_flags[] = {
#define X(e, family, name, fn, dtypes, flags) (flags) | TIDE_OP_DTYPES_##dtypes,
#include "tide_ops.def"
#undef X
};

const char *tide_op_name(tide_op op) {
    return (unsigned)op < TIDE_OP_COUNT ? op_names[op] : "op";
}

tide_op_family tide_op_family_of(tide_op op) {
    return (unsigned)op < TIDE_OP_COUNT ? op_families[op] : TIDE_FAMILY_UNARY;
}

unsigned tide_op_flags(tide_op op) {
    return (unsigned)op < TIDE_OP_COUNT ? op_flags[op] : 0;
}

int tide_op_is_elementwise(tide_op op) {
    return (unsigned)op < TIDE_OP_COUNT && op_families[op] != TIDE_FAMILY_REDUCE;
}

int tide_op_arity(tide_op op) {
    tide_op_family f = tide_op_family_of(op);
    return f == TIDE_FAMILY_BINARY || f == TIDE_FAMILY_COMPARE ? 2 : 1;
}
