/* record_io.c — the byte-level pieces of TensorBoard's event files, for tide.utils.tensorboard:
 * CRC32C, the TFRecord framing, and the little-endian packing of protobuf's varints, doubles and
 * floats. The messages themselves are built in Lua (lua/tide/utils/protobuf.lua); these are the
 * parts that need bit operations, which Lua 5.1 and LuaJIT's portable subset lack (a CRC over a
 * 100 KiB image in pure Lua arithmetic takes a second); and the three host facts an event file's
 * name and records need (the Unix time with its fraction, the host name, the process id) plus
 * mkdir, which Lua's os library lacks. Registered into tide.core by
 * tide_lua_register_record_io. */
#include "binding.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- CRC32C (Castagnoli, reflected polynomial 0x82F63B78), one table lookup per byte ------- */

static uint32_t crc_table[256];

static void crc_init(void) {
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
        crc_table[i] = c;
    }
}

static uint32_t crc32c(const unsigned char *p, size_t n) {
    uint32_t c = 0xFFFFFFFFu;
    while (n--)
        c = crc_table[(c ^ *p++) & 0xFF] ^ (c >> 8);
    return c ^ 0xFFFFFFFFu;
}

/* TFRecord stores CRCs "masked": rotated right by 15 and offset, so a CRC of data that holds
 * CRCs does not degenerate (tensorflow/core/lib/hash/crc32c.h) */
static uint32_t masked(const unsigned char *p, size_t n) {
    uint32_t c = crc32c(p, n);
    return ((c >> 15) | (c << 17)) + 0xA282EAD8u;
}

static void put_le(unsigned char *out, uint64_t v, int bytes) {
    for (int i = 0; i < bytes; i++)
        out[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_le(const unsigned char *in, int bytes) {
    uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; i--)
        v = (v << 8) | in[i];
    return v;
}

/* core._crc32c(s) -> the plain (unmasked) CRC32C of s */
static int l_crc32c(lua_State *L) {
    size_t      n;
    const char *s = luaL_checklstring(L, 1, &n);
    lua_pushinteger(L, (lua_Integer)crc32c((const unsigned char *)s, n));
    return 1;
}

/* core._tfrecord(data) -> uint64 length, masked CRC of the length, data, masked CRC of data */
static int l_tfrecord(lua_State *L) {
    size_t        n;
    const char   *s = luaL_checklstring(L, 1, &n);
    unsigned char head[12], tail[4];
    luaL_Buffer   b;
    put_le(head, (uint64_t)n, 8);
    put_le(head + 8, masked(head, 8), 4);
    put_le(tail, masked((const unsigned char *)s, n), 4);
    luaL_buffinit(L, &b);
    luaL_addlstring(&b, (const char *)head, sizeof head);
    luaL_addlstring(&b, s, n);
    luaL_addlstring(&b, (const char *)tail, sizeof tail);
    luaL_pushresult(&b);
    return 1;
}

/* core._tfrecord_next(buf, pos) -> data, next_pos for the record at byte pos (1-based); nil at
 * the end of buf; false, reason for a record cut short or failing its CRC (a crash mid-write) */
static int l_tfrecord_next(lua_State *L) {
    size_t               n;
    const unsigned char *s = (const unsigned char *)luaL_checklstring(L, 1, &n);
    lua_Integer          pos = luaL_checkinteger(L, 2);
    if (pos < 1 || (size_t)pos > n + 1)
        return luaL_argerror(L, 2, "position outside the buffer");
    size_t at = (size_t)pos - 1, left = n - at;
    if (left == 0) {
        lua_pushnil(L);
        return 1;
    }
    const char *why = NULL;
    uint64_t    len = 0;
    if (left < 12)
        why = "truncated record header";
    else if ((uint32_t)get_le(s + at + 8, 4) != masked(s + at, 8))
        why = "length CRC mismatch";
    else if ((len = get_le(s + at, 8)) > left - 12 || left - 12 - len < 4)
        why = "truncated record data";
    else if ((uint32_t)get_le(s + at + 12 + len, 4) != masked(s + at + 12, (size_t)len))
        why = "data CRC mismatch";
    if (why) {
        lua_pushboolean(L, 0);
        lua_pushfstring(L, "%s at byte %d", why, (int)at);
        return 2;
    }
    lua_pushlstring(L, (const char *)s + at + 12, (size_t)len);
    lua_pushinteger(L, (lua_Integer)(at + 12 + len + 4 + 1));
    return 2;
}

/* ---- protobuf's scalars --------------------------------------------------------------------- */

/* core._pb_varint(n) -> base-128 varint; a negative n as its two's complement (10 bytes), as
 * protobuf writes a negative int64 */
static int l_pb_varint(lua_State *L) {
    uint64_t      v = (uint64_t)luaL_checkinteger(L, 1);
    unsigned char out[10];
    int           k = 0;
    do {
        out[k] = (unsigned char)(v & 0x7F);
        v >>= 7;
        if (v)
            out[k] |= 0x80;
        k++;
    } while (v);
    lua_pushlstring(L, (const char *)out, (size_t)k);
    return 1;
}

/* core._pb_read_varint(s, pos) -> value, next_pos (1-based); raises on a varint cut short */
static int l_pb_read_varint(lua_State *L) {
    size_t               n;
    const unsigned char *s = (const unsigned char *)luaL_checklstring(L, 1, &n);
    lua_Integer          pos = luaL_checkinteger(L, 2);
    uint64_t             v = 0;
    for (int shift = 0; shift < 70 && pos >= 1 && (size_t)pos <= n; shift += 7, pos++) {
        unsigned char c = s[pos - 1];
        v |= (uint64_t)(c & 0x7F) << shift;
        if (!(c & 0x80)) {
            lua_pushinteger(L, (lua_Integer)(int64_t)v);
            lua_pushinteger(L, pos + 1);
            return 2;
        }
    }
    return luaL_error(L, "tide: protobuf: varint cut short at byte %d", (int)pos);
}

/* x's IEEE bytes, little-endian, into out: a double when bytes is 8, a float when 4 */
static void put_ieee(unsigned char *out, lua_Number x, int bytes) {
    uint64_t u;
    if (bytes == 8) {
        double d = (double)x;
        memcpy(&u, &d, 8);
    } else {
        float    f = (float)x;
        uint32_t u32;
        memcpy(&u32, &f, 4);
        u = u32;
    }
    put_le(out, u, bytes);
}

/* core._pb_double(x) / core._pb_float(x) -> 8 / 4 little-endian IEEE bytes */
static int write_fixed(lua_State *L, int bytes) {
    unsigned char out[8];
    put_ieee(out, luaL_checknumber(L, 1), bytes);
    lua_pushlstring(L, (const char *)out, (size_t)bytes);
    return 1;
}

static int l_pb_double(lua_State *L) {
    return write_fixed(L, 8);
}

static int l_pb_float(lua_State *L) {
    return write_fixed(L, 4);
}

/* core._pb_doubles(list) -> the packed bytes of list[1..#list] as doubles */
static int l_pb_doubles(lua_State *L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    size_t      n = (size_t)lua_rawlen(L, 1);
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (size_t i = 1; i <= n; i++) {
        unsigned char out[8];
        lua_rawgeti(L, 1, (lua_Integer)i);
        put_ieee(out, lua_tonumber(L, -1), 8);
        lua_pop(L, 1);
        luaL_addlstring(&b, (const char *)out, 8);
    }
    luaL_pushresult(&b);
    return 1;
}

/* core._pb_read_double(s, pos) / core._pb_read_float(s, pos) -> the number at byte pos */
static int read_fixed(lua_State *L, int bytes) {
    size_t               n;
    const unsigned char *s = (const unsigned char *)luaL_checklstring(L, 1, &n);
    lua_Integer          pos = luaL_checkinteger(L, 2);
    if (pos < 1 || (size_t)pos + (size_t)bytes - 1 > n)
        return luaL_error(L, "tide: protobuf: fixed%d cut short at byte %d", bytes * 8, (int)pos);
    uint64_t u = get_le(s + pos - 1, bytes);
    if (bytes == 8) {
        double d;
        memcpy(&d, &u, 8);
        lua_pushnumber(L, (lua_Number)d);
    } else {
        uint32_t u32 = (uint32_t)u;
        float    f;
        memcpy(&f, &u32, 4);
        lua_pushnumber(L, (lua_Number)f);
    }
    return 1;
}

static int l_pb_read_double(lua_State *L) {
    return read_fixed(L, 8);
}

static int l_pb_read_float(lua_State *L) {
    return read_fixed(L, 4);
}

/* ---- the host ------------------------------------------------------------------------------ */

/* core._unix_time() -> seconds since 1970 with the fraction (an event's wall_time) */
static int l_unix_time(lua_State *L) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    lua_pushnumber(L, (lua_Number)ts.tv_sec + (lua_Number)ts.tv_nsec * 1e-9);
    return 1;
}

