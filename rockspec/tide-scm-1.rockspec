-- LuaRocks: `luarocks --lua-version=5.4 make rockspec/tide-scm-1.rockspec` from the checkout
-- root (offline: no rock dependencies); --lua-version=5.3 or 5.1, or a LuaJIT configuration
-- (README, "Lua hosts"), builds for that Lua: the Makefile reads the version from LUA_INCDIR's
-- lua.h and builds in build/, build-lua5.3/, build-lua5.1/ or build-luajit/. Installs tide.core (and the CUDA backend beside it
-- when nvcc was found) and the Lua files of lua/tide/.
rockspec_format = "3.0"
package = "tide"
version = "scm-1"
-- `make rock` writes the release rockspec from this one (version and source.url of the tagged
-- archive) and packs the source rock beside it, which `luarocks install` builds offline
source = {
    url = "git+https://github.com/tide-lua/tide.git",
}
description = {
    summary = "A tensor engine in C with CUDA, scripted from Lua 5.4, 5.3, 5.1 or LuaJIT, with a pure-Lua nn library",
    detailed = [[
tide runs tensors on cpu, cuda:N and virtual CPU devices (TIDE_CPU_DEVICES=N), with explicit
device placement rules, autograd, an nn library, optimizers and safetensors checkpoints.]],
    homepage = "https://github.com/tide-lua/tide",
    license = "MIT",
    maintainer = "the tide authors",
}
dependencies = {
    "lua >= 5.1, < 5.5", -- 5.4, 5.3, 5.1 and LuaJIT 2.1 (5.1 and LuaJIT need lua-compat53-dev)
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
        TIDE_JOBS = "auto", -- a parallel build: LuaRocks runs plain `make`
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
        TIDE_JOBS = "auto",
    },
}
