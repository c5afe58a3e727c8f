/*
 * tide_dlpack.h — zero-copy exchange of tensors with other frameworks through DLPack's
 * DLManagedTensor (https://dmlc.github.io/dlpack/latest/c_api.html).
 *
 * The DLPack types come from <dlpack/dlpack.h> when a host already included one (any version:
 * DLManagedTensor is the same ABI from 0.6 to 1.x) or when it is installed (Debian:
 * libdlpack-dev, which ships 0.6). Otherwise this header declares the DLPack v0.8 ABI itself,
 * transcribed from the spec's dlpack.h (v0.8, 2023): same names, same layout.
 */
#ifndef TIDE_DLPACK_H
#define TIDE_DLPACK_H

#include "tide.h"

/* TIDE_DLPACK_OWN forces the declarations below (used to test them) */
#if !defined(DLPACK_VERSION) && !defined(DLPACK_MAJOR_VERSION) && !defined(TIDE_DLPACK_OWN) &&     \
    defined(__has_include)
#if __has_include(<dlpack/dlpack.h>)
#include <dlpack/dlpack.h>
#endif
#endif

#if !defined(DLPACK_VERSION) && !defined(DLPACK_MAJOR_VERSION)
#define DLPACK_VERSION 80
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    kDLCPU = 1,
    kDLCUDA = 2,
    kDLCUDAHost = 3, /* pinned host memory from cudaMallocHost */
    kDLOpenCL = 4,
    kDLVulkan = 7,
    kDLMetal = 8,
    kDLVPI = 9,
    kDLROCM = 10,
    kDLROCMHost = 11,
    kDLExtDev = 12,
    kDLCUDAManaged = 13,
    kDLOneAPI = 14,
    kDLWebGPU = 15,
    kDLHexagon = 16,
} DLDeviceType;

typedef struct {
    DLDeviceType device_type;
    int32_t      device_id;
} DLDevice;

typedef enum {
    kDLInt = 0U,
    kDLUInt = 1U,
    kDLFloat = 2U,
    kDLOpaqueHandle = 3U,
    kDLBfloat = 4U,
    kDLComplex = 5U,
    kDLBool = 6U,
} DLDataTypeCode;

typedef struct {
    uint8_t  code;  /* DLDataTypeCode */
    uint8_t  bits;  /* 8, 16, 32, 64 */
    uint16_t lanes; /* 1 for scalars */
} DLDataType;

typedef struct {
    void      *data; /* device pointer; the first element is at (char *)data + byte_offset */
    DLDevice   device;
    int32_t    ndim;
    DLDataType dtype;
    int64_t   *shape;
    int64_t   *strides; /* in elements; NULL means compact row-major */
    uint64_t   byte_offset;
} DLTensor;

typedef struct DLManagedTensor {
    DLTensor dl_tensor;
    void    *manager_ctx; /* the producer's */
    /* called once by the consumer when it no longer needs the tensor */
    void (*deleter)(struct DLManagedTensor *self);
} DLManagedTensor;

#ifdef __cplusplus
}
#endif
#endif /* own DLPack declarations */

/* kDLBool arrived in DLPack 0.8; older headers (Debian's 0.6) lack the name, not the value. */
#define TIDE_DL_BOOL 6

TIDE_API_BEGIN

/* Export: a DLManagedTensor viewing t's memory (no copy) that holds its own reference to t.
 * The consumer calls (*out)->deleter(*out) exactly once when done; t may be released before. */
tide_status tide_tensor_to_dlpack(tide_tensor *t, DLManagedTensor **out);

/* Import: a tensor over m's memory (no copy), through tide_tensor_from_blob. On success tide owns
 * m and calls m->deleter(m) once, when the last reference to the memory goes. On failure m is
 * untouched and still the caller's. ctx may be NULL (the default context). Refused beyond
 * from_blob's checks: a byte_offset that is not a multiple of the element size, or that wraps
 * the pointer around the address space. */
tide_status tide_tensor_from_dlpack(tide_ctx *ctx, DLManagedTensor *m, tide_tensor **out);

TIDE_API_END
#endif /* TIDE_DLPACK_H */
