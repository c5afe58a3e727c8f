/* test_io.c — the IDX reader and the safetensors reader/writer (include/tide_io.h), on tiny
 * hand-made files: valid, gzipped, truncated, bad magic, and every malformed-header case. */
#include "tide.h"
#include "tide_io.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

static int  passed, failed;
static char dir[64];

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (cond)                                                                                  \
            passed++;                                                                              \
        else {                                                                                     \
            failed++;                                                                              \
            fprintf(stderr, "%s:%d: check failed: %s (last error: %s)\n", __FILE__, __LINE__,      \
                    #cond, tide_errmsg());                                                         \
        }                                                                                          \
    } while (0)

static const char *tmp(const char *name) {
    static char buf[8][160];
    static int  k;
    k = (k + 1) % 8;
    snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
    return buf[k];
}

static void write_file(const char *path, const void *data, size_t n) {
    FILE *fp = fopen(path, "wb");
    if (!fp || fwrite(data, 1, n, fp) != n) {
        perror(path);
        exit(2);
    }
    fclose(fp);
}

static void write_gz(const char *path, const void *data, size_t n) {
    gzFile gz = gzopen(path, "wb");
    if (!gz || gzwrite(gz, data, (unsigned)n) != (int)n) {
        perror(path);
        exit(2);
    }
    gzclose(gz);
}

static int has(const char *needle) {
    return strstr(tide_errmsg(), needle) != NULL;
}

/* ---- IDX ---------------------------------------------------------------------------------- */

/* magic 0x00000803, dims [2, 2, 3], 12 bytes 0..11 */
static const unsigned char idx_u8[] = {0, 0, 8, 3, 0, 0, 0, 2, 0, 0, 0, 2, 0,  0,
                                       0, 3, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};

static tide_tensor *idx_load(const char *path, uint32_t magic, tide_status *st) {
    tide_idx_file *f = NULL;
    tide_tensor   *t = NULL;
    *st = tide_idx_open("fashion_mnist", path, magic, &f);
    if (*st != TIDE_OK)
        return NULL;
    tide_device *cpu;
    tide_device_get("cpu", &cpu);
    *st = tide_tensor_empty(NULL, cpu, tide_idx_dtype(f), tide_idx_ndim(f), tide_idx_shape(f), &t);
    if (*st == TIDE_OK)
        *st = tide_idx_read(f, t);
    tide_idx_close(f);
    if (*st != TIDE_OK) {
        tide_tensor_release(t);
        return NULL;
    }
    return t;
}

static void test_idx_valid(void) {
    const char *plain = tmp("u8-idx3-ubyte"), *gz = tmp("u8-idx3-ubyte.gz");
    write_file(plain, idx_u8, sizeof idx_u8);
    write_gz(gz, idx_u8, sizeof idx_u8);
    const char *paths[] = {plain, gz};
    for (int k = 0; k < 2; k++) {
        tide_status  st;
        tide_tensor *t = idx_load(paths[k], 0x803, &st);
        CHECK(st == TIDE_OK && t);
        if (!t)
            continue;
        CHECK(tide_tensor_dtype(t) == TIDE_DTYPE_U8);
        CHECK(tide_tensor_ndim(t) == 3);
        CHECK(tide_tensor_shape(t)[0] == 2 && tide_tensor_shape(t)[1] == 2 &&
              tide_tensor_shape(t)[2] == 3);
        const unsigned char *d = tide_tensor_data(t);
        CHECK(d[0] == 0 && d[5] == 5 && d[11] == 11);
        tide_tensor_release(t);
    }
}

static void test_idx_int32_big_endian(void) {
    /* magic 0x00000C01, [3]: 1, -2, 258 big-endian */
    const unsigned char b[] = {0, 0, 0x0C, 1,    0,    0,    0, 3, 0, 0,
                               0, 1, 0xFF, 0xFF, 0xFF, 0xFE, 0, 0, 1, 2};
    write_file(tmp("i32-idx1"), b, sizeof b);
    tide_status  st;
    tide_tensor *t = idx_load(tmp("i32-idx1"), 0, &st);
    CHECK(st == TIDE_OK && t);
    if (t) {
        const int32_t *d = tide_tensor_data(t);
        CHECK(tide_tensor_dtype(t) == TIDE_DTYPE_I32);
        CHECK(d[0] == 1 && d[1] == -2 && d[2] == 258);
        tide_tensor_release(t);
    }
}

