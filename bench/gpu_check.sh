#!/bin/sh
# gpu_check.sh — `make gpu-check`: on a machine with a GPU, build everything (CUDA backend
# included), run the CUDA tests and the GPU benchmarks, and write the log and the results to
# $OUT (build/gpu-check when unset). Finishes in well under 8 minutes on an H200.
#
#   1. make all, then ctests           (nvcc for the GPU present: its sm_XX + PTX)
#   2. build/test_cuda_unavailable     (with a GPU: kernels through the vtable, hand-checked)
#   3. busted --run=gpu                (spec/cuda_spec.lua: every op against the CPU)
#   4. the device-rule specs with TIDE_TEST_DEVICE=cuda:0
#   5. bench/gpu_raw.cu, bench/gpu_tide.c, bench/gpu_overhead.lua, bench/gpu_torch.py, the
#      issue 13 training steps (LSTM, causal transformer): bench/gpu_seq_step.lua beside
#      bench/seq_step.py on the same GPU, the MLP and CNN training steps (bench/gpu_train_step.lua
#      beside bench/gpu_train_step.py), and bench/char_lm.lua on cuda (examples/char_lm.lua
#      beside PyTorch: val loss after 300 steps, time per step), and MiniLM encoding the
#      fortunes (bench/gpu_bert_encode.lua: its vectors checked against the CPU's, a mismatch
#      fails the step; sentences/s and TFLOP/s per dtype beside sentence-transformers), and
#      the attention kernel rows against BERT's composite on MiniLM's shapes, inference and
#      training's forward and backward with dropout (bench/gpu_attention.lua)
#   6. with more than one GPU, bench/nccl_allreduce.lua under mpirun (one rank per GPU): NCCL
#      all-reduce bus bandwidth at 1 MB and 64 MB; one GPU: "nccl all-reduce: skipped (one GPU)"
#   7. a table of tide's figures beside their references (gpu_results.txt)
# Without a GPU it prints one "no GPU: ..." line and exits 0, running nothing.
#
# TIDE_GPU_CHECK_EMU=1 rehearses the whole script on the emulated GPU (spec/cuda_emu/): the
# same steps against build/cuda-emu/libtide_cuda.so (2 devices), benchmarks at toy sizes, the
# NCCL all-reduce through the emulated NCCL (build/nccl-emu/), the raw CUDA reference skipped. The test suite runs this rehearsal, so the script is known to work before
# a GPU runs it; its figures mean nothing.
set -u
cd "$(dirname "$0")/.." || exit 1
OUT_DIR=${OUT:-build/gpu-check}
mkdir -p "$OUT_DIR"
LOG=$OUT_DIR/gpu_check.log
RES=$OUT_DIR/gpu_results.txt
JOBS=$(nproc 2>/dev/null || echo 4)
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
LUA=${LUA:-lua5.4}

EMU=${TIDE_GPU_CHECK_EMU:-0}
CUDA_LIB=build/lua/tide/libtide_cuda.so
SIZE=""      # gpu_tide's argument: "smoke" for toy sizes
OVERHEAD=""  # gpu_overhead.lua's ITERS REPS
CHAR_LM="--steps 300 --seeds 1 --time-steps 50" # bench/char_lm.lua's flags (one seed: the 5-minute window)
SEQ="10 5 full" # gpu_seq_step.lua's and seq_step.py's ITERS REPS SIZE
TRAIN="20 5 full"  # gpu_train_step.lua's and gpu_train_step.py's ITERS REPS SIZE
TRAIN_DEV=cuda     # gpu_train_step.py's DEVICE
if [ "$EMU" = 1 ]; then
    CUDA_LIB=build/cuda-emu/libtide_cuda.so
    export TIDE_CUDA_EMU_DEVICES=2
    SIZE=smoke
    OVERHEAD="20 1"
    CHAR_LM="--steps 1 --seeds 1 --time-steps 1 --data spec/char_lm_spec.lua"
    SEQ="1 1 smoke"
    TRAIN="1 1 smoke"
    TRAIN_DEV=cpu # gpu_train_step.py on the CPU: exercised wherever PyTorch is installed
