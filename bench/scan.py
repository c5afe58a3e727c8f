"""scan.py — the PyTorch reference for bench/scan.lua: torch.cumsum on float32, in the thread
setting bench/compare.lua picked. Same inputs, same repetitions as scan.lua's side.

Prints "result <case> <fastest run's ms per call>". Run by scan.lua in rounds, with Debian's
/usr/bin/python3 and python3-torch.
"""
import math
import sys
import time

import torch

import torch_ref

torch_ref.setup()
REPS = int(sys.argv[1]) if len(sys.argv) > 1 else 20

# name: (shape, dim), scan.lua's cases with 0-based dims
CASES = {
    "n1e6": ((1000000,), 0),
    "m1000_last": ((1000, 1000), 1),
    "m1000_first": ((1000, 1000), 0),
    "b64x128_last": ((64, 128), 1),
}
for case, (shape, dim) in CASES.items():
    x = torch.arange(math.prod(shape), dtype=torch.float32).sin().view(shape)
    x.cumsum(dim)  # warm up
    best = math.inf
    for _ in range(REPS):
        t0 = time.perf_counter()
        x.cumsum(dim)
        best = min(best, time.perf_counter() - t0)
    torch_ref.report(case, best * 1e3)
