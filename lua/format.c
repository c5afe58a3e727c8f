/*
 * format.c — reading tensor values on the host: tostring (PyTorch-like layout), totable.
 * Values off the host are copied as an implicit transfer (counted, and subject to the guard).
 */
#include "tensor.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

/* Pushes a userdata owning a tensor with t's values in host memory and a dtype tl_read knows
 * (the same tensor, retained, when t is already that). */
const tide_tensor *tl_host_copy(lua_State *L, tide_lua_state *S, const tide_tensor *t,
                                int implicit) {
    tide_device *host;
    tide_device_get_index(TIDE_DEVICE_CPU, 0, &host);
    tide_dtype dt = tide_tensor_dtype(t);
    tide_dtype want = (dt == TIDE_DTYPE_F16 || dt == TIDE_DTYPE_BF16) ? TIDE_DTYPE_F32 : dt;
    ltensor   *r = tl_push_empty(L);
    if (tide_tensor_device(t) == host && want == dt) {
        tide_tensor_retain((tide_tensor *)t);
        r->t = (tide_tensor *)t;
    } else {
        TL_CALL(L, S,
                tide_tensor_to(S->ctx, t, host, want,
                               implicit && tide_tensor_device(t) != host ? TIDE_TO_IMPLICIT : 0,
                               &r->t));
    }
    return r->t;
}

static double rd(const tide_tensor *t, int64_t off) {
    const void *p = tide_tensor_data(t);
    switch (tide_tensor_dtype(t)) {
    case TIDE_DTYPE_F32:
        return ((const float *)p)[off];
    case TIDE_DTYPE_F64:
        return ((const double *)p)[off];
    case TIDE_DTYPE_I32:
        return ((const int32_t *)p)[off];
    case TIDE_DTYPE_I64:
        return (double)((const int64_t *)p)[off];
    case TIDE_DTYPE_U8:
    case TIDE_DTYPE_BOOL:
        return ((const uint8_t *)p)[off];
    default:
        return NAN;
    }
}

void tl_push_int64(lua_State *L, int64_t v, const char *op) {
#if TL_NO_INTEGERS
    const int64_t exact = (int64_t)1 << 53;
    if (v > exact || v < -exact) {
        char rounded[32];
        snprintf(rounded, sizeof rounded, "%.0f", (double)v);
        tl_error(L,
                 "tide: %s: the int64 value %I is beyond 2^53 and " TL_HOST_NAME
                 " has no integers: it would round to %s; use t:double() to accept the "
                 "rounding, or keep the value in a tensor",
                 op, (lua_Integer)v, rounded);
    }
#else
    (void)op;
#endif
    lua_pushinteger(L, (lua_Integer)v);
}

static void push_value(lua_State *L, const tide_tensor *t, int64_t off, const char *op) {
    tide_dtype dt = tide_tensor_dtype(t);
    if (dt == TIDE_DTYPE_BOOL)
        lua_pushboolean(L, ((const uint8_t *)tide_tensor_data(t))[off] != 0);
    else if (dt == TIDE_DTYPE_I64)
        tl_push_int64(L, ((const int64_t *)tide_tensor_data(t))[off], op);
    else if (!tide_dtype_is_float(dt))
        lua_pushinteger(L, (lua_Integer)rd(t, off));
    else
        lua_pushnumber(L, rd(t, off));
}

