# cuda.mk — the CUDA backend, build/lua/tide/libtide_cuda.so, built whenever nvcc is found.
# Included by the Makefile (its `all` depends on `cuda`).
#
# The CUDA runtime is linked statically: it dlopens libcuda.so.1 itself, so on a host without a
# driver the library still loads and tide_cuda_backend_open reports why CUDA is unavailable.
# cuBLAS is not linked: blas_loader.cu opens it on the first gemm (through the rpath to the
# toolkit), so asking whether a GPU exists maps no cuBLAS; where it is missing, that gemm fails
# with dlerror(). Only tide_cuda_backend_open and tide_cuda_backend_abi are exported.

CUDA_SRC      := $(wildcard src/cuda/*.cu)
# One translation unit including every .cu (CUDA_UNITY=1, the default): nvcc spends about
# 1.3 s a file on its own passes (the runtime's headers, cudafe, the host compile's start), so
# the backend took 50 s of CPU as 18 objects and 28 s as one. A name two files both define is a
# redefinition error there, never a silent merge. CUDA_UNITY=0 builds an object per file, which
# recompiles only the file a change touches.
CUDA_UNITY    ?= 1
# its objects are the core's (CORE_BUILD): another Lua's build only links them
ifeq ($(CUDA_UNITY),1)
CUDA_OBJ      := $(CORE_BUILD)/obj/cuda_unity.o
else
CUDA_OBJ      := $(CUDA_SRC:%.cu=$(CORE_BUILD)/obj/%.o)
endif
CUDA_LIB      := $(BUILD)/lua/tide/libtide_cuda.so
# (every header a .cu reaches: nvcc writes no .d files here; tide.h includes the op table)
CUDA_HEADERS  := $(wildcard src/cuda/*.cuh) include/tide.h include/tide_ops.def include/tide_kernels.def \
                 src/backend.h src/backend_entries.def src/scalar_math.h src/scalar_bessel.h \
                 src/scalar_polynomials.h src/rnn_cell_math.h src/dtype_convert.h \
                 src/pointwise_loss_math.h src/activation_math.h
# Which GPU code to build. TIDE_CUDA_ARCH=90 (say) builds sm_90 machine code plus compute_90 PTX;
# unset, the compute capability of the GPU nvidia-smi reports is used; with no GPU, one PTX
# target (compute_75, the oldest CUDA 13 supports) that the driver compiles at first load and
# caches. One target, not three: a three-architecture build took 15 minutes on 2 cores.
# CUDA_GENCODE overrides all of this.
ifeq ($(origin TIDE_CUDA_ARCH),undefined)
TIDE_CUDA_ARCH := $(shell nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | \
                    head -n 1 | tr -d ' .')
endif
ifneq ($(origin CUDA_GENCODE),undefined)
CUDA_ARCH_WHY := CUDA_GENCODE as given
else ifneq ($(TIDE_CUDA_ARCH),)
CUDA_GENCODE  := -gencode arch=compute_$(TIDE_CUDA_ARCH),code=sm_$(TIDE_CUDA_ARCH) \
                 -gencode arch=compute_$(TIDE_CUDA_ARCH),code=compute_$(TIDE_CUDA_ARCH)
CUDA_ARCH_WHY := sm_$(TIDE_CUDA_ARCH) machine code + PTX
else
CUDA_GENCODE  := -gencode arch=compute_75,code=compute_75
CUDA_ARCH_WHY := no GPU found: compute_75 PTX, compiled by the driver at first load
endif
# the objects depend on the targets chosen: a file rewritten only when they change
CUDA_ARCH_STAMP := $(CORE_BUILD)/gen/cuda_gencode
$(CUDA_ARCH_STAMP): FORCE
	@mkdir -p $(dir $@)
	@echo '$(CUDA_GENCODE)' >$@.$$$$.tmp; \
	    if cmp -s $@.$$$$.tmp $@; then rm -f $@.$$$$.tmp; else mv -f $@.$$$$.tmp $@; fi
NVCC_WARN     := -Werror all-warnings -Xcompiler -Wall,-Wextra,-Wshadow,-Werror
# objects are written under a temporary name and renamed: a concurrent `make` (several people
# build this checkout at once) never links a half-written object; --threads 0 compiles the
# gencode targets in parallel
NVCCFLAGS     ?= -std=c++17 -O3 $(if $(DEBUG_INFO),-Xcompiler $(DEBUG_INFO)) -lineinfo --threads 0 \
                 $(CUDA_GENCODE) $(NVCC_WARN) -Xcompiler -fPIC,-fvisibility=hidden -Iinclude -Isrc
NVCC_FOUND    := $(shell command -v $(NVCC) 2>/dev/null)

.PHONY: cuda

# the unity file lists the .cu files by path (-I. finds them); rewritten only when the list
# changes, so that it alone never triggers a rebuild (the emulated backend's build reads it too,
# with or without nvcc: spec/cuda_emu/cuda_emu.mk)
CUDA_UNITY_SRC ?= $(CORE_BUILD)/gen/cuda_unity.cu
$(CUDA_UNITY_SRC): FORCE
	@mkdir -p $(dir $@)
	@for f in $(CUDA_SRC); do echo "#include \"$$f\""; done >$@.$$$$.tmp; \
	    if cmp -s $@.$$$$.tmp $@; then rm -f $@.$$$$.tmp; else mv -f $@.$$$$.tmp $@; fi

ifneq ($(NVCC_FOUND),)
cuda: $(CUDA_LIB)

$(CORE_BUILD)/obj/src/cuda/%.o: src/cuda/%.cu $(CUDA_HEADERS) $(CUDA_ARCH_STAMP)
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) -c $< -o $@.$$$$.tmp && mv -f $@.$$$$.tmp $@

$(CORE_BUILD)/obj/cuda_unity.o: $(CUDA_UNITY_SRC) $(CUDA_SRC) $(CUDA_HEADERS) $(CUDA_ARCH_STAMP)
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) -I. -c $< -o $@.$$$$.tmp && mv -f $@.$$$$.tmp $@

$(CUDA_LIB): $(CUDA_OBJ) src/cuda/exports.map
	@mkdir -p $(dir $@)
	@echo "CUDA backend: $(CUDA_ARCH_WHY) (TIDE_CUDA_ARCH overrides)"
	$(NVCC) -shared $(CUDA_GENCODE) -cudart static -o $@.$$$$.tmp $(CUDA_OBJ) \
	    -Xlinker --version-script=src/cuda/exports.map -Xlinker -rpath=$(CUDA_HOME)/lib64 \
	    -Xlinker --no-undefined -ldl -lpthread && mv -f $@.$$$$.tmp $@
else
cuda:
	@echo "CUDA toolkit not found: building without the CUDA backend"
endif