static void test_idx_faults(void) {
    tide_status st;
    /* labels file given where images are expected */
    const unsigned char lab[] = {0, 0, 8, 1, 0, 0, 0, 2, 3, 7};
    write_file(tmp("labels"), lab, sizeof lab);
    CHECK(!idx_load(tmp("labels"), 0x803, &st) && st == TIDE_EIO);
    CHECK(has("tide: fashion_mnist: ") && has("labels: bad magic 0x00000801, expected 0x00000803"));
    /* the same file is fine as labels */
    tide_tensor *t = idx_load(tmp("labels"), 0x801, &st);
    CHECK(t && ((unsigned char *)tide_tensor_data(t))[1] == 7);
    tide_tensor_release(t);

    /* not an IDX file at all */
    write_file(tmp("text"), "hello world\n", 12);
    CHECK(!idx_load(tmp("text"), 0, &st) && st == TIDE_EIO && has("bad magic 0x68656c6c"));

    /* int16 exists in IDX but not in tide */
    const unsigned char i16[] = {0, 0, 0x0B, 1, 0, 0, 0, 1, 0, 5};
    write_file(tmp("i16"), i16, sizeof i16);
    CHECK(!idx_load(tmp("i16"), 0, &st) && has("element type 0x0b is not supported"));

    /* data shorter than the header promises (plain and gzipped) */
    write_file(tmp("short"), idx_u8, sizeof idx_u8 - 2);
    CHECK(!idx_load(tmp("short"), 0x803, &st) && st == TIDE_EIO);
    CHECK(has("truncated: the header promises 12 bytes of data, found 10"));
    write_gz(tmp("short.gz"), idx_u8, sizeof idx_u8 - 2);
    CHECK(!idx_load(tmp("short.gz"), 0x803, &st) && has("truncated"));

    /* header cut inside the sizes, and inside the magic */
    write_file(tmp("cut"), idx_u8, 10);
    CHECK(!idx_load(tmp("cut"), 0x803, &st) && has("truncated header"));
    write_file(tmp("cut3"), idx_u8, 3);
    CHECK(!idx_load(tmp("cut3"), 0, &st) && has("truncated: 3 bytes"));

    /* a gzip stream cut in the middle */
    unsigned char big[16 + 4000];
    memcpy(big, "\0\0\x08\x01\0\0\x0f\xa0", 8); /* [4000] */
    for (int i = 0; i < 4000; i++)
        big[8 + i] = (unsigned char)(i * 7919 % 251);
    write_gz(tmp("whole.gz"), big, 8 + 4000);
    FILE  *fp = fopen(tmp("whole.gz"), "rb");
    char   gzb[8000];
    size_t n = fread(gzb, 1, sizeof gzb, fp);
    fclose(fp);
    write_file(tmp("cutgz.gz"), gzb, n / 2);
    t = idx_load(tmp("whole.gz"), 0x801, &st);
    CHECK(t && tide_tensor_shape(t)[0] == 4000);
    tide_tensor_release(t);
    CHECK(!idx_load(tmp("cutgz.gz"), 0x801, &st) && st == TIDE_EIO);

    /* bytes beyond what the dims say */
    unsigned char extra[sizeof idx_u8 + 1];
    memcpy(extra, idx_u8, sizeof idx_u8);
    extra[sizeof idx_u8] = 9;
    write_file(tmp("extra"), extra, sizeof extra);
    CHECK(!idx_load(tmp("extra"), 0x803, &st) && has("trailing data"));

    /* missing file */
    CHECK(!idx_load(tmp("nope"), 0x803, &st) && st == TIDE_EIO && has("cannot open"));

    /* destination of the wrong shape: refused before reading */
    tide_idx_file *f;
    CHECK(tide_idx_open("fashion_mnist", tmp("labels"), 0x801, &f) == TIDE_OK);
    tide_device *cpu;
    tide_device_get("cpu", &cpu);
    int64_t shape[1] = {3};
    t = NULL;
    tide_tensor_empty(NULL, cpu, TIDE_DTYPE_U8, 1, shape, &t);
    CHECK(tide_idx_read(f, t) == TIDE_ESHAPE);
    tide_tensor_release(t);
    tide_idx_close(f);
}

/* ---- safetensors: round trips ------------------------------------------------------------- */

