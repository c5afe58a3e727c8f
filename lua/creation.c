/* creation.c — tide.tensor, zeros, ones, empty, full, rand, randn, arange, eye, randperm,
 * manual_seed, the generator's state, and core._randperm (a seeded permutation for the data
 * loader's shuffling). */
#include "binding.h"
#include <string.h>

typedef struct copts {
    tide_device *dev;
    tide_dtype   dt;
    int          has_dt;
    int          requires_grad;
    const char  *layout; /* empty's memory_format: "channels_last"(_3d), else NULL */
} copts;

/* empty's memory_format, PyTorch's names: "contiguous_format" (tide's layout), "channels_last"
 * (4-D) or "channels_last_3d" (5-D), both checked by rank and made row-major; "preserve_format"
 * is refused as PyTorch refuses it. Anything else raises naming the four. */
static const char *read_memory_format(lua_State *L, int idx, const char *op) {
    const char *name = lua_type(L, idx) == LUA_TSTRING ? lua_tostring(L, idx) : NULL;
    if (name && strcmp(name, "contiguous_format") == 0)
        return NULL;
    if (name && strcmp(name, "channels_last") == 0)
        return "channels_last"; /* static: the Lua string may go */
    if (name && strcmp(name, "channels_last_3d") == 0)
        return "channels_last_3d";
    if (name && strcmp(name, "preserve_format") == 0)
        tl_error(L,
                 "tide: %s: memory_format \"preserve_format\" is not supported by %s (as "
                 "PyTorch's); leave it out or pass \"contiguous_format\"",
                 op, op);
    if (name)
        tl_error(L,
                 "tide: %s: memory_format must be \"contiguous_format\", \"preserve_format\", "
                 "\"channels_last\" or \"channels_last_3d\", got \"%s\"",
                 op, name);
    tl_error(L,
             "tide: %s: memory_format must be \"contiguous_format\", \"preserve_format\", "
             "\"channels_last\" or \"channels_last_3d\", got %s",
             op, luaL_typename(L, idx));
    return NULL;
}

/* opts = {device =, dtype =, requires_grad =} at idx (absent: defaults) */
static void read_opts(lua_State *L, tide_lua_state *S, int idx, const char *op, copts *o) {
    o->dev = tl_default_device(S);
    o->dt = tide_default_float();
    o->has_dt = 0;
    o->requires_grad = 0;
    o->layout = NULL;
    if (lua_isnoneornil(L, idx))
        return;
    if (lua_type(L, idx) != LUA_TTABLE)
        tl_error(L, "tide: %s: options must be a table such as {device = \"cuda\"}, got %s", op,
                 luaL_typename(L, idx));
    static const char *const known[] = {"device", "dtype", "requires_grad", NULL};
    static const char *const known_empty[] = {"device", "dtype", "requires_grad", "memory_format",
                                              NULL};
    int                      is_empty = strcmp(op, "empty") == 0;
    tl_check_options(L, idx, op, is_empty ? known_empty : known, NULL);
    idx = lua_absindex(L, idx);
    if (is_empty && lua_getfield(L, idx, "memory_format") != LUA_TNIL)
        o->layout = read_memory_format(L, -1, op);
    if (is_empty)
        lua_pop(L, 1);
    if (lua_getfield(L, idx, "device") != LUA_TNIL)
        o->dev = tl_check_device(L, -1, op);
    lua_pop(L, 1);
    if (lua_getfield(L, idx, "dtype") != LUA_TNIL) {
        const char *name = lua_tostring(L, -1);
        if (lua_type(L, -1) != LUA_TSTRING || tide_dtype_from_name(name, &o->dt) != TIDE_OK)
            tl_error(L,
                     "tide: %s: unknown dtype %s; use \"float32\", \"float64\", \"float16\", "
                     "\"bfloat16\", \"int32\", \"int64\", \"uint8\" or \"bool\"",
                     op, name ? name : luaL_typename(L, -1));
        o->has_dt = 1;
    }
    lua_pop(L, 1);
    lua_getfield(L, idx, "requires_grad");
    o->requires_grad = lua_toboolean(L, -1);
    lua_pop(L, 1);
}

