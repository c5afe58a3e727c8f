"""random_fill.py — the PyTorch reference for bench/random_fill.lua: float32 rand, randn,
normal_, randint and dropout's mask, in the thread setting bench/compare.lua picked. Same sizes,
same repetitions as random_fill.lua's side.

Prints "result <case> <fastest run's ms per call>". Run by random_fill.lua in rounds, with
Debian's /usr/bin/python3 and python3-torch.
"""
import sys

import torch

import torch_ref

torch_ref.setup()
REPS = int(sys.argv[1]) if len(sys.argv) > 1 else 20
F = torch.nn.functional

for case, n in (("1m", 1000000), ("4k", 4096)):
    x, ones = torch.empty(n), torch.ones(n)
    ops = {
        "rand": lambda: torch.rand(n),
        "randn": lambda: torch.randn(n),
        "normal_": lambda: x.normal_(0, 0.02),
        "randint": lambda: torch.randint(0, 1000, (n,)),
        "dropout": lambda: F.dropout(ones, 0.1, True),
    }
    for name, f in ops.items():
        torch_ref.report(name + "_" + case, torch_ref.best_ms(f, REPS))
