/*
 * kernels.c — one generic binding for every row of include/tide_kernels.def:
 * tide.core._internal[<row name>] (the lua name; a MATRIX row's "linalg.<lua name>", beside the
 * hand-written tide.core._internal.<lua name> of lua/linalg.c), a closure over the row's id,
 * marshals Lua arguments into tide_kernel_run from the row alone; and tide.core._kernels, the rows
 * as Lua tables (names of the inputs, outputs and parameters) for tide.nn._fused's generic node. A
 * row added to the table needs nothing here.
 */
#include "binding.h"
#include <math.h>
#include <stdbool.h>
#include <stdio.h>

/* <name>(inputs..., params..., want...) -> outputs...: the inputs in the row's order (nil for
 * an absent optional one), its parameters (a flag, 0..1, may be false or true), then one flag
 * per optional output (absent: made; false or nil: not made, nil in its place). nil alone where
 * the device has no kernel for the row or the dtype (nn then runs its composite). Inputs must
 * not require grad in grad mode: the Lua library records its own node (tide.nn._fused). A row
 * that writes in place (inout inputs, no outputs) returns nothing. */
static int l_kernel(lua_State *L) {
    tide_lua_state         *S = TL_STATE(L);
    tide_kernel             k = (tide_kernel)lua_tointeger(L, lua_upvalueindex(2));
    const tide_kernel_info *r = tide_kernel_info_of(k);
    const char             *op = r->name;
    const tide_tensor      *in[TIDE_KERNEL_MAX_TENSORS] = {NULL};
    tide_kernel_scalar      p[TIDE_KERNEL_MAX_PARAMS];
    int                     want[TIDE_KERNEL_MAX_TENSORS];
    int                     idx = 1;
    for (int i = 0; i < r->nin; i++, idx++)
        if (!(r->in[i].optional && lua_isnoneornil(L, idx)))
            in[i] = tl_check(L, idx, op)->t;
    for (int i = 0; i < r->nparams; i++, idx++) {
        const tide_kernel_param_info *pi = &r->params[i];
        bool flag = pi->type == TIDE_KPARAM_INT && pi->min == 0 && pi->max == 1;
        if (flag && lua_isboolean(L, idx))
            p[i].i = lua_toboolean(L, idx);
        else if (pi->type == TIDE_KPARAM_INT)
            p[i].i = (int64_t)tl_check_int(L, idx, op, r->params[i].name);
        else
            p[i].f = tl_check_number(L, idx, op, r->params[i].name);
    }
    for (int i = 0; i < r->nout; i++)
        if (r->out[i].optional) {
            want[i] = lua_isnone(L, idx) || lua_toboolean(L, idx);
            idx++;
        } else {
            want[i] = 1;
        }
    int nargs = idx - 1;
    lua_settop(L, nargs);
    tl_not_differentiable(L, S, op, r->nin);
    ltensor     *o[TIDE_KERNEL_MAX_TENSORS];
    tide_tensor *res[TIDE_KERNEL_MAX_TENSORS] = {NULL};
    for (int i = 0; i < r->nout; i++)
        o[i] = tl_push_empty(L);
    tide_status st = tide_kernel_run(S->ctx, k, in, p, want, res);
    if (st == TIDE_ENOTSUP) { /* a device without the kernel: nn runs the composite */
        lua_pushnil(L);
        return 1;
    }
    if (st != TIDE_OK) /* again through TL_CALL: memory reclaimed and retried, or raised */
        TL_CALL(L, S, tide_kernel_run(S->ctx, k, in, p, want, res));
    size_t bytes = 0;
    for (int i = 0; i < r->nout; i++) {
        o[i]->t = res[i];
        if (res[i]) {
            bytes += tide_tensor_nbytes(res[i]);
        } else {
            lua_pushnil(L);
            lua_replace(L, nargs + 1 + i);
        }
    }
    tl_gc_hint(L, S, bytes);
    return r->nout;
}

static const char *const shape_names[] = {"rows",   "stats",   "cols",     "nmat",  "ncols",
                                          "nrows",  "offsets", "channels", "along", "image",
                                          "pooled", "columns", "matrix",   "info"};

/* t.<key> = the names; t.<key>_shape = their shape classes, t.<key>_optional = whether each
 * may be absent, t.<key>_inout = whether each is written in place, t.<key>_index = whether
 * each is int64, t.<key>_width = each one's width and t.<key>_dims = a MATRIX tensor's extents
 * ("n, n"; false for the others) (tensors), or t.<key>_type = "int" / "float" (parameters) */
