# tide — build, test, bench. `make demo` and `make test` are the two set-up commands.
#
#   make            core + CPU backend + Lua module (+ CUDA backend when nvcc is found)
#   make LUA_VERSION=5.3|5.1|luajit   the same for another Lua, in build-lua5.3/ ... build-luajit/
#   make test       every suite; ends with one line "N passed, N failed"
#   make asan       C tests and busted suite built by clang under its ASan+UBSan
#   make fuzz       the Lua API fuzzer under the ASan build for FUZZ_SECONDS (tools/fuzz.sh)
#   make bench      benchmarks, each beside its reference (PyTorch, raw BLAS, memory bandwidth)
#   make demo       installs the missing build and demo packages, builds, runs the main example
#   make deps       installs every Debian package any target uses (tools/deps.sh all)
#   make models     fetches all-MiniLM-L6-v2 into models/ for the BERT examples (tools/models.sh)
#   make rock       the release rockspec and source rock in build/rock/ (tools/rock.sh)
#   make gpu-check  on a GPU machine: build, cuda-tagged specs, GPU benchmarks ($OUT gets logs)
#   make format / format-check / shell-check / check-layering

# LUA, LUA_INC, LUA_LIBS and BUILD for LUA_VERSION=5.4 (default), 5.3, 5.1 or luajit
include tools/lua_version.mk
# `luarocks make` runs a plain `make`: its rockspec sets TIDE_JOBS=auto for one job per core
ifeq ($(TIDE_JOBS),auto)
MAKEFLAGS += -j$(shell nproc 2>/dev/null || echo 2)
endif
CUDA_HOME  ?= /usr/local/cuda
NVCC       ?= $(CUDA_HOME)/bin/nvcc
BUILD      ?= build
CC         ?= cc
# -falign-loops=32: a loop's place in the library otherwise moves with every change elsewhere,
# and a tight loop that came to straddle a 64-byte line ran 2-3x slower (flip's strided copy,
# the same instructions: 0.42 -> 0.85 ms for 10^6 floats after an unrelated change)
OPT        ?= -O3 -march=x86-64-v2 -falign-loops=32
# debug info: line tables and function names (-g1), what backtraces, perf and the sanitizers'
# reports read. Full -g (local variables for gdb: make DEBUG_INFO=-g) took 60% longer to compile
# the elementwise rows at -O3 (var-tracking over every op times dtype times clone): 24 s
# against 16 s, about 20 s of the build's CPU in all.
DEBUG_INFO ?= -g1
WERROR     ?= -Werror
# link-time optimization of core.so with gcc: the per-op path crosses a dozen small functions in
# as many files (shape, dtype, op table, storage); inlined, `a + b` takes a fifth less time.
# Fat objects: every other link (C tests, plug-ins) has -fno-lto from CFLAGS_ALL and uses their
# plain code (-fno-lto anywhere on a link line wins, so core.so's link leaves it out).
# Sanitizer builds turn it off (LTO=); so do make test's builds for other Luas, whose core.so
# links the plain code of build/'s fat objects (-fno-lto). The link does not repeat
# -Wmaybe-uninitialized: inlined across files, `if (f(&x) != TIDE_OK) return ...; use(x)` looks
# uninitialized to it (the compile of each file still warns).
IS_GCC     := $(shell $(CC) --version 2>/dev/null | grep -c "Free Software Foundation")
# (only where a test link with -flto works: a gcc beside a binutils without its LTO plug-in fails)
ifeq ($(origin LTO),undefined)
LTO        := $(if $(filter-out 0,$(IS_GCC)),$(if $(shell echo 'int main(void){return 0;}' | \
                $(CC) -flto -x c - -o /dev/null 2>/dev/null && echo y),-flto=auto -ffat-lto-objects))
endif
AR_LTO     := $(if $(LTO),gcc-ar,ar)
# -Wno-pass-failed: clang reports an `omp simd` loop it did not vectorize (at -O1, or a float64
# loop calling libm) as a warning; the loop is correct either way (gcc ignores the option).
# A call to an undeclared function is an error in every build, the rockspec's (WERROR=) too:
# C89's implicit int return truncates pointers and 64-bit results.
WARN       := -Wall -Wextra -Wshadow -Wundef -Wwrite-strings -Wstrict-prototypes \
              -Wmissing-prototypes -Wno-pass-failed -Werror=implicit-function-declaration \
              $(WERROR)
