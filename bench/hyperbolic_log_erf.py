"""hyperbolic_log_erf.py — the PyTorch reference for bench/hyperbolic_log_erf.lua: float32 sinh,
cosh, log2, log10, erf and erfc, in the thread setting bench/compare.lua picked. Same inputs,
same repetitions as hyperbolic_log_erf.lua's side.

Prints "result <case> <fastest run's ms per call>". Run by hyperbolic_log_erf.lua in rounds,
with Debian's /usr/bin/python3 and python3-torch.
"""
import sys

import torch

import torch_ref

torch_ref.setup()
REPS = int(sys.argv[1]) if len(sys.argv) > 1 else 20

for case, n in (("1m", 1000000), ("4k", 4096)):
    x = torch.arange(n, dtype=torch.float32).sin() * 4
    p = x.abs() + 0.01
    ops = {
        "sinh": lambda: x.sinh(),
        "cosh": lambda: x.cosh(),
        "log2": lambda: p.log2(),
        "log10": lambda: p.log10(),
        "erf": lambda: x.erf(),
        "erfc": lambda: x.erfc(),
    }
    for name, f in ops.items():
        torch_ref.report(name + "_" + case, torch_ref.best_ms(f, REPS))
