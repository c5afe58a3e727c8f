"""searchsorted.py — the PyTorch reference for bench/searchsorted.lua: bucketize of 10^6 float32
values into 1000 boundaries, and searchsorted along 1024 rows of 64-bin CDFs with 128 draws each
(right=True), in the thread setting bench/compare.lua picked. Same inputs, same repetitions as
searchsorted.lua's side.

Prints "result <case> <fastest run's ms per call>". Run by searchsorted.lua in rounds, with
Debian's /usr/bin/python3 and python3-torch.
"""
import sys

import torch

import torch_ref

torch_ref.setup()
REPS = int(sys.argv[1]) if len(sys.argv) > 1 else 10

v = torch.arange(1000000, dtype=torch.float32).sin() * 3
edges = torch.linspace(-3, 3, 1000)
w = (torch.arange(1024 * 64, dtype=torch.float32).cos().abs() + 1e-5).view(1024, 64)
cdf = w.cumsum(1)
cdf = cdf / cdf[:, 63:64]
u = (torch.arange(1024 * 128, dtype=torch.float32) * 0.618034).frac().view(1024, 128)
ops = {
    "bucketize": lambda: torch.bucketize(v, edges),
    "rows": lambda: torch.searchsorted(cdf, u, right=True),
}
for name, f in ops.items():
    torch_ref.report(name + "_1m", torch_ref.best_ms(f, REPS))
