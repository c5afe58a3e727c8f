"""overhead.py — the PyTorch reference for bench/overhead.lua: per-op time of `a + b` on
float32 tensors of 1 and 100 elements, in the thread setting bench/compare.lua picked.

Prints one line per size: "result <size> <fastest run's ns per op>" (as overhead.lua's side). Run by overhead.lua in rounds,
with Debian's /usr/bin/python3 and python3-torch.
"""
import sys
import time

import torch

import torch_ref

torch_ref.setup()
ITERS = int(sys.argv[1]) if len(sys.argv) > 1 else 200000
REPS = int(sys.argv[2]) if len(sys.argv) > 2 else 7

SIZES = (1, 100)
tensors = {n: (torch.ones(n, dtype=torch.float32), torch.ones(n, dtype=torch.float32)) for n in SIZES}
times = {n: [] for n in SIZES}
# the sizes take turns in each repetition, as in overhead.lua; the first one warms up
for rep in range(REPS + 1):
    for n in SIZES:
        a, b = tensors[n]
        t0 = time.perf_counter()
        for _ in range(ITERS):
            c = a + b
        if rep > 0:
            times[n].append(time.perf_counter() - t0)
        assert c.sum().item() == 2.0 * n

for n in SIZES:
    torch_ref.report(n, min(times[n]) / ITERS * 1e9)
