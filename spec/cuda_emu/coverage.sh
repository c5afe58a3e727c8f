#!/bin/sh
# coverage.sh — which lines of src/cuda/ the CUDA tests run, on the emulated runtime.
#
#   sh spec/cuda_emu/coverage.sh [FILE.cu ...]
#
# Builds the emulated backend with gcov instrumentation under build/cuda-emu-cov/, runs the
# vtable smoke test, the #cuda specs and the device-rule specs on cuda:0 against it, then prints
# the share of lines executed per file and, for the files named (all when none), each line
# never executed. A line of a template counts as run when any instance ran it: dtypes a spec
# never uses show up as the unexecuted lines of the dispatch switches.
set -u
cd "$(dirname "$0")/../.." || exit 1
COV=build/cuda-emu-cov
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
LUA=${LUA:-lua5.4}
rm -rf "$COV" && mkdir -p "$COV"
FLAGS="-std=c++17 -O0 -g -fPIC -fvisibility=hidden --coverage -Wno-unknown-pragmas \
 -isystem $CUDA_HOME/include -Iinclude -Isrc -include spec/cuda_emu/cuda_emu.h"
for f in src/cuda/*.cu; do
    g++ $FLAGS -x c++ -c "$f" -o "$COV/$(basename "$f" .cu).o" &
done
g++ $FLAGS -I/usr/include/x86_64-linux-gnu -c spec/cuda_emu/runtime.cpp -o "$COV/runtime.o"
wait
g++ -shared --coverage -o "$COV/libtide_cuda.so" "$COV"/*.o \
    -Wl,--version-script=src/cuda/exports.map -lopenblas -ldl -lpthread || exit 1
make --no-print-directory -s all ctests NVCC_FOUND= || exit 1

export LUA_PATH="lua/?.lua;lua/?/init.lua;;" LUA_CPATH="build/lua/?.so;;" TIDE_CPU_DEVICES=2
export TIDE_CUDA_EMU_DEVICES=2 TIDE_CUDA_LIB="$COV/libtide_cuda.so"
build/test_cuda_unavailable "$COV/libtide_cuda.so" | tail -n 1
$LUA /usr/bin/busted --run=gpu | tail -n 1
device_specs=$(grep -l -E 'spec\.support\.device|TIDE_TEST_DEVICE' spec/*_spec.lua)
TIDE_TEST_DEVICE=cuda:0 $LUA /usr/bin/busted $device_specs | tail -n 1

echo
# gcov writes its .gcov files into the working directory: run it from the root, keep them in COV
for f in src/cuda/*.cu; do
    b=$(basename "$f" .cu)
    gcov -o "$COV/$b.o" "$f" 2>/dev/null | grep -A1 "^File '$f'" | tail -n 1 | sed "s|^|$f: |"
    cp "$b.cu.gcov" "$COV/" 2>/dev/null
    rm -f ./*.gcov
done
[ $# -gt 0 ] && files="$*" || files=$(ls src/cuda/*.cu)
for f in $files; do
    echo "==== $f: lines never executed"
    grep -E '^ +#####:' "$COV/$(basename "$f").gcov" | sed -E 's/^ +#####: +//' | sort -n -u
done
