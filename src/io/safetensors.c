/* safetensors.c — checkpoint files in the safetensors format (header parsed with cJSON).
 *
 * Every fault of a file is found in tide_st_open, before a byte of tensor memory is allocated:
 * the file may come from anywhere, and a bad one must give a message, never a crash. */
#include "tide_io.h"
#include "backend.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The reference implementation refuses headers above 100 MB: so do we. */
#define MAX_HEADER ((uint64_t)100 * 1000 * 1000)

typedef struct entry {
    char      *name;
    tide_dtype dtype;
    int        ndim;
    int64_t    shape[TIDE_MAX_DIMS];
    uint64_t   begin, end;
} entry;

struct tide_st_file {
    FILE    *fp;
    char    *path;
    uint64_t data_start, data_size;
    int      n, nmeta;
    entry   *e;
    char   **mkeys, **mvals;
};

static const struct {
    const char *name;
    tide_dtype  dt;
} dtypes[] = {
    {"F32", TIDE_DTYPE_F32},   {"F64", TIDE_DTYPE_F64},   {"F16", TIDE_DTYPE_F16},
    {"BF16", TIDE_DTYPE_BF16}, {"I32", TIDE_DTYPE_I32},   {"I64", TIDE_DTYPE_I64},
    {"U8", TIDE_DTYPE_U8},     {"BOOL", TIDE_DTYPE_BOOL},
};
#define NDTYPES (sizeof dtypes / sizeof dtypes[0])

const char *tide_st_dtype_name(tide_dtype dt) {
    for (size_t i = 0; i < NDTYPES; i++)
        if (dtypes[i].dt == dt)
            return dtypes[i].name;
    return "?";
}

tide_status tide_st_dtype_from_name(const char *name, tide_dtype *out) {
    for (size_t i = 0; i < NDTYPES; i++)
        if (strcmp(dtypes[i].name, name) == 0) {
            *out = dtypes[i].dt;
            return TIDE_OK;
        }
    return TIDE_EINVAL;
}

void tide_st_close(tide_st_file *f) {
    if (!f)
        return;
    if (f->fp)
        fclose(f->fp);
    for (int i = 0; i < f->n; i++)
        free(f->e[i].name);
    for (int i = 0; i < f->nmeta; i++) {
        free(f->mkeys[i]);
        free(f->mvals[i]);
    }
    free(f->e);
    free(f->mkeys);
    free(f->mvals);
    free(f->path);
    free(f);
}

/* a JSON number that is an exact non-negative integer below 2^53 */
static int json_uint(const cJSON *j, uint64_t *out) {
    if (!cJSON_IsNumber(j))
        return 0;
    double d = j->valuedouble;
    if (!(d >= 0 && d <= 9007199254740992.0) || d != (double)(uint64_t)d)
        return 0;
    *out = (uint64_t)d;
    return 1;
}

static int by_offset(const void *a, const void *b) {
    const entry *x = a, *y = b;
    if (x->begin != y->begin)
        return x->begin < y->begin ? -1 : 1;
    return x->end < y->end ? -1 : x->end > y->end;
}

/* sets st to the fault; "ok = !BAD(...)" also clears ok */
#define BAD(...) (st = tide_seterr(TIDE_EIO, __VA_ARGS__))