static void totable_rec(lua_State *L, const tide_tensor *t, int d, int64_t off, const char *op) {
    int64_t n = tide_tensor_shape(t)[d], st = tide_tensor_strides(t)[d];
    lua_createtable(L, (int)n, 0);
    for (int64_t i = 0; i < n; i++) {
        if (d + 1 == tide_tensor_ndim(t))
            push_value(L, t, off + i * st, op);
        else
            totable_rec(L, t, d + 1, off + i * st, op);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
}

/* totable and PyTorch's tolist: one reader, each error naming the method called */
static int to_table(lua_State *L, const char *op) {
    tide_lua_state *S = TL_STATE(L);
    ltensor        *a = tl_check(L, 1, op);
    tide_device    *dev = tide_tensor_device(a->t);
    tl_max_args(L, 1, op);
    if (!tide_device_is_host(dev))
        return tl_error(L, "tide: %s: tensor is on %s; call :cpu() first to copy it to the host",
                        op, tide_device_name(dev));
    /* an expanded view (or a huge empty dim's sibling) holds numel values in a few bytes: the
     * Lua tables would not fit, and Lua's memory is not under tide's limit. A value takes 16
     * bytes of a table's array, a table about 56 more */
    const int64_t *shape = tide_tensor_shape(a->t);
    int            nd = tide_tensor_ndim(a->t);
    double         values = 1, tables = nd > 0 ? 1 : 0;
    for (int d = 0; d < nd; d++) {
        values *= (double)shape[d];
        if (d + 1 < nd)
            tables += values;
    }
    double need = values * 16 + tables * 56, budget = (double)tide_ctx_memory_budget(S->ctx);
    if (need > budget) {
        char msg[256]; /* tl_error's format is lua_pushfstring's: no precision */
        snprintf(msg, sizeof msg,
                 "tide: %s: %.0f values would take %.1f GB of Lua tables, more than the %.1f GB "
                 "this process may use; take a part first (narrow, select) or keep the values in "
                 "a tensor",
                 op, values, need / 1073741824.0, budget / 1073741824.0);
        return tl_error(L, "%s", msg);
    }
    const tide_tensor *h = tl_host_copy(L, S, a->t, 0);
    if (tide_tensor_ndim(h) == 0)
        push_value(L, h, 0, op);
    else
        totable_rec(L, h, 0, 0, op);
    return 1;
}

int tl_totable(lua_State *L) {
    return to_table(L, "totable");
}

int tl_tolist(lua_State *L) {
    return to_table(L, "tolist");
}

/* ---- tostring ----------------------------------------------------------------------------- */

/* PyTorch's print options (tide.set_printoptions), one set a Lua state: a userdata in the
 * registry, absent until first set (then DEFAULT_OPTS, PyTorch's defaults, apply) */
typedef struct print_opts {
    int     precision; /* digits after the point, 0..100 */
    double  threshold; /* more elements than this are summarized (may be inf) */
    int64_t edgeitems; /* items kept at each end of a summarized dim */
    int64_t linewidth; /* a row of elements wraps to stay within this many characters */
    int     sci;       /* -1: chosen from the values, 0: fixed point, 1: scientific */
} print_opts;

static const print_opts DEFAULT_OPTS = {4, 1000, 3, 80, -1};
static const char       print_key = 0;

static const print_opts *print_options(lua_State *L) {
    const print_opts *o = &DEFAULT_OPTS;
    if (lua_rawgetp(L, LUA_REGISTRYINDEX, &print_key) == LUA_TUSERDATA)
        o = (const print_opts *)lua_touserdata(L, -1); /* the registry keeps it alive */
    lua_pop(L, 1);
    return o;
}

/* core._set_print_options(precision, threshold, edgeitems, linewidth, sci_mode): checked by
 * tide.print_options (lua/tide/print_options.lua); sci_mode nil, true or false */
static int l_set_print_options(lua_State *L) {
    /* the ranges checked before any cast (an int would wrap 2^32 + 4 to 4), edgeitems and
     * linewidth to 2^30 as print_options.lua's: cut() doubles edgeitems */
    lua_Integer precision = luaL_checkinteger(L, 1), edgeitems = luaL_checkinteger(L, 3),
                linewidth = luaL_checkinteger(L, 4);
    double threshold = luaL_checknumber(L, 2);
    if (precision < 0 || precision > 100 || edgeitems < 0 || edgeitems > (1 << 30) ||
        linewidth < 1 || linewidth > (1 << 30))
        return tl_error(L,
                        "tide: set_printoptions: precision %I, edgeitems %I or linewidth %I "
                        "out of range",
                        precision, edgeitems, linewidth);
    print_opts o;
    o.precision = (int)precision;
    o.threshold = threshold;
    o.edgeitems = (int64_t)edgeitems;
    o.linewidth = (int64_t)linewidth;
    o.sci = lua_isnil(L, 5) ? -1 : lua_toboolean(L, 5);
    if (lua_rawgetp(L, LUA_REGISTRYINDEX, &print_key) != LUA_TUSERDATA) {
        lua_pop(L, 1);
        lua_newuserdata(L, sizeof(print_opts));
        lua_pushvalue(L, -1);
        lua_rawsetp(L, LUA_REGISTRYINDEX, &print_key);
    }
    *(print_opts *)lua_touserdata(L, -1) = o;
    return 0;
}

void tl_open_format(lua_State *L, int mod) {
    static const luaL_Reg funcs[] = {{"_set_print_options", l_set_print_options}, {NULL, NULL}};
    tl_register(L, mod, funcs);
}

/* a formatted value: at most 309 digits before the point, 100 after, a sign and an exponent */
#define ELEM_BUF 512

typedef struct fmt {
    const tide_tensor *t;
    const print_opts  *o;
    int                summarize, sci, isfloat, isbool, width;
    double             amax, amin; /* over shown finite nonzero values */
} fmt;

static int fmt_elem(const fmt *f, int64_t off, char *buf, size_t n) {
    double v = rd(f->t, off);
    if (f->isbool)
        return snprintf(buf, n, "%s", v != 0 ? "true" : "false");
    if (!f->isfloat) {
        if (tide_tensor_dtype(f->t) == TIDE_DTYPE_I64)
            return snprintf(buf, n, "%lld",
                            (long long)((const int64_t *)tide_tensor_data(f->t))[off]);
        return snprintf(buf, n, "%lld", (long long)v);
    }
    if (isnan(v))
        return snprintf(buf, n, "nan");
    if (isinf(v))
        return snprintf(buf, n, v > 0 ? "inf" : "-inf");
    return snprintf(buf, n, f->sci ? "%.*e" : "%.*f", f->o->precision, v);
}

/* a dim of size n shows its first and last edgeitems around "..." when summarized */
static int cut(const fmt *f, int64_t n) {
    return f->summarize && n > 2 * f->o->edgeitems;
}

/* first pass: widths and the range that decides scientific notation */
static void measure(fmt *f, int d, int64_t off, int pass) {
    const tide_tensor *t = f->t;
    if (d == tide_tensor_ndim(t)) {
        if (pass == 0) {
            double v = fabs(rd(t, off));
            if (isfinite(v) && v != 0) {
                f->amax = v > f->amax ? v : f->amax;
                f->amin = v < f->amin ? v : f->amin;
            }
        } else {
            /* PyTorch's _Formatter: a float tensor's width is that of its nonzero finite
             * values (at least 1; a 0, nan or inf longer than it is not cut) */
            if (f->isfloat) {
                double v = rd(t, off);
                if (!isfinite(v) || v == 0)
                    return;
            }
            char buf[ELEM_BUF];
            int  w = fmt_elem(f, off, buf, sizeof buf);
            f->width = w > f->width ? w : f->width;
        }
        return;
    }
    int64_t n = tide_tensor_shape(t)[d], st = tide_tensor_strides(t)[d], e = f->o->edgeitems;
    int     c = cut(f, n);
    for (int64_t i = 0; i < n; i++) {
        if (c && i == e) { /* the middle is not shown */
            i = n - e - 1;
            continue;
        }
        measure(f, d + 1, off + i * st, pass);
    }
}

/* the items of dim d, "..." for a summarized middle; a row of elements (the last dim) wraps
 * as PyTorch's: as many per line as fit in linewidth after the indent, d (tide's lines have
 * no "tensor(" before them) */
static void emit(luaL_Buffer *b, const fmt *f, int d, int64_t off) {
    const tide_tensor *t = f->t;
    int                nd = tide_tensor_ndim(t);
    if (d == nd) {
        char buf[ELEM_BUF];
        int  w = fmt_elem(f, off, buf, sizeof buf);
        for (int k = w; k < f->width; k++)
            luaL_addchar(b, ' ');
        luaL_addstring(b, buf);
        return;
    }
    int64_t n = tide_tensor_shape(t)[d], st = tide_tensor_strides(t)[d], e = f->o->edgeitems;
    int     c = cut(f, n);
    int64_t per_line = 1;
    if (d == nd - 1) {
        double fit = floor((double)(f->o->linewidth - d) / (double)(f->width + 2));
        per_line = fit > 1 ? (int64_t)fit : 1;
    }
    luaL_addchar(b, '[');
    for (int64_t i = 0, k = 0; i < n; i++, k++) {
        if (k > 0) {
            luaL_addchar(b, ',');
            if (d == nd - 1 && k % per_line != 0)
                luaL_addchar(b, ' ');
            else {
                for (int r = 0; r < (d == nd - 1 ? 1 : nd - d - 1); r++)
                    luaL_addchar(b, '\n');
                for (int s = 0; s <= d; s++)
                    luaL_addchar(b, ' ');
            }
        }
        if (c && i == e) {
            luaL_addstring(b, "...");
            i = n - e - 1; /* the loop goes on at the last edgeitems */
        } else
            emit(b, f, d + 1, off + i * st);
    }
    luaL_addchar(b, ']');
}

int tl_tostring(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    ltensor        *a = luaL_checkudata(L, 1, TL_TENSOR);
    if (!a->t) {
        lua_pushliteral(L, "[tide.Tensor (freed)]");
        return 1;
    }
    const print_opts  *o = print_options(L);
    const tide_tensor *h = tl_host_copy(L, S, a->t, 1);
    fmt        f = {h, o, (double)tide_tensor_numel(h) > o->threshold, 0, 0, 0, 0, 0, INFINITY};
    tide_dtype dt = tide_tensor_dtype(h);
    f.isfloat = tide_dtype_is_float(dt);
    f.isbool = dt == TIDE_DTYPE_BOOL;
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    if (tide_tensor_numel(h) == 0)
        luaL_addstring(&b, "[]");
    else {
        if (f.isfloat) {
            measure(&f, 0, 0, 0);
            f.sci = f.amax > 0 && (f.amax > 1e8 || f.amin < 1e-4 || f.amax / f.amin > 1e3);
            f.width = 1;
        }
        /* the width is measured in the notation the values choose, a forced sci_mode applied
         * after, as PyTorch's _Formatter does */
        measure(&f, 0, 0, 1);
        if (f.isfloat && o->sci >= 0)
            f.sci = o->sci;
        emit(&b, &f, 0, 0);
    }
    char buf[64];
    luaL_addstring(&b, "\n[tide.Tensor of shape [");
    for (int i = 0; i < tide_tensor_ndim(a->t); i++) {
        snprintf(buf, sizeof buf, i ? ", %lld" : "%lld", (long long)tide_tensor_shape(a->t)[i]);
        luaL_addstring(&b, buf);
    }
    luaL_addstring(&b, "], ");
    luaL_addstring(&b, tide_dtype_name(tide_tensor_dtype(a->t)));
    luaL_addstring(&b, ", ");
    luaL_addstring(&b, tide_device_name(tide_tensor_device(a->t)));
    luaL_addchar(&b, ']');
    luaL_pushresult(&b);
    return 1;
}
