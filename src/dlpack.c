/*
 * dlpack.c — DLPack export and import (zero-copy), on top of tide_tensor_from_blob.
 *
 * Export hands out a DLManagedTensor that owns one reference to the tensor; import wraps the
 * producer's memory with from_blob, whose deleter calls the producer's deleter. Both follow
 * PyTorch's conventions so that either side may be PyTorch: data points at the first element
 * (byte_offset 0) and strides are always given.
 */
#include "tide_dlpack.h"
#include "tide_impl.h"
#include <stdlib.h>

/* ---- dtypes ------------------------------------------------------------------------------- */

static DLDataType dl_dtype(tide_dtype dt) {
    DLDataType d = {.code = kDLFloat, .bits = (uint8_t)(8 * tide_dtype_size(dt)), .lanes = 1};
    switch (dt) {
    case TIDE_DTYPE_BF16:
        d.code = kDLBfloat;
        break;
    case TIDE_DTYPE_I32:
    case TIDE_DTYPE_I64:
        d.code = kDLInt;
        break;
    case TIDE_DTYPE_U8:
        d.code = kDLUInt;
        break;
    case TIDE_DTYPE_BOOL:
        d.code = TIDE_DL_BOOL;
        break;
    default: /* F32, F64, F16 */
        break;
    }
    return d;
}

static tide_status dtype_of_dl(DLDataType d, tide_dtype *out) {
    tide_dtype dt = TIDE_DTYPE_COUNT;
    if (d.lanes == 1) {
        switch (d.code) {
        case kDLFloat:
            dt = d.bits == 32   ? TIDE_DTYPE_F32
                 : d.bits == 64 ? TIDE_DTYPE_F64
                 : d.bits == 16 ? TIDE_DTYPE_F16
                                : dt;
            break;
        case kDLBfloat:
            dt = d.bits == 16 ? TIDE_DTYPE_BF16 : dt;
            break;
        case kDLInt:
            dt = d.bits == 32 ? TIDE_DTYPE_I32 : d.bits == 64 ? TIDE_DTYPE_I64 : dt;
            break;
        case kDLUInt:
            dt = d.bits == 8 ? TIDE_DTYPE_U8 : dt;
            break;
        case TIDE_DL_BOOL:
            dt = d.bits == 8 ? TIDE_DTYPE_BOOL : dt;
            break;
        default:
            break;
        }
    }
    if (dt == TIDE_DTYPE_COUNT)
        return tide_seterr(TIDE_EDTYPE,
                           "from_dlpack: DLPack dtype (code %u, bits %u, lanes %u) has no tide "
                           "dtype; convert it to float32/float64/float16/bfloat16/int32/int64/"
                           "uint8/bool before export",
                           (unsigned)d.code, (unsigned)d.bits, (unsigned)d.lanes);
    *out = dt;
    return TIDE_OK;
}

/* ---- devices ------------------------------------------------------------------------------ */

static tide_status device_of_dl(DLDevice d, tide_device **out) {
    tide_device_type type;
    int              index = (int)d.device_id;
    int              kind = tide_device_type_of_dlpack((int)d.device_type, &type);
    if (kind == 2) /* a backend's pinned host memory is host memory */
        index = 0;
    if (kind == 0)
        return tide_seterr(TIDE_EDEVICE,
                           "from_dlpack: DLPack device type %d (id %d) is not supported; tide "
                           "takes kDLCPU memory and that of its backends' devices",
                           (int)d.device_type, (int)d.device_id);
    int         count = tide_device_count(type);
    const char *name = tide_device_type_name(type);
    if (index < 0 || index >= count)
        return tide_seterr(TIDE_EDEVICE,
                           "from_dlpack: DLPack device %s:%d does not exist here (%d %s "
                           "device%s); copy the tensor to an available device first",
                           name, index, count, name, count == 1 ? "" : "s");
    return tide_device_get_index(type, index, out);
}

/* ---- export ------------------------------------------------------------------------------- */

typedef struct exported {
    DLManagedTensor m; /* first, so the consumer's pointer is ours */
    tide_tensor    *t; /* the reference the consumer holds */
    int64_t         shape[TIDE_MAX_DIMS];
    int64_t         strides[TIDE_MAX_DIMS];
} exported;

static void export_deleter(DLManagedTensor *m) {
    exported *e = (exported *)m->manager_ctx;
    tide_tensor_release(e->t);
    free(e);
}