/* Fills entry e from the JSON object j; 0 (message set in *st) on a fault. */
static int parse_entry(const char *path, const cJSON *j, entry *e, tide_status *stp) {
    tide_status  st = TIDE_OK;
    const char  *name = j->string;
    const cJSON *dt = cJSON_GetObjectItemCaseSensitive(j, "dtype");
    const cJSON *sh = cJSON_GetObjectItemCaseSensitive(j, "shape");
    const cJSON *off = cJSON_GetObjectItemCaseSensitive(j, "data_offsets");
    int          ok = 1;
    if (!cJSON_IsObject(j))
        ok = !BAD("load: %s: tensor '%s': header entry is not an object; not a safetensors file",
                  path, name);
    else if (!cJSON_IsString(dt))
        ok = !BAD("load: %s: tensor '%s': missing or non-string \"dtype\"", path, name);
    else if (tide_st_dtype_from_name(dt->valuestring, &e->dtype) != TIDE_OK)
        ok = !BAD("load: %s: tensor '%s': unknown or unsupported dtype \"%s\"; tide reads F32 "
                  "F64 F16 BF16 I32 I64 U8 BOOL",
                  path, name, dt->valuestring);
    else if (!cJSON_IsArray(sh))
        ok = !BAD("load: %s: tensor '%s': missing or non-array \"shape\"", path, name);
    else if (cJSON_GetArraySize(sh) > TIDE_MAX_DIMS)
        ok = !BAD("load: %s: tensor '%s': %d dims, tide supports at most %d", path, name,
                  cJSON_GetArraySize(sh), TIDE_MAX_DIMS);
    else if (!cJSON_IsArray(off) || cJSON_GetArraySize(off) != 2)
        ok = !BAD("load: %s: tensor '%s': \"data_offsets\" must be an array [begin, end]", path,
                  name);
    if (ok) {
        e->ndim = cJSON_GetArraySize(sh);
        uint64_t     nbytes = tide_dtype_size(e->dtype);
        int          i = 0;
        const cJSON *d = NULL;
        cJSON_ArrayForEach(d, sh) {
            uint64_t v;
            if (!json_uint(d, &v)) {
                if (cJSON_IsNumber(d) && d->valuedouble > 9007199254740992.0)
                    ok = !BAD("load: %s: tensor '%s': shape entry %d (%.0f) is past 2^53 "
                              "elements, more than any tensor holds; the file is damaged",
                              path, name, i + 1, d->valuedouble);
                else
                    ok = !BAD("load: %s: tensor '%s': shape entry %d is not a non-negative "
                              "integer",
                              path, name, i + 1);
                break;
            }
            /* overflow: numel * size must fit int64 */
            if (v && nbytes > (uint64_t)INT64_MAX / v) {
                ok = !BAD("load: %s: tensor '%s': shape overflows a 64-bit size", path, name);
                break;
            }
            nbytes *= v;
            e->shape[i++] = (int64_t)v;
        }
        if (ok && (!json_uint(cJSON_GetArrayItem(off, 0), &e->begin) ||
                   !json_uint(cJSON_GetArrayItem(off, 1), &e->end)))
            ok = !BAD("load: %s: tensor '%s': data_offsets must be non-negative integers", path,
                      name);
        else if (ok && e->end < e->begin)
            ok = !BAD("load: %s: tensor '%s': data_offsets [%llu, %llu] end before they begin",
                      path, name, (unsigned long long)e->begin, (unsigned long long)e->end);
        else if (ok && e->end - e->begin != nbytes)
            ok = !BAD("load: %s: tensor '%s': data_offsets [%llu, %llu] hold %llu bytes, but "
                      "shape and dtype %s need %llu",
                      path, name, (unsigned long long)e->begin, (unsigned long long)e->end,
                      (unsigned long long)(e->end - e->begin), dt->valuestring,
                      (unsigned long long)nbytes);
    }
    *stp = st;
    return ok;
}

