/* idx.c — the IDX format of MNIST-style datasets, read through zlib (gzipped or plain). */
#include "tide_io.h"
#include "backend.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

struct tide_idx_file {
    gzFile     gz;
    char      *op, *path;
    uint32_t   magic;
    tide_dtype dtype;
    int        ndim;
    int64_t    shape[TIDE_MAX_DIMS];
    int64_t    nbytes; /* of the data that follows the header */
    int        consumed;
};

static uint32_t be32(const unsigned char *b) {
    return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | (uint32_t)b[3];
}

/* Reads exactly n bytes; returns the count read (short on end of file) or -1 on a zlib error. */
static int64_t readall(gzFile gz, void *buf, int64_t n) {
    int64_t got = 0;
    while (got < n) {
        int64_t  left = n - got;
        unsigned chunk = left > (1 << 30) ? (1u << 30) : (unsigned)left;
        int      r = gzread(gz, (char *)buf + got, chunk);
        if (r < 0)
            return -1;
        if (r == 0)
            break;
        got += r;
    }
    return got;
}

static const char *gzmsg(gzFile gz) {
    int         code;
    const char *m = gzerror(gz, &code);
    return code == Z_ERRNO ? strerror(errno) : m;
}

/* type byte -> dtype; 0 when tide has no such dtype */
static int idx_type(unsigned t, tide_dtype *dt) {
    switch (t) {
    case 0x08:
        *dt = TIDE_DTYPE_U8;
        return 1;
    case 0x0C:
        *dt = TIDE_DTYPE_I32;
        return 1;
    case 0x0D:
        *dt = TIDE_DTYPE_F32;
        return 1;
    case 0x0E:
        *dt = TIDE_DTYPE_F64;
        return 1;
    default:
        return 0;
    }
}

tide_status tide_idx_open(const char *op, const char *path, uint32_t expect_magic,
                          tide_idx_file **out) {
    *out = NULL;
    if (!op)
        op = "idx";
    if (!path)
        return tide_seterr(TIDE_EINVAL, "%s: no file name given", op);
    gzFile gz = gzopen(path, "rb");
    if (!gz)
        return tide_seterr(TIDE_EIO, "%s: %s: cannot open: %s; check the path", op, path,
                           errno ? strerror(errno) : "out of memory");
    tide_status   st = TIDE_OK;
    unsigned char head[4 + 4 * 255];
    int64_t       got = readall(gz, head, 4);
    if (got < 0) {
        st = tide_seterr(TIDE_EIO, "%s: %s: read error: %s", op, path, gzmsg(gz));
        goto fail;
    }
    if (got < 4) {
        st = tide_seterr(TIDE_EIO,
                         "%s: %s: truncated: %lld bytes, an IDX header needs at least 4; the "
                         "file is damaged, download it again",
                         op, path, (long long)got);
        goto fail;
    }
    uint32_t   magic = be32(head);
    int        ndim = head[3];
    tide_dtype dt = TIDE_DTYPE_U8;
    if (expect_magic && magic != expect_magic) {
        st = tide_seterr(TIDE_EIO,
                         "%s: %s: bad magic 0x%08x, expected 0x%08x; is this the right IDX "
                         "file (images and labels swapped, or not an IDX file)?",
                         op, path, magic, expect_magic);
        goto fail;
    }
    if (head[0] != 0 || head[1] != 0) {
        st = tide_seterr(TIDE_EIO,
                         "%s: %s: bad magic 0x%08x, an IDX file starts with two zero bytes; "
                         "this is not an IDX file",
                         op, path, magic);
        goto fail;
    }
    if (!idx_type(head[2], &dt)) {
        st = tide_seterr(TIDE_EIO,
                         "%s: %s: bad magic 0x%08x: element type 0x%02x is not supported; "
                         "tide reads 0x08 (uint8), 0x0C (int32), 0x0D (float32), 0x0E (float64)",
                         op, path, magic, head[2]);
        goto fail;
    }
    if (ndim < 1 || ndim > TIDE_MAX_DIMS) {
        st = tide_seterr(TIDE_EIO, "%s: %s: bad magic 0x%08x: %d dims, tide reads 1 to %d", op,
                         path, magic, ndim, TIDE_MAX_DIMS);
        goto fail;
    }
    got = readall(gz, head + 4, 4 * (int64_t)ndim);
    if (got < 0) {
        st = tide_seterr(TIDE_EIO, "%s: %s: read error: %s", op, path, gzmsg(gz));
        goto fail;
    }
    if (got < 4 * ndim) {
        st = tide_seterr(TIDE_EIO,
                         "%s: %s: truncated header: %d dims need %d bytes of sizes, found %lld; "
                         "the file is damaged, download it again",
                         op, path, ndim, 4 * ndim, (long long)got);
        goto fail;
    }
    tide_idx_file *f = calloc(1, sizeof *f);
    if (!f) {
        st = tide_seterr(TIDE_ENOMEM, "%s: out of memory", op);
        goto fail;
    }
    f->gz = gz;
    f->magic = magic;
    f->dtype = dt;
    f->ndim = ndim;
    /* sizes are uint32 each and at most 8 of them: the product can still overflow int64. A zero
     * size empties the data whatever the others are, so it is looked for first */
    int64_t n = (int64_t)tide_dtype_size(dt);
    bool    empty = false;
    for (int i = 0; i < ndim; i++) {
        f->shape[i] = be32(head + 4 + 4 * i);
        empty = empty || f->shape[i] == 0;
    }
    for (int i = 0; i < ndim && !empty; i++) {
        if (__builtin_mul_overflow(n, f->shape[i], &n)) {
            char dims[TIDE_MAX_DIMS * 12 + 3];
            int  k = snprintf(dims, sizeof dims, "[");
            for (int j = 0; j < ndim; j++)
                k += snprintf(dims + k, sizeof dims - (size_t)k, "%s%lld", j ? ", " : "",
                              (long long)f->shape[j]);
            snprintf(dims + k, sizeof dims - (size_t)k, "]");
            free(f);
            st = tide_seterr(TIDE_EIO,
                             "%s: %s: dims %s hold more bytes of %s than fit in 64 bits; not an "
                             "IDX file",
                             op, path, dims, tide_dtype_name(dt));
            goto fail;
        }
    }
    if (empty)
        n = 0;
    f->nbytes = n;
    f->op = strdup(op);
    f->path = strdup(path);
    if (!f->op || !f->path) {
        free(f->op);
        free(f->path);
        free(f);
        st = tide_seterr(TIDE_ENOMEM, "%s: out of memory", op);
        goto fail;
    }
    *out = f;
    return TIDE_OK;
fail:
    gzclose(gz);
    return st;
}

