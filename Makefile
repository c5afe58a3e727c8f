# tide — build, test, bench. `make demo` and `make test` are the two set-up commands.
#
#   make            core + CPU backend + Lua module (+ CUDA backend when nvcc is found)
#   make test       every suite; ends with one line "N passed, N failed"
#   make asan       C tests and busted suite under ASan+UBSan
#   make ubsan-clang  C tests under clang's UBSan (what gcc's misses)
#   make bench      benchmarks, each beside its reference (PyTorch, raw BLAS, memory bandwidth)
#   make demo       installs what is missing, builds, runs the main example
#   make gpu-check  on a GPU machine: build, cuda-tagged specs, GPU benchmarks ($OUT gets logs)
#   make format / format-check / check-layering

LUA        ?= lua5.4
LUA_INC    ?= $(shell pkg-config --cflags lua5.4 2>/dev/null || echo -I/usr/include/lua5.4)
LUA_LIBS   ?= $(shell pkg-config --libs lua5.4 2>/dev/null || echo -llua5.4)
CUDA_HOME  ?= /usr/local/cuda
NVCC       ?= $(CUDA_HOME)/bin/nvcc
BUILD      ?= build
CC         ?= cc
OPT        ?= -O3 -march=x86-64-v2
WERROR     ?= -Werror
WARN       := -Wall -Wextra -Wshadow -Wundef -Wwrite-strings -Wstrict-prototypes \
              -Wmissing-prototypes $(WERROR)
CFLAGS_ALL := -std=c11 -D_GNU_SOURCE $(OPT) -g -fPIC -fopenmp $(WARN) -Iinclude -Isrc \
              -I/usr/include/x86_64-linux-gnu $(EXTRA_CFLAGS)
comma      := ,
# OpenBLAS's OpenMP build shares tide's OpenMP pool (one pool; the pthreads build spins its own
# threads against tide's kernels). Debian installs it beside the pthreads build and
# update-alternatives prefers pthreads, so it is named by directory, with a run path.
OPENBLAS_OMP ?= $(firstword $(wildcard /usr/lib/x86_64-linux-gnu/openblas-openmp/libopenblas.so.0 \
                /usr/lib/aarch64-linux-gnu/openblas-openmp/libopenblas.so.0))
OPENBLAS_DIR := $(patsubst %/,%,$(dir $(OPENBLAS_OMP)))
BLAS_LIBS  := $(if $(OPENBLAS_OMP),-L$(OPENBLAS_DIR) -Wl$(comma)-rpath$(comma)$(OPENBLAS_DIR)) \
              -lopenblas
LIBS       := $(BLAS_LIBS) -lcjson -lz -lm -ldl -lpthread -fopenmp
SAN        := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all

CORE_SRC   := $(wildcard src/*.c src/cpu/*.c src/io/*.c)
BIND_SRC   := $(wildcard lua/*.c)
CORE_OBJ   := $(CORE_SRC:%.c=$(BUILD)/obj/%.o)
BIND_OBJ   := $(BIND_SRC:%.c=$(BUILD)/obj/%.o)
CTEST_SRC  := $(wildcard spec/c/test_*.c)
CTESTS     := $(CTEST_SRC:spec/c/%.c=$(BUILD)/%)
HEADERS    := $(wildcard include/*.h include/*.def src/*.h src/cpu/*.h src/io/*.h lua/*.h)

LIBTIDE    := $(BUILD)/libtide.a
LUAMOD     := $(BUILD)/lua/tide/core.so

.PHONY: all test ctests asan bench demo gpu-check format format-check check-layering clean \
        deps install embed-demo

all: $(LIBTIDE) $(LUAMOD) cuda

$(BUILD)/obj/%.o: %.c $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(LUA_INC) -c $< -o $@

$(LIBTIDE): $(CORE_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

# -z nodelete: lua_close unloads core.so while OpenMP's workers (which run its code) live on;
# the process then crashes at exit
$(LUAMOD): $(BIND_OBJ) $(LIBTIDE)
	@mkdir -p $(dir $@)
	$(CC) -shared -Wl,-z,nodelete -o $@ $(BIND_OBJ) $(LIBTIDE) $(LIBS)

$(BUILD)/test_%: spec/c/test_%.c $(LIBTIDE) $(wildcard spec/c/*.h)
	$(CC) $(CFLAGS_ALL) $< -o $@ $(LIBTIDE) $(LIBS)

ctests: $(CTESTS)

# CUDA backend: its own shared object, built whenever nvcc is found (see src/cuda/cuda.mk)
-include src/cuda/cuda.mk
-include spec/cuda_emu/cuda_emu.mk

test: all ctests
	@sh spec/support/run_all.sh

asan:
	$(MAKE) BUILD=build-asan OPT="$(SAN)" LIBS="$(LIBS) -fsanitize=address,undefined" NVCC_FOUND= all ctests
	@sh spec/support/run_asan.sh build-asan

# the C tests built by clang with its UBSan, which reports what gcc's misses (NULL + 0)
UBSAN_CLANG := -O1 -g -fno-omit-frame-pointer -fsanitize=undefined -fno-sanitize-recover=all
.PHONY: ubsan-clang
ubsan-clang:
	$(MAKE) BUILD=build-ubsan-clang CC=clang OPT="$(UBSAN_CLANG)" \
	    LIBS="$(LIBS) -fsanitize=undefined" NVCC_FOUND= ctests
	@sh spec/support/run_ubsan_clang.sh build-ubsan-clang

bench: all
	@LIBS="$(LIBS)" sh bench/run.sh

deps:
	@sh tools/deps.sh

demo: deps
	@$(MAKE) --no-print-directory all
	@sh tools/demo.sh

gpu-check:
	@sh bench/gpu_check.sh

format:
	clang-format -i $(wildcard include/*.h src/*.c src/*.h src/cpu/*.[ch] src/io/*.[ch] \
	    src/cuda/*.cu src/cuda/*.cuh lua/*.c lua/*.h spec/c/*.[ch] spec/cuda_emu/*.cpp spec/cuda_emu/*.h bench/*.c examples/embed/*.c)

format-check:
	@clang-format --dry-run --Werror $(wildcard include/*.h src/*.c src/*.h src/cpu/*.[ch] \
	    src/io/*.[ch] src/cuda/*.cu src/cuda/*.cuh lua/*.c lua/*.h spec/c/*.[ch] spec/cuda_emu/*.cpp spec/cuda_emu/*.h bench/*.c \
	    examples/embed/*.c) && echo "clang-format: clean"

# nothing under src/ or include/tide.h may see Lua
check-layering:
	@! grep -rnE '#include *[<"](lua|lauxlib|lualib)' src include/tide.h && echo "layering: clean"

clean:
	rm -rf build build-asan build-ubsan-clang

# install recipe for luarocks (tools/install.mk) and the embedding example (examples/embed/embed.mk)
-include tools/install.mk
-include examples/embed/embed.mk
