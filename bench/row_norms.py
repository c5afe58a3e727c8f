"""row_norms.py — the PyTorch reference for bench/row_norms.lua: float32 x.norm(2, -1) of
[1000, 1000] and [4096, 64], and F.normalize of [512, 384], in the thread setting
bench/compare.lua picked. Same inputs, same repetitions as row_norms.lua's side.

Prints "result <case> <fastest run's ms per call>". Run by row_norms.lua in rounds, with
Debian's /usr/bin/python3 and python3-torch.
"""
import sys

import torch

import torch_ref

torch_ref.setup()
REPS = int(sys.argv[1]) if len(sys.argv) > 1 else 20
F = torch.nn.functional


def sines(r, c):
    return torch.arange(r * c, dtype=torch.float32).sin().view(r, c)


wide, narrow, emb = sines(1000, 1000), sines(4096, 64), sines(512, 384)
ops = {
    "norm_wide": lambda: wide.norm(2, -1),
    "norm_narrow": lambda: narrow.norm(2, -1),
    "normalize": lambda: F.normalize(emb, 2, -1),
}
for name, f in ops.items():
    torch_ref.report(name + "_f32", torch_ref.best_ms(f, REPS))
