"""indexing.py — the PyTorch reference for bench/indexing.lua: float32 roll and flip of a
[1000, 1000] matrix, rows written by index (of 1000 and of 64), scatter_reduce "amax" and "amin", embedding_bag
"max" and clamp with tensor bounds, in the thread setting bench/compare.lua picked. Same inputs,
same repetitions as indexing.lua's side (its indices are 1-based, these 0-based).

Prints "result <case> <fastest run's ms per call>". Run by indexing.lua in rounds, with
Debian's /usr/bin/python3 and python3-torch.
"""
import sys

import torch
import torch.nn.functional as F

import torch_ref

torch_ref.setup()
REPS = int(sys.argv[1]) if len(sys.argv) > 1 else 20

flat = torch.arange(1000000, dtype=torch.float32).sin()
lo = torch.arange(1000000, dtype=torch.float32).mul(0.37).sin().mul(0.5)
hi = lo.add(0.5)
x = flat.view(1000, 1000)
y = torch.zeros(1000, 1000)
rows = torch.arange(500).mul(7).remainder(1000)
src = torch.arange(500000, dtype=torch.float32).cos().view(500, 1000)
t = torch.zeros(100000, 64)
rows64 = torch.arange(10000).mul(7919).remainder(100000)
src64 = torch.arange(640000, dtype=torch.float32).cos().view(10000, 64)
z = torch.zeros(1000)
idx = torch.arange(1000000).mul(7919).remainder(1000)
weight = torch.arange(640000, dtype=torch.float32).sin().view(10000, 64)
ids = torch.arange(16384).mul(7919).remainder(10000).view(4096, 4)


def put():
    y[rows] = src


def put64():
    t[rows64] = src64


CASES = (
    ("roll_dim2", lambda: x.roll(3, 1)),
    ("roll_2dims", lambda: x.roll((3, -5), (0, 1))),
    ("flip_dim2", lambda: x.flip(1)),
    ("flip_2dims", lambda: x.flip((0, 1))),
    ("index_put_rows", put),
    ("index_put_rows64", put64),
    ("scatter_amax", lambda: z.scatter_reduce(0, idx, flat, "amax")),
    ("scatter_amin", lambda: z.scatter_reduce(0, idx, flat, "amin")),
    ("embedding_bag_max", lambda: F.embedding_bag(ids, weight, mode="max")),
    ("clamp_tensors", lambda: flat.clamp(lo, hi)),
)

for name, f in CASES:
    torch_ref.report(name, torch_ref.best_ms(f, REPS))
