"""reductions.py — the PyTorch reference for bench/reductions.lua: float32 sum, mean, max, min
and amax of a whole tensor, along the last dim and the first, in the thread setting
bench/compare.lua picked.
Same inputs, same repetitions as reductions.lua's side (max and min along a dim give values
and indices in both).

Prints "result <case> <fastest run's ms per call>". Run by reductions.lua in rounds, with
Debian's /usr/bin/python3 and python3-torch.
"""
import sys

import torch

import torch_ref

torch_ref.setup()
REPS = int(sys.argv[1]) if len(sys.argv) > 1 else 20

for case, n, dim in (("1m", 1000000, None), ("1m_rows", 1000000, 1), ("1m_cols", 1000000, 0),
                     ("4k", 4096, None)):
    x = torch.arange(n, dtype=torch.float32).sin()
    if dim is not None:
        x = x.view(-1, 1000)
    for name in ("sum", "mean", "max", "min", "amax"):
        op = getattr(torch, name)
        f = (lambda: op(x, dim)) if dim is not None else (lambda: op(x))
        torch_ref.report(name + "_" + case, torch_ref.best_ms(f, REPS))
