"""torch_ref.py: the PyTorch side of bench/compare.lua's rule, shared by every reference.

setup() applies the setting compare.lua picked for this process (TIDE_BENCH_THREADS threads;
OMP_WAIT_POLICY, when chosen, is already in the environment); report() prints one figure in
the form compare.lua reads: "result KEY VALUE"; best_ms() times a call as compare.lua's
best_ms does on the Lua side.
"""
import math
import os
import time

import torch


def setup():
    torch.set_num_threads(int(os.environ.get("TIDE_BENCH_THREADS", "1")))


def report(key, value):
    print("result", key, value, flush=True)


def best_ms(f, reps):
    """The fastest of reps calls of f in ms, after 3 warm-up calls (compare.lua's best_ms)."""
    for _ in range(3):
        f()
    best = math.inf
    for _ in range(reps):
        t0 = time.perf_counter()
        f()
        best = min(best, time.perf_counter() - t0)
    return best * 1e3
