# examples/embed/embed.mk — the embedding targets. The Makefile includes it after its own rules
# (-include examples/embed/embed.mk) and this file uses its variables.
#
#   make embed-demo    builds and runs the host example: examples/embed/host.c + agent.lua
#   make embed-bench   host buffer -> Lua tensor -> op -> host, per frame, beside a Lua-table copy
#   make embed-dlpack-torch   DLPack exchange with PyTorch both ways (needs python3-torch)
#
# It also adds $(BUILD)/test_embed_lua (C tests that need Lua and the binding) to `ctests`, so
# `make test` and `make asan` build it in their BUILD dir with their flags, and the runners
# that run every $(BUILD)/test_* run it. Its source is spec/c/embed_lua.c: a spec/c/test_*.c
# name would be built by the generic rule, which links no Lua.

# run on its own (make -f examples/embed/embed.mk embed-demo), it brings the Makefile in
ifndef LIBTIDE
include Makefile
endif

EMBED_CFLAGS := $(CFLAGS_ALL) $(LUA_INC) -DTIDE_LUA_DIR='"$(CURDIR)/lua"'
EMBED_LINK   := $(BIND_OBJ) $(LIBTIDE) $(LUA_LIBS) $(LIBS)
EMBED_DEPS   := $(BIND_OBJ) $(LIBTIDE) $(HEADERS)

$(BUILD)/embed_host: examples/embed/host.c $(EMBED_DEPS)
	$(CC) $(EMBED_CFLAGS) -DTIDE_AGENT='"$(CURDIR)/examples/embed/agent.lua"' $< -o $@ \
	    $(EMBED_LINK)

$(BUILD)/test_embed_lua: spec/c/embed_lua.c spec/c/test_embed.h $(EMBED_DEPS)
	$(CC) $(EMBED_CFLAGS) $< -o $@ $(EMBED_LINK)

$(BUILD)/bench_embed_roundtrip: bench/embed_roundtrip.c $(EMBED_DEPS)
	$(CC) $(EMBED_CFLAGS) $< -o $@ $(EMBED_LINK)

# a host that exports cpu_alloc & co. (-Wl,-E) and loads core.so as a module: tide's internal
# names must stay internal (spec/c/embed_interpose.c)
$(BUILD)/test_embed_interpose: spec/c/embed_interpose.c spec/c/test_util.h $(LUAMOD)
	$(CC) $(CFLAGS_ALL) $(LUA_INC) -DTIDE_LUA_DIR='"$(CURDIR)/lua"' \
	    -DTIDE_CORE_DIR='"$(CURDIR)/$(BUILD)/lua"' $< -o $@ -Wl,-E $(LUA_LIBS) -ldl -lm

# a host with Lua 5.3 loaded globally before 5.4: require "tide.core" refuses, never crashes
$(BUILD)/test_embed_two_lua: spec/c/embed_two_lua.c spec/c/test_util.h $(LUAMOD)
	$(CC) $(CFLAGS_ALL) $(LUA_INC) -DTIDE_CORE_DIR='"$(CURDIR)/$(BUILD)/lua"' $< -o $@ -ldl -lm

# tide in a sandbox without io, os and debug (spec/c/embed_sandbox.c)
$(BUILD)/test_embed_sandbox: spec/c/embed_sandbox.c spec/c/test_util.h $(EMBED_DEPS)
	$(CC) $(EMBED_CFLAGS) $< -o $@ $(EMBED_LINK)

# nothing of CUDA mapped before it is asked for (spec/c/embed_lazy_cuda.c); not a test_* name:
# run_all.sh runs it on the emulated GPU only
$(BUILD)/embed_lazy_cuda: spec/c/embed_lazy_cuda.c spec/c/test_util.h $(EMBED_DEPS)
	$(CC) $(EMBED_CFLAGS) $< -o $@ $(EMBED_LINK)

# per tick: a host buffer handed to a script, wrapped every tick or once (bench/run.sh runs it)
$(BUILD)/bench_embed_tick: bench/embed_tick.c $(EMBED_DEPS)
	$(CC) $(EMBED_CFLAGS) $< -o $@ $(EMBED_LINK)

ctests: $(BUILD)/test_embed_lua $(BUILD)/test_embed_interpose $(BUILD)/test_embed_two_lua \
        $(BUILD)/test_embed_sandbox $(BUILD)/embed_lazy_cuda

# the core as a shared library, for the ctypes check against PyTorch
$(BUILD)/libtide_embed.so: $(LIBTIDE)
	$(CC) -shared -o $@ -Wl,--whole-archive $(LIBTIDE) -Wl,--no-whole-archive $(LIBS)

EMBED_PYTHON ?= /usr/bin/python3

.PHONY: embed-demo embed-bench embed-dlpack-torch
embed-demo: $(BUILD)/embed_host
	$(BUILD)/embed_host

embed-bench: $(BUILD)/bench_embed_roundtrip
	$(BUILD)/bench_embed_roundtrip

embed-dlpack-torch: $(BUILD)/libtide_embed.so
	$(EMBED_PYTHON) examples/embed/dlpack_torch.py $(BUILD)/libtide_embed.so
