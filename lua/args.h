/*
 * args.h — what every binding function does around its core call: take the tensor userdata and
 * the plain arguments, push the result userdata, and let autograd record the op.
 *
 *   userdata.c  view_links.c      the tensor userdata: push, test, check; the links of views
 *                                 of tensors that need no grad (use state.h)
 *   args.c  options.c  record.c   arguments, options tables, the autograd record, the
 *   autocast.c                    autocast casts (use userdata.c and state.h; not each other)
 */
#ifndef TIDE_LUA_ARGS_H
#define TIDE_LUA_ARGS_H

#include "state.h"

/* The tensor userdata; t == NULL means freed. User value 1: the autograd table, lazily. */
typedef struct ltensor {
    const void   *tag; /* userdata.c's tag: the type test */
    tide_tensor  *t;
    int           requires_grad;
    unsigned char follows; /* requires grad because its root took grad (view_links.c) */
    /* a float view made under no_grad (PyTorch's CreationMeta::NO_GRAD_MODE): 1, or 2 when its
     * base required grad; an in-place op on it with grad on is refused (record.c) */
    unsigned char   no_grad_view;
    struct tl_link *link; /* view_links.c: a view's root, a root's views; NULL for most */
} ltensor;

#define TL_TENSOR "tide.Tensor"
/* the names users may write, for messages that list them */
#define TL_DTYPE_NAMES                                                                             \
    "\"float32\", \"float64\", \"float16\", \"bfloat16\", \"int32\", \"int64\", \"uint8\" or "     \
    "\"bool\""
#define TL_DEVICE_NAMES "\"cpu\", \"cpu:N\", \"cuda\" or \"cuda:N\""

/* ---- view_links.c: views of tensors that need no grad, linked to their root ---- */
/* view (at the top of the stack), of base (at base_idx), is linked to base's root */
/* a tensor's user values (5.4): its autograd table, and a linked view's root (view_links.c) */
#define TL_TENSOR_UVS 2
#define TL_ROOT_UV    2
void tl_link_view(lua_State *L, int base_idx, ltensor *base, ltensor *view);
void tl_unlink_views(ltensor *u); /* u is being collected */
/* u (at idx) follows its root: autograd gives it its view node */
void tl_follow_root(lua_State *L, int idx, ltensor *u);
void tl_open_view_links(lua_State *L, int mod); /* core._internal.view_root, views_follow, ... */

/* ---- userdata.c ---- */
ltensor *tl_push_empty(lua_State *L);         /* t == NULL, metatable set */
ltensor *tl_push_like(lua_State *L, int idx); /* the same, given a tensor at idx (faster) */
ltensor *tl_test(lua_State *L, int idx);      /* NULL when not a tensor */
ltensor *tl_check(lua_State *L, int idx, const char *op); /* live tensor */
/* a 0-d tensor of value on dev (for numbers mixed with tensors); a value past dt's range raises
 * naming op, as PyTorch's checked conversion */
ltensor *tl_push_scalar(lua_State *L, tide_lua_state *S, tide_scalar v, tide_dtype dt,
                        tide_device *dev, const char *op);
/* the integer indices t with base 1 (t + 1: the core's 0-based ones as tide returns them) or
 * base 0 (t - 1: the user's 1-based ones for the core) */
ltensor *tl_push_index_base(lua_State *L, tide_lua_state *S, const tide_tensor *t, int base);
/* the core's 0-based int64 indices in idx made 1-based where they lie: idx fresh from the core,
 * held by nothing else (a copy left the 0-based tensor to the collector: 8 MB of a million
 * indices a call, and each call's copy took fresh pages, a quarter of unique's time) */
void tl_one_based(lua_State *L, tide_lua_state *S, ltensor *idx);
/* a tensor the binding made for one call (a 0-based index) and no Lua value holds: its memory
 * back to the allocator's cache now, not at the next collection (a million indices are 8 MB a
 * call; waiting for the collector, each call's copy took fresh pages, a quarter of scatter_add) */
void tl_free_temporary(ltensor *u);
/* pushes the new metatable TL_TENSOR, the one tl_push_empty gives (tensor.c fills it) */
int tl_new_tensor_metatable(lua_State *L);

/* ---- args.c ---- */
/* "a tensor" for a tide tensor at idx, else luaL_typename (for argument errors) */
const char *tl_typename(lua_State *L, int idx);
/* whether the value at idx is a table whose metatable's __name is `name` (the Lua tensor
 * classes: "SparseTensor", "ComplexTensor") */
int tl_is_class_table(lua_State *L, int idx, const char *name);
/* the __name of the complex tensors' class (lua/tide/complex/tensor.lua) */
#define TL_COMPLEX_CLASS "ComplexTensor"
/* (userdata.c) tide.abs(z), tide.gather(z, ...) ... of a complex tensor at 1 (a Lua class):
 * calls its method `name` with the arguments, which computes it or raises naming what complex
 * tensors support; returns the results' count */
int tl_complex_method(lua_State *L, const char *name);
/* the __name of the sparse COO tensors' class (lua/tide/sparse/coo.lua) */
#define TL_SPARSE_CLASS "SparseTensor"
/* whether the value at idx asks for a complex result: a dtype name "complex...", an options
 * table whose dtype is one, or a complex tensor (the Lua class "ComplexTensor") */
