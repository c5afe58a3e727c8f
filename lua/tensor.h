/*
 * tensor.h — the Tensor and Device types of the binding, on top of args.h:
 *
 *   device.c  format.c   device objects and the default device; tostring, totable
 *   tensor.c             the tide.Tensor metatable: lifetime, properties, t[i], arithmetic
 *                        (uses device.c and format.c)
 */
#ifndef TIDE_LUA_TENSOR_H
#define TIDE_LUA_TENSOR_H

#include "args.h"

/* ---- device.c ---- */
void         tl_push_device(lua_State *L, tide_device *dev);
tide_device *tl_check_device(lua_State *L, int idx, const char *op);
tide_device *tl_default_device(tide_lua_state *S);
int          tl_is_device_name(const char *s); /* "cpu", "cuda:1", ...: not "float128" */
void         tl_open_device(lua_State *L, int mod);

/* ---- format.c ---- */
int tl_tostring(lua_State *L);
/* core._set_print_options: tide.set_printoptions's options for tostring */
void tl_open_format(lua_State *L, int mod);
/* pushes a userdata owning a host (cpu:0) tensor with t's values, readable by tl_read */
const tide_tensor *tl_host_copy(lua_State *L, tide_lua_state *S, const tide_tensor *t,
                                int implicit);
int                tl_totable(lua_State *L);
int                tl_tolist(lua_State *L);
/* pushes v; where Lua has no integers (5.1, LuaJIT) raises for |v| > 2^53 instead of rounding */
void tl_push_int64(lua_State *L, int64_t v, const char *op);

/* PyTorch's out= written straight into out (op_families.c), called by a tide.X function's
 * trampoline (keywords.c) on its own frame: the nargs positional arguments at 1..nargs, out at
 * out_idx. Pushes out and returns 1, or returns 0 with the stack as it was: the call needs the
 * general path (a cast, a resize, autograd). */
typedef int (*tl_out_into_fn)(lua_State *L, int nargs, int out_idx);

/* ---- tensor.c ---- */
void tl_open_tensor(lua_State *L, int mod); /* core.Tensor and the metatable */
int  tl_binary(lua_State *L, tide_op op);
/* t:add(u, alpha) / t:sub(u, alpha), and add_ / sub_ with inplace */
int tl_binary_alpha(lua_State *L, tide_op op, int inplace);
/* raises: a binary op without a scale was given a third argument */
int tl_no_extra_operand(lua_State *L, const char *name);
int tl_select(lua_State *L, tide_lua_state *S, lua_Integer d, lua_Integer i, const char *op);

#endif /* TIDE_LUA_TENSOR_H */
