#!/bin/sh
# run.sh — `make bench`: every CPU benchmark, each printing its figures beside a reference
# measured in the same run (PyTorch, raw BLAS, a plain C loop). Benchmarks never gate CI.
#
#   bench/*.c    built against build/libtide.a into build/bench/ and run
#   bench/*.lua  run with lua5.4 against the checkout's build (they start their own references)
#                (bench/bert_*.lua: MiniLM against sentence-transformers/PyTorch and ONNX Runtime;
#                they need models/ from `make models` and .venv from tools/pyenv.sh, and print
#                one "skipped" line without them)
# GPU benchmarks (bench/gpu_*) belong to `make gpu-check` and are skipped here.
# BENCH="sgemm overhead" runs only those. Exit status: non-zero if a benchmark failed.
set -u
cd "$(dirname "$0")/.." || exit 1
CC=${CC:-cc}
LUA=${LUA:-lua5.4}
B=build/bench
mkdir -p "$B"
CFLAGS="-std=c11 -D_GNU_SOURCE -O3 -march=x86-64-v2 -g -fopenmp -Iinclude -Isrc \
-I/usr/include/x86_64-linux-gnu"
# run by hand, the Makefile's LIBS: -ldnnl where it builds with oneDNN (dnnl.h installed)
DNNL=$([ -f /usr/include/dnnl.h ] && echo -ldnnl)
LIBS="build/libtide.a ${LIBS:--lopenblas $DNNL -lcjson -lutf8proc -lz -lm -ldl -lpthread -fopenmp}"
LUA_PATH="lua/?.lua;lua/?/init.lua;;"
LUA_CPATH="build/lua/?.so;;"
export LUA_PATH LUA_CPATH

wanted() {
    [ -z "${BENCH:-}" ] && return 0
    case " $BENCH " in *" $1 "*) return 0 ;; esac
    return 1
}

failed=""
echo "tide benchmarks on $(nproc) cores, $(date -u '+%Y-%m-%d %H:%M UTC')"
# OpenBLAS's kernels: a Lua program gets the family tide's preload picks for this CPU
# (lua/preload/blas_core.c); the C benchmarks link libtide.a without the preload, so they run
# under the same value, set here, and so do the PyTorch references (bench/compare.lua)
BLAS_CORE=${OPENBLAS_CORETYPE:-$($LUA -e 'print(require("tide").cpu_info().blas_core or "")' 2>/dev/null)}
echo "(OpenBLAS kernels: ${BLAS_CORE:-"OpenBLAS's own choice"}; tide and every reference run them)"
for src in bench/*.c; do
    [ -e "$src" ] || continue
    name=$(basename "$src" .c)
    case "$name" in gpu_*) continue ;; esac
    wanted "$name" || continue
    echo
    # a benchmark with a rule of its own (build/bench_NAME, e.g. examples/embed/embed.mk) is
    # built by make; the others link build/libtide.a only
    if ${MAKE:-make} -n "build/bench_$name" >/dev/null 2>&1; then
        ${MAKE:-make} --no-print-directory -s "build/bench_$name" && exe="build/bench_$name"
    else
        # shellcheck disable=SC2086 # flag lists
        $CC $CFLAGS "$src" -o "$B/$name" $LIBS && exe="$B/$name"
    fi
    if [ -n "${exe:-}" ] && env ${BLAS_CORE:+OPENBLAS_CORETYPE=$BLAS_CORE} "$exe"; then :; else
        failed="$failed $name"
    fi
    exe=
done
for src in bench/*.lua; do
    [ -e "$src" ] || continue
    name=$(basename "$src" .lua)
    case "$name" in gpu_*) continue ;; esac
    wanted "$name" || continue
    echo
    args=
    # the char LM's loss comparison trains for about an hour here (1000 steps, 3 PyTorch seeds,
    # one thread each side; run lstm and gpt side by side): make bench times its steps;
    # TIDE_BENCH_CHAR_LM_STEPS=1000 adds the losses
    [ "$name" = char_lm ] && args="--steps ${TIDE_BENCH_CHAR_LM_STEPS:-0} --time-steps 5"
    # the fine-tune's accuracy over seeds (tide and PyTorch, ~40 minutes) on request; otherwise
    # the two fine-tunes without randomness, loss by loss (10 steps, ~2 minutes)
    if [ "$name" = bert_classify ]; then
        if [ "${TIDE_BENCH_BERT_SEEDS:-0}" -gt 0 ]; then
            args="--seeds $TIDE_BENCH_BERT_SEEDS --limit 2000 --max-length 64"
        else
            args="--exact 1 --limit 320 --epochs 1 --max-length 64"
        fi
    fi
    # shellcheck disable=SC2086 # args is empty or a list of words
    if ! $LUA "$src" $args; then
        failed="$failed $name"
    fi
done
# the fine-tuning step again on rows cut full (--fill 1): the same work on both sides, where the
# run above is mostly padding, which tide skips and transformers computes
if wanted bert_finetune; then
    echo
    echo "(bert_finetune, rows cut full)"
    $LUA bench/bert_finetune.lua --fill 1 || failed="$failed bert_finetune(fill)"
fi
# the two MiniLM twins again in bfloat16 (the models cast for encoding, autocast for the
# fine-tuning step, on both sides) where the CPU multiplies bfloat16 in hardware
# (tide.cpu_info().bf16_gemm: oneDNN's AMX or AVX512-BF16 kernels)
if [ -n "$($LUA -e 'print(require("tide").cpu_info().bf16_gemm or "")' 2>/dev/null)" ]; then
    for name in bert_encode bert_finetune; do
        wanted "$name" || continue
        echo
        echo "($name in bfloat16)"
        if [ "$name" = bert_encode ]; then args="--dtype bfloat16"; else args="--amp 1"; fi
        # shellcheck disable=SC2086 # args is a list of words
        $LUA "bench/$name.lua" $args || failed="$failed $name(bfloat16)"
    done
fi
# the per-op overhead and the MLP step again under LuaJIT (LÖVE, Neovim), to read beside 5.4's
# (build-luajit/: make LUA_VERSION=luajit)
if command -v luajit >/dev/null 2>&1 && [ -f build-luajit/lua/tide/core.so ]; then
    for name in overhead mlp_step; do
        wanted "$name" || continue
        echo
        echo "($name under LuaJIT)"
        LUA_CPATH="build-luajit/lua/?.so;;" luajit "bench/$name.lua" || failed="$failed $name(luajit)"
    done
fi

echo
if [ -n "$failed" ]; then
    echo "bench: failed:$failed"
    exit 1
fi
echo "bench: done"
