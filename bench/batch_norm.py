"""batch_norm.py — the PyTorch reference for bench/batch_norm.lua: nn.BatchNorm2d on float32
[32, 64, 28, 28] (training forward, eval forward, training forward and backward) and
BatchNorm1d on [256, 512], in the thread setting bench/compare.lua picked. Same inputs, same
repetitions as batch_norm.lua's side.

Prints "result <case> <fastest run's ms per call>". Run by batch_norm.lua in rounds, with
Debian's /usr/bin/python3 and python3-torch.
"""
import sys

import torch

import torch_ref

torch_ref.setup()
REPS = int(sys.argv[1]) if len(sys.argv) > 1 else 10

x = torch.arange(32 * 64 * 28 * 28, dtype=torch.float32).sin().view(32, 64, 28, 28)
x1 = torch.arange(256 * 512, dtype=torch.float32).sin().view(256, 512)
bn, bn1 = torch.nn.BatchNorm2d(64), torch.nn.BatchNorm1d(512)
xg, x1g = x.clone().requires_grad_(True), x1.clone().requires_grad_(True)


def train():
    bn.train()
    return bn(x)


def evaluate():
    bn.eval()
    with torch.no_grad():  # inference as users write it, as bench/batch_norm.lua's tide.no_grad
        return bn(x)


def train_backward():
    bn.train()
    bn(xg).sum().backward()


def train_backward_1d():
    bn1(x1g).sum().backward()


CASES = (
    ("bn2d_train", train),
    ("bn2d_eval", evaluate),
    ("bn2d_train_backward", train_backward),
    ("bn1d_train_backward", train_backward_1d),
)

for name, f in CASES:
    torch_ref.report(name, torch_ref.best_ms(f, REPS))
