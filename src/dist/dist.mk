# dist.mk — the collective plug-ins next to the Lua module (build/lua/tide/), dlopened on first
# use by src/dist.c. Included by the Makefile (its `all` depends on `dist`).
#
#   libtide_mpi.so   src/dist/mpi.c linked with libmpi; built when Open MPI's mpicc is found
#                    (tools/deps.sh installs openmpi-bin and libopenmpi-dev)
#   libtide_nccl.so  src/dist/nccl.c; always built. It dlopens libnccl itself, so it needs no
#                    NCCL to build; the toolkit's nccl.h is used when found, for its declarations.
# Only tide_dist_*_open is exported.
MPICC        ?= mpicc
MPI_FOUND    := $(shell command -v $(MPICC) 2>/dev/null)
MPI_CFLAGS   := $(if $(MPI_FOUND),$(shell $(MPICC) -showme:compile 2>/dev/null))
MPI_LIBS     := $(if $(MPI_FOUND),$(shell $(MPICC) -showme:link 2>/dev/null))
DIST_LIB_MPI := $(BUILD)/lua/tide/libtide_mpi.so
DIST_LIB_NCCL:= $(BUILD)/lua/tide/libtide_nccl.so
DIST_HEADERS := include/tide.h include/tide_dist.h src/backend.h src/backend_entries.def src/dist_plugin.h
NCCL_H       := $(wildcard $(CUDA_HOME)/include/nccl.h)
NCCL_CFLAGS  := $(if $(NCCL_H),-DTIDE_HAVE_NCCL_H -isystem $(CUDA_HOME)/include) \
                -DTIDE_NCCL_FALLBACK_DIR='"$(CUDA_HOME)/lib64"'
PLUGIN_FLAGS := -shared -fvisibility=hidden -Wl,--no-undefined

.PHONY: dist
dist: $(DIST_LIB_NCCL) $(if $(MPI_FOUND),$(DIST_LIB_MPI))
	$(if $(MPI_FOUND),,@echo "Open MPI (mpicc) not found: building without the MPI plug-in")

$(DIST_LIB_MPI): src/dist/mpi.c $(DIST_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(MPI_CFLAGS) $(PLUGIN_FLAGS) $< -o $@.$$$$.tmp $(MPI_LIBS) && mv -f $@.$$$$.tmp $@

$(DIST_LIB_NCCL): src/dist/nccl.c $(DIST_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(NCCL_CFLAGS) $(PLUGIN_FLAGS) $< -o $@.$$$$.tmp -ldl && mv -f $@.$$$$.tmp $@

# bench/dist_allreduce.c (run by bench/run.sh): tide's all_reduce beside a raw MPI_Allreduce
$(BUILD)/bench_dist_allreduce: bench/dist_allreduce.c bench/bench_util.h $(LIBTIDE) $(DIST_LIB_MPI)
	$(CC) $(CFLAGS_ALL) $(MPI_CFLAGS) -Ibench $< -o $@ $(LIBTIDE) $(LIBS) $(MPI_LIBS)
