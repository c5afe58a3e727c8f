-- LuaRocks: `luarocks --lua-version=5.4 make rockspec/tide-scm-1.rockspec` from the checkout
-- root (offline: no rock dependencies). Installs tide.core (and the CUDA backend beside it
-- when nvcc was found) and the Lua files of lua/tide/.
rockspec_format = "3.0"
package = "tide"
version = "scm-1"
source = {
    url = "git+file://.",
}
description = {
    summary = "A tensor engine in C with CUDA, scripted from Lua 5.4, with a pure-Lua nn library",
    detailed = [[
tide runs tensors on cpu, cuda:N and virtual CPU devices (TIDE_CPU_DEVICES=N), with explicit
device placement rules, autograd, an nn library, optimizers and safetensors checkpoints.]],
}
dependencies = {
    "lua >= 5.4",
}
build = {
    type = "make",
    -- the Makefile's own flags, without -Werror for users' compilers; objects in build/, so
    -- a checkout that has run `make` installs without compiling again
    build_variables = {
        CC = "$(CC)",
        CFLAGS = "$(CFLAGS)",
        WERROR = "",
        LUA_INC = "-I$(LUA_INCDIR)",
    },
    -- `make install-rock` comes from tools/install.mk, included by the Makefile (`make install`
    -- is a host's install: headers, libtide.so, tide.pc)
    install_target = "install-rock",
    install_variables = {
        CC = "$(CC)",
        WERROR = "",
        LUA_INC = "-I$(LUA_INCDIR)",
        INST_LIBDIR = "$(LIBDIR)",
        INST_LUADIR = "$(LUADIR)",
    },
}