tide_status tide_tensor_to_dlpack(tide_tensor *t, DLManagedTensor **out) {
    if (!t || !out)
        return tide_seterr(TIDE_EINVAL, "to_dlpack: tensor and out must not be NULL");
    if (!tide_device_dlpack_code(tide_tensor_device(t)))
        return tide_seterr(TIDE_ENOTSUP,
                           "to_dlpack: %s has no DLPack device type; copy the tensor to the cpu "
                           "first",
                           tide_device_name(tide_tensor_device(t)));
    exported *e = calloc(1, sizeof *e);
    if (!e)
        return tide_seterr(TIDE_ENOMEM, "to_dlpack: out of host memory for the DLPack header");
    int                  ndim = tide_tensor_ndim(t);
    const tide_device   *dev = tide_tensor_device(t);
    const int64_t *const shape = tide_tensor_shape(t), *const strides = tide_tensor_strides(t);
    for (int i = 0; i < ndim; i++) {
        e->shape[i] = shape[i];
        e->strides[i] = strides[i];
    }
    tide_tensor_retain(t);
    e->t = t;
    e->m.dl_tensor.data = tide_tensor_data(t);
    e->m.dl_tensor.device.device_type = (DLDeviceType)tide_device_dlpack_code(dev);
    e->m.dl_tensor.device.device_id = tide_device_index(dev);
    e->m.dl_tensor.ndim = ndim;
    e->m.dl_tensor.dtype = dl_dtype(tide_tensor_dtype(t));
    e->m.dl_tensor.shape = e->shape;
    e->m.dl_tensor.strides = e->strides;
    e->m.dl_tensor.byte_offset = 0;
    e->m.manager_ctx = e;
    e->m.deleter = export_deleter;
    *out = &e->m;
    return TIDE_OK;
}

/* ---- import ------------------------------------------------------------------------------- */

static void import_deleter(void *ud) {
    DLManagedTensor *m = ud;
    if (m->deleter)
        m->deleter(m);
}

tide_status tide_tensor_from_dlpack(tide_ctx *ctx, DLManagedTensor *m, tide_tensor **out) {
    if (!m || !out)
        return tide_seterr(TIDE_EINVAL, "from_dlpack: tensor and out must not be NULL");
    const DLTensor *d = &m->dl_tensor;
    if (d->ndim < 0 || d->ndim > TIDE_MAX_DIMS)
        return tide_seterr(TIDE_ESHAPE,
                           "from_dlpack: %d dims, tide takes 0 to %d; reshape it before export",
                           (int)d->ndim, TIDE_MAX_DIMS);
    if (d->ndim > 0 && !d->shape)
        return tide_seterr(TIDE_EINVAL,
                           "from_dlpack: shape is NULL for a %d-dim tensor; a "
                           "DLPack producer must give the shape",
                           (int)d->ndim);
    /* checked here too so that messages name from_dlpack, not from_blob */
    for (int i = 0; i < d->ndim; i++) {
        if (d->shape[i] < 0)
            return tide_seterr(TIDE_ESHAPE, "from_dlpack: size %lld at dim %d is negative",
                               (long long)d->shape[i], i + 1);
        if (d->strides && d->strides[i] < 0)
            return tide_seterr(TIDE_EINVAL,
                               "from_dlpack: stride %lld at dim %d is negative; tide takes "
                               "non-negative strides: make the tensor contiguous before export",
                               (long long)d->strides[i], i + 1);
    }
    tide_dtype   dt = TIDE_DTYPE_F32;
    tide_device *dev = NULL;
    TIDE_TRY(dtype_of_dl(d->dtype, &dt));
    TIDE_TRY(device_of_dl(d->device, &dev));
    /* byte_offset leads to the first element: it must keep it aligned and stay in the address
     * space (from_blob's checks below see only the pointer it gives) */
    size_t es = tide_dtype_size(dt);
    if (d->byte_offset % es)
        return tide_seterr(TIDE_EINVAL,
                           "from_dlpack: byte_offset %llu is not a multiple of the %zu-byte "
                           "elements of %s; the producer must give an aligned first element",
                           (unsigned long long)d->byte_offset, es, tide_dtype_name(dt));
    if (d->data && d->byte_offset > UINTPTR_MAX - (uintptr_t)d->data)
        return tide_seterr(TIDE_EINVAL,
                           "from_dlpack: data %p + byte_offset %llu wraps around the address "
                           "space",
                           d->data, (unsigned long long)d->byte_offset);
    void *data = d->data ? (char *)d->data + d->byte_offset : NULL;
    TIDE_TRY(tide_blob_check("from_dlpack", data, dt, (int)d->ndim, d->shape, d->strides));
    /* from_blob validates again, and on failure does not call the deleter */
    return tide_tensor_from_blob(ctx, data, dt, (int)d->ndim, d->shape, d->strides, dev,
                                 import_deleter, m, out);
}