static void push_names(lua_State *L, const char *key, int n, const tide_kernel_tensor_info *t,
                       const tide_kernel_param_info *p) {
    static const char *const fields[] = {"shape", "optional", "inout", "index", "width", "dims"};
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) {
        lua_pushstring(L, t ? t[i].name : p[i].name);
        lua_rawseti(L, -2, i + 1);
    }
    lua_setfield(L, -2, key);
    for (int k = 0; k < (t ? 6 : 1); k++) {
        lua_createtable(L, n, 0);
        for (int i = 0; i < n; i++) {
            if (!t)
                lua_pushstring(L, p[i].type == TIDE_KPARAM_INT ? "int" : "float");
            else if (k == 5 && t[i].dims)
                lua_pushstring(L, t[i].dims);
            else if (k == 5)
                lua_pushboolean(L, 0);
            else if (k == 0)
                lua_pushstring(L, shape_names[t[i].shape]);
            else if (k == 4)
                lua_pushinteger(L, t[i].width);
            else
                lua_pushboolean(L, k == 1 ? t[i].optional : k == 2 ? t[i].inout : t[i].index);
            lua_rawseti(L, -2, i + 1);
        }
        char field[32];
        snprintf(field, sizeof field, "%s_%s", key, t ? fields[k] : "type");
        lua_setfield(L, -2, field);
    }
}

void tl_open_kernels(lua_State *L, int mod) {
    mod = lua_absindex(L, mod);
    tl_push_internal(L, mod);
    lua_createtable(L, 0, TIDE_KERNEL_COUNT); /* core._kernels */
    for (int k = 0; k < TIDE_KERNEL_COUNT; k++) {
        const tide_kernel_info *r = tide_kernel_info_of((tide_kernel)k);
        tl_push_state(L);
        lua_pushinteger(L, k);
        lua_pushcclosure(L, l_kernel, 2);
        lua_setfield(L, -3, r->name);
        /* {name =, kind =, inputs = {...}, outputs = {...}, params = {...}, ..., dtypes = {...}} */
        lua_createtable(L, 0, 12);
        lua_pushstring(L, r->name);
        lua_setfield(L, -2, "name");
        push_names(L, "inputs", r->nin, r->in, NULL);
        push_names(L, "outputs", r->nout, r->out, NULL);
        push_names(L, "params", r->nparams, NULL, r->params);
        lua_pushstring(L, r->kind == TIDE_KERNEL_PROJ          ? "proj"
                          : r->kind == TIDE_KERNEL_PACKED      ? "packed"
                          : r->kind == TIDE_KERNEL_ELEMENTWISE ? "elementwise"
                          : r->kind == TIDE_KERNEL_WINDOW      ? "window"
                          : r->kind == TIDE_KERNEL_MATRIX      ? "matrix"
                                                               : "rows");
        lua_setfield(L, -2, "kind");
        lua_createtable(L, r->nparams, 0); /* params_max: the largest value, false for none */
        for (int i = 0; i < r->nparams; i++) {
            if (r->params[i].max < HUGE_VAL)
                lua_pushnumber(L, r->params[i].max);
            else
                lua_pushboolean(L, 0);
            lua_rawseti(L, -2, i + 1);
        }
        lua_setfield(L, -2, "params_max");
        lua_createtable(L, r->nparams, 0); /* params_min: the least value, false for none */
        for (int i = 0; i < r->nparams; i++) {
            if (r->params[i].min > -HUGE_VAL)
                lua_pushnumber(L, r->params[i].min);
            else
                lua_pushboolean(L, 0);
            lua_rawseti(L, -2, i + 1);
        }
        lua_setfield(L, -2, "params_min");
        lua_newtable(L);
        for (int dt = 0, n = 0; dt < TIDE_DTYPE_COUNT; dt++)
            if (r->dtypes & (1u << dt)) {
                lua_pushstring(L, tide_dtype_name((tide_dtype)dt));
                lua_rawseti(L, -2, ++n);
            }
        lua_setfield(L, -2, "dtypes");
        lua_setfield(L, -2, r->name);
    }
    lua_setfield(L, mod, "_kernels");
    lua_pop(L, 1);
}
