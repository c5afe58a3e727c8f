/*
 * op_table.c — tide.core._ops: the op table of include/tide_ops.def as Lua sees it, one table a
 * row in table order, for the specs that walk every op (spec/opinfo_spec.lua) and the docs.
 */
#include "binding.h"

static const char *family_name(tide_op_family f) {
    switch (f) {
    case TIDE_FAMILY_BINARY:
        return "binary";
    case TIDE_FAMILY_COMPARE:
        return "compare";
    case TIDE_FAMILY_UNARY:
        return "unary";
    case TIDE_FAMILY_PREDICATE:
        return "predicate";
    case TIDE_FAMILY_BOUNDED:
        return "bounded";
    default:
        return "reduce";
    }
}

static void set_flag(lua_State *L, const char *key, int on) {
    lua_pushboolean(L, on);
    lua_setfield(L, -2, key);
}

/* {name, family, arity, float_only, float_input, integer_only, no_bool, int_exact, no_grad,
 *  not_differentiable, cheap, int_wrap, int_division, int_power, bool_result, inplace,
 *  autocast_fp32} */
static void push_row(lua_State *L, tide_op op) {
    tide_op_family f = tide_op_family_of(op);
    unsigned       fl = tide_op_flags(op);
    int            elementwise = tide_op_is_elementwise(op);
    lua_createtable(L, 0, 16);
    lua_pushstring(L, tide_op_name(op));
    lua_setfield(L, -2, "name");
    lua_pushstring(L, family_name(f));
    lua_setfield(L, -2, "family");
    lua_pushinteger(L, tide_op_arity(op));
    lua_setfield(L, -2, "arity");
    set_flag(L, "float_only", (fl & TIDE_OPF_FLOAT_ONLY) != 0);
    set_flag(L, "float_input", (fl & TIDE_OPF_FLOAT_INPUT) != 0);
    set_flag(L, "integer_only", (fl & TIDE_OPF_INTEGER_ONLY) != 0);
    set_flag(L, "no_bool", (fl & TIDE_OPF_NO_BOOL) != 0);
    set_flag(L, "int_exact", elementwise && !(fl & TIDE_OPF_FLOAT_ONLY));
    set_flag(L, "no_grad", (fl & TIDE_OPF_NO_GRAD) != 0);
    set_flag(L, "not_differentiable", (fl & TIDE_OPF_NOT_DIFFERENTIABLE) != 0);
    set_flag(L, "cheap", (fl & TIDE_OPF_CHEAP) != 0);
    set_flag(L, "int_wrap", (fl & TIDE_OPF_INT_WRAP) != 0);
    set_flag(L, "int_division", (fl & TIDE_OPF_INT_DIVISION) != 0);
    set_flag(L, "int_power", (fl & TIDE_OPF_INT_POWER) != 0);
    set_flag(L, "autocast_fp32", (fl & TIDE_OPF_AUTOCAST_FP32) != 0);
    set_flag(L, "bool_result", f == TIDE_FAMILY_COMPARE || f == TIDE_FAMILY_PREDICATE);
    /* the `name_` method exists (ops.c's REG_ tables) */
    set_flag(L, "inplace",
             f == TIDE_FAMILY_BINARY || f == TIDE_FAMILY_UNARY || f == TIDE_FAMILY_BOUNDED);
}

void tl_open_op_table(lua_State *L, int mod) {
    lua_createtable(L, TIDE_OP_COUNT, 0);
    for (int op = 0; op < TIDE_OP_COUNT; op++) {
        push_row(L, (tide_op)op);
        lua_rawseti(L, -2, op + 1);
    }
    lua_setfield(L, mod, "_ops");
}
