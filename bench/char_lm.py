"""char_lm.py: examples/char_lm.lua's twin in PyTorch (bench/char_lm.lua runs both).

The same text and vocabulary, the same training windows (the same splitmix64 hash of the seed
and the step), the same models at PyTorch's default initialisations, AdamW (weight decay 0.01),
the same warmup-then-cosine LambdaLR, gradient clipping at 1.0, and the same validation loss
(nats per character over every non-overlapping window of the last 10% of the text). The random
streams (initialisation, dropout) are PyTorch's own.

  python3 bench/char_lm.py --model gpt|lstm --steps N [--seed N] [--data PATH] [--device DEV]
      [--layers N] [--width N] [--heads N] [--context N] [--batch-size N] [--lr X] [--no-eval]

Prints "result step_s S" (seconds per training step, evaluation excluded) and, unless
--no-eval, "result val_loss X" (bench/torch_ref.py's form).
"""
import argparse
import math
import os
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

import torch_ref

FORTUNES = "/usr/share/games/fortunes"
WINDOW = 128
DEFAULTS = {"gpt": dict(lr=1e-3, layers=4, width=128), "lstm": dict(lr=2e-3, layers=2, width=256)}
M64 = (1 << 64) - 1


def read_text(path):
    if not os.path.isdir(path):
        with open(path, "rb") as f:
            return f.read()
    names = sorted(n for n in os.listdir(path) if not os.path.isdir(os.path.join(path, n))
                   and not n.endswith(".dat") and not n.endswith(".u8"))
    out = b""
    for n in names:
        with open(os.path.join(path, n), "rb") as f:
            out += f.read()
    return out


def splitmix(x):
    z = (x + 0x9E3779B97F4A7C15) & M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def window_starts(seed, step, batch, n_starts):  # 0-based starts of step `step` (1-based)
    return [(splitmix((seed << 40) + (step - 1) * batch + b) >> 1) % n_starts
            for b in range(batch)]


def lr_factor(steps):
    warmup = min(100, steps // 10)

    def f(s):
        if s < warmup:
            return (s + 1) / warmup
        t = (s - warmup) / max(1, steps - warmup)
        return 0.5 * (1 + math.cos(math.pi * min(t, 1)))
    return f


class CharLSTM(nn.Module):
    def __init__(self, vocab, o):
        super().__init__()
        self.embed = nn.Embedding(vocab, 64)
        self.rnn = nn.LSTM(64, o.width, num_layers=o.layers, batch_first=True)
        self.head = nn.Linear(o.width, vocab)

    def forward(self, x):
        out, _ = self.rnn(self.embed(x))
        return self.head(out)


class CharGPT(nn.Module):
    def __init__(self, vocab, o):
        super().__init__()
        self.tok = nn.Embedding(vocab, o.width)
        self.pos = nn.Embedding(o.context, o.width)
        self.drop = nn.Dropout(0.1)
        layer = nn.TransformerEncoderLayer(o.width, o.heads, 4 * o.width, 0.1, activation="gelu",
                                           batch_first=True, norm_first=True)
        self.blocks = nn.TransformerEncoder(layer, o.layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(o.width)
        self.head = nn.Linear(o.width, vocab)

    def forward(self, x):
        t = x.size(1)
        mask = torch.ones(t, t, dtype=torch.bool, device=x.device).triu(1)
        pos = torch.arange(t, device=x.device)
        h = self.drop(self.tok(x) + self.pos(pos))
        return self.head(self.norm(self.blocks(h, mask=mask)))


def loss_of(model, x, y, reduction="mean"):
    logits = model(x)
    return F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1),
                           reduction=reduction)


def validate(model, val, width, dev):
    n = (val.numel() - 1) // width
    total = 0.0
    model.eval()
    with torch.no_grad():
        for first in range(0, n, 64):
            k = min(64, n - first)
            pos = (torch.arange(k).view(k, 1) + first) * width + torch.arange(width + 1)
            w = val[pos].to(dev)
            total += loss_of(model, w[:, :width], w[:, 1:], "sum").item()
    model.train()
    return total / (n * width)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="gpt", choices=["gpt", "lstm"])
    ap.add_argument("--steps", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--data", default=FORTUNES)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--layers", type=int)
    ap.add_argument("--width", type=int)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--context", type=int, default=WINDOW)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--lr", type=float)
    ap.add_argument("--no-eval", action="store_true")
    o = ap.parse_args()
    for k, v in DEFAULTS[o.model].items():
        if getattr(o, k) is None:
            setattr(o, k, v)
    torch_ref.setup()
    torch.manual_seed(o.seed)
    dev = torch.device(o.device)

    text = read_text(o.data)
    vocab = sorted(set(text))
    lut = torch.zeros(256, dtype=torch.long)
    lut[torch.tensor(vocab)] = torch.arange(len(vocab))
    ids = lut[torch.frombuffer(bytearray(text), dtype=torch.uint8).long()]
    n = ids.numel()
    n_train = n - n // 10
    width = o.context if o.model == "gpt" else WINDOW
    train, val = ids[:n_train], ids[n_train:]
    n_starts = n_train - width
    offsets = torch.arange(width + 1)

    model = (CharGPT if o.model == "gpt" else CharLSTM)(len(vocab), o).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=o.lr, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lr_factor(o.steps))
    secs = 0.0
    for step in range(1, o.steps + 1):
        t0 = time.perf_counter()  # the batch's gathering counts, as in tide's loop
        starts = torch.tensor(window_starts(o.seed, step, o.batch_size, n_starts))
        w = train[starts.view(-1, 1) + offsets]
        x, y = w[:, :width].to(dev), w[:, 1:].to(dev)
        opt.zero_grad()
        loss = loss_of(model, x, y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        if dev.type == "cuda":
            torch.cuda.synchronize()
        secs += time.perf_counter() - t0
    torch_ref.report("step_s", secs / o.steps)
    if not o.no_eval:
        torch_ref.report("val_loss", validate(model, val, width, dev))


if __name__ == "__main__":
    main()