/* the dtype of numbers without opts.dtype: int64 when every one is an integer, else the default
 * float dtype. Where Lua has no integer subtype (5.1, LuaJIT) 2.0 reads as 2, so a tensor asked
 * to require grad (which must be floating) is floating there (docs/API.md, "Hosts") */
static tide_dtype numbers_dtype(int allint, const copts *o) {
#if TL_NO_INTEGERS
    if (o->requires_grad)
        return tide_default_float();
#else
    (void)o;
#endif
    return allint ? TIDE_DTYPE_I64 : tide_default_float();
}

/* applies opts.requires_grad to the new tensor on top of the stack */
static void finish(lua_State *L, tide_lua_state *S, const copts *o, const char *op) {
    ltensor *r = lua_touserdata(L, -1);
    if (o->requires_grad) {
        if (!tide_dtype_is_float(tide_tensor_dtype(r->t)))
            tl_error(L,
                     "tide: %s: only floating-point tensors can require gradients, this one "
                     "is %s; pass dtype = \"float32\"",
                     op, tide_dtype_name(tide_tensor_dtype(r->t)));
        r->requires_grad = 1;
    }
    tl_gc_hint(L, S, tide_tensor_nbytes(r->t));
}

static ltensor *push_new(lua_State *L, tide_lua_state *S, const copts *o, int ndim,
                         const int64_t *shape, const char *op) {
    ltensor *r = tl_push_empty(L);
    TL_CALL_AS(L, S, tide_tensor_empty(S->ctx, o->dev, o->dt, ndim, shape, &r->t), "empty", op);
    return r;
}

/* PyTorch's size= by name, the call's one argument a table holding it (tide.zeros({size = {2,
 * 3}, dtype = "float64"}), torch.zeros(size=(2, 3), dtype=...)): replaced by the size, then
 * the table's other keys as the options */
static void size_by_name(lua_State *L, const char *op) {
    if (lua_gettop(L) != 1 || lua_type(L, 1) != LUA_TTABLE)
        return;
    lua_pushliteral(L, "size");
    if (lua_rawget(L, 1) == LUA_TNIL) { /* raw: a tide.Size (x.shape) has no such key */
        lua_pop(L, 1);
        return;
    }
    if (lua_rawlen(L, 1) > 0)
        tl_error(L, "tide: %s: the shape given twice, as a list and as size; pass it once", op);
    if (lua_type(L, -1) != LUA_TTABLE && lua_type(L, -1) != LUA_TNUMBER)
        tl_error(L, "tide: %s: size must be a list of sizes such as {2, 3}, got %s", op,
                 luaL_typename(L, -1));
    lua_newtable(L); /* the options: every key but size */
    lua_pushnil(L);
    while (lua_next(L, 1)) {
        if (lua_type(L, -2) == LUA_TSTRING && strcmp(lua_tostring(L, -2), "size") == 0) {
            lua_pop(L, 1);
            continue;
        }
        lua_pushvalue(L, -2);
        lua_insert(L, -2);
        lua_settable(L, -4);
    }
    lua_remove(L, 1); /* size, options */
}

/* a complex dtype in the trailing options (tide.zeros(2, {dtype = tide.cfloat})): complex tensors
 * are a Lua class over a real [..., 2] tensor (lua/tide/complex/tensor.lua), so the call goes to
 * require("tide.complex").factory(op, ...) with its arguments */
static int wants_complex(lua_State *L) {
    int top = lua_gettop(L);
    while (top > 0 && lua_isnil(L, top))
        top--;
    return top >= 2 && lua_type(L, top) == LUA_TTABLE && tl_wants_complex(L, top);
}

static int complex_factory(lua_State *L, const char *op) {
    lua_pushstring(L, op);
    lua_insert(L, 1);
    return tl_call_lua(L, "tide.complex", "factory");
}

/* zeros/ones/empty/rand/randn(shape..., opts); made filled by the core, so that a new tensor
 * has counted no in-place write (version 0) */
