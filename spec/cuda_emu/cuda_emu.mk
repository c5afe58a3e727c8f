# cuda_emu.mk — the CUDA backend built for the CPU: src/cuda/*.cu compiled by the host C++
# compiler against the toolkit's headers and linked with the emulated runtime of
# spec/cuda_emu/runtime.cpp, into build/cuda-emu/libtide_cuda.so. The test suite loads it with
# TIDE_CUDA_LIB to run the #cuda specs and the device rules on an emulated cuda:0 and cuda:1
# (spec/support/run_all.sh, suite "cuda emu"). Needs only the toolkit's headers.
EMU_DIR      := $(BUILD)/cuda-emu
EMU_LIB      := $(EMU_DIR)/libtide_cuda.so
EMU_CUBLAS   := $(EMU_DIR)/libcublas_emu.so
# one translation unit of every .cu, as the nvcc build (src/cuda/cuda.mk: CUDA_UNITY; the host
# compiler's start and the headers cost 0.7 s a file, half of the 25 s the 18 files took)
ifeq ($(CUDA_UNITY),1)
EMU_OBJ      := $(EMU_DIR)/cuda_unity.o $(EMU_DIR)/runtime.o
else
EMU_OBJ      := $(CUDA_SRC:src/cuda/%.cu=$(EMU_DIR)/%.o) $(EMU_DIR)/runtime.o
endif
EMU_CXX      ?= g++
EMU_CXXFLAGS := -std=c++17 -O1 $(DEBUG_INFO) -fPIC -fvisibility=hidden -Wall -Wextra -Wshadow $(WERROR) \
                -Wno-unused-parameter -Wno-unknown-pragmas -isystem $(CUDA_HOME)/include -Iinclude -Isrc \
                -include spec/cuda_emu/cuda_emu.h -DTIDE_CUBLAS_LIB='"libcublas_emu.so"'

.PHONY: cuda-emu
cuda-emu: $(EMU_LIB) $(EMU_CUBLAS)

$(EMU_DIR)/%.o: src/cuda/%.cu $(CUDA_HEADERS) spec/cuda_emu/cuda_emu.h
	@mkdir -p $(dir $@)
	$(EMU_CXX) $(EMU_CXXFLAGS) -x c++ -c $< -o $@.$$$$.tmp && mv -f $@.$$$$.tmp $@

$(EMU_DIR)/cuda_unity.o: $(CUDA_UNITY_SRC) $(CUDA_SRC) $(CUDA_HEADERS) spec/cuda_emu/cuda_emu.h
	@mkdir -p $(dir $@)
	$(EMU_CXX) $(EMU_CXXFLAGS) -I. -x c++ -c $< -o $@.$$$$.tmp && mv -f $@.$$$$.tmp $@

$(EMU_DIR)/runtime.o: spec/cuda_emu/runtime.cpp spec/cuda_emu/cuda_emu.h
	@mkdir -p $(dir $@)
	$(EMU_CXX) $(EMU_CXXFLAGS) -I/usr/include/x86_64-linux-gnu -c $< -o $@.$$$$.tmp && mv -f $@.$$$$.tmp $@

# exports what the real one does, plus the two runtime functions the emulated cuBLAS calls
$(EMU_LIB): $(EMU_OBJ) spec/cuda_emu/exports.map
	$(EMU_CXX) -shared -o $@.$$$$.tmp $(EMU_OBJ) -Wl,-soname,libtide_cuda.so \
	    -Wl,--version-script=spec/cuda_emu/exports.map -Wl,--no-undefined -lopenblas -ldl \
	    -lpthread && mv -f $@.$$$$.tmp $@

# the emulated cuBLAS: a library of its own beside the backend, opened on the first gemm as the
# real one is (src/cuda/blas_loader.cu); it needs the backend's runtime (found by soname)
$(EMU_DIR)/cublas.o: spec/cuda_emu/cublas.cpp spec/cuda_emu/cuda_emu.h
	@mkdir -p $(dir $@)
	$(EMU_CXX) $(EMU_CXXFLAGS) -fvisibility=default -I/usr/include/x86_64-linux-gnu -c $< \
	    -o $@.$$$$.tmp && mv -f $@.$$$$.tmp $@

$(EMU_CUBLAS): $(EMU_DIR)/cublas.o $(EMU_LIB)
	$(EMU_CXX) -shared -o $@.$$$$.tmp $(EMU_DIR)/cublas.o -L$(EMU_DIR) -l:libtide_cuda.so \
	    -Wl,-rpath,'$$ORIGIN' -Wl,--no-undefined -lopenblas && mv -f $@.$$$$.tmp $@

# the emulator's own test (spec/cuda_emu/test_emu.cpp), one of the C tests where the toolkit is
ifneq ($(NVCC_FOUND),)
ctests: $(BUILD)/test_cuda_emu
$(BUILD)/test_cuda_emu: spec/cuda_emu/test_emu.cpp $(EMU_DIR)/runtime.o $(EMU_DIR)/cublas.o \
                        spec/cuda_emu/cuda_emu.h
	$(EMU_CXX) $(EMU_CXXFLAGS) -Ispec/c -o $@ $< $(EMU_DIR)/runtime.o $(EMU_DIR)/cublas.o \
	    -lopenblas -ldl -lpthread
endif

# tide's side of the GPU benchmarks; the test suite runs it as `gpu_tide smoke` on the emulator,
# bench/gpu_check.sh at full size on a GPU
$(BUILD)/bench/gpu_tide: bench/gpu_tide.c bench/bench_util.h $(LIBTIDE)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -Ibench $< -o $@ $(LIBTIDE) $(LIBS)