# -fvisibility=hidden: only what include/*.h declares is exported (tools/exports.map)
CFLAGS_ALL := -std=c11 -D_GNU_SOURCE $(OPT) $(DEBUG_INFO) -fPIC -fvisibility=hidden \
              -fno-semantic-interposition -fopenmp $(WARN) -Iinclude -Isrc \
              -I/usr/include/x86_64-linux-gnu $(if $(LTO),-fno-lto) $(EXTRA_CFLAGS)
comma      := ,
# OpenBLAS's OpenMP build shares tide's OpenMP pool (one pool; the pthreads build spins its own
# threads against tide's kernels). Debian installs it beside the pthreads build and
# update-alternatives prefers pthreads, so it is named by directory, with a run path.
# Debian's OpenMP OpenBLAS is built for gcc's runtime (libgomp); clang's -fopenmp brings LLVM's
# libomp: a clang build (make asan) had both pools in one process, and a threaded sgemm waited
# forever on a worker of the other pool (the fuzzer, seed 44816). Such a build takes the
# pthreads OpenBLAS, which needs no OpenMP runtime.
CC_IS_CLANG := $(findstring clang,$(shell $(CC) --version 2>/dev/null | head -n 1))
OPENBLAS_VARIANT ?= $(if $(CC_IS_CLANG),pthread,openmp)
OPENBLAS_OMP ?= $(firstword $(wildcard \
                /usr/lib/x86_64-linux-gnu/openblas-$(OPENBLAS_VARIANT)/libopenblas.so.0 \
                /usr/lib/aarch64-linux-gnu/openblas-$(OPENBLAS_VARIANT)/libopenblas.so.0))
OPENBLAS_DIR := $(patsubst %/,%,$(dir $(OPENBLAS_OMP)))
BLAS_LIBS  := $(if $(OPENBLAS_OMP),-L$(OPENBLAS_DIR) -Wl$(comma)-rpath$(comma)$(OPENBLAS_DIR)) \
              -lopenblas
LIBS       := $(BLAS_LIBS) -lcjson -lutf8proc -lz -lm -ldl -lpthread -fopenmp
# oneDNN (Debian libdnnl-dev) runs CPU float32 conv2d when its header is installed; DNNL_H=
# builds without it (nn then runs im2col + gemm)
DNNL_H     ?= $(wildcard /usr/include/dnnl.h)
ifneq ($(DNNL_H),)
CFLAGS_ALL += -DTIDE_HAVE_DNNL
LIBS       += -ldnnl
endif
# what `make asan` links in besides (the sanitizer runtime and its run path)
LIBS       += $(SAN_LDFLAGS)
# EXACT_ALLOC=1: every CPU tensor buffer its own exact-size allocation, freed at once (on by
# default under ASan, src/cpu/alloc.c), so ASan sees over-reads and uses after free of tensor data
CFLAGS_ALL += $(if $(EXACT_ALLOC),-DTIDE_EXACT_ALLOC=$(EXACT_ALLOC))
SAN        := -O1 $(DEBUG_INFO) -fno-omit-frame-pointer -fsanitize=address,undefined \
              -fno-sanitize-recover=all -shared-libasan

