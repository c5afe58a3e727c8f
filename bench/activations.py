"""activations.py — the PyTorch reference for bench/activations.lua: nn.functional's
activations on a million float32 elements, the forward alone and the forward with its
gradient (torch.autograd.grad against a given gradient), in the thread setting
bench/compare.lua picked. Same inputs, same repetitions as activations.lua's side.

Prints "result <case> <fastest run's ms per call>".
"""
import sys

import torch
import torch.nn.functional as F

import torch_ref

torch_ref.setup()
REPS = int(sys.argv[1]) if len(sys.argv) > 1 else 10
N = 1000000

ACTS = {
    "hardswish": F.hardswish,
    "hardsigmoid": F.hardsigmoid,
    "elu": F.elu,
    "selu": F.selu,
    "celu": F.celu,
    "leaky_relu": F.leaky_relu,
    "relu6": F.relu6,
    "hardtanh": F.hardtanh,
    "softplus": F.softplus,
    "silu": F.silu,
    "mish": F.mish,
    "logsigmoid": F.logsigmoid,
    "softsign": F.softsign,
    "tanhshrink": F.tanhshrink,
    "softshrink": F.softshrink,
    "hardshrink": F.hardshrink,
    "threshold": lambda x: F.threshold(x, 0.5, -1),
}


def data():
    return torch.arange(N, dtype=torch.float32).sin().mul(8)


x, g = data(), data().cos()
xg = data().requires_grad_(True)
for name, f in ACTS.items():
    with torch.no_grad():
        torch_ref.report(name + "_fwd", torch_ref.best_ms(lambda: f(x), REPS))
    torch_ref.report(name + "_fwdbwd",
                     torch_ref.best_ms(lambda: torch.autograd.grad(f(xg), xg, g)[0], REPS))
