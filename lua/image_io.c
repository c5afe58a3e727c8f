/* image_io.c — PNG encoding and decoding for tide.utils (save_image, TensorBoard images and
 * sprites), 8-bit, non-interlaced, gray / gray+alpha / RGB / RGBA. zlib (already linked) does
 * the deflate and the chunk CRCs, so no libpng. The decoder reads what the encoder writes and
 * what PIL writes (all five row filters), for the round-trip checks. Temporaries live in
 * userdata, so an error raised midway leaks nothing. Registered into tide.core by
 * tide_lua_register_image_io. */
#include "binding.h"

#include <stdint.h>
#include <string.h>
#include <zlib.h>

static const unsigned char SIGNATURE[8] = {137, 'P', 'N', 'G', '\r', '\n', 26, '\n'};
static const int           COLOR_TYPE[5] = {-1, 0, 4, 2, 6}; /* by channels: gray, +alpha, ... */

static void put_be32(unsigned char *p, uint32_t v) {
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

static uint32_t get_be32(const unsigned char *p) {
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

/* length, type, data, CRC of type + data */
static void add_chunk(luaL_Buffer *b, const char *type, const unsigned char *data, size_t n) {
    unsigned char head[8], crc[4];
    put_be32(head, (uint32_t)n);
    memcpy(head + 4, type, 4);
    uLong c = crc32(0L, head + 4, 4);
    if (n)
        c = crc32(c, data, (uInt)n);
    put_be32(crc, (uint32_t)c);
    luaL_addlstring(b, (const char *)head, 8);
    if (n)
        luaL_addlstring(b, (const char *)data, n);
    luaL_addlstring(b, (const char *)crc, 4);
}

/* core._png_encode(t) -> PNG bytes of a host, contiguous uint8 tensor of shape (H, W, C),
 * C in 1..4; every row with filter 0 (none), deflated at zlib's default level */
static int l_png_encode(lua_State *L) {
    ltensor *u = tl_check(L, 1, "png_encode");
    int      nd = tide_tensor_ndim(u->t);
    if (tide_tensor_dtype(u->t) != TIDE_DTYPE_U8 || nd != 3 ||
        !tide_device_is_host(tide_tensor_device(u->t)) || !tide_tensor_is_contiguous(u->t))
        return tl_error(L, "tide: png_encode: expected a contiguous uint8 (H, W, C) tensor on cpu");
    const int64_t *sh = tide_tensor_shape(u->t);
    int64_t        h = sh[0], w = sh[1], c = sh[2];
    if (c < 1 || c > 4 || h < 1 || w < 1 || h > 0x7FFFFFFF || w > 0x7FFFFFFF / c)
        return tl_error(L, "tide: png_encode: an image of %d x %d with %d channels cannot be a PNG",
                        (int)h, (int)w, (int)c);
    size_t         row = (size_t)(w * c), raw_n = (size_t)h * (row + 1);
    unsigned char *raw = lua_newuserdatauv(L, raw_n, 0);
    const uint8_t *px = tide_tensor_data(u->t);
    for (int64_t y = 0; y < h; y++) {
        raw[(size_t)y * (row + 1)] = 0;
        memcpy(raw + (size_t)y * (row + 1) + 1, px + (size_t)y * row, row);
    }
    uLongf         z_n = compressBound((uLong)raw_n);
    unsigned char *z = lua_newuserdatauv(L, z_n, 0);
    if (compress2(z, &z_n, raw, (uLong)raw_n, Z_DEFAULT_COMPRESSION) != Z_OK)
        return tl_error(L, "tide: png_encode: zlib failed to compress the image");
    unsigned char ihdr[13];
    put_be32(ihdr, (uint32_t)w);
    put_be32(ihdr + 4, (uint32_t)h);
    ihdr[8] = 8; /* bit depth */
    ihdr[9] = (unsigned char)COLOR_TYPE[c];
    ihdr[10] = ihdr[11] = ihdr[12] = 0; /* deflate, adaptive filtering, no interlace */
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    luaL_addlstring(&b, (const char *)SIGNATURE, 8);
    add_chunk(&b, "IHDR", ihdr, sizeof ihdr);
    add_chunk(&b, "IDAT", z, z_n);
    add_chunk(&b, "IEND", NULL, 0);
    luaL_pushresult(&b);
    return 1;
}

static int paeth(int a, int b, int c) {
    int p = a + b - c, pa = p > a ? p - a : a - p, pb = p > b ? p - b : b - p,
        pc = p > c ? p - c : c - p;
    return (pa <= pb && pa <= pc) ? a : (pb <= pc ? b : c);
}

/* undoes the row filters in place: raw holds h rows of 1 filter byte + row bytes; out gets the
 * pixels. Returns 0, or -1 for an unknown filter type. */
static int unfilter(const unsigned char *raw, unsigned char *out, size_t h, size_t row,
                    size_t bpp) {
    for (size_t y = 0; y < h; y++) {
        const unsigned char *in = raw + y * (row + 1) + 1;
        unsigned char       *cur = out + y * row;
        const unsigned char *up = y ? cur - row : NULL;
        int                  f = raw[y * (row + 1)];
        for (size_t x = 0; x < row; x++) {
            int a = x >= bpp ? cur[x - bpp] : 0, b = up ? up[x] : 0,
                c = (up && x >= bpp) ? up[x - bpp] : 0, v;
            switch (f) {
            case 0:
                v = 0;
                break;
            case 1:
                v = a;
                break;
            case 2:
                v = b;
                break;
            case 3:
                v = (a + b) / 2;
                break;
            case 4:
                v = paeth(a, b, c);
                break;
            default:
                return -1;
            }
            cur[x] = (unsigned char)(in[x] + v);
        }
    }
    return 0;
}

/* core._png_decode(bytes) -> width, height, channels, pixels (a string of H*W*C bytes, rows top
 * to bottom). Checks the signature and every chunk's CRC; 8-bit, non-interlaced, color types
 * 0, 2, 4, 6 only. */
static int l_png_decode(lua_State *L) {
    size_t               n;
    const unsigned char *s = (const unsigned char *)luaL_checklstring(L, 1, &n);
    if (n < 8 || memcmp(s, SIGNATURE, 8) != 0)
        return tl_error(L, "tide: png_decode: not a PNG (bad signature)");
    uint32_t    w = 0, h = 0;
    int         ch = 0;
    luaL_Buffer idat;
    luaL_buffinit(L, &idat);
    size_t at = 8;
    int    ended = 0;
    while (!ended) {
        if (n - at < 12)
            return tl_error(L, "tide: png_decode: chunk cut short at byte %d", (int)at);
        uint32_t len = get_be32(s + at);
        if (len > n - at - 12)
            return tl_error(L, "tide: png_decode: chunk cut short at byte %d", (int)at);
        const unsigned char *type = s + at + 4, *data = s + at + 8;
        if ((uint32_t)crc32(0L, type, len + 4) != get_be32(data + len))
            return tl_error(L, "tide: png_decode: CRC mismatch in chunk %c%c%c%c", type[0], type[1],
                            type[2], type[3]);
        if (memcmp(type, "IHDR", 4) == 0 && len == 13) {
            w = get_be32(data);
            h = get_be32(data + 4);
            for (int c = 1; c <= 4; c++)
                if (COLOR_TYPE[c] == data[9])
                    ch = c;
            if (data[8] != 8 || ch == 0 || data[12] != 0)
                return tl_error(L, "tide: png_decode: only 8-bit non-interlaced gray, RGB and "
                                   "alpha images are read");
        } else if (memcmp(type, "IDAT", 4) == 0) {
            luaL_addlstring(&idat, (const char *)data, len);
        } else if (memcmp(type, "IEND", 4) == 0) {
            ended = 1;
        }
        at += 12 + (size_t)len;
    }
    luaL_pushresult(&idat);
    if (ch == 0 || w == 0 || h == 0)
        return tl_error(L, "tide: png_decode: no IHDR chunk");
    if ((uint64_t)w * h * (uint64_t)ch > ((uint64_t)1 << 31))
        return tl_error(L, "tide: png_decode: a %I x %I image is larger than this reader takes",
                        (lua_Integer)w, (lua_Integer)h);
    size_t               zn;
    const unsigned char *z = (const unsigned char *)lua_tolstring(L, -1, &zn);
    size_t               row = (size_t)w * (size_t)ch;
    uLongf               raw_n = (uLongf)((row + 1) * h);
    unsigned char       *raw = lua_newuserdatauv(L, raw_n, 0);
    uLongf               got = raw_n;
    if (uncompress(raw, &got, z, (uLong)zn) != Z_OK || got != raw_n)
        return tl_error(L, "tide: png_decode: the image data does not inflate to %d x %d pixels",
                        (int)h, (int)w);
    unsigned char *px = lua_newuserdatauv(L, row * h, 0);
    if (unfilter(raw, px, h, row, (size_t)ch) != 0)
        return tl_error(L, "tide: png_decode: unknown row filter");
    lua_pushinteger(L, (lua_Integer)w);
    lua_pushinteger(L, (lua_Integer)h);
    lua_pushinteger(L, ch);
    lua_pushlstring(L, (const char *)px, row * h);
    return 4;
}

void tide_lua_register_image_io(lua_State *L) {
    static const luaL_Reg fns[] = {
        {"_png_encode", l_png_encode},
        {"_png_decode", l_png_decode},
        {NULL, NULL},
    };
    tl_register(L, -1, fns);
}
