"""mlp_step.py: the PyTorch reference for bench/mlp_step.lua (bench/cnn_step.py reuses it).

One training step (zero_grad, forward, cross-entropy, backward, SGD momentum step) of
  mlp: 784-256-128-10 with ReLU at each batch size given
  cnn: conv 1->32 3x3, ReLU, maxpool 2, conv 32->64 3x3, ReLU, maxpool 2, Linear 1600->128,
       ReLU, Linear 128->10 on 28x28 inputs
Usage: mlp_step.py ITERS REPS BATCH...   (cnn_step.py: the same arguments); the thread
setting comes from bench/compare.lua (torch_ref.setup). Prints "result <batch> <median ms per
step>" per batch size.
"""
import statistics
import sys
import time

import torch
from torch import nn

import torch_ref


def model_for(kind):
    if kind == "mlp":
        return nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(),
                             nn.Linear(128, 10))
    return nn.Sequential(nn.Conv2d(1, 32, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(32, 64, 3),
                         nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(1600, 128),
                         nn.ReLU(), nn.Linear(128, 10))


def main(kind, argv):
    torch_ref.setup()
    iters, reps = int(argv[0]), int(argv[1])
    torch.manual_seed(0)
    for batch in map(int, argv[2:]):
        torch_ref.report(batch, time_step(kind, batch, iters, reps))


def make_step(kind, batch, dev="cpu"):
    """the training step of model kind at batch on dev (bench/gpu_train_step.py: on cuda)"""
    model = model_for(kind).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    lossf = nn.CrossEntropyLoss()
    x = torch.randn(batch, 784) if kind == "mlp" else torch.randn(batch, 1, 28, 28)
    y = torch.randint(0, 10, (batch,))
    x, y = x.to(dev), y.to(dev)

    def step():
        opt.zero_grad()
        loss = lossf(model(x), y)
        loss.backward()
        opt.step()
        return loss

    return step


def time_step(kind, batch, iters, reps):
    step = make_step(kind, batch)
    for _ in range(max(5, iters // 5)):
        step()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(iters):
            loss = step()
        times.append(time.perf_counter() - t0)
    assert loss.item() == loss.item()  # not NaN
    return statistics.median(times) / iters * 1e3


if __name__ == "__main__":
    main("mlp", sys.argv[1:])
