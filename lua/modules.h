/*
 * modules.h — one file a concern, each filling tide.core (mod) and its Tensor methods
 * (methods) through its tl_open_*: luaopen_tide_core (module.c) calls every one. A module uses
 * tensor.h and the layers below, never another module.
 */
#ifndef TIDE_LUA_MODULES_H
#define TIDE_LUA_MODULES_H

#include "tensor.h"

void tl_open_op_families(lua_State *L, int mod, int methods); /* op_families.c: tide_ops.def */
void tl_open_linalg(lua_State *L, int mod, int methods);      /* linalg.c */
void tl_open_views(lua_State *L, int mod, int methods);       /* views.c */
void tl_open_indexing(lua_State *L, int mod, int methods);    /* indexing.c */
void tl_open_ordering(lua_State *L, int mod, int methods);    /* ordering.c */
void tl_open_count_ops(lua_State *L, int mod, int methods);   /* count_ops.c */
void tl_open_join(lua_State *L, int mod);                     /* join.c */
void tl_open_fills(lua_State *L, int methods);                /* fills.c */
void tl_open_transfers(lua_State *L, int methods);            /* transfers.c */
void tl_open_nn_kernels(lua_State *L, int mod, int methods);  /* nn_kernels.c */
void tl_open_creation(lua_State *L, int mod);                 /* creation.c */
void tl_open_optim(lua_State *L, int mod);                    /* optim.c */
void tl_open_op_table(lua_State *L, int mod);                 /* op_table.c: tide.core._ops */
void tl_open_kernels(lua_State *L, int mod);  /* kernels.c: _internal.<row>, _kernels */
void tl_open_dist(lua_State *L, int mod);     /* dist.c: core._dist, for tide.distributed */
void tl_open_text(lua_State *L, int mod);     /* text.c: core._text, for tide.text */
void tl_open_context(lua_State *L, int mod);  /* context.c: transfer stats, guard, memory */
void tl_open_keywords(lua_State *L, int mod); /* keywords.c: core._keywords */
/* io.c: IDX and safetensors; image_io.c: PNG; record_io.c: TensorBoard's record bytes. Each
 * adds its functions to the table on top of the stack. */
void tide_lua_register_io(lua_State *L);
void tide_lua_register_image_io(lua_State *L);
void tide_lua_register_record_io(lua_State *L);

#endif /* TIDE_LUA_MODULES_H */
