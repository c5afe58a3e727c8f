/*
 * tide_io.h — file formats: IDX (MNIST-style datasets, gzipped or not) and safetensors
 * checkpoints. C API beside tide.h; no Lua here.
 *
 * Reading is two-step so that a caller (the Lua binding, a C host) allocates the destination
 * tensors itself: open() reads and validates the whole header and returns a handle describing
 * what the file holds; read() fills a host tensor of exactly that shape and dtype; close()
 * frees the handle. A file that open() accepts cannot make read() write out of bounds.
 * Errors read "tide: <op>: <file>: <fault>; <fix>", <op> being the caller's name for IDX
 * ("fashion_mnist") and save, and "load" for reading checkpoints.
 */
#ifndef TIDE_IO_H
#define TIDE_IO_H

#include "tide.h"

TIDE_API_BEGIN

/* ---- IDX ---------------------------------------------------------------------------------- */

/* Big-endian header: two zero bytes, a type byte, a dims byte, then dims uint32 sizes.
 * Types read: 0x08 uint8, 0x0C int32, 0x0D float32, 0x0E float64 (converted to host order). */
typedef struct tide_idx_file tide_idx_file;

/* expect_magic: 0 accepts any supported type; else the exact 32-bit magic (0x00000803 for
 * Fashion-MNIST images, 0x00000801 for labels). gzip is detected from the content. */
tide_status    tide_idx_open(const char *op, const char *path, uint32_t expect_magic,
                             tide_idx_file **out);
uint32_t       tide_idx_magic(const tide_idx_file *f);
tide_dtype     tide_idx_dtype(const tide_idx_file *f);
int            tide_idx_ndim(const tide_idx_file *f);
const int64_t *tide_idx_shape(const tide_idx_file *f);
/* dst: contiguous, on a CPU device, with the file's dtype and shape. Fails on a truncated file
 * or trailing bytes; dst is then unspecified (the caller made it and drops it). */
tide_status tide_idx_read(tide_idx_file *f, tide_tensor *dst);
void        tide_idx_close(tide_idx_file *f); /* NULL is fine */

/* ---- safetensors -------------------------------------------------------------------------- */

/* Format: 8-byte little-endian header length N, N bytes of JSON
 * {"name": {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}, ...,
 *  "__metadata__": {"key": "value"}}, then the data, offsets relative to its start. */
typedef struct tide_st_file tide_st_file;

/* Validates everything before anything is allocated for the tensors: header size against the
 * file size, JSON, known dtypes, shapes (non-negative integers, at most TIDE_MAX_DIMS, no
 * overflow), offsets in range, matching shape x dtype, contiguous and non-overlapping, covering
 * the data exactly. */
tide_status    tide_st_open(const char *path, tide_st_file **out); /* errors: "load: ..." */
int            tide_st_count(const tide_st_file *f);
const char    *tide_st_name(const tide_st_file *f, int i); /* in file-offset order */
tide_dtype     tide_st_dtype(const tide_st_file *f, int i);
int            tide_st_ndim(const tide_st_file *f, int i);
const int64_t *tide_st_shape(const tide_st_file *f, int i);
int            tide_st_metadata_count(const tide_st_file *f);
const char    *tide_st_metadata_key(const tide_st_file *f, int i);
const char    *tide_st_metadata_value(const tide_st_file *f, int i);
/* dst: contiguous, on a CPU device, with tensor i's dtype and shape */
tide_status tide_st_read(tide_st_file *f, int i, tide_tensor *dst);
void        tide_st_close(tide_st_file *f); /* NULL is fine */

/* Writes n tensors (any device, any strides: copied to the host as needed) and optional
 * string metadata. Names must be distinct and not "__metadata__". The file is written to a
 * temporary name and renamed, so a failed save leaves no partial file at path. */
tide_status tide_st_save(tide_ctx *ctx, const char *op, const char *path, int n,
                         const char *const *names, const tide_tensor *const *tensors, int nmeta,
                         const char *const *meta_keys, const char *const *meta_values);

/* The safetensors name of a dtype ("F32", "BF16", "BOOL"), and back. */
const char *tide_st_dtype_name(tide_dtype dt);
tide_status tide_st_dtype_from_name(const char *name, tide_dtype *out); /* EINVAL, no message */

TIDE_API_END
#endif /* TIDE_IO_H */
