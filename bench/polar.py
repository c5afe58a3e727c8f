"""polar.py — the PyTorch reference for bench/polar.lua: float32 atan2, hypot, tan, atan, asin
and acos, and a complex64 tensor's abs and angle, in the thread setting bench/compare.lua picked. Same inputs,
same repetitions as polar.lua's side.

Prints "result <case> <fastest run's ms per call>". Run by polar.lua in rounds, with Debian's
/usr/bin/python3 and python3-torch.
"""
import sys

import torch

import torch_ref

torch_ref.setup()
REPS = int(sys.argv[1]) if len(sys.argv) > 1 else 20

for case, n in (("1m", 1000000), ("4k", 4096)):
    i = torch.arange(n, dtype=torch.float32)
    y, x = i.sin(), (i * 1.3).cos()
    z = torch.complex(x, y)
    ops = {
        "atan2": lambda: torch.atan2(y, x),
        "hypot": lambda: torch.hypot(y, x),
        "tan": lambda: x.tan(),
        "atan": lambda: y.atan(),
        "asin": lambda: y.asin(),
        "acos": lambda: x.acos(),
        "complex_abs": lambda: z.abs(),
        "complex_angle": lambda: z.angle(),
    }
    for name, f in ops.items():
        torch_ref.report(name + "_" + case, torch_ref.best_ms(f, REPS))
