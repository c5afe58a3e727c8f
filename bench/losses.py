"""losses.py — the PyTorch reference for bench/losses.lua: mse, l1, smooth_l1, huber,
binary_cross_entropy_with_logits (with a weight too: bce_with_logits_w) and soft_margin losses (reduction "mean") on float32, the
forward and a forward and backward to the input, in the thread setting bench/compare.lua picked.
Same inputs, same repetitions as losses.lua's side.

Prints "result <case> <fastest run's ms per call>". Run by losses.lua in rounds, with Debian's
/usr/bin/python3 and python3-torch.
"""
import sys

import torch
import torch.nn.functional as F

import torch_ref

torch_ref.setup()
REPS = int(sys.argv[1]) if len(sys.argv) > 1 else 10

LOSSES = {
    "mse": F.mse_loss,
    "l1": F.l1_loss,
    "smooth_l1": F.smooth_l1_loss,
    "huber": F.huber_loss,
    "bce_with_logits": F.binary_cross_entropy_with_logits,
    "bce_with_logits_w": None,  # inputs() sets it: its weight depends on n
    "soft_margin": F.soft_margin_loss,
}


def inputs(n, loss):
    i = torch.arange(n, dtype=torch.float32)
    x, t = i.sin().mul(2), i.cos().mul(2)
    if loss in ("bce_with_logits", "bce_with_logits_w"):
        t = t.add(2).div(4)
    elif loss == "soft_margin":
        t = t.sign()
    if loss == "bce_with_logits_w":
        w = i.mul(3).sin().add(1.5)
        LOSSES[loss] = lambda a, b: F.binary_cross_entropy_with_logits(a, b, weight=w)
    return x, t


for size, n in (("1m", 1000000), ("4k", 4096)):
    for name in list(LOSSES):
        x, t = inputs(n, name)
        f = LOSSES[name]
        xg = x.clone().requires_grad_(True)

        def fwd_bwd(f=f, xg=xg, t=t):
            xg.grad = None
            f(xg, t).backward()

        torch_ref.report(name + "_" + size, torch_ref.best_ms(lambda f=f, x=x, t=t: f(x, t), REPS))
        torch_ref.report(name + "_bwd_" + size, torch_ref.best_ms(fwd_bwd, REPS))
