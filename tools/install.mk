# install.mk — `make install` (a host's install: headers, libtide.so, tide.pc, the Lua module and
# files) and `make install-rock` (what LuaRocks runs). The Makefile includes this file; the
# guard keeps one definition if it is also named with -f.
#
#   make install [PREFIX=/usr/local] [DESTDIR=staging]
#     $(INCLUDEDIR)/tide/            tide.h tide_io.h tide_dlpack.h tide_lua.h tide_ops.def
#                                    tide_kernels.def
#     $(LIBDIR)/libtide.so.0         core + Lua binding; libtide.so -> libtide.so.0
#     $(LIBDIR)/pkgconfig/tide.pc    cc host.c $(pkg-config --cflags --libs tide)
#     $(INST_LIBDIR)/tide/core.so    a link to libtide.so.0: `require "tide.core"` loads the
#                                    very object a host links (one copy of tide in the process)
#     $(TIDE_CUDA_DIR)/libtide_cuda.so  the CUDA plug-in, when it was built (found there from
#                                    libtide.so.0's directory, see tide_cuda_set_library_path)
#     $(INST_LUADIR)/tide/...        the Lua files
#   make install-rock INST_LIBDIR=... INST_LUADIR=...   (rockspec/tide-scm-1.rockspec)
#     core.so (a copy) with the CUDA plug-in beside it, and the Lua files
ifndef TIDE_INSTALL_MK
TIDE_INSTALL_MK := 1

TIDE_VERSION  ?= 0.1.0
PREFIX        ?= /usr/local
LIBDIR        ?= $(PREFIX)/lib
INCLUDEDIR    ?= $(PREFIX)/include
TIDE_CUDA_DIR ?= $(LIBDIR)/tide
INST_LIBDIR   ?= $(LIBDIR)/lua/5.4
INST_LUADIR   ?= $(PREFIX)/share/lua/5.4

TIDE_PUBLIC_HEADERS := include/tide.h include/tide_io.h include/tide_dlpack.h include/tide_lua.h \
                       include/tide_ops.def include/tide_kernels.def

.PHONY: install-rock install-lua-files

install-lua-files:
	mkdir -p "$(DESTDIR)$(INST_LUADIR)/tide"
	cd lua && find tide -name '*.lua' | while read -r f; do \
	    mkdir -p "$(DESTDIR)$(INST_LUADIR)/$$(dirname "$$f")" && \
	    cp "$$f" "$(DESTDIR)$(INST_LUADIR)/$$f" || exit 1; \
	done

install: all install-lua-files
	mkdir -p "$(DESTDIR)$(INCLUDEDIR)/tide" "$(DESTDIR)$(LIBDIR)/pkgconfig" \
	    "$(DESTDIR)$(INST_LIBDIR)/tide"
	cp $(TIDE_PUBLIC_HEADERS) "$(DESTDIR)$(INCLUDEDIR)/tide/"
	cp $(LIBTIDE_SO) "$(DESTDIR)$(LIBDIR)/libtide.so.0"
	ln -sf libtide.so.0 "$(DESTDIR)$(LIBDIR)/libtide.so"
	ln -sf "$$(realpath -m --relative-to="$(DESTDIR)$(INST_LIBDIR)/tide" \
	    "$(DESTDIR)$(LIBDIR)/libtide.so.0")" "$(DESTDIR)$(INST_LIBDIR)/tide/core.so"
	cp $(BUILD)/lua/tide/preload.so "$(DESTDIR)$(INST_LIBDIR)/tide/preload.so"
	if [ -f $(BUILD)/lua/tide/libtide_cuda.so ]; then \
	    mkdir -p "$(DESTDIR)$(TIDE_CUDA_DIR)" && \
	    cp $(BUILD)/lua/tide/libtide_cuda.so "$(DESTDIR)$(TIDE_CUDA_DIR)/libtide_cuda.so"; fi
	for p in libtide_mpi.so libtide_nccl.so; do [ ! -f $(BUILD)/lua/tide/$$p ] || \
	    { mkdir -p "$(DESTDIR)$(TIDE_CUDA_DIR)" && \
	      cp $(BUILD)/lua/tide/$$p "$(DESTDIR)$(TIDE_CUDA_DIR)/$$p"; } || exit 1; done
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' \
	    -e 's|@LUADIR@|$(INST_LUADIR)|' -e 's|@CUDADIR@|$(TIDE_CUDA_DIR)|' \
	    -e 's|@VERSION@|$(TIDE_VERSION)|' tools/tide.pc.in >"$(DESTDIR)$(LIBDIR)/pkgconfig/tide.pc"

# the CUDA backend and the MPI/NCCL plug-ins sit beside core.so: src/device.c and src/dist.c
# look for them there (dladdr)
install-rock: all install-lua-files
	mkdir -p "$(INST_LIBDIR)/tide"
	cp $(BUILD)/lua/tide/core.so "$(INST_LIBDIR)/tide/core.so"
	cp $(BUILD)/lua/tide/preload.so "$(INST_LIBDIR)/tide/preload.so"
	if [ -f $(BUILD)/lua/tide/libtide_cuda.so ]; then \
	    cp $(BUILD)/lua/tide/libtide_cuda.so "$(INST_LIBDIR)/tide/libtide_cuda.so"; fi
	for p in libtide_mpi.so libtide_nccl.so; do [ ! -f $(BUILD)/lua/tide/$$p ] || \
	    cp $(BUILD)/lua/tide/$$p "$(INST_LIBDIR)/tide/$$p" || exit 1; done

endif
