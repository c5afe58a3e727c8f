"""overhead.py — the PyTorch reference for bench/overhead.lua: per-op time of `a + b` on
float32 tensors of 1 and 100 elements, one thread (tide's small ops run on one thread too).

Prints one line per size: "<size> <median ns per op>". Run by overhead.lua in the same run,
with Debian's /usr/bin/python3 and python3-torch.
"""
import statistics
import sys
import time

import torch

torch.set_num_threads(1)
ITERS = int(sys.argv[1]) if len(sys.argv) > 1 else 200000
REPS = int(sys.argv[2]) if len(sys.argv) > 2 else 7

for size in (1, 100):
    a = torch.ones(size, dtype=torch.float32)
    b = torch.ones(size, dtype=torch.float32)
    times = []
    for _ in range(REPS + 1):
        t0 = time.perf_counter()
        for _ in range(ITERS):
            c = a + b
        times.append(time.perf_counter() - t0)
    assert c[0].item() == 2.0
    print(size, statistics.median(times[1:]) / ITERS * 1e9)