static int filled(lua_State *L, const char *op, int kind) {
    tide_lua_state *S = TL_STATE(L);
    int64_t         shape[TIDE_MAX_DIMS];
    int             ndim;
    if (wants_complex(L))
        return complex_factory(L, op);
    size_by_name(L, op);
    int   used = tl_shape(L, 1, shape, &ndim, op, 0);
    copts o;
    read_opts(L, S, 1 + used, op, &o);
    ltensor *r;
    switch (kind) {
    case 0:
    case 1:
        r = tl_push_empty(L);
        TL_CALL_AS(L, S,
                   tide_tensor_full(S->ctx, o.dev, o.dt, ndim, shape, tide_scalar_i(kind), &r->t),
                   "full", op);
        break;
    case 2:
    case 3:
        r = tl_push_empty(L);
        TL_CALL(L, S,
                tide_tensor_random(S->ctx, o.dev, o.dt, ndim, shape,
                                   kind == 2 ? TIDE_RANDOM_UNIFORM : TIDE_RANDOM_NORMAL, 0, 1,
                                   &r->t));
        break;
    default:
        if (o.layout) {
            int rank = strcmp(o.layout, "channels_last") == 0 ? 4 : 5;
            if (ndim != rank)
                tl_error(L,
                         "tide: %s: memory_format \"%s\" needs a %d-D tensor, got %d-D (as "
                         "PyTorch's); leave it out or pass \"contiguous_format\"",
                         op, o.layout, rank, ndim);
        }
        push_new(L, S, &o, ndim, shape, op); /* empty */
        break;
    }
    finish(L, S, &o, op);
    return 1;
}

static int l_zeros(lua_State *L) {
    return filled(L, "zeros", 0);
}
static int l_ones(lua_State *L) {
    return filled(L, "ones", 1);
}
static int l_rand(lua_State *L) {
    return filled(L, "rand", 2);
}
static int l_randn(lua_State *L) {
    return filled(L, "randn", 3);
}
static int l_empty(lua_State *L) {
    return filled(L, "empty", 4);
}

/* full(shape, value, opts): shape is a table, or integers followed by the value */
static int l_full(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    int64_t         shape[TIDE_MAX_DIMS];
    int             ndim = 0, vidx;
    if (wants_complex(L))
        return complex_factory(L, "full");
    for (int i = 1, n = lua_gettop(L); i <= n; i++)
        if (tl_test(L, i)) /* a 0-d tensor as the value (PyTorch's), in Lua */
            return tl_call_lua(L, "tide.creation_like", "full_of_tensors");
    if (lua_type(L, 1) == LUA_TTABLE) {
        tl_shape(L, 1, shape, &ndim, "full", 0);
        vidx = 2;
    } else {
        int n = 0;
        while (lua_type(L, 1 + n) == LUA_TNUMBER)
            n++;
        if (n < 1)
            return tl_error(L, "tide: full: expected a shape and a value, as in "
                               "tide.full({2, 3}, 7)");
        vidx = n; /* the last number is the value */
        lua_pushnil(L);
        lua_insert(L, vidx); /* stop tl_shape before the value */
        tl_shape(L, 1, shape, &ndim, "full", 0);
        lua_remove(L, vidx);
    }
    int isbool = lua_isboolean(L, vidx);
    if (!isbool && lua_type(L, vidx) != LUA_TNUMBER)
        return tl_error(L, "tide: full: the fill value must be a number or a boolean, got %s",
                        luaL_typename(L, vidx));
    tide_scalar v = tl_scalar(L, vidx);
    copts       o;
    read_opts(L, S, vidx + 1, "full", &o);
    if (!o.has_dt)
        o.dt = isbool ? TIDE_DTYPE_BOOL : numbers_dtype(tl_isinteger(L, vidx), &o);
    ltensor *r = tl_push_empty(L);
    TL_CALL(L, S, tide_tensor_full(S->ctx, o.dev, o.dt, ndim, shape, v, &r->t));
    finish(L, S, &o, "full");
    return 1;
}

