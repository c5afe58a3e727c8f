/* fake_backend.c — a loadable backend that lives wholly in this file: the proof, for
 * spec/c/test_backend_plugin.c, that a new backend needs no change to the core. Its device memory
 * is host memory from malloc; it has two devices, byte copies to and from the host, a
 * synchronize, and pinned host memory of its own. Every other vtable entry is NULL (the core
 * answers "not implemented on fake:N"). It frees only blocks it allocated (a foreign pointer
 * aborts), and counts what it did for the test (fake_backend_counts).
 *
 * Built by the Makefile into build/fake_backend/libtide_fake.so (and, with FAKE_NO_COPY, into
 * libtide_fake_nocopy.so, which the loader must refuse); registered by the test with
 * tide_backend_register("fake", <that path>, "tide_fake_backend", &type). */
#include "backend.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

/* every block starts with a header saying who made it */
#define MAGIC_DEVICE 0x66616b65646576ULL /* "fakedev" */
#define MAGIC_PINNED 0x66616b6570696eULL /* "fakepin" */
typedef struct header {
    unsigned long long magic;
    size_t             bytes;
    int                device;
    int                pad;
} header;

typedef struct fake_counts {
    int allocs, frees, pinned_allocs, pinned_frees, to_host, from_host, syncs;
} fake_counts;

static fake_counts    counts;
static tide_seterr_fn seterr;

static void *block(unsigned long long magic, size_t bytes, int device) {
    header *h = malloc(sizeof(header) + bytes);
    if (!h)
        return NULL;
    h->magic = magic;
    h->bytes = bytes;
    h->device = device;
    return h + 1;
}

/* the header of a block this backend made with magic, or abort */
static header *own(void *ptr, unsigned long long magic) {
    header *h = (header *)ptr - 1;
    if (h->magic != magic) {
        fprintf(stderr, "fake backend: asked to free %p, which it did not allocate\n", ptr);
        abort();
    }
    return h;
}

static tide_status fake_alloc(tide_device *dev, size_t bytes, void **ptr) {
    *ptr = block(MAGIC_DEVICE, bytes, dev->index);
    if (!*ptr)
        return seterr(TIDE_ENOMEM, "fake: out of memory allocating %zu bytes", bytes);
    counts.allocs++;
    return TIDE_OK;
}

static void fake_free(tide_device *dev, void *ptr, size_t bytes) {
    header *h = own(ptr, MAGIC_DEVICE);
    if (h->device != dev->index || h->bytes != bytes) {
        fprintf(stderr, "fake backend: block of fake:%d (%zu bytes) freed as fake:%d (%zu)\n",
                h->device, h->bytes, dev->index, bytes);
        abort();
    }
    h->magic = 0;
    free(h);
    counts.frees++;
}

static tide_status fake_to_host(tide_device *dev, void *dst, const void *src, size_t bytes,
                                int non_blocking) {
    (void)dev;
    (void)non_blocking;
    memcpy(dst, src, bytes);
    counts.to_host++;
    return TIDE_OK;
}

__attribute__((unused)) static tide_status
fake_from_host(tide_device *dev, void *dst, const void *src, size_t bytes, int non_blocking) {
    (void)dev;
    (void)non_blocking;
    memcpy(dst, src, bytes);
    counts.from_host++;
    return TIDE_OK;
}

static tide_status fake_synchronize(tide_device *dev) {
    (void)dev;
    counts.syncs++;
    return TIDE_OK;
}

static tide_status fake_alloc_pinned(size_t bytes, void **ptr) {
    *ptr = block(MAGIC_PINNED, bytes, -1);
    if (!*ptr)
        return seterr(TIDE_ENOMEM, "fake: out of pinned memory allocating %zu bytes", bytes);
    counts.pinned_allocs++;
    return TIDE_OK;
}

static void fake_free_pinned(void *ptr) {
    header *h = own(ptr, MAGIC_PINNED);
    h->magic = 0;
    free(h);
    counts.pinned_frees++;
}

static const tide_backend fake = {
    .name = "fake",
    .alloc = fake_alloc,
    .free = fake_free,
    .copy_to_host = fake_to_host,
#ifndef FAKE_NO_COPY /* a backend lacking one of the four entries every backend needs */
    .copy_from_host = fake_from_host,
#endif
    .synchronize = fake_synchronize,
    .alloc_pinned = fake_alloc_pinned,
    .free_pinned = fake_free_pinned,
};

EXPORT int tide_fake_backend_abi(void);
EXPORT int tide_fake_backend_abi(void) {
    return TIDE_BACKEND_ABI;
}

EXPORT tide_status tide_fake_backend_open(tide_seterr_fn fn, const tide_backend **backend,
                                          int *count);
EXPORT tide_status tide_fake_backend_open(tide_seterr_fn fn, const tide_backend **backend,
                                          int *count) {
    seterr = fn;
    *backend = &fake;
    *count = 2;
    return TIDE_OK;
}

/* for the test, which opens this library again (the same copy the core loaded) */
EXPORT void fake_backend_counts(fake_counts *out);
EXPORT void fake_backend_counts(fake_counts *out) {
    *out = counts;
}
