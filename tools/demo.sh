#!/bin/sh
# demo.sh — what `make demo` runs after building: the Fashion-MNIST example for 3 epochs when
# the example and the dataset are present, otherwise the tour of the device rules.
set -eu
cd "$(dirname "$0")/.."
LUA=${LUA:-lua5.4}
LUA_PATH="lua/?.lua;lua/?/init.lua;;"
LUA_CPATH="build/lua/?.so;;"
export LUA_PATH LUA_CPATH
DATA=/usr/share/datasets/fashion-mnist

if [ -f examples/fashion_mnist.lua ] && [ -f "$DATA/train-images-idx3-ubyte.gz" ]; then
    exec $LUA examples/fashion_mnist.lua --epochs 3 "$@"
fi
# two virtual CPU devices, so the tour can show every placement rule without a GPU
TIDE_CPU_DEVICES=2 exec $LUA examples/devices.lua "$@"