/* where the options table of a creation call stands: first, or past nils given for optional
 * numbers (tide.arange(3, nil, {dtype = ...}) once read no options there and ran float-less) */
static int opts_at(lua_State *L, int first) {
    int top = lua_gettop(L);
    while (top > first && lua_isnil(L, top))
        top--;
    if (top <= first)
        return first;
    for (int i = first; i < top; i++)
        if (!lua_isnil(L, i))
            return first; /* read_opts reports what stands there */
    return top;
}

/* arange([start,] stop[, step], opts): int64 when every number is an integer, else the default
 * float dtype */
static int l_arange(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    int             n = 0, allint = 1;
    while (n < 3 && lua_type(L, 1 + n) == LUA_TNUMBER) {
        allint &= tl_isinteger(L, 1 + n);
        n++;
    }
    if (n == 0)
        return tl_error(L, "tide: arange: expected numbers, as in tide.arange(1, 5) or "
                           "tide.arange(0, 1, 0.25)");
    double start = n >= 2 ? lua_tonumber(L, 1) : 0;
    double stop = n >= 2 ? lua_tonumber(L, 2) : lua_tonumber(L, 1);
    double step = n == 3 ? lua_tonumber(L, 3) : 1;
    int    oi = opts_at(L, n + 1);
    if (oi > n + 1 && lua_type(L, oi) == LUA_TNUMBER) /* arange(5, nil, 2): a step, no end */
        return tl_error(L,
                        "tide: arange: argument #%d, a number, follows a nil; give start, end "
                        "and step in order, as in tide.arange(0, 5, 2)",
                        oi);
    copts o;
    read_opts(L, S, oi, "arange", &o);
    if (!o.has_dt)
        o.dt = numbers_dtype(allint, &o);
    ltensor *r = tl_push_empty(L);
    TL_CALL(L, S, tide_arange(S->ctx, o.dev, o.dt, start, stop, step, &r->t));
    finish(L, S, &o, "arange");
    return 1;
}

/* the integer argument at idx, or a tide error naming op and what it is */
static lua_Integer int_arg(lua_State *L, int idx, const char *op, const char *what) {
    int         isint;
    lua_Integer v = lua_tointegerx(L, idx, &isint);
    if (!isint || lua_type(L, idx) != LUA_TNUMBER)
        tl_error(L, "tide: %s: expected %s to be an integer, got %s", op, what,
                 lua_type(L, idx) == LUA_TNUMBER ? lua_tostring(L, idx) : luaL_typename(L, idx));
    return v;
}

/* eye(n[, m], opts): zeros, then its main diagonal (a view, stride m + 1) filled with 1, on the
 * device itself (arange(n):view(n, 1) == arange(m) cast to the dtype took three passes) */
static int l_eye(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    if (wants_complex(L)) /* tide.eye(n, {dtype = tide.cfloat}): ones on the diagonal, + 0j */
        return complex_factory(L, "eye");
    lua_Integer n = int_arg(L, 1, "eye", "n");
    int         has_m = lua_type(L, 2) == LUA_TNUMBER;
    lua_Integer m = has_m ? int_arg(L, 2, "eye", "m") : n;
    if (n < 0 || m < 0)
        return tl_error(L, "tide: eye: sizes %I and %I must be non-negative", (lua_Integer)n,
                        (lua_Integer)m);
    copts o;
    read_opts(L, S, opts_at(L, has_m ? 3 : 2), "eye", &o);
    if (n > 0 && m > INT64_MAX / n)
        return tl_error(L, "tide: eye: %I x %I has more elements than fit in 64 bits",
                        (lua_Integer)n, (lua_Integer)m);
    ltensor *diag = tl_push_empty(L), *r = tl_push_empty(L);
    int64_t  shape[2] = {n, m};
    /* the helpers' errors (out of memory) are named eye, the op the user called */
    TL_CALL_AS(L, S, tide_tensor_full(S->ctx, o.dev, o.dt, 2, shape, tide_scalar_i(0), &r->t),
               "full", "eye");
    if (n > 0 && m > 0) {
        TL_CALL(L, S, tide_tensor_diagonal(r->t, 0, 0, 1, &diag->t));
        TL_CALL_AS(L, S, tide_fill_x_(S->ctx, diag->t, tide_scalar_i(1)), "fill_", "eye");
    }
    finish(L, S, &o, "eye");
    return 1;
}