elif command -v nvidia-smi >/dev/null 2>&1; then
    if ! nvidia-smi -L >/dev/null 2>&1; then
        echo "no GPU: nvidia-smi finds no device; gpu-check ran nothing"
        exit 0
    fi
elif ! ls /dev/nvidia[0-9]* >/dev/null 2>&1; then
    echo "no GPU: no nvidia-smi and no /dev/nvidia* device; gpu-check ran nothing"
    exit 0
fi
# $TIDE_CUDA_LIB wins over the library next to the module (src/device.c): one left in the
# caller's environment (the emulator's, from a test session) must not stand in for the GPU build
export TIDE_CUDA_LIB=$CUDA_LIB

: >"$LOG"
: >"$RES"
failed=""
log() { echo "$*" | tee -a "$LOG"; }
# step NAME SECONDS CMD...: runs CMD with a time limit, output to the log
step() {
    s_name=$1
    s_limit=$2
    shift 2
    log "==== $s_name ($(date -u +%H:%M:%S))"
    timeout "$s_limit" "$@" >>"$LOG" 2>&1
    s_rc=$?
    tail -n 3 "$LOG" | sed 's/^/    /'
    if [ "$s_rc" -ne 0 ]; then
        log "==== $s_name: FAILED (exit $s_rc)"
        failed="$failed $s_name"
    fi
    return "$s_rc"
}

start=$(date +%s)
if [ "$EMU" = 1 ]; then
    log "gpu-check REHEARSAL on the emulated GPU, $(date -u '+%Y-%m-%d %H:%M UTC'): figures are meaningless"
else
    log "gpu-check on $(nvidia-smi -L 2>/dev/null | head -n 1), $(date -u '+%Y-%m-%d %H:%M UTC')"
    nvidia-smi >>"$LOG" 2>&1
fi

if ! step build 300 make --no-print-directory -j"$JOBS" all; then
    log "gpu-check: the build failed; see $LOG"
    exit 1
fi
[ "$EMU" = 1 ] && step "build the emulated backend" 300 make --no-print-directory -j"$JOBS" cuda-emu
if [ ! -f "$CUDA_LIB" ]; then
    log "gpu-check: $CUDA_LIB was not built (is nvcc at $CUDA_HOME?)"
    exit 1
fi

# the C tests of other parts may be mid-change: keep going without them
step "build C tests" 180 make --no-print-directory -k -j"$JOBS" ctests
if [ -x build/test_cuda_unavailable ]; then
    step "c:test_cuda_unavailable" 60 build/test_cuda_unavailable "$CUDA_LIB"
else
    log "c:test_cuda_unavailable: not built"
    failed="$failed c:test_cuda_unavailable"
fi