static tide_status parse_header(tide_st_file *f, const char *path, char *text, size_t len) {
    tide_status st = TIDE_OK;
    const char *end;
    cJSON      *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    if (!root) {
        size_t at = cJSON_GetErrorPtr() ? (size_t)(cJSON_GetErrorPtr() - text) : 0;
        return tide_seterr(TIDE_EIO,
                           "load: %s: header is not valid JSON (near byte %zu); not a "
                           "safetensors file, or a damaged one",
                           path, at);
    }
    /* after the JSON only padding spaces may follow */
    for (const char *p = end; p < text + len; p++)
        if (*p != ' ' && *p != '\0') {
            BAD("load: %s: header has data after its JSON object; the file is damaged", path);
            goto done;
        }
    if (!cJSON_IsObject(root)) {
        BAD("load: %s: header is not a JSON object; not a safetensors file", path);
        goto done;
    }
    int          count = 0, nmeta = 0;
    const cJSON *it = NULL;
    cJSON_ArrayForEach(it, root) {
        if (strcmp(it->string, "__metadata__") == 0) {
            if (!cJSON_IsObject(it)) {
                BAD("load: %s: __metadata__ must be an object of strings", path);
                goto done;
            }
            const cJSON *m = NULL;
            cJSON_ArrayForEach(m, it) {
                if (!cJSON_IsString(m)) {
                    BAD("load: %s: __metadata__ value of '%s' is not a string", path, m->string);
                    goto done;
                }
                nmeta++;
            }
        } else
            count++;
    }
    f->e = calloc(count ? (size_t)count : 1, sizeof *f->e);
    f->mkeys = calloc(nmeta ? (size_t)nmeta : 1, sizeof(char *));
    f->mvals = calloc(nmeta ? (size_t)nmeta : 1, sizeof(char *));
    if (!f->e || !f->mkeys || !f->mvals) {
        st = tide_seterr(TIDE_ENOMEM, "load: %s: out of memory reading the header", path);
        goto done;
    }
    cJSON_ArrayForEach(it, root) {
        if (strcmp(it->string, "__metadata__") == 0) {
            const cJSON *m = NULL;
            cJSON_ArrayForEach(m, it) {
                f->mkeys[f->nmeta] = strdup(m->string);
                f->mvals[f->nmeta] = strdup(m->valuestring);
                f->nmeta++;
                if (!f->mkeys[f->nmeta - 1] || !f->mvals[f->nmeta - 1]) {
                    st = tide_seterr(TIDE_ENOMEM, "load: %s: out of memory", path);
                    goto done;
                }
            }
            continue;
        }
        entry *e = &f->e[f->n];
        if (!parse_entry(path, it, e, &st))
            goto done;
        if (!(e->name = strdup(it->string))) {
            st = tide_seterr(TIDE_ENOMEM, "load: %s: out of memory", path);
            goto done;
        }
        f->n++;
    }
    qsort(f->e, (size_t)f->n, sizeof *f->e, by_offset);
    /* the data must be covered exactly, in order, without holes or overlaps */
    uint64_t pos = 0;
    for (int i = 0; i < f->n; i++) {
        entry *e = &f->e[i];
        if (e->begin < pos) {
            BAD("load: %s: tensor '%s': data_offsets [%llu, %llu] overlap the previous tensor "
                "'%s' (ending at %llu); the file is damaged",
                path, e->name, (unsigned long long)e->begin, (unsigned long long)e->end,
                f->e[i - 1].name, (unsigned long long)pos);
            goto done;
        }
        if (e->begin > pos) {
            BAD("load: %s: tensor '%s': data_offsets [%llu, %llu] leave a hole at [%llu, %llu]; "
                "the file is damaged",
                path, e->name, (unsigned long long)e->begin, (unsigned long long)e->end,
                (unsigned long long)pos, (unsigned long long)e->begin);
            goto done;
        }
        if (e->end > f->data_size) {
            BAD("load: %s: tensor '%s': data_offsets [%llu, %llu] run past the end of the data "
                "(%llu bytes); the file is truncated",
                path, e->name, (unsigned long long)e->begin, (unsigned long long)e->end,
                (unsigned long long)f->data_size);
            goto done;
        }
        pos = e->end;
    }
    if (pos != f->data_size)
        BAD("load: %s: the tensors cover %llu bytes of data but the file holds %llu; the file "
            "is damaged",
            path, (unsigned long long)pos, (unsigned long long)f->data_size);
    /* duplicate names (JSON allows them, cJSON keeps both) */
    for (int i = 0; st == TIDE_OK && i < f->n; i++)
        for (int k = i + 1; k < f->n; k++)
            if (strcmp(f->e[i].name, f->e[k].name) == 0) {
                BAD("load: %s: tensor name '%s' appears twice in the header", path, f->e[i].name);
                break;
            }
done:
    cJSON_Delete(root);
    return st;
}

