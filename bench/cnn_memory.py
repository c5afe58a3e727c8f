"""cnn_memory.py: the PyTorch reference for bench/cnn_memory.lua: the memory of the small CNN's
training loop (bench/mlp_step.py's model, batch 64, SGD momentum) at PyTorch's best thread
setting for that loop. Usage: cnn_memory.py STEPS. Prints "result base KB", "result peak KB"
and "result loop KB": the process's resident set before the first step, its peak (VmHWM) after
STEPS steps, and their difference (what the loop itself holds at its worst).
"""
import sys

import torch
from torch import nn

import torch_ref
from mlp_step import model_for


def status_kb(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def main(steps):
    torch_ref.setup()
    torch.manual_seed(0)
    model = model_for("cnn")
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    lossf = nn.CrossEntropyLoss()
    x = torch.randn(64, 1, 28, 28)
    y = torch.randint(0, 10, (64,))
    base = status_kb("VmRSS")
    for _ in range(steps):
        opt.zero_grad()
        loss = lossf(model(x), y)
        loss.backward()
        opt.step()
    assert loss.item() == loss.item()
    peak = status_kb("VmHWM")
    print("result base", base)
    print("result peak", peak)
    print("result loop", peak - base)


if __name__ == "__main__":
    main(int(sys.argv[1]))
