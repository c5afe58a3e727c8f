# lua_version.mk — which Lua the binding is built for (the Makefile includes it first).
#
#   make LUA_VERSION=5.4      (the default) build/
#   make LUA_VERSION=5.3      build-lua5.3/
#   make LUA_VERSION=5.1      build-lua5.1/
#   make LUA_VERSION=luajit   build-luajit/   (LuaJIT 2.1: LÖVE, Neovim, OpenResty)
#
# Each of these holds its binding and core.so; the core's objects and libtide.a are build/'s.
#
# The build directory follows the Lua headers actually used (LUA_INC, which LuaRocks sets from
# its LUA_INCDIR), so `luarocks --lua-version=5.1 make` never reuses objects built for 5.4.
# 5.1 and LuaJIT compile against lua-compat-5.3 (lua-compat53-dev), whose header Debian
# installs beside 5.1's: COMPAT53_INC adds that directory after every other.
ifndef TIDE_LUA_VERSION_MK
TIDE_LUA_VERSION_MK := 1

LUA_VERSION ?= 5.4
ifeq ($(LUA_VERSION),5.4)
LUA      ?= lua5.4
LUA_INC  ?= $(shell pkg-config --cflags lua5.4 2>/dev/null || echo -I/usr/include/lua5.4)
LUA_LIBS ?= $(shell pkg-config --libs lua5.4 2>/dev/null || echo -llua5.4)
else ifeq ($(LUA_VERSION),luajit)
LUA      ?= luajit
LUA_INC  ?= $(shell pkg-config --cflags luajit 2>/dev/null || echo -I/usr/include/luajit-2.1)
LUA_LIBS ?= $(shell pkg-config --libs luajit 2>/dev/null || echo -lluajit-5.1)
else
LUA      ?= lua$(LUA_VERSION)
LUA_INC  ?= $(shell pkg-config --cflags lua$(LUA_VERSION) 2>/dev/null || \
                echo -I/usr/include/lua$(LUA_VERSION))
LUA_LIBS ?= $(shell pkg-config --libs lua$(LUA_VERSION) 2>/dev/null || echo -llua$(LUA_VERSION))
endif
COMPAT53_INC ?= -idirafter /usr/include/lua5.1

# 504, 503, 501 or luajit, read from the headers LUA_INC names
H_ := \#
LUA_HEADERS_ARE := $(shell printf '$(H_)include <lua.h>\n$(H_)if defined(LUA_LJDIR)\nluajit\n$(H_)else\nLUA_VERSION_NUM\n$(H_)endif\n' | \
                     $(or $(CC),cc) -E -P $(LUA_INC) - 2>/dev/null | tail -n 1)
HOST_BUILD_luajit := build-luajit
HOST_BUILD_503    := build-lua5.3
HOST_BUILD_501    := build-lua5.1
# Only the binding (lua/*.c) sees Lua: another Lua's build compiles it in its own directory and
# links it with the core of build/ (CORE_BUILD), which every Lua shares, compiled once.
ifeq ($(origin BUILD),undefined)
ifneq ($(HOST_BUILD_$(LUA_HEADERS_ARE)),)
BUILD      := $(HOST_BUILD_$(LUA_HEADERS_ARE))
CORE_BUILD ?= build
endif
endif

endif