tide_status tide_st_open(const char *path, tide_st_file **out) {
    *out = NULL;
    if (!path)
        return tide_seterr(TIDE_EINVAL, "load: no file name given");
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return tide_seterr(TIDE_EIO, "load: %s: cannot open: %s; check the path", path,
                           strerror(errno));
    tide_status   st = TIDE_OK;
    tide_st_file *f = calloc(1, sizeof *f);
    char         *text = NULL;
    struct stat   sb;
    unsigned char h8[8];
    if (!f) {
        fclose(fp);
        return tide_seterr(TIDE_ENOMEM, "load: out of memory");
    }
    f->fp = fp;
    f->path = strdup(path);
    if (!f->path) {
        st = tide_seterr(TIDE_ENOMEM, "load: out of memory");
        goto fail;
    }
    if (fstat(fileno(fp), &sb) != 0 || !S_ISREG(sb.st_mode)) {
        st = tide_seterr(TIDE_EIO, "load: %s: not a regular file", path);
        goto fail;
    }
    uint64_t fsize = (uint64_t)sb.st_size;
    if (fsize < 8 || fread(h8, 1, 8, fp) != 8) {
        st = tide_seterr(TIDE_EIO,
                         "load: %s: file too small (%llu bytes) for the 8-byte header size; "
                         "not a safetensors file",
                         path, (unsigned long long)fsize);
        goto fail;
    }
    uint64_t hlen = 0;
    for (int i = 7; i >= 0; i--)
        hlen = hlen << 8 | h8[i];
    if (hlen > fsize - 8) {
        st = tide_seterr(TIDE_EIO,
                         "load: %s: header size %llu exceeds the file size %llu; the file is "
                         "truncated or not a safetensors file",
                         path, (unsigned long long)hlen, (unsigned long long)fsize);
        goto fail;
    }
    if (hlen > MAX_HEADER || hlen < 2) {
        st = tide_seterr(TIDE_EIO,
                         "load: %s: header size %llu is out of range (2 to 100000000); not a "
                         "safetensors file",
                         path, (unsigned long long)hlen);
        goto fail;
    }
    text = malloc(hlen + 1);
    if (!text) {
        st = tide_seterr(TIDE_ENOMEM, "load: %s: out of memory for a %llu-byte header", path,
                         (unsigned long long)hlen);
        goto fail;
    }
    if (fread(text, 1, hlen, fp) != hlen) {
        st = tide_seterr(TIDE_EIO, "load: %s: read error in the header: %s", path, strerror(errno));
        goto fail;
    }
    text[hlen] = '\0';
    if (text[0] != '{') {
        st = tide_seterr(TIDE_EIO,
                         "load: %s: header does not start with '{'; not a safetensors "
                         "file",
                         path);
        goto fail;
    }
    f->data_start = 8 + hlen;
    f->data_size = fsize - f->data_start;
    st = parse_header(f, path, text, hlen);
    if (st != TIDE_OK)
        goto fail;
    free(text);
    *out = f;
    return TIDE_OK;
fail:
    free(text);
    tide_st_close(f);
    return st;
}

int tide_st_count(const tide_st_file *f) {
    return f->n;
}
const char *tide_st_name(const tide_st_file *f, int i) {
    return f->e[i].name;
}
tide_dtype tide_st_dtype(const tide_st_file *f, int i) {
    return f->e[i].dtype;
}
int tide_st_ndim(const tide_st_file *f, int i) {
    return f->e[i].ndim;
}
const int64_t *tide_st_shape(const tide_st_file *f, int i) {
    return f->e[i].shape;
}
int tide_st_metadata_count(const tide_st_file *f) {
    return f->nmeta;
}
const char *tide_st_metadata_key(const tide_st_file *f, int i) {
    return f->mkeys[i];
}
const char *tide_st_metadata_value(const tide_st_file *f, int i) {
    return f->mvals[i];
}