uint32_t tide_idx_magic(const tide_idx_file *f) {
    return f->magic;
}
tide_dtype tide_idx_dtype(const tide_idx_file *f) {
    return f->dtype;
}
int tide_idx_ndim(const tide_idx_file *f) {
    return f->ndim;
}
const int64_t *tide_idx_shape(const tide_idx_file *f) {
    return f->shape;
}

/* IDX is big-endian; swap elements wider than a byte in place */
static void to_host_order(void *data, int64_t nbytes, size_t size) {
    unsigned char *p = data;
    if (size == 1)
        return;
    for (int64_t i = 0; i + (int64_t)size <= nbytes; i += (int64_t)size)
        for (size_t a = 0, b = size - 1; a < b; a++, b--) {
            unsigned char c = p[i + (int64_t)a];
            p[i + (int64_t)a] = p[i + (int64_t)b];
            p[i + (int64_t)b] = c;
        }
}

tide_status tide_idx_read(tide_idx_file *f, tide_tensor *dst) {
    const char *op = f->op;
    if (!dst)
        return tide_seterr(TIDE_EINVAL, "%s: %s: no destination tensor", op, f->path);
    if (f->consumed)
        return tide_seterr(TIDE_EINVAL, "%s: %s: already read; open the file again", op, f->path);
    if (tide_device_type_of(tide_tensor_device(dst)) != TIDE_DEVICE_CPU ||
        !tide_tensor_is_contiguous(dst))
        return tide_seterr(TIDE_EDEVICE,
                           "%s: %s: destination must be a contiguous tensor on a CPU device, "
                           "found %s",
                           op, f->path, tide_device_name(tide_tensor_device(dst)));
    int ok = tide_tensor_dtype(dst) == f->dtype && tide_tensor_ndim(dst) == f->ndim;
    for (int i = 0; ok && i < f->ndim; i++)
        ok = tide_tensor_shape(dst)[i] == f->shape[i];
    if (!ok)
        return tide_seterr(TIDE_ESHAPE,
                           "%s: %s: destination is a %dd %s tensor, the file holds a %dd %s one "
                           "of another shape; make it with tide_idx_shape/tide_idx_dtype",
                           op, f->path, tide_tensor_ndim(dst),
                           tide_dtype_name(tide_tensor_dtype(dst)), f->ndim,
                           tide_dtype_name(f->dtype));
    f->consumed = 1;
    int64_t got = readall(f->gz, tide_tensor_data(dst), f->nbytes);
    if (got < 0)
        return tide_seterr(TIDE_EIO, "%s: %s: read error: %s; the file is damaged", op, f->path,
                           gzmsg(f->gz));
    if (got < f->nbytes)
        return tide_seterr(TIDE_EIO,
                           "%s: %s: truncated: the header promises %lld bytes of data, found "
                           "%lld; the file is damaged, download it again",
                           op, f->path, (long long)f->nbytes, (long long)got);
    unsigned char extra;
    int           r = gzread(f->gz, &extra, 1);
    if (r < 0)
        return tide_seterr(TIDE_EIO, "%s: %s: read error: %s; the file is damaged", op, f->path,
                           gzmsg(f->gz));
    if (r > 0)
        return tide_seterr(TIDE_EIO,
                           "%s: %s: trailing data after the %lld bytes the header promises; "
                           "the dims in the header are wrong",
                           op, f->path, (long long)f->nbytes);
    to_host_order(tide_tensor_data(dst), f->nbytes, tide_dtype_size(f->dtype));
    return TIDE_OK;
}

void tide_idx_close(tide_idx_file *f) {
    if (!f)
        return;
    gzclose(f->gz);
    free(f->op);
    free(f->path);
    free(f);
}