static tide_tensor *filled(tide_device *dev, tide_dtype dt, int ndim, const int64_t *shape) {
    tide_device *cpu;
    tide_tensor *t = NULL, *out = NULL;
    tide_device_get("cpu", &cpu);
    if (tide_tensor_empty(NULL, cpu, dt, ndim, shape, &t) != TIDE_OK)
        return NULL;
    unsigned char *d = tide_tensor_data(t);
    for (size_t i = 0; i < tide_tensor_nbytes(t); i++)
        d[i] = (unsigned char)(i * 37 + dt);
    if (dt == TIDE_DTYPE_BOOL)
        for (size_t i = 0; i < tide_tensor_nbytes(t); i++)
            d[i] &= 1;
    if (dev == cpu)
        return t;
    tide_tensor_to(NULL, t, dev, dt, 0, &out);
    tide_tensor_release(t);
    return out;
}

/* opens path, reads every tensor into a host tensor; returns the handle (caller closes) */
static tide_st_file *st_load(const char *path, tide_tensor **ts, int max) {
    tide_st_file *f;
    tide_device  *cpu;
    tide_device_get("cpu", &cpu);
    if (tide_st_open(path, &f) != TIDE_OK)
        return NULL;
    for (int i = 0; i < tide_st_count(f) && i < max; i++) {
        ts[i] = NULL;
        if (tide_tensor_empty(NULL, cpu, tide_st_dtype(f, i), tide_st_ndim(f, i),
                              tide_st_shape(f, i), &ts[i]) != TIDE_OK ||
            tide_st_read(f, i, ts[i]) != TIDE_OK) {
            fprintf(stderr, "read %d: %s\n", i, tide_errmsg());
            failed++;
        }
    }
    return f;
}

static int find(tide_st_file *f, const char *name) {
    for (int i = 0; i < tide_st_count(f); i++)
        if (strcmp(tide_st_name(f, i), name) == 0)
            return i;
    return -1;
}

static void test_st_roundtrip(void) {
    tide_device *cpu, *cpu1;
    tide_device_get("cpu", &cpu);
    CHECK(tide_device_get("cpu:1", &cpu1) == TIDE_OK);
    const char        *names[TIDE_DTYPE_COUNT + 3];
    char               nb[TIDE_DTYPE_COUNT][32];
    const tide_tensor *ts[TIDE_DTYPE_COUNT + 3];
    int64_t            s23[2] = {2, 3}, s03[2] = {0, 3};
    int                n = 0;
    for (int dt = 0; dt < TIDE_DTYPE_COUNT; dt++) {
        snprintf(nb[dt], sizeof nb[dt], "layer.%s", tide_dtype_name((tide_dtype)dt));
        names[n] = nb[dt];
        ts[n++] = filled(cpu, (tide_dtype)dt, 2, s23);
    }
    names[n] = "scalar";
    ts[n++] = filled(cpu, TIDE_DTYPE_F64, 0, NULL);
    names[n] = "empty";
    ts[n++] = filled(cpu, TIDE_DTYPE_F32, 2, s03);
    names[n] = "on_cpu1";
    ts[n++] = filled(cpu1 ? cpu1 : cpu, TIDE_DTYPE_F32, 2, s23);
    for (int i = 0; i < n; i++)
        CHECK(ts[i] != NULL);
    const char *mk[] = {"format", "epoch"}, *mv[] = {"pt", "3"};
    CHECK(tide_st_save(NULL, "save", tmp("all.safetensors"), n, names, ts, 2, mk, mv) == TIDE_OK);

    /* header length is a multiple of 8, and the file holds exactly header + data */
    FILE         *fp = fopen(tmp("all.safetensors"), "rb");
    unsigned char h8[8];
    CHECK(fread(h8, 1, 8, fp) == 8);
    fclose(fp);
    CHECK(h8[0] % 8 == 0);

    tide_tensor  *back[16] = {0};
    tide_st_file *f = st_load(tmp("all.safetensors"), back, 16);
    CHECK(f != NULL);
    if (f) {
        CHECK(tide_st_count(f) == n);
        CHECK(tide_st_metadata_count(f) == 2);
        int meta_ok = 0;
        for (int i = 0; i < tide_st_metadata_count(f); i++)
            meta_ok += strcmp(tide_st_metadata_key(f, i), "epoch") == 0 &&
                       strcmp(tide_st_metadata_value(f, i), "3") == 0;
        CHECK(meta_ok == 1);
        for (int k = 0; k < n; k++) {
            int i = find(f, names[k]);
            CHECK(i >= 0);
            if (i < 0 || !back[i])
                continue;
            CHECK(tide_tensor_dtype(back[i]) == tide_tensor_dtype(ts[k]));
            CHECK(tide_tensor_ndim(back[i]) == tide_tensor_ndim(ts[k]));
            CHECK(tide_tensor_nbytes(back[i]) == tide_tensor_nbytes(ts[k]));
            tide_tensor *h = (tide_tensor *)ts[k];
            if (tide_tensor_device(h) == cpu)
                tide_tensor_retain(h);
            else if (tide_tensor_to(NULL, ts[k], cpu, tide_tensor_dtype(ts[k]), 0, &h) != TIDE_OK)
                h = NULL;
            CHECK(h != NULL);
            if (h && tide_tensor_nbytes(h) > 0)
                CHECK(memcmp(tide_tensor_data(h), tide_tensor_data(back[i]),
                             tide_tensor_nbytes(h)) == 0);
            tide_tensor_release(h);
        }
        CHECK(tide_st_dtype(f, find(f, "layer.bfloat16")) == TIDE_DTYPE_BF16);
        CHECK(tide_st_ndim(f, find(f, "scalar")) == 0);
        for (int i = 0; i < 16; i++)
            tide_tensor_release(back[i]);
        tide_st_close(f);
    }
    for (int i = 0; i < n; i++)
        tide_tensor_release((tide_tensor *)ts[i]);
}