tide_status tide_st_read(tide_st_file *f, int i, tide_tensor *dst) {
    if (i < 0 || i >= f->n)
        return tide_seterr(TIDE_EINDEX, "load: %s: tensor %d out of range (the file has %d)",
                           f->path, i, f->n);
    entry *e = &f->e[i];
    if (!dst || tide_device_type_of(tide_tensor_device(dst)) != TIDE_DEVICE_CPU ||
        !tide_tensor_is_contiguous(dst))
        return tide_seterr(TIDE_EDEVICE,
                           "load: %s: tensor '%s': destination must be a "
                           "contiguous tensor on a CPU device",
                           f->path, e->name);
    int ok = tide_tensor_dtype(dst) == e->dtype && tide_tensor_ndim(dst) == e->ndim;
    for (int k = 0; ok && k < e->ndim; k++)
        ok = tide_tensor_shape(dst)[k] == e->shape[k];
    if (!ok)
        return tide_seterr(TIDE_ESHAPE,
                           "load: %s: tensor '%s': destination's shape or dtype differs from "
                           "the file's",
                           f->path, e->name);
    size_t n = (size_t)(e->end - e->begin);
    if (n == 0)
        return TIDE_OK;
    if (fseeko(f->fp, (off_t)(f->data_start + e->begin), SEEK_SET) != 0 ||
        fread(tide_tensor_data(dst), 1, n, f->fp) != n)
        return tide_seterr(TIDE_EIO,
                           "load: %s: tensor '%s': read error: %s; the file changed "
                           "or is damaged",
                           f->path, e->name, ferror(f->fp) ? strerror(errno) : "end of file");
    if (e->dtype == TIDE_DTYPE_BOOL) { /* a byte other than 0 is true: 1, as tide's bools */
        uint8_t *b = tide_tensor_data(dst);
        for (size_t k = 0; k < n; k++)
            b[k] = b[k] != 0;
    }
    return TIDE_OK;
}

/* ---- writing ------------------------------------------------------------------------------ */

/* host, contiguous copy of t (or t itself, retained) */
static tide_status host_contiguous(tide_ctx *ctx, const tide_tensor *t, tide_tensor **out) {
    *out = NULL;
    if (!tide_device_is_host(tide_tensor_device(t))) {
        tide_device *host;
        tide_status  st = tide_device_get("cpu", &host);
        if (st != TIDE_OK)
            return st;
        return tide_tensor_to(ctx, t, host, tide_tensor_dtype(t), 0, out);
    }
    return tide_tensor_contiguous(ctx, t, out);
}

