/* module.c — luaopen_tide_core: builds the tide.core table and its Tensor methods by opening
 * every file of the binding, from the Tensor type up; and tide_lua_preload for hosts. The top
 * of the binding: nothing calls into this file. */
#include "binding.h"
#include "tide_lua.h"

int luaopen_tide_core(lua_State *L) {
    if (tl_check_runtime(L) != 0)
        return 0;
    lua_newtable(L);
    int mod = lua_gettop(L);
    tl_state(L);
    tl_open_device(L, mod);
    tl_open_format(L, mod);
    tl_open_tensor(L, mod);
    tl_open_record(L, mod);
    tl_open_autocast(L, mod);
    tl_open_view_links(L, mod);
    lua_getfield(L, mod, "Tensor");
    int methods = lua_gettop(L);
    tl_open_op_families(L, mod, methods);
    tl_open_linalg(L, mod, methods);
    tl_open_views(L, mod, methods);
    tl_open_indexing(L, mod, methods);
    tl_open_ordering(L, mod, methods);
    tl_open_count_ops(L, mod, methods);
    tl_open_join(L, mod);
    tl_open_fills(L, methods);
    tl_open_transfers(L, methods);
    tl_open_nn_kernels(L, mod, methods);
    lua_pop(L, 1);
    tl_open_creation(L, mod);
    tl_open_options(L, mod);
    tl_open_optim(L, mod);
    tl_open_op_table(L, mod);
    tl_open_kernels(L, mod);
    tl_open_dist(L, mod);
    tl_open_text(L, mod);
    tl_open_context(L, mod);
    tl_open_keywords(L, mod);
    lua_settop(L, mod);
    tide_lua_register_io(L);
    tide_lua_register_image_io(L);
    tide_lua_register_record_io(L);
    lua_settop(L, mod);
    return 1;
}

void tide_lua_preload(lua_State *L) {
    if (tl_check_runtime(L) != 0)
        return;
    tl_push_preload(L);
    lua_pushcfunction(L, luaopen_tide_core);
    lua_setfield(L, -2, "tide.core");
    lua_pop(L, 1);
}