export LUA_PATH="lua/?.lua;lua/?/init.lua;;"
export LUA_CPATH="build/lua/?.so;;"
# TIDE_GPU_CHECK_SPECS=0 (make test's rehearsal, whose suites have just run these specs on the
# emulated GPU) leaves the two busted steps out
if [ "${TIDE_GPU_CHECK_SPECS:-1}" != 0 ]; then
    step "busted --run=gpu" 150 env TIDE_CPU_DEVICES=2 $LUA /usr/bin/busted --run=gpu
    device_specs=$(grep -l -E 'spec\.support\.device|TIDE_TEST_DEVICE' spec/*_spec.lua 2>/dev/null)
    if [ -n "$device_specs" ]; then
        step "busted device rules on cuda:0" 120 env TIDE_CPU_DEVICES=2 TIDE_TEST_DEVICE=cuda:0 \
            $LUA /usr/bin/busted $device_specs
    fi
else
    log "busted steps: left out (TIDE_GPU_CHECK_SPECS=0)"
fi

# ---- benchmarks ------------------------------------------------------------------------------
mkdir -p build/bench
if [ "$EMU" != 1 ]; then
    step "build gpu_raw" 120 "$CUDA_HOME/bin/nvcc" -O3 -std=c++17 -arch=native bench/gpu_raw.cu \
        -o build/bench/gpu_raw -lcublas
fi
step "build gpu_tide" 60 make --no-print-directory build/bench/gpu_tide
[ "$EMU" != 1 ] && step "gpu_raw" 90 sh -c 'build/bench/gpu_raw | tee -a "$0"' "$RES"
step "gpu_tide" 90 sh -c 'TIDE_CUDA_LIB=$1 build/bench/gpu_tide $2 | tee -a "$0"' "$RES" "$CUDA_LIB" "$SIZE"
step "gpu_overhead.lua" 60 sh -c '$1 bench/gpu_overhead.lua $2 | tee -a "$0"' "$RES" "$LUA" "$OVERHEAD"
# the first Python that has PyTorch: Debian's python3-torch, or a python3 on PATH (a GPU image's)
PY=${TIDE_BENCH_PYTHON:-}
if [ -z "$PY" ]; then
    for p in /usr/bin/python3 python3; do
        if "$p" -c 'import torch' >/dev/null 2>&1; then PY=$p; break; fi
    done
    PY=${PY:-/usr/bin/python3}
fi
export TIDE_BENCH_PYTHON="$PY" # bench/char_lm.lua's reference run
step "gpu_torch.py" 90 sh -c '$1 bench/gpu_torch.py | tee -a "$0"' "$RES" "$PY"
if [ "$EMU" = 1 ]; then # toy models: the emulated GPU runs every kernel on the CPU
    step "char_lm.lua" 120 sh -c '$1 bench/char_lm.lua $2 --device cuda --sizes "--layers 1 --width 16 --heads 2 --context 16 --batch-size 2" | tee -a "$0"' "$RES" "$LUA" "$CHAR_LM"
else
    step "char_lm.lua" 150 sh -c '$1 bench/char_lm.lua $2 --device cuda | tee -a "$0"' "$RES" "$LUA" "$CHAR_LM"
fi
# MiniLM encoding the fortunes (issue 29): the vectors checked against the CPU's, then
# sentences/s and TFLOP/s per dtype beside sentence-transformers on the same GPU. MiniLM's
# weights do not travel to a GPU machine: carry models/all-MiniLM-L6-v2/tokenizer.json and
# tokenizer_config.json, and the bench encodes with a random model of MiniLM's sizes (its
# header). The rehearsal: spec/fixtures' tiny sentence-transformers model, the twin on the CPU
# (it needs sentence-transformers: .venv where tools/pyenv.sh made one, else it says so).
# Its own file first: a pipe into tee would hide the check's exit status.
# the attention kernel rows against BERT's composite on MiniLM's shapes, inference and training
# (the kernels' first GPU figures); the rehearsal at toy sizes
if [ "$EMU" = 1 ]; then ATT="1 1 2 8"; else ATT=""; fi
# shellcheck disable=SC2086,SC2016 # $ATT is four arguments or none
step "gpu_attention.lua" 90 sh -c '"$@" | tee -a "$0"' "$RES" $LUA bench/gpu_attention.lua $ATT
BERT_OUT=$OUT_DIR/gpu_bert_encode.txt
if [ "$EMU" = 1 ]; then
    BERT="--n 16 --check 8 --max-length 32 --dtypes float32,bfloat16 --model spec/fixtures/sentence_encoder --reference $PY --reference-device cpu"
    BERT_LIMIT=180
else
    BERT="--reference $PY"
    BERT_LIMIT=300
fi
# shellcheck disable=SC2086,SC2016 # $BERT is several arguments
step "gpu_bert_encode.lua" "$BERT_LIMIT" sh -c '"$@" >"$0"; rc=$?; cat "$0"; exit $rc' \
    "$BERT_OUT" $LUA bench/gpu_bert_encode.lua $BERT
cat "$BERT_OUT" >>"$RES"
# shellcheck disable=SC2086,SC2016 # $SEQ is three arguments
step "gpu_seq_step.lua" 120 sh -c '"$@" | tee -a "$0"' "$RES" $LUA bench/gpu_seq_step.lua $SEQ
# shellcheck disable=SC2086,SC2016
step "seq_step.py (cuda)" 120 sh -c '"$@" cuda | tee -a "$0"' "$RES" $PY bench/seq_step.py $SEQ
# shellcheck disable=SC2086,SC2016 # $TRAIN is three arguments
step "gpu_train_step.lua" 120 sh -c '"$@" | tee -a "$0"' "$RES" $LUA bench/gpu_train_step.lua $TRAIN
# shellcheck disable=SC2086,SC2016
step "gpu_train_step.py ($TRAIN_DEV)" 120 sh -c '"$@" | tee -a "$0"' "$RES" $PY bench/gpu_train_step.py \
    $TRAIN $TRAIN_DEV

# NCCL all-reduce across the GPUs tide sees, one rank each (bench/nccl_allreduce.lua); the
# rehearsal runs it on the emulated GPU's 2 devices through the emulated NCCL (spec/nccl_emu/)
NGPU=$($LUA -e 'print(require("tide").cuda.device_count())' 2>/dev/null)
NCCL_OUT=$OUT_DIR/nccl_allreduce.txt
NCCL_LIB=${TIDE_NCCL_LIBRARY:-}
if [ "$EMU" = 1 ]; then
    NCCL_LIB=build/nccl-emu/libnccl.so
elif [ -z "$NCCL_LIB" ] && ! ldconfig -p 2>/dev/null | grep -q 'libnccl\.so\.2 ' &&
    [ ! -f "$CUDA_HOME/lib64/libnccl.so.2" ]; then
    # no system NCCL: PyTorch's wheel (nvidia-nccl-cu12) brings one
    NCCL_LIB=$($PY -c 'import os, nvidia.nccl as m
print(os.path.join(list(m.__path__)[0], "lib", "libnccl.so.2"))' 2>/dev/null)
    [ -f "$NCCL_LIB" ] || NCCL_LIB=""
fi
# a line for the log and the results
noted() { log "$*"; echo "$*" >>"$RES"; }
case "$NGPU" in '' | *[!0-9]*) NGPU=0 ;; esac
if [ "$NGPU" -eq 1 ]; then
    noted "nccl all-reduce: skipped (one GPU)"
elif [ "$NGPU" -eq 0 ]; then
    noted "nccl all-reduce: skipped (tide sees no CUDA device)"
elif ! command -v mpirun >/dev/null 2>&1; then
    noted "nccl all-reduce: skipped (no mpirun: make deps installs Open MPI)"
else
    [ "$EMU" = 1 ] && step "build the emulated NCCL" 120 make --no-print-directory nccl-emu
    [ -n "$NCCL_LIB" ] && export TIDE_NCCL_LIBRARY="$NCCL_LIB"
    # its own file first: a pipe into tee would hide the benchmark's exit status
    if step "nccl all-reduce ($NGPU GPUs)" 180 sh -c '"$@" >"$0"; rc=$?; cat "$0"; exit $rc' \
        "$NCCL_OUT" $LUA bench/nccl_allreduce.lua "$NGPU" $SIZE; then
        cat "$NCCL_OUT" >>"$RES"
    fi
fi

# ---- the table: each figure beside its reference ------------------------------------------------
get() { awk -v k="$1" '$1 == k { print $2; exit }' "$RES"; }
ratio() { # ratio NAME TIDE REF TARGET(min ratio, or "max:US")
    if [ -z "$2" ] || [ -z "$3" ]; then
        printf '%-34s %10s %10s %8s  %s\n' "$1" "${2:--}" "${3:--}" "-" "missing" | tee -a "$LOG" "$RES"
        return
    fi
    awk -v n="$1" -v t="$2" -v r="$3" -v g="$4" 'BEGIN {
        if (r + 0 == 0) { printf "%-34s %10s %10s %8s\n", n, t, r, "n/a"; exit }
        q = t / r; ok = (q >= g) ? "ok" : "BELOW TARGET";
        printf "%-34s %10s %10s %8.3f  target >= %.2f: %s\n", n, t, r, q, g, ok }' |
        tee -a "$LOG" "$RES"
}
log ""
log "figure                              tide        reference  ratio"
ratio "sgemm 8192 TFLOP/s vs cuBLAS" "$(get tide_sgemm_tflops)" "$(get raw_sgemm_tflops)" 0.95
ratio "bf16 gemm 8192 TFLOP/s vs cuBLAS" "$(get tide_bf16_gemm_tflops)" "$(get raw_bf16_gemm_tflops)" 0.95
ratio "add 2^28 f32 GB/s vs D2D memcpy" "$(get tide_add_gbs)" "$(get raw_d2d_memcpy_gbs)" 0.85
ratio "H2D 1 GiB pinned GB/s vs raw" "$(get tide_h2d_pinned_gbs)" "$(get raw_h2d_pinned_gbs)" 0.90
ratio "H2D 1 GiB pageable GB/s vs raw" "$(get tide_h2d_pageable_gbs)" "$(get raw_h2d_pageable_gbs)" 0
ratio "D2H 1 GiB pinned GB/s vs raw" "$(get tide_d2h_pinned_gbs)" "$(get raw_d2h_pinned_gbs)" 0.90
ratio "D2H 1 GiB pageable GB/s vs raw" "$(get tide_d2h_pageable_gbs)" "$(get raw_d2h_pageable_gbs)" 0
# issue 13's training steps and the MLP/CNN ones: ms, lower is better (target <= 1.0)
for m in lstm transformer mlp cnn; do
    t=$(get "tide_${m}_step_ms")
    r=$(get "torch_${m}_step_ms")
    [ -n "$t" ] && awk -v m="$m" -v t="$t" -v r="$r" 'BEGIN {
        if (r == "") { printf "%s training step: tide %s ms, PyTorch n/a\n", m, t; exit }
        q = t / r; printf "%s training step: tide %s ms, PyTorch %s ms, ratio %.3f (target <= 1.00: %s)\n",
            m, t, r, q, (q <= 1 ? "ok" : "ABOVE TARGET") }' | tee -a "$LOG" "$RES"
done
small=$(get tide_lua_small_add_100_us)
if [ -n "$small" ]; then
    awk -v s="$small" -v t="$(get torch_small_add_us)" -v c="$(get tide_c_small_add_us)" \
        -v l="$(get raw_launch_us)" 'BEGIN {
        printf "small a + b on cuda: %.2f us from Lua (target <= 6: %s), %s us from C, raw launch %s us, PyTorch %s us\n",
            s, (s <= 6 ? "ok" : "ABOVE TARGET"), c, l, (t == "" ? "n/a" : t) }' | tee -a "$LOG" "$RES"
fi
# MiniLM: sentences/s, higher is better (issue 29 sets no GPU target: the ratio is reported)
for dt in float32 bfloat16 float16; do
    for part in encode model; do
        t=$(get "tide_bert_${part}_${dt}_sents_per_s")
        r=$(get "torch_bert_${part}_${dt}_sents_per_s")
        [ -n "$t" ] && awk -v d="$dt" -v p="$part" -v t="$t" -v r="$r" \
            -v tf="$(get "tide_bert_model_${dt}_tflops")" -v rf="$(get "torch_bert_model_${dt}_tflops")" 'BEGIN {
            what = (p == "encode") ? "from the strings" : "the model alone"
            flops = (p == "model") ? sprintf(" (TFLOP/s: tide %s, PyTorch %s)", tf, (rf == "" ? "n/a" : rf)) : ""
            if (r == "") { printf "MiniLM %s %s: tide %s sentences/s, PyTorch n/a%s\n", d, what, t, flops; exit }
            printf "MiniLM %s %s: tide %s sentences/s, PyTorch %s, ratio %.3f%s\n", d, what, t, r, t / r, flops }' |
            tee -a "$LOG" "$RES"
    done
done
for sz in 1mb 64mb 4kb 64kb; do # the GPU's sizes, the rehearsal's
    bus=$(get "nccl_allreduce_${sz}_busbw_gbs")
    [ -n "$bus" ] && log "nccl all-reduce $sz float32, $NGPU GPUs: busbw $bus GB/s," \
        "algbw $(get "nccl_allreduce_${sz}_algbw_gbs") GB/s, $(get "nccl_allreduce_${sz}_us") us"
done
for k in sgemm_tflops bf16_gemm_tflops add_gbs h2d_pinned_gbs h2d_pageable_gbs \
    d2h_pinned_gbs d2h_pageable_gbs; do
    tv=$(get "torch_$k")
    [ -n "$tv" ] && log "PyTorch $k: $tv (tide $(get "tide_$k"))"
done

log ""
log "gpu-check: done in $(($(date +%s) - start)) s; log $LOG, results $RES"
if [ -n "$failed" ]; then
    log "gpu-check: FAILED:$failed"
    exit 1
fi
log "gpu-check: all steps passed"