CORE_SRC   := $(wildcard src/*.c src/cpu/*.c src/io/*.c src/text/*.c)
BIND_SRC   := $(wildcard lua/*.c)
# the core (src/: no Lua) is compiled once for every Lua in CORE_BUILD (tools/lua_version.mk)
CORE_BUILD ?= $(BUILD)
CORE_OBJ   := $(CORE_SRC:%.c=$(CORE_BUILD)/obj/%.o)
BIND_OBJ   := $(BIND_SRC:%.c=$(BUILD)/obj/%.o)
CTEST_SRC  := $(wildcard spec/c/test_*.c)
CTESTS     := $(CTEST_SRC:spec/c/%.c=$(BUILD)/%)
HEADERS    := $(wildcard include/*.h include/*.def src/*.h src/cpu/*.h src/io/*.h src/text/*.h lua/*.h)

LIBTIDE    := $(CORE_BUILD)/libtide.a
LUAMOD     := $(BUILD)/lua/tide/core.so
LIBTIDE_SO := $(BUILD)/libtide.so.0
PRELOAD_SO := $(BUILD)/lua/tide/preload.so

.PHONY: all test ctests asan fuzz bench demo rock gpu-check format format-check shell-check check-layering clean \
        deps install embed-demo models

all: $(LIBTIDE) $(LUAMOD) $(LIBTIDE_SO) $(PRELOAD_SO) cuda dist

# -MMD -MP: each object's .d file names the headers it includes, so a rebuild recompiles only
# what a changed header reaches. An object depends on its .d too, whose rule is empty: an
# object without one (built before -MMD, or the .d lost) counts as stale and is rebuilt, where
# it would otherwise miss every header change (the touch keeps the object newer than its .d)
$(BUILD)/obj/%.o: %.c $(BUILD)/obj/%.d
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(LTO) $(LUA_INC) $(COMPAT53_INC) -MMD -MP -c $< -o $@
	@touch $@
$(CORE_OBJ): $(CORE_BUILD)/obj/%.o: %.c $(CORE_BUILD)/obj/%.d
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(LTO) -MMD -MP -c $< -o $@
	@touch $@
%.d: ;
.PRECIOUS: %.d
-include $(CORE_OBJ:.o=.d) $(BIND_OBJ:.o=.d)

# a plug-in directory given to the build (TIDE_CUDA_DIR=..., tools/install.mk), compiled into
# the plug-in lookup (src/plugin.c); empty otherwise: the lookup finds the default install's
# lib/tide/ from libtide.so.0's own path, so `make install PREFIX=...` compiles nothing again.
# The header is rewritten only when it changes.
PLUGIN_DIR_GIVEN := $(if $(filter command line environment,$(origin TIDE_CUDA_DIR)),$(TIDE_CUDA_DIR))
CONFIG_H := $(CORE_BUILD)/gen/tide_config.h
$(CONFIG_H): FORCE
	@mkdir -p $(dir $@)
	@printf '/* generated by make */\n#define TIDE_PLUGIN_DIR "%s"\n' '$(PLUGIN_DIR_GIVEN)' >$@.$$$$.tmp; \
	    if cmp -s $@.$$$$.tmp $@; then rm -f $@.$$$$.tmp; else mv -f $@.$$$$.tmp $@; fi
# the CPU kernels never rely on floating-point traps (as PyTorch's, built the same way): without
# them GCC may blend both sides of a float select, so loops like the LSTM cell's vectorize; nor
# on libm's errno (never read), which kept a libm call in each loop of a sqrt, unvectorized
$(CORE_BUILD)/obj/src/cpu/%.o: CFLAGS_ALL += -fno-trapping-math -fno-math-errno
$(CORE_BUILD)/obj/src/plugin.o: $(CONFIG_H)
$(CORE_BUILD)/obj/src/plugin.o: CFLAGS_ALL += -I$(CORE_BUILD)/gen
FORCE:

# the elementwise row functions (every op x dtype x 3 CPU levels, most of the build's compile
# time) are plain objects: each call runs a whole row, so LTO has nothing to gain there, and its
# link would compile them a second time (40 s of a 2-core build)
$(CORE_BUILD)/obj/src/cpu/elementwise_%.o: LTO :=

$(LIBTIDE): $(CORE_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && $(AR_LTO) rcs $@ $^

# core.so is the whole library (core + binding): the object `require "tide.core"` loads is the
# one a host links as libtide.so.0 (make install makes core.so a link to it, see tools/install.mk).
# -z nodelete: lua_close unloads core.so while OpenMP's workers (which run its code) live on;
# the process then crashes at exit. -Bsymbolic-functions: the library's calls to its own exported
# functions bind inside it, not through the PLT (as -fno-semantic-interposition lets gcc inline)
$(LUAMOD): $(BIND_OBJ) $(LIBTIDE) tools/exports.map
	@mkdir -p $(dir $@)
	$(CC) $(filter-out -fno-lto,$(CFLAGS_ALL)) $(if $(LTO),$(LTO) -Wno-maybe-uninitialized,-fno-lto) \
	    -shared -Wl,-z,nodelete -Wl,-Bsymbolic-functions -o $@ -Wl,-soname,libtide.so.0 \
	    -Wl,--version-script=tools/exports.map \
	    $(BIND_OBJ) -Wl,--whole-archive $(LIBTIDE) -Wl,--no-whole-archive $(LIBS)

# environment defaults for libgomp and OpenBLAS in Lua programs, loaded by tide/init.lua before
# core.so (lua/preload/preload.h); no Lua, no OpenMP
$(PRELOAD_SO): $(wildcard lua/preload/*.c) lua/preload/preload.h
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -D_GNU_SOURCE $(OPT) $(DEBUG_INFO) -fPIC $(WARN) -shared -o $@ $(filter %.c,$^)

# the same object under the name hosts link (-ltide)
$(LIBTIDE_SO): $(LUAMOD)
	cp $(LUAMOD) $@
	ln -sf libtide.so.0 $(BUILD)/libtide.so

$(BUILD)/test_%: spec/c/test_%.c $(LIBTIDE) $(wildcard spec/c/*.h)
	$(CC) $(CFLAGS_ALL) $< -o $@ $(LIBTIDE) $(LIBS)

# the preload's CPU-feature mapping is not in libtide (preload.so is a Lua program's object)
$(BUILD)/test_blas_core: spec/c/test_blas_core.c lua/preload/blas_core.c lua/preload/preload.h
	$(CC) $(CFLAGS_ALL) $(filter %.c,$^) -o $@ $(LIBS)

ctests: $(CTESTS)

# stand-in CUDA plug-ins for test_plugin_lookup: one of another backend ABI, one without any
FAKE_CUDA := $(BUILD)/fake_cuda/old/libtide_cuda.so $(BUILD)/fake_cuda/abi999/libtide_cuda.so
$(BUILD)/fake_cuda/%/libtide_cuda.so: spec/c/fake_cuda_plugin.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -shared -DFAKE_ABI=$(if $(filter old,$*),0,$(patsubst abi%,%,$*)) $< -o $@
$(BUILD)/test_plugin_lookup: $(FAKE_CUDA)
# a backend wholly outside the core, for test_backend_plugin (spec/c/fake_backend.c)
$(BUILD)/fake_backend/libtide_fake.so: spec/c/fake_backend.c src/backend.h src/backend_entries.def include/tide.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -shared $< -o $@
$(BUILD)/fake_backend/libtide_fake_nocopy.so: spec/c/fake_backend.c src/backend.h src/backend_entries.def include/tide.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -shared -DFAKE_NO_COPY $< -o $@
$(BUILD)/test_backend_plugin: $(BUILD)/fake_backend/libtide_fake.so \
    $(BUILD)/fake_backend/libtide_fake_nocopy.so $(FAKE_CUDA)

# each plug-in's folder builds it: the CUDA backend whenever nvcc is found (src/cuda/cuda.mk),
# the MPI and NCCL plug-ins (src/dist/dist.mk); a new backend's src/<name>/<name>.mk joins here
-include $(wildcard src/*/*.mk)
-include spec/cuda_emu/cuda_emu.mk
-include spec/nccl_emu/nccl_emu.mk

# each set-up command installs the Debian packages it needs (tools/deps.sh), then builds
# (one job per core: CI and the README run a plain `make test`)
NPROC := $(shell nproc 2>/dev/null || echo 2)
test:
	@sh tools/deps.sh test
	@t0=$$(date +%s); $(MAKE) --no-print-directory -j$(NPROC) all ctests && \
	    TIDE_BUILD_SECONDS=$$(($$(date +%s) - t0)) sh spec/support/run_all.sh

# One sanitizer build, clang's ASan + UBSan together (clang's UBSan reports what gcc's misses:
# NULL + 0, float-to-int out of range): the C tests and the busted suite (run_asan.sh).
# -shared-libasan: core.so and the plug-ins use the runtime lua5.4 preloads, and the C tests
# find it by their run path. oneDNN is left out (its JIT code is not instrumented).
ASAN_RT_DIR = $(shell clang -print-file-name=libclang_rt.asan-x86_64.so 2>/dev/null | xargs dirname 2>/dev/null)
asan:
	$(MAKE) BUILD=build-asan CC=clang OPT="$(SAN)" LTO= DNNL_H= NVCC_FOUND= \
	    SAN_LDFLAGS="$(SAN) -Wl,-rpath,$(ASAN_RT_DIR)" \
	    all ctests
	@sh spec/support/run_asan.sh build-asan

# the Lua API fuzzer (tools/fuzz_api.lua) on the sanitizer build, run after run with new seeds;
# crashes and findings with their reproducers go to build/fuzz/ (tools/fuzz.sh)
FUZZ_SECONDS ?= 1800
fuzz:
	@sh tools/fuzz.sh $(FUZZ_SECONDS)

bench: all
	@LIBS="$(LIBS)" sh bench/run.sh

deps:
	@sh tools/deps.sh all

# the pretrained model of the BERT examples and benchmarks (the only target that downloads a model)
models:
	@sh tools/models.sh

# the demo needs the Lua module only: no CUDA backend, no plug-ins, no C tests
demo:
	@sh tools/deps.sh build demo
	@$(MAKE) --no-print-directory -j$(NPROC) $(LUAMOD) $(PRELOAD_SO)
	@sh tools/demo.sh

gpu-check:
	@sh bench/gpu_check.sh

rock:
	@sh tools/rock.sh

format:
	clang-format -i $(wildcard include/*.h src/*.c src/*.h src/cpu/*.[ch] src/io/*.[ch] src/text/wordpiece.[ch] \
	    src/cuda/*.cu src/cuda/*.cuh src/dist/*.c lua/*.c lua/*.h spec/c/*.[ch] spec/cuda_emu/*.cpp spec/cuda_emu/*.h spec/nccl_emu/*.c bench/*.c examples/embed/*.c)

format-check:
	@clang-format --dry-run --Werror $(wildcard include/*.h src/*.c src/*.h src/cpu/*.[ch] \
	    src/io/*.[ch] src/text/wordpiece.[ch] src/cuda/*.cu src/cuda/*.cuh src/dist/*.c lua/*.c lua/*.h spec/c/*.[ch] spec/cuda_emu/*.cpp spec/cuda_emu/*.h spec/nccl_emu/*.c bench/*.c \
	    examples/embed/*.c) && echo "clang-format: clean"

# every shell script passes shellcheck at warning level (its notes on quoting are left to taste)
shell-check:
	@shellcheck -S warning $$(git ls-files '*.sh' 2>/dev/null || ls bench/*.sh tools/*.sh spec/*/*.sh) && \
	    echo "shellcheck: clean"

# nothing under src/ or include/tide.h may see Lua; shape.c <- storage.c <- tensor.c <-
# transfer.c call one way only, and lua/*.c have no circle (spec/support/layering_check.sh)
LAYERED_OBJ := $(patsubst %,$(CORE_BUILD)/obj/src/%.o,shape storage tensor transfer)
check-layering: $(LAYERED_OBJ) $(BIND_OBJ)
	@! grep -rnE '#include *[<"](lua|lauxlib|lualib)' src include/tide.h && echo "layering: clean"
	@sh spec/support/layering_check.sh $(CORE_BUILD)/obj/src $(BUILD)/obj/lua
	@! grep -rnE 'TIDE_DEVICE_CUDA|tide_cuda_|kDLCUDA' src | \
	    grep -vE '^src/cuda/|^src/cuda_api\.c:|^src/device\.c:.*\{"cuda", ' && \
	    echo "backends: outside src/cuda/, only src/device.c's registry line names CUDA"

clean:
	rm -rf build build-asan build-lua5.3 build-lua5.1 build-luajit

# install recipe for luarocks (tools/install.mk) and the embedding example (examples/embed/embed.mk)
-include tools/install.mk
-include examples/embed/embed.mk
