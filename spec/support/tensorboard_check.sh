#!/bin/sh
# tensorboard_check.sh [LUA] — a log written by tide (every SummaryWriter entry type,
# spec/support/tensorboard_write.lua) read back by TensorBoard itself (EventAccumulator, the
# hparams and projector protos: spec/support/tensorboard_check.py) in the pinned virtualenv.
# Ends with "N passed, N failed"; without the virtualenv (sh tools/pyenv.sh fails: no PyPI)
# it says so and counts nothing.
set -u
cd "$(dirname "$0")/../.." || exit 1
LUA=${1:-lua5.4}
if ! PY=$(sh tools/pyenv.sh 2>/dev/null); then
    echo "tensorboard check: skipped, the reference virtualenv (.venv: sh tools/pyenv.sh) cannot be made here"
    echo "0 passed, 0 failed"
    exit 0
fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/tide_tb.XXXXXX")
trap 'rm -rf "$dir"' EXIT
if ! LUA_PATH="lua/?.lua;lua/?/init.lua;;" LUA_CPATH="build/lua/?.so;;" \
    "$LUA" spec/support/tensorboard_write.lua "$dir"; then
    echo "tensorboard check: tide could not write the log"
    echo "0 passed, 1 failed"
    exit 1
fi
exec "$PY" spec/support/tensorboard_check.py "$dir"