/* splitmix64: small, good enough to shuffle, and the same on every machine */
static uint64_t splitmix(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* p[0..n) <- 1..n shuffled by seed (Fisher-Yates): the same on every machine */
static void shuffle(int64_t *p, int64_t n, uint64_t seed) {
    for (int64_t i = 0; i < n; i++)
        p[i] = i + 1;
    for (int64_t i = n - 1; i > 0; i--) {
        /* multiply-shift maps 64 random bits onto [0, i] without a modulo's bias worth noting */
        int64_t j = (int64_t)(((unsigned __int128)splitmix(&seed) * (uint64_t)(i + 1)) >> 64);
        int64_t c = p[i];
        p[i] = p[j];
        p[j] = c;
    }
}

/* randperm(n[, opts]): 1..n in a random order (1-based, as every index), int64 by default;
 * the order comes from tide's generator, so tide.manual_seed makes it reproducible */
static int l_randperm(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    lua_Integer     n = int_arg(L, 1, "randperm", "n");
    if (n < 0)
        return tl_error(L, "tide: randperm: n = %I is negative; expected a count >= 0",
                        (lua_Integer)n);
    copts o;
    read_opts(L, S, 2, "randperm", &o);
    if (!o.has_dt)
        o.dt = TIDE_DTYPE_I64;
    tide_device *cpu;
    tide_device_get_index(TIDE_DEVICE_CPU, 0, &cpu);
    int64_t  two = 2, shape[1] = {n};
    ltensor *u = tl_push_empty(L), *h = tl_push_empty(L);
    TL_CALL_AS(
        L, S,
        tide_tensor_random(S->ctx, cpu, TIDE_DTYPE_F64, 1, &two, TIDE_RANDOM_UNIFORM, 0, 1, &u->t),
        "rand", "randperm");
    const double *r = tide_tensor_data(u->t);
    uint64_t      seed = (uint64_t)(r[0] * 4294967296.0) << 32 | (uint64_t)(r[1] * 4294967296.0);
    TL_CALL_AS(L, S, tide_tensor_empty(S->ctx, cpu, TIDE_DTYPE_I64, 1, shape, &h->t), "empty",
               "randperm");
    shuffle(tide_tensor_data(h->t), n, seed);
    if (o.dev != cpu || o.dt != TIDE_DTYPE_I64) {
        ltensor *r2 = tl_push_empty(L);
        TL_CALL_AS(L, S, tide_tensor_to(S->ctx, h->t, o.dev, o.dt, 0, &r2->t), "to", "randperm");
    }
    finish(L, S, &o, "randperm");
    return 1;
}

/* core._randperm(n, seed) -> host int64 tensor holding 1..n shuffled: the data loader's
 * reproducible epochs (the public tide.randperm(n[, opts]) draws its seed from tide's generator) */
static int l_randperm_seeded(lua_State *L) {
    lua_Integer n = luaL_checkinteger(L, 1);
    uint64_t    seed = (uint64_t)luaL_checkinteger(L, 2);
    if (n < 0)
        return tl_error(L, "tide: randperm: n = %I is negative", n);
    tide_lua_state *S = TL_STATE(L);
    tide_device    *cpu = NULL;
    tide_device_get_index(TIDE_DEVICE_CPU, 0, &cpu);
    int64_t  shape[1] = {n};
    ltensor *r = tl_push_empty(L);
    TL_CALL(L, S, tide_tensor_empty(S->ctx, cpu, TIDE_DTYPE_I64, 1, shape, &r->t));
    shuffle(tide_tensor_data(r->t), n, seed);
    return 1;
}

/* tide.set_default_dtype(name), tide.get_default_dtype(): PyTorch's default dtype (the core's
 * tide_set_default_float), "float32" or "float64" */
static int l_set_default_dtype(lua_State *L) {
    tl_max_args(L, 1, "set_default_dtype");
    const char *name = tl_check_string(L, 1, "set_default_dtype", "the dtype");
    tide_dtype  dt;
    if (tide_dtype_from_name(name, &dt) != TIDE_OK || tide_set_default_float(dt) != TIDE_OK)
        return tl_error(L,
                        "tide: set_default_dtype: the default dtype is \"float32\" or "
                        "\"float64\", got %s",
                        name);
    return 0;
}

static int l_get_default_dtype(lua_State *L) {
    tl_max_args(L, 0, "get_default_dtype");
    lua_pushstring(L, tide_dtype_name(tide_default_float()));
    return 1;
}

static int l_manual_seed(lua_State *L) {
    lua_Integer seed = int_arg(L, 1, "manual_seed", "the seed");
    tide_ctx_manual_seed(TL_STATE(L)->ctx, (uint64_t)seed);
    return 0;
}

/* core._rng_state() -> 16 bytes: the generator's seed and offset, little-endian (a string, so
 * the 64-bit values pass exactly on Lua 5.1 too); tide.get_rng_state wraps it */
static int l_rng_state(lua_State *L) {
    uint64_t      v[2];
    unsigned char b[16];
    tide_ctx_rng_state(TL_STATE(L)->ctx, &v[0], &v[1]);
    for (int i = 0; i < 16; i++)
        b[i] = (unsigned char)(v[i / 8] >> (8 * (i % 8)));
    lua_pushlstring(L, (const char *)b, sizeof b);
    return 1;
}

/* core._set_rng_state(bytes): the inverse of _rng_state (tide.set_rng_state checks first) */
static int l_set_rng_state(lua_State *L) {
    size_t               n;
    const unsigned char *b = (const unsigned char *)luaL_checklstring(L, 1, &n);
    uint64_t             v[2] = {0, 0};
    if (n != 16)
        tl_error(L, "tide: set_rng_state: expected 16 bytes of state, got %d", (int)n);
    for (int i = 0; i < 16; i++)
        v[i / 8] |= (uint64_t)b[i] << (8 * (i % 8));
    tide_ctx_set_rng_state(TL_STATE(L)->ctx, v[0], v[1]);
    return 0;
}

/* ---- tide.tensor(nested table or number, opts) -------------------------------------------- */

enum { K_INT = 1, K_FLOAT = 2, K_BOOL = 4, K_TENSOR = 8 };

/* checks the nesting against shape (depth d) and collects the kinds of leaves */
static void scan(lua_State *L, int idx, int d, int ndim, const int64_t *shape, int *kinds) {
    if (d == ndim) {
        switch (lua_type(L, idx)) {
        case LUA_TNUMBER:
            *kinds |= tl_isinteger(L, idx) ? K_INT : K_FLOAT;
            return;
        case LUA_TBOOLEAN:
            *kinds |= K_BOOL;
            return;
        case LUA_TTABLE:
            tl_error(L,
                     "tide: tensor: the nested table is ragged: a table at depth %d where "
                     "numbers were expected from the first row",
                     d + 1);
            return;
        default:
            if (luaL_testudata(L, idx, TL_TENSOR)) { /* PyTorch's one-element tensors */
                *kinds |= K_TENSOR;
                return;
            }
            tl_error(L, "tide: tensor: elements must be numbers or booleans, got %s",
                     luaL_typename(L, idx));
            return;
        }
    }
    if (lua_type(L, idx) != LUA_TTABLE)
        tl_error(L,
                 "tide: tensor: the nested table is ragged: %s at depth %d where a table "
                 "of %I was expected",
                 luaL_typename(L, idx), d + 1, (lua_Integer)shape[d]);
    if ((int64_t)lua_rawlen(L, idx) != shape[d])
        tl_error(L,
                 "tide: tensor: the nested table is ragged: a row of %d at depth %d where "
                 "the first row has %I; every row must have the same length",
                 (int)lua_rawlen(L, idx), d + 1, (lua_Integer)shape[d]);
    for (int64_t i = 1; i <= shape[d]; i++) {
        lua_rawgeti(L, idx, (lua_Integer)i);
        scan(L, lua_gettop(L), d + 1, ndim, shape, kinds);
        lua_pop(L, 1);
    }
}

/* v clamped to [lo, hi] (NaN -> 0), as the core's casts and fill_ saturate: a plain C cast
 * of an out-of-range float is undefined */
static lua_Integer sat(lua_State *L, int idx, lua_Integer lo, lua_Integer hi) {
    if (tl_isinteger(L, idx)) {
        lua_Integer v = lua_tointeger(L, idx);
        return v < lo ? lo : v > hi ? hi : v;
    }
    double v = lua_tonumber(L, idx);
    if (v != v)
        return 0;
    if (v <= (double)lo)
        return lo;
    if (v >= (double)hi) /* (double)INT64_MAX rounds up to 2^63, itself out of range */
        return hi;
    return (lua_Integer)v;
}

static void put(void *data, tide_dtype dt, int64_t i, lua_State *L, int idx) {
    int isbool = lua_isboolean(L, idx);
    /* a number out of an integer dtype's range raises, as PyTorch's torch.tensor([3e9],
     * dtype=torch.int32) (it saturated); a negative one down to -255 wraps into uint8 */
    if (!isbool && (dt == TIDE_DTYPE_I32 || dt == TIDE_DTYPE_I64 || dt == TIDE_DTYPE_U8)) {
        tide_scalar v = tl_scalar(L, idx);
        if (tide_scalar_fits("tensor", dt, v) != TIDE_OK)
            tl_error(L, "%s", tide_errmsg());
        if (dt == TIDE_DTYPE_U8 && (v.is_int ? v.i : v.d) < 0) {
            ((uint8_t *)data)[i] = (uint8_t)((v.is_int ? v.i : (int64_t)v.d) & 0xff);
            return;
        }
    }
    lua_Integer iv = isbool                 ? lua_toboolean(L, idx)
                     : dt == TIDE_DTYPE_I32 ? sat(L, idx, INT32_MIN, INT32_MAX)
                     : dt == TIDE_DTYPE_U8  ? sat(L, idx, 0, UINT8_MAX)
                                            : sat(L, idx, LUA_MININTEGER, LUA_MAXINTEGER);
    double      fv = isbool ? (double)lua_toboolean(L, idx) : lua_tonumber(L, idx);
    switch (dt) {
    case TIDE_DTYPE_F32:
        ((float *)data)[i] = (float)fv;
        break;
    case TIDE_DTYPE_F64:
        ((double *)data)[i] = fv;
        break;
    case TIDE_DTYPE_I32:
        ((int32_t *)data)[i] = (int32_t)iv;
        break;
    case TIDE_DTYPE_I64:
        ((int64_t *)data)[i] = (int64_t)iv;
        break;
    case TIDE_DTYPE_U8:
        ((uint8_t *)data)[i] = (uint8_t)iv;
        break;
    case TIDE_DTYPE_BOOL:
        ((uint8_t *)data)[i] = fv != 0;
        break;
    default:
        break;
    }
}

static void fill_from(lua_State *L, int idx, int d, int ndim, const int64_t *shape, void *data,
                      tide_dtype dt, int64_t *pos) {
    if (d == ndim) {
        put(data, dt, (*pos)++, L, idx);
        return;
    }
    for (int64_t i = 1; i <= shape[d]; i++) {
        lua_rawgeti(L, idx, (lua_Integer)i);
        fill_from(L, lua_gettop(L), d + 1, ndim, shape, data, dt, pos);
        lua_pop(L, 1);
    }
}

static int l_tensor(lua_State *L) {
    tide_lua_state *S = TL_STATE(L);
    int64_t         shape[TIDE_MAX_DIMS];
    int             ndim = 0, kinds = 0;
    int             t = lua_type(L, 1);
    if (wants_complex(L))
        return complex_factory(L, "tensor");
    if (tl_test(L, 1) || tl_is_class_table(L, 1, TL_COMPLEX_CLASS)) /* torch.tensor(t): a copy */
        return tl_call_lua(L, "tide.creation_like", "tensor_of_tensors");
    if (t != LUA_TTABLE && t != LUA_TNUMBER && t != LUA_TBOOLEAN)
        return tl_error(L, "tide: tensor: expected a number, a boolean or a nested table, got %s",
                        luaL_typename(L, 1));
    lua_pushvalue(L, 1); /* find the shape down the first elements */
    while (lua_type(L, -1) == LUA_TTABLE) {
        if (ndim == TIDE_MAX_DIMS)
            return tl_error(L, "tide: tensor: the table nests deeper than %d dims", TIDE_MAX_DIMS);
        shape[ndim++] = (int64_t)lua_rawlen(L, -1);
        if (shape[ndim - 1] == 0)
            break;
        lua_rawgeti(L, -1, 1);
        lua_remove(L, -2);
    }
    lua_pop(L, 1);
    scan(L, 1, 0, ndim, shape, &kinds);
    if (kinds & K_TENSOR) { /* their values, and PyTorch's dtype of them (in Lua) */
        lua_settop(L, 2);
        return tl_call_lua(L, "tide.creation_like", "tensor_of_tensors");
    }
    copts o;
    read_opts(L, S, 2, "tensor", &o);
    /* booleans among numbers count as 0 and 1, as PyTorch's ({true, 2} is int64 {1, 2}) */
    if (!o.has_dt)
        o.dt = !(kinds & (K_INT | K_FLOAT)) && (kinds & K_BOOL)
                   ? TIDE_DTYPE_BOOL
                   : numbers_dtype(!(kinds & K_FLOAT) && kinds != 0, &o);
    /* written in place on a CPU device (host memory); staged on the host for others; half
     * types are written as float32 and converted on the target device */
    int          half = o.dt == TIDE_DTYPE_F16 || o.dt == TIDE_DTYPE_BF16;
    tide_dtype   wdt = half ? TIDE_DTYPE_F32 : o.dt;
    tide_device *wdev = o.dev;
    if (tide_device_type_of(o.dev) != TIDE_DEVICE_CPU)
        tide_device_get_index(TIDE_DEVICE_CPU, 0, &wdev);
    ltensor *w = tl_push_empty(L);
    TL_CALL_AS(L, S, tide_tensor_empty(S->ctx, wdev, wdt, ndim, shape, &w->t), "empty", "tensor");
    int64_t pos = 0;
    fill_from(L, 1, 0, ndim, shape, tide_tensor_data(w->t), wdt, &pos);
    if (wdev != o.dev || wdt != o.dt) {
        ltensor *r = tl_push_empty(L);
        TL_CALL(L, S, tide_tensor_to(S->ctx, w->t, o.dev, o.dt, 0, &r->t));
    }
    finish(L, S, &o, "tensor");
    return 1;
}

void tl_open_creation(lua_State *L, int mod) {
    static const luaL_Reg funcs[] = {{"tensor", l_tensor},
                                     {"zeros", l_zeros},
                                     {"ones", l_ones},
                                     {"empty", l_empty},
                                     {"full", l_full},
                                     {"rand", l_rand},
                                     {"randn", l_randn},
                                     {"arange", l_arange},
                                     {"eye", l_eye},
                                     {"manual_seed", l_manual_seed},
                                     {"set_default_dtype", l_set_default_dtype},
                                     {"get_default_dtype", l_get_default_dtype},
                                     {"randperm", l_randperm},
                                     {NULL, NULL}};
    static const luaL_Reg rng[] = {{"_rng_state", l_rng_state},
                                   {"_set_rng_state", l_set_rng_state},
                                   {"_randperm", l_randperm_seeded},
                                   {NULL, NULL}};
    tl_register(L, mod, funcs);
    tl_register(L, mod, rng);
}
