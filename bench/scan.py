"""scan.py — the PyTorch reference for bench/scan.lua: torch.cumsum, cumprod, cummax and
logcumsumexp on float32, in the thread setting bench/compare.lua picked. Same inputs, same
repetitions as scan.lua's side.

Prints "result <case> <fastest run's ms per call>". Run by scan.lua in rounds, with Debian's
/usr/bin/python3 and python3-torch.
"""
import math
import sys

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
# name: (op, dim) on the 1000x1000 matrix, scan.lua's OPS with 0-based dims
OPS = {
    "cumprod_last": ("cumprod", 1),
    "cummax_last": ("cummax", 1),
    "cummax_first": ("cummax", 0),
    "logcumsumexp_last": ("logcumsumexp", 1),
}


def best_of(x, op, dim):
    f = getattr(x, op)
    return torch_ref.best_ms(lambda: f(dim), REPS)


def matrix(shape):
    return torch.arange(math.prod(shape), dtype=torch.float32).sin().view(shape)


for case, (shape, dim) in CASES.items():
    torch_ref.report(case, best_of(matrix(shape), "cumsum", dim))
m = matrix((1000, 1000))
for case, (op, dim) in OPS.items():
    # cumprod of values near 1, so that the products stay finite
    torch_ref.report(case, best_of(m * 0.001 + 1 if op == "cumprod" else m, op, dim))
