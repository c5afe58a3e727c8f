"""ordering.py — the PyTorch reference for bench/ordering.lua: sort, topk, kthvalue, median,
nanmedian and sorted unique (also of values in 0..999), in the thread setting bench/compare.lua
picked. Same inputs, same repetitions as ordering.lua's side.

Prints "result <case> <fastest run's ms per call>". Run by ordering.lua in rounds, with
Debian's /usr/bin/python3 and python3-torch.
"""
import sys

import torch

import torch_ref

torch_ref.setup()
REPS = int(sys.argv[1]) if len(sys.argv) > 1 else 10

flat = torch.arange(1000000, dtype=torch.float32).sin()
rows = flat.view(1000, 1000)
ints = torch.arange(1000000, dtype=torch.int64).mul(7919).remainder(100003)
few = torch.arange(1000000, dtype=torch.int64).mul(7919).remainder(1000)
few_f32 = few.to(torch.float32)
CASES = (
    ("sort_rows", lambda: rows.sort(1)),
    ("sort_1m", lambda: flat.sort()),
    ("topk_rows", lambda: rows.topk(10, 1)),
    ("topk_1m", lambda: flat.topk(100)),
    ("kthvalue_rows", lambda: rows.kthvalue(500, 1)),
    ("median_rows", lambda: rows.median(1)),
    ("median_1m", lambda: flat.median()),
    ("nanmedian_rows", lambda: rows.nanmedian(1)),
    ("nanmedian_1m", lambda: flat.nanmedian()),
    ("unique_counts", lambda: torch.unique(ints, return_counts=True)),
    ("unique_inverse", lambda: torch.unique(ints, return_inverse=True)),
    ("unique_few_i64", lambda: torch.unique(few, return_inverse=True)),
    ("unique_few_f32", lambda: torch.unique(few_f32, return_inverse=True)),
)

for name, f in CASES:
    torch_ref.report(name, torch_ref.best_ms(f, REPS))