/* core._host_info() -> host name, process id */
static int l_host_info(lua_State *L) {
    char name[256];
    if (gethostname(name, sizeof name) != 0)
        strcpy(name, "localhost");
    name[sizeof name - 1] = '\0';
    lua_pushstring(L, name);
    lua_pushinteger(L, (lua_Integer)getpid());
    return 2;
}

/* core._mkdir(path) -> true when path is a directory now (made here or there already); else
 * false, the system's reason */
static int l_mkdir(lua_State *L) {
    const char *path = luaL_checkstring(L, 1);
    struct stat st;
    if (mkdir(path, 0777) == 0 ||
        (errno == EEXIST && stat(path, &st) == 0 && S_ISDIR(st.st_mode))) {
        lua_pushboolean(L, 1);
        return 1;
    }
    int err = errno;
    lua_pushboolean(L, 0);
    lua_pushstring(L, err == EEXIST ? "a file of that name exists" : strerror(err));
    return 2;
}

void tide_lua_register_record_io(lua_State *L) {
    static const luaL_Reg fns[] = {
        {"_crc32c", l_crc32c},
        {"_tfrecord", l_tfrecord},
        {"_tfrecord_next", l_tfrecord_next},
        {"_pb_varint", l_pb_varint},
        {"_pb_read_varint", l_pb_read_varint},
        {"_pb_double", l_pb_double},
        {"_pb_float", l_pb_float},
        {"_pb_doubles", l_pb_doubles},
        {"_pb_read_double", l_pb_read_double},
        {"_pb_read_float", l_pb_read_float},
        {"_unix_time", l_unix_time},
        {"_host_info", l_host_info},
        {"_mkdir", l_mkdir},
        {NULL, NULL},
    };
    crc_init();
    tl_register(L, -1, fns);
}
