#!/usr/bin/env python3
"""PyTorch half of bench/fashion_epoch.lua: one training epoch of the same models, with the same
loop, on the CPU, in the thread setting bench/compare.lua picked. Prints one line per model:
"result <model> <seconds>".

usage: /usr/bin/python3 bench/fashion_epoch.py [--images N] [--models mlp,cnn] [--data DIR]
"""
import argparse
import gzip
import time

import numpy as np
import torch
import torch.nn as nn

import torch_ref

torch_ref.setup()

p = argparse.ArgumentParser()
p.add_argument("--images", type=int, default=60000)
p.add_argument("--models", default="mlp,cnn")
p.add_argument("--batch-size", type=int, default=128)
p.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
a = p.parse_args()


def read(name, offset):
    path = a.data + "/" + name
    try:
        raw = gzip.open(path + ".gz").read()
    except FileNotFoundError:
        raw = open(path, "rb").read()
    return np.frombuffer(raw, np.uint8, offset=offset)


x = torch.tensor(read("train-images-idx3-ubyte", 16).reshape(-1, 1, 28, 28).astype(np.float32) / 255)
y = torch.tensor(read("train-labels-idx1-ubyte", 8).astype(np.int64))
x, y = x[: a.images], y[: a.images]


def build(kind):
    if kind == "cnn":
        return nn.Sequential(
            nn.Conv2d(1, 32, 3), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(32, 64, 3), nn.ReLU(), nn.MaxPool2d(2),
            nn.Flatten(), nn.Linear(1600, 128), nn.ReLU(), nn.Linear(128, 10))
    return nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128),
                         nn.ReLU(), nn.Linear(128, 10))


for kind in a.models.split(","):
    torch.manual_seed(0)
    model = build(kind)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    t0 = time.perf_counter()
    perm = torch.randperm(len(y))
    for i in range(0, len(y), a.batch_size):
        idx = perm[i : i + a.batch_size]
        xb, yb = x.index_select(0, idx), y.index_select(0, idx)
        opt.zero_grad()
        loss = loss_fn(model(xb), yb)
        loss.backward()
        opt.step()
    assert loss.item() == loss.item()  # not NaN
    torch_ref.report(kind, time.perf_counter() - t0)
