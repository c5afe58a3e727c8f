"""addc_lerp.py — the PyTorch reference for bench/addc_lerp.lua: float32 addcmul, addcdiv,
lerp (a number weight and a tensor one), addcmul_ and lerp_, in the thread setting
bench/compare.lua picked. Same inputs, same repetitions as addc_lerp.lua's side.

Prints "result <case> <fastest run's ms per call>". Run by addc_lerp.lua in rounds, with
Debian's /usr/bin/python3 and python3-torch.
"""
import sys

import torch

import torch_ref

torch_ref.setup()
REPS = int(sys.argv[1]) if len(sys.argv) > 1 else 20

for case, n in (("1m", 1000000), ("4k", 4096)):
    i = torch.arange(n, dtype=torch.float32)
    x, a = i.sin(), i.cos()
    b = a * a + 0.5
    w = x * x
    v, ema = x.clone(), x.clone()
    ops = {
        "addcmul": lambda: x.addcmul(a, b, value=0.1),
        "addcdiv": lambda: x.addcdiv(a, b, value=0.1),
        "lerp": lambda: x.lerp(a, 0.3),
        "lerp_tensor": lambda: x.lerp(a, w),
        "addcmul_": lambda: v.addcmul_(a, a, value=0.001),
        "lerp_": lambda: ema.lerp_(a, 0.001),
    }
    for name, f in ops.items():
        torch_ref.report(name + "_" + case, torch_ref.best_ms(f, REPS))