static void test_st_view(void) {
    /* a transposed view is written in its logical (row-major) order */
    tide_device *cpu;
    tide_device_get("cpu", &cpu);
    int64_t      s23[2] = {2, 3};
    tide_tensor *a = NULL, *at = NULL;
    tide_tensor_empty(NULL, cpu, TIDE_DTYPE_F32, 2, s23, &a);
    float *d = tide_tensor_data(a);
    for (int i = 0; i < 6; i++)
        d[i] = (float)i; /* [[0 1 2] [3 4 5]] */
    CHECK(tide_tensor_transpose(a, 0, 1, &at) == TIDE_OK);
    const char        *names[] = {"at"};
    const tide_tensor *ts[] = {at};
    CHECK(tide_st_save(NULL, "save", tmp("view.safetensors"), 1, names, ts, 0, NULL, NULL) ==
          TIDE_OK);
    tide_tensor  *back[1] = {0};
    tide_st_file *f = st_load(tmp("view.safetensors"), back, 1);
    CHECK(f && back[0]);
    if (back[0]) {
        const float *b = tide_tensor_data(back[0]);
        CHECK(tide_tensor_shape(back[0])[0] == 3 && tide_tensor_shape(back[0])[1] == 2);
        CHECK(b[0] == 0 && b[1] == 3 && b[2] == 1 && b[3] == 4 && b[4] == 2 && b[5] == 5);
    }
    tide_tensor_release(back[0]);
    tide_st_close(f);
    tide_tensor_release(at);
    tide_tensor_release(a);
}

static void test_st_save_faults(void) {
    int64_t      s1[1] = {1};
    tide_device *cpu;
    tide_device_get("cpu", &cpu);
    tide_tensor       *a = filled(cpu, TIDE_DTYPE_F32, 1, s1);
    const char        *dup[] = {"w", "w"}, *meta[] = {"__metadata__"};
    const tide_tensor *ts[] = {a, a};
    CHECK(tide_st_save(NULL, "save", tmp("dup.safetensors"), 2, dup, ts, 0, NULL, NULL) ==
          TIDE_EINVAL);
    CHECK(has("tide: save: ") && has("'w' given twice"));
    CHECK(tide_st_save(NULL, "save", tmp("m.safetensors"), 1, meta, ts, 0, NULL, NULL) ==
          TIDE_EINVAL);
    CHECK(tide_st_save(NULL, "save", "/nonexistent-dir/x.safetensors", 1, dup, ts, 0, NULL, NULL) ==
          TIDE_EIO);
    CHECK(has("cannot open for writing"));
    CHECK(access(tmp("dup.safetensors"), F_OK) != 0); /* nothing left behind */
    tide_tensor_release(a);
}

