"""softmax.py — the PyTorch reference for bench/softmax.lua: torch.softmax / log_softmax and
cross_entropy on float32, in the thread setting bench/compare.lua picked. Same inputs, same
repetitions as softmax.lua's side.

Prints "result <case> <fastest run's ms per call>". Run by softmax.lua in rounds, with Debian's
/usr/bin/python3 and python3-torch.
"""
import math
import sys

import torch

import torch_ref

torch_ref.setup()
REPS = int(sys.argv[1]) if len(sys.argv) > 1 else 20

# name: (op, shape, dim), softmax.lua's cases with 0-based dims
CASES = {
    "m1000_last": (torch.softmax, (1000, 1000), 1),
    "m1000_first": (torch.softmax, (1000, 1000), 0),
    "nchw_channels": (torch.log_softmax, (16, 21, 64, 64), 1),
    "b64x128_last": (torch.softmax, (64, 128), 1),
    "ce_256x1000": (torch.nn.functional.cross_entropy, (256, 1000), None),
}
for case, (op, shape, dim) in CASES.items():
    x = torch.arange(math.prod(shape), dtype=torch.float32).sin().mul(4).view(shape)
    if dim is None:  # cross_entropy: class (i * 7) % 1000 of row i
        t = torch.arange(shape[0]).mul(7).remainder(shape[1])
        f = lambda: op(x, t)  # noqa: E731
    else:
        f = lambda: op(x, dim)  # noqa: E731
    torch_ref.report(case, torch_ref.best_ms(f, REPS))
