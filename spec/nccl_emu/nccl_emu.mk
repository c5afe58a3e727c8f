# nccl_emu.mk — an emulated libnccl (spec/nccl_emu/nccl.c, over MPI) for running tide's NCCL
# plug-in on the CPU: build/nccl-emu/libnccl.so, loaded through TIDE_NCCL_LIBRARY by the
# distributed suites of spec/support/run_all.sh. Needs Open MPI (dist.mk's MPI_* variables).
NCCL_EMU_LIB := $(BUILD)/nccl-emu/libnccl.so

.PHONY: nccl-emu
nccl-emu: $(NCCL_EMU_LIB)

$(NCCL_EMU_LIB): spec/nccl_emu/nccl.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(MPI_CFLAGS) $(PLUGIN_FLAGS) $< -o $@.$$$$.tmp $(MPI_LIBS) && mv -f $@.$$$$.tmp $@
