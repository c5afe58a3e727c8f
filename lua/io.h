/* io.h — registers the data/checkpoint functions (IDX, safetensors) into the tide.core table. */
#ifndef TIDE_LUA_IO_H
#define TIDE_LUA_IO_H
#include <lua.h>
/* adds the io functions to the table on top of the stack */
void tide_lua_register_io(lua_State *L);
/* the same for PNG (image_io.c) and TensorBoard's record bytes (record_io.c) */
void tide_lua_register_image_io(lua_State *L);
void tide_lua_register_record_io(lua_State *L);
#include <stdint.h>
/* p[0..n) <- 1..n shuffled by seed (Fisher-Yates), the same on every machine */
void tide_lua_shuffle(int64_t *p, int64_t n, uint64_t seed);
#endif
