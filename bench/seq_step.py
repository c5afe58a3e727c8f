"""seq_step.py: the PyTorch reference for bench/seq_step.lua (CPU, through bench/compare.lua)
and bench/gpu_seq_step.lua (the same GPU, for bench/gpu_check.sh).

One training step (zero_grad, forward, MSE loss, backward, Adam step) of
  lstm: nn.LSTM(256, 256, num_layers=2) on (seq 64, batch 32, 256)
  transformer: nn.TransformerEncoder of 4 nn.TransformerEncoderLayer(128, 4,
               dim_feedforward=512, dropout=0, batch_first=True) on (32, 128, 128), causal mask
Usage: seq_step.py ITERS REPS SIZE DEVICE  (SIZE full or smoke; DEVICE cpu or cuda).
On cpu it prints "result <model> <median ms per step>" (the thread setting from compare.lua);
on cuda "torch_<model>_step_ms <ms>", or "torch_unavailable <why>" without a CUDA PyTorch.
"""
import statistics
import sys
import time

SIZES = {
    "full": {"lstm": dict(input=256, hidden=256, layers=2, seq=64, batch=32),
             "transformer": dict(d=128, heads=4, layers=4, ff=512, seq=128, batch=32)},
    "smoke": {"lstm": dict(input=8, hidden=8, layers=2, seq=4, batch=2),
              "transformer": dict(d=8, heads=2, layers=1, ff=16, seq=4, batch=2)},
}


def make_step(torch, name, s, dev):
    nn = torch.nn
    if name == "lstm":
        model = nn.LSTM(s["input"], s["hidden"], num_layers=s["layers"])
        x = torch.randn(s["seq"], s["batch"], s["input"])
        target = torch.randn(s["seq"], s["batch"], s["hidden"])
        mask = None
    else:
        layer = nn.TransformerEncoderLayer(s["d"], s["heads"], dim_feedforward=s["ff"],
                                           dropout=0.0, batch_first=True)
        model = nn.TransformerEncoder(layer, s["layers"], enable_nested_tensor=False)
        x = torch.randn(s["batch"], s["seq"], s["d"])
        target = torch.randn(s["batch"], s["seq"], s["d"])
        mask = torch.full((s["seq"], s["seq"]), float("-inf")).triu(1)
    model.to(dev)
    x, target = x.to(dev), target.to(dev)
    mask = mask.to(dev) if mask is not None else None
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    lossf = nn.MSELoss()

    def step():
        opt.zero_grad()
        y = model(x) if mask is None else model(x, mask)
        if isinstance(y, tuple):
            y = y[0]
        loss = lossf(y, target)
        loss.backward()
        opt.step()
        return loss

    return step


def time_step(torch, step, iters, reps, sync):
    for _ in range(2):
        step()
    times = []
    for _ in range(reps):
        sync()
        t0 = time.perf_counter()
        for _ in range(iters):
            loss = step()
        sync()
        times.append(time.perf_counter() - t0)
    assert loss.item() == loss.item()  # not NaN
    return statistics.median(times) / iters * 1e3


def main(argv):
    iters, reps, size, dev = int(argv[0]), int(argv[1]), argv[2], argv[3]
    try:
        import torch
    except Exception as e:  # noqa: BLE001
        print("torch_unavailable import failed: %s" % e)
        return
    if dev == "cpu":
        import torch_ref
        torch_ref.setup()
    elif not torch.cuda.is_available():
        print("torch_unavailable torch has no CUDA device here")
        return
    torch.manual_seed(0)
    sync = torch.cuda.synchronize if dev != "cpu" else (lambda: None)
    for name in ("lstm", "transformer"):
        ms = time_step(torch, make_step(torch, name, SIZES[size][name], dev), iters, reps, sync)
        if dev == "cpu":
            print("result", name, ms, flush=True)
        else:
            print("torch_%s_step_ms %.3f" % (name, ms), flush=True)


if __name__ == "__main__":
    sys.path.insert(0, __import__("os").path.dirname(__import__("os").path.abspath(__file__)))
    main(sys.argv[1:])
