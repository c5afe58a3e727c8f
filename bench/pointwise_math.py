"""pointwise_math.py — the PyTorch reference for bench/pointwise_math.lua: float32 exp,
sigmoid, tanh, silu, log, sin, pow(2) and clamp in the thread setting bench/compare.lua picked.
Same inputs, same repetitions as pointwise_math.lua's side.

Prints "result <case> <fastest run's ms per call>". Run by pointwise_math.lua in rounds, with
Debian's /usr/bin/python3 and python3-torch.
"""
import sys

import torch

import torch_ref

torch_ref.setup()
REPS = int(sys.argv[1]) if len(sys.argv) > 1 else 20

OPS = {
    "exp": torch.exp,
    "sigmoid": torch.sigmoid,
    "tanh": torch.tanh,
    "silu": torch.nn.functional.silu,
    "log": torch.log,
    "sin": torch.sin,
    "pow2": lambda x: x.pow(2),
    "clamp": lambda x: x.clamp(-1, 1),
}
for size, n in (("1m", 1000000), ("4k", 4096)):
    for name, op in OPS.items():
        x = torch.arange(n, dtype=torch.float32).sin().mul(8)
        if name == "log":
            x = x.abs().add(0.01)
        torch_ref.report(name + "_" + size, torch_ref.best_ms(lambda: op(x), REPS))
