"""linalg.py — the PyTorch reference for bench/linalg.lua: torch.linalg's det, inv, solve,
cholesky, qr, eigh and svd (LAPACK underneath) on float64, in the thread setting
bench/compare.lua picked. Same matrices, same repetitions as linalg.lua's side.

Prints "result <op>_<case> <fastest run's ms per call>". Run by linalg.lua in rounds, with
Debian's /usr/bin/python3 and python3-torch.
"""
import math
import sys
import time

import torch

import torch_ref

torch_ref.setup()
REPS = int(sys.argv[1]) if len(sys.argv) > 1 else 5
LA = torch.linalg


def spd(b, n):
    """the batch of b symmetric positive-definite n x n matrices linalg.lua builds"""
    i = torch.arange(n, dtype=torch.float64)
    k = torch.arange(b, dtype=torch.float64).view(b, 1, 1)
    a = torch.sin(i.view(n, 1) * 1.3 + i.view(1, n) * 0.7 + k)
    return a @ a.mT + n * torch.eye(n, dtype=torch.float64)


CASES = {"b32_n8": (32, 8), "b1_n64": (1, 64)}
OPS = {
    "det": lambda a: LA.det(a),
    "inv": lambda a: LA.inv(a),
    "solve": lambda a: LA.solve(a, a[..., :1]),
    "cholesky": lambda a: LA.cholesky(a),
    "qr": lambda a: LA.qr(a)[1],
    "eigh": lambda a: LA.eigh(a)[0],
    "svd": lambda a: LA.svd(a, full_matrices=False)[1],
}
for case, (b, n) in CASES.items():
    a = spd(b, n)
    for name, fn in OPS.items():
        fn(a)  # warm up
        best = math.inf
        for _ in range(REPS):
            t0 = time.perf_counter()
            r = fn(a)
            best = min(best, time.perf_counter() - t0)
        torch_ref.report(name + "_" + case, best * 1e3)