/* ---- safetensors: malformed files --------------------------------------------------------- */

/* a file of header JSON (length prefixed) + ndata bytes */
static void st_file(const char *path, const char *json, size_t ndata) {
    size_t         h = strlen(json);
    unsigned char *b = calloc(1, 8 + h + ndata + 1);
    for (int i = 0; i < 8; i++)
        b[i] = (unsigned char)((uint64_t)h >> (8 * i));
    memcpy(b + 8, json, h);
    write_file(path, b, 8 + h + ndata);
    free(b);
}

static void expect_bad(const char *json, size_t ndata, const char *fault) {
    const char   *p = tmp("bad.safetensors");
    tide_st_file *f = NULL;
    st_file(p, json, ndata);
    tide_status st = tide_st_open(p, &f);
    int         ok = st == TIDE_EIO && !f && has("tide: load: ") && has(p) && has(fault);
    if (!ok)
        fprintf(stderr, "for header %s\n  expected '%s', got: %s\n", json, fault, tide_errmsg());
    CHECK(ok);
    tide_st_close(f);
}

static void test_st_malformed(void) {
    const char   *p = tmp("raw.safetensors");
    tide_st_file *f = NULL;
    /* valid baseline: two tensors back to back */
    st_file(p,
            "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
            "\"b\":{\"dtype\":\"U8\",\"shape\":[1,3],\"data_offsets\":[8,11]}}",
            11);
    CHECK(tide_st_open(p, &f) == TIDE_OK && tide_st_count(f) == 2);
    tide_st_close(f);

    /* file shorter than the header size field */
    write_file(p, "\x10\0\0", 3);
    CHECK(tide_st_open(p, &f) == TIDE_EIO && has("file too small (3 bytes)"));
    /* header size larger than the file */
    write_file(p, "\xff\0\0\0\0\0\0\0{}", 10);
    CHECK(tide_st_open(p, &f) == TIDE_EIO && has("header size 255 exceeds the file size 10"));
    write_file(p, "\xff\xff\xff\xff\xff\xff\xff\xff{}", 10);
    CHECK(tide_st_open(p, &f) == TIDE_EIO && has("exceeds the file size"));
    CHECK(tide_st_open(tmp("missing.safetensors"), &f) == TIDE_EIO && has("cannot open"));

    expect_bad("[1, 2]", 0, "does not start with '{'");
    expect_bad("{\"a\": ", 0, "not valid JSON");
    expect_bad("{\"a\":1} xx", 0, "data after its JSON");
    expect_bad("{\"a\":{\"dtype\":\"Q7\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4,
               "unknown or unsupported dtype \"Q7\"");
    expect_bad("{\"a\":{\"dtype\":\"I16\",\"shape\":[1],\"data_offsets\":[0,2]}}", 2,
               "unsupported dtype \"I16\"");
    expect_bad("{\"a\":{\"shape\":[1],\"data_offsets\":[0,4]}}", 4, "tensor 'a': missing");
    expect_bad("{\"a\":{\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,4]}}", 4,
               "shape entry 1 is not a non-negative integer");
    expect_bad("{\"a\":{\"dtype\":\"F32\",\"shape\":[2.5],\"data_offsets\":[0,10]}}", 10,
               "shape entry 1 is not a non-negative integer");
    expect_bad("{\"a\":{\"dtype\":\"F32\",\"shape\":[\"2\"],\"data_offsets\":[0,8]}}", 8,
               "shape entry 1");
    expect_bad("{\"a\":{\"dtype\":\"F32\",\"shape\":[1,1,1,1,1,1,1,1,1],\"data_offsets\":[0,4]}}",
               4, "9 dims, tide supports at most 8");
    expect_bad("{\"a\":{\"dtype\":\"F64\",\"shape\":[4503599627370496,4503599627370496],"
               "\"data_offsets\":[0,8]}}",
               8, "overflows");
    expect_bad("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0]}}", 8,
               "\"data_offsets\" must be an array [begin, end]");
    expect_bad("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,0]}}", 8,
               "end before they begin");
    expect_bad("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,12]}}", 12,
               "hold 12 bytes, but shape and dtype F32 need 8");
    expect_bad("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 4,
               "run past the end of the data (4 bytes)");
    expect_bad("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
               "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}",
               8, "overlap the previous tensor");
    expect_bad("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", 8,
               "leave a hole at [0, 4]");
    expect_bad("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 9,
               "cover 4 bytes of data but the file holds 9");
    expect_bad("{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]},"
               "\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[1,2]}}",
               2, "'a' appears twice");
    expect_bad("{\"__metadata__\":{\"k\":1}}", 0, "value of 'k' is not a string");
    expect_bad("{\"__metadata__\":[]}", 0, "__metadata__ must be an object");
    expect_bad("{\"a\":[1]}", 0, "tensor 'a': header entry is not an object");

    /* header padded with spaces, as the reference writer does */
    st_file(p, "{\"a\":{\"dtype\":\"BOOL\",\"shape\":[],\"data_offsets\":[0,1]}}      ", 1);
    CHECK(tide_st_open(p, &f) == TIDE_OK && tide_st_ndim(f, 0) == 0);
    tide_st_close(f);
}

