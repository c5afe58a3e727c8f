# install.mk — `make install`, used by `luarocks make rockspec/tide-scm-1.rockspec`.
# LuaRocks passes INST_LIBDIR (C modules) and INST_LUADIR (Lua files) of the rock; it then
# deploys them to lib/lua/5.4/ and share/lua/5.4/ of its tree. The Makefile includes this
# file; the guard keeps one definition if it is also named with -f.
ifndef TIDE_INSTALL_MK
TIDE_INSTALL_MK := 1

INST_LIBDIR ?= /usr/local/lib/lua/5.4
INST_LUADIR ?= /usr/local/share/lua/5.4

# the CUDA backend and the MPI/NCCL plug-ins sit beside core.so: src/device.c and src/dist.c
# look for them there (dladdr)
install: all
	mkdir -p "$(INST_LIBDIR)/tide" "$(INST_LUADIR)/tide"
	cp $(BUILD)/lua/tide/core.so "$(INST_LIBDIR)/tide/core.so"
	if [ -f $(BUILD)/lua/tide/libtide_cuda.so ]; then \
	    cp $(BUILD)/lua/tide/libtide_cuda.so "$(INST_LIBDIR)/tide/libtide_cuda.so"; fi
	for p in libtide_mpi.so libtide_nccl.so; do [ ! -f $(BUILD)/lua/tide/$$p ] || \
	    cp $(BUILD)/lua/tide/$$p "$(INST_LIBDIR)/tide/$$p" || exit 1; done
	cd lua && find tide -name '*.lua' | while read -r f; do \
	    mkdir -p "$(INST_LUADIR)/$$(dirname "$$f")" && cp "$$f" "$(INST_LUADIR)/$$f" || exit 1; \
	done

endif