int tl_wants_complex(lua_State *L, int idx);
/* PyTorch wraps dim 0 and -1 of a 0-d tensor as those of its one element (torch.tensor(3).sum(0)
 * is tensor(3)): with a 0-d tensor at 1 and a dim of 1 or -1 at 2, the method `name` runs on its
 * 1-d view and each tensor result is viewed 0-d again (gradients flow through both views);
 * returns the number of results pushed, or -1 (nothing pushed) where that is not the case */
int tl_scalar_dim(lua_State *L, const char *name);
/* PyTorch 1.13's deprecated byte mask: a uint8 tensor at idx is replaced there by its bool
 * version (nonzero is true), with PyTorch's warning (key, msg) once; any other value is left */
void tl_byte_mask_to_bool(lua_State *L, int idx, const char *key, const char *msg);
/* raises `tide: <op>: expected at most n arguments, got m (...)` when an argument past n (self
 * counted) is not nil, then sets the top to n: a method's `lua_settop(L, n)` that drops nothing */
void tl_max_args_slow(lua_State *L, int n, const char *op);
/* inline: the common call has no extra argument, one compare (a + b runs through it) */
static inline void tl_max_args(lua_State *L, int n, const char *op) {
    if (lua_gettop(L) > n)
        tl_max_args_slow(L, n, op);
    else
        lua_settop(L, n);
}
/* the length of the list at idx; raises `tide: <op>: <what> must be a list ...` for a key
 * outside 1..#t (an options table given where sizes or dims go) */
int         tl_check_list(lua_State *L, int idx, const char *op, const char *what);
double      tl_opt_number(lua_State *L, int idx, double def, const char *op, const char *what);
lua_Integer tl_check_int(lua_State *L, int idx, const char *op, const char *what);
double      tl_check_number(lua_State *L, int idx, const char *op, const char *what);
const char *tl_check_string(lua_State *L, int idx, const char *op, const char *what);
/* the number or boolean at idx (already checked) as a tide_scalar: a Lua integer stays exact */
tide_scalar tl_scalar(lua_State *L, int idx);
/* lua_isinteger, save that on 5.1 and LuaJIT (an integral double reads as an integer) -0.0 is
 * a float, as on 5.3+: t[i] = -0.0, tide.tensor(-0.0), tide.full(s, -0.0) keep its sign */
int tl_isinteger(lua_State *L, int idx);
/* the 0-based dim of 1-based (or negative) d for t (with extra more dims), or raises */
int tl_dim(lua_State *L, const tide_tensor *t, lua_Integer d, const char *op, int extra);
/* reads a shape given as integers or one table starting at idx; returns the number of args used */
int tl_shape(lua_State *L, int idx, int64_t *shape, int *ndim, const char *op, int allow_neg1);

/* ---- options.c ---- */
/* raises `tide: <op>: unknown option "x" (did you mean "y"?)` for a key of the table at idx
 * outside known, "not supported yet" for one in unsupported; both lists end with NULL */
/* the name of names within two edits of key (the closest), or NULL: for "did you mean" */
const char *tl_closest(const char *key, const char *const *names);
void        tl_check_options(lua_State *L, int idx, const char *op, const char *const *known,
                             const char *const *unsupported);
void        tl_open_options(lua_State *L, int mod); /* core._check_options */

/* require(mod)[fname](...) on this call's arguments, for a form written in Lua; its errors
 * raised again at the user's line (lua/context.c) */
int tl_call_lua(lua_State *L, const char *mod, const char *fname);

/* ---- record.c ---- */
/* before an in-place op: refuses a leaf that requires grad; returns the arguments to record
 * after it (0: none), for tl_inplace_done */
int  tl_check_inplace(lua_State *L, tide_lua_state *S, ltensor *self, const char *op);
void tl_inplace_done(lua_State *L, tide_lua_state *S, const char *op, int nargs);
/* raises `<op>: not differentiable` when grad mode is on and one of args 1..nargs requires grad */
void tl_not_differentiable(lua_State *L, tide_lua_state *S, const char *op, int nargs);
/* after a differentiable op: hook(name, out, args) when grad mode is on and an arg needs it */
void tl_record(lua_State *L, tide_lua_state *S, const char *name, int nargs, int out_idx,
               int extra_idx);
int  tl_needs_record(lua_State *L, tide_lua_state *S, int nargs);
/* after a new result at the top of the stack: gc hint, and autograd records it as name (NULL:
 * no record) with args 1..nargs; returns 1 */
int tl_done(lua_State *L, tide_lua_state *S, const char *name, int nargs);
/* the same for a view result (no new bytes) */
int  tl_done_view(lua_State *L, tide_lua_state *S, ltensor *a, const char *name, int nargs);
void tl_open_record(lua_State *L, int mod); /* set_autograd_hook, set_grad_enabled, ... */

/* ---- autocast.c ---- */
enum { TL_AUTOCAST_LOWER = 1, TL_AUTOCAST_FP32 = 2 }; /* PyTorch's two autocast cast policies */
/* Under an autocast region: the float tensors among arguments first..last replaced on the
 * stack by their casts (LOWER: to the region's dtype; FP32: to float32). Call it before
 * taking the arguments' ltensor pointers. */
#define TL_AUTOCAST(L, S, policy, first, last)                                                     \
    do {                                                                                           \
        if ((S)->autocast_ref != LUA_NOREF)                                                        \
            tl_autocast(L, S, policy, first, last);                                                \
    } while (0)
void tl_autocast(lua_State *L, tide_lua_state *S, int policy, int first, int last);
void tl_open_autocast(lua_State *L, int mod); /* _internal.set_autocast */

#endif /* TIDE_LUA_ARGS_H */
