# install.mk — `make install`, used by `luarocks make rockspec/tide-scm-1.rockspec`.
# LuaRocks passes INST_LIBDIR (C modules) and INST_LUADIR (Lua files) of the rock; it then
# deploys them to lib/lua/5.4/ and share/lua/5.4/ of its tree. The Makefile includes this
# file; the guard keeps one definition if it is also named with -f.
ifndef TIDE_INSTALL_MK
TIDE_INSTALL_MK := 1

PREFIX        ?= /usr/local
LIBDIR        ?= $(PREFIX)/lib
INCLUDEDIR    ?= $(PREFIX)/include
TIDE_CUDA_DIR ?= $(LIBDIR)/tide
INST_LIBDIR   ?= $(LIBDIR)/lua/5.4
INST_LUADIR   ?= $(PREFIX)/share/lua/5.4

# the CUDA backend sits beside core.so: src/device.c looks for it there (dladdr)
install: all
	mkdir -p "$(INST_LIBDIR)/tide" "$(INST_LUADIR)/tide"
	cp $(BUILD)/lua/tide/core.so "$(INST_LIBDIR)/tide/core.so"
	if [ -f $(BUILD)/lua/tide/libtide_cuda.so ]; then \
	    cp $(BUILD)/lua/tide/libtide_cuda.so "$(INST_LIBDIR)/tide/libtide_cuda.so"; fi
	cd lua && find tide -name '*.lua' | while read -r f; do \
	    mkdir -p "$(INST_LUADIR)/$$(dirname "$$f")" && cp "$$f" "$(INST_LUADIR)/$$f" || exit 1; \
	done

endif