tide_status tide_st_save(tide_ctx *ctx, const char *op, const char *path, int n,
                         const char *const *names, const tide_tensor *const *tensors, int nmeta,
                         const char *const *meta_keys, const char *const *meta_values) {
    if (!op)
        op = "save";
    if (!path)
        return tide_seterr(TIDE_EINVAL, "%s: no file name given", op);
    if (n < 0 || nmeta < 0)
        return tide_seterr(TIDE_EINVAL, "%s: %s: negative count", op, path);
    for (int i = 0; i < n; i++) {
        if (!names[i] || !tensors[i])
            return tide_seterr(TIDE_EINVAL, "%s: %s: tensor %d has no name or no tensor", op, path,
                               i + 1);
        if (strcmp(names[i], "__metadata__") == 0)
            return tide_seterr(TIDE_EINVAL,
                               "%s: %s: '__metadata__' is reserved by the format; rename the "
                               "tensor",
                               op, path);
        for (int k = 0; k < i; k++)
            if (strcmp(names[i], names[k]) == 0)
                return tide_seterr(TIDE_EINVAL, "%s: %s: tensor name '%s' given twice", op, path,
                                   names[i]);
    }
    tide_status st = TIDE_OK;
    cJSON      *root = cJSON_CreateObject();
    char       *json = NULL, *tmp = NULL;
    FILE       *fp;
    if (!root)
        return tide_seterr(TIDE_ENOMEM, "%s: out of memory", op);
    if (nmeta > 0) {
        cJSON *m = cJSON_AddObjectToObject(root, "__metadata__");
        for (int i = 0; m && i < nmeta; i++)
            if (!cJSON_AddStringToObject(m, meta_keys[i], meta_values[i]))
                m = NULL;
        if (!m) {
            st = tide_seterr(TIDE_ENOMEM, "%s: out of memory", op);
            goto done;
        }
    }
    uint64_t pos = 0;
    for (int i = 0; i < n; i++) {
        const tide_tensor *t = tensors[i];
        /* key order as the reference writer's: dtype, shape, data_offsets */
        cJSON *o = cJSON_AddObjectToObject(root, names[i]);
        int ok = o && cJSON_AddStringToObject(o, "dtype", tide_st_dtype_name(tide_tensor_dtype(t)));
        cJSON *sh = ok ? cJSON_AddArrayToObject(o, "shape") : NULL;
        cJSON *of = sh ? cJSON_AddArrayToObject(o, "data_offsets") : NULL;
        ok = of != NULL;
        for (int k = 0; ok && k < tide_tensor_ndim(t); k++)
            ok = cJSON_AddItemToArray(sh, cJSON_CreateNumber((double)tide_tensor_shape(t)[k]));
        uint64_t nb = tide_tensor_nbytes(t);
        ok = ok && cJSON_AddItemToArray(of, cJSON_CreateNumber((double)pos)) &&
             cJSON_AddItemToArray(of, cJSON_CreateNumber((double)(pos + nb)));
        if (!ok) {
            st = tide_seterr(TIDE_ENOMEM, "%s: out of memory", op);
            goto done;
        }
        pos += nb;
    }
    json = cJSON_PrintUnformatted(root);
    if (!json) {
        st = tide_seterr(TIDE_ENOMEM, "%s: out of memory", op);
        goto done;
    }
    /* pad the header with spaces so the data starts 8-byte aligned, as the reference does */
    size_t hlen = strlen(json), padded = (hlen + 7) / 8 * 8;
    size_t plen = strlen(path);
    tmp = malloc(plen + 32);
    if (!tmp) {
        st = tide_seterr(TIDE_ENOMEM, "%s: out of memory", op);
        goto done;
    }
    snprintf(tmp, plen + 32, "%s.tmp%ld", path, (long)getpid());
    fp = fopen(tmp, "wb");
    if (!fp) {
        st = tide_seterr(TIDE_EIO,
                         "%s: %s: cannot open for writing: %s; check that the "
                         "directory exists and is writable",
                         op, path, strerror(errno));
        goto done;
    }
    unsigned char h8[8];
    for (int i = 0; i < 8; i++)
        h8[i] = (unsigned char)((uint64_t)padded >> (8 * i));
    int ok = fwrite(h8, 1, 8, fp) == 8 && fwrite(json, 1, hlen, fp) == hlen;
    for (size_t i = hlen; ok && i < padded; i++)
        ok = fputc(' ', fp) != EOF;
    for (int i = 0; ok && i < n; i++) {
        tide_tensor *h = NULL;
        st = host_contiguous(ctx, tensors[i], &h);
        if (st != TIDE_OK)
            break;
        size_t nb = tide_tensor_nbytes(h);
        ok = nb == 0 || fwrite(tide_tensor_data(h), 1, nb, fp) == nb;
        tide_tensor_release(h);
    }
    int closed = fclose(fp) == 0;
    fp = NULL;
    if (st == TIDE_OK && (!closed || !ok))
        st = tide_seterr(TIDE_EIO, "%s: %s: write failed: %s; check the free disk space", op, path,
                         strerror(errno));
    if (st == TIDE_OK && rename(tmp, path) != 0)
        st = tide_seterr(TIDE_EIO, "%s: %s: cannot rename the temporary file into place: %s", op,
                         path, strerror(errno));
    if (st != TIDE_OK)
        remove(tmp);
done:
    free(tmp);
    free(json);
    cJSON_Delete(root);
    return st;
}