/* written by spec/fixtures/make_safetensors.py the way the reference package lays files out */
static void test_st_fixture(void) {
    tide_tensor  *back[8] = {0};
    tide_st_file *f = st_load("spec/fixtures/reference.safetensors", back, 8);
    CHECK(f != NULL);
    if (!f)
        return;
    CHECK(tide_st_count(f) == 4);
    int w = find(f, "linear.weight"), b = find(f, "linear.bias"), s = find(f, "step"),
        h = find(f, "half");
    CHECK(w >= 0 && b >= 0 && s >= 0 && h >= 0);
    if (w >= 0 && b >= 0 && s >= 0 && h >= 0) {
        const float *wd = tide_tensor_data(back[w]);
        CHECK(tide_st_ndim(f, w) == 2 && tide_st_shape(f, w)[0] == 2 &&
              tide_st_shape(f, w)[1] == 3);
        CHECK(wd[0] == 0.5f && wd[1] == -1.0f && wd[5] == 3.25f);
        CHECK(((const float *)tide_tensor_data(back[b]))[1] == -2.0f);
        CHECK(((const int64_t *)tide_tensor_data(back[s]))[0] == 1234567890123LL);
        CHECK(((const uint16_t *)tide_tensor_data(back[h]))[0] == 0x3C00); /* 1.0 */
        CHECK(((const uint16_t *)tide_tensor_data(back[h]))[1] == 0xC000); /* -2.0 */
    }
    CHECK(tide_st_metadata_count(f) == 1 && strcmp(tide_st_metadata_key(f, 0), "format") == 0 &&
          strcmp(tide_st_metadata_value(f, 0), "pt") == 0);

    if (w >= 0 && b >= 0 && s >= 0 && h >= 0) {
        /* written back in the same order, the bytes are the reference writer's exactly */
        const char        *names[] = {"step", "linear.bias", "linear.weight", "half"};
        const tide_tensor *ts[] = {back[s], back[b], back[w], back[h]};
        const char        *mk[] = {"format"}, *mv[] = {"pt"};
        CHECK(tide_st_save(NULL, "save", tmp("again.safetensors"), 4, names, ts, 1, mk, mv) ==
              TIDE_OK);
        char   ref[1024], again[1024];
        FILE  *fp = fopen("spec/fixtures/reference.safetensors", "rb");
        size_t nr = fp ? fread(ref, 1, sizeof ref, fp) : 0;
        if (fp)
            fclose(fp);
        fp = fopen(tmp("again.safetensors"), "rb");
        size_t na = fp ? fread(again, 1, sizeof again, fp) : 0;
        if (fp)
            fclose(fp);
        CHECK(nr == 332 && na == nr && memcmp(ref, again, nr) == 0);
    }
    for (int i = 0; i < 8; i++)
        tide_tensor_release(back[i]);
    tide_st_close(f);
}

int main(void) {
    setenv("TIDE_CPU_DEVICES", "2", 1);
    snprintf(dir, sizeof dir, "/tmp/tide_test_io_XXXXXX");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 2;
    }
    if (tide_init() != TIDE_OK) {
        fprintf(stderr, "tide_init: %s\n", tide_errmsg());
        return 2;
    }
    test_idx_valid();
    test_idx_int32_big_endian();
    test_idx_faults();
    test_st_roundtrip();
    test_st_view();
    test_st_save_faults();
    test_st_malformed();
    test_st_fixture();
    char cmd[96];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    printf("%d passed, %d failed\n", passed, failed);
    return failed != 0;
}
