"""torch_ref.py: the PyTorch side of bench/compare.lua's rule, shared by every reference.

setup() applies the setting compare.lua picked for this process (TIDE_BENCH_THREADS threads;
OMP_WAIT_POLICY, when chosen, is already in the environment); report() prints one figure in
the form compare.lua reads: "result KEY VALUE".
"""
import os

import torch


def setup():
    torch.set_num_threads(int(os.environ.get("TIDE_BENCH_THREADS", "1")))


def report(key, value):
    print("result", key, value, flush=True)
