"""masking.py — the PyTorch reference for bench/masking.lua: float32 where with a number and
with two tensors, masked_fill with a number, nan_to_num and nansum, in the thread setting
bench/compare.lua picked. Same inputs, same repetitions as masking.lua's side.

Prints "result <case> <fastest run's ms per call>". Run by masking.lua in rounds, with
Debian's /usr/bin/python3 and python3-torch.
"""
import math
import sys

import torch

import torch_ref

torch_ref.setup()
REPS = int(sys.argv[1]) if len(sys.argv) > 1 else 20

for case, n in (("1m", 1000000), ("4k", 4096)):
    x = torch.arange(n, dtype=torch.float32).sin()
    mask = (torch.arange(n, dtype=torch.float32) * 12.9898).sin() > 0
    y = -x
    xn = x.masked_fill(mask, math.nan)
    ops = {
        "where_number": lambda: torch.where(mask, 0.0, x),
        "where_tensors": lambda: torch.where(mask, x, y),
        "masked_fill": lambda: x.masked_fill(mask, -math.inf),
        "nan_to_num": lambda: xn.nan_to_num(0.0),
        "nansum": lambda: xn.nansum(),
    }
    for name, f in ops.items():
        torch_ref.report(name + "_" + case, torch_ref.best_ms(f, REPS))
