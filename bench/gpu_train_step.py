"""gpu_train_step.py: the PyTorch reference for bench/gpu_train_step.lua on the same GPU, for
bench/gpu_check.sh.

One training step (zero_grad, forward, cross-entropy, backward, SGD momentum step) of the
models of bench/mlp_step.py: mlp (784-256-128-10, batch 256) and cnn (1x28x28, batch 64).
Usage: gpu_train_step.py ITERS REPS SIZE [DEVICE]  (SIZE full or smoke: batch 2; DEVICE cuda,
the default, or cpu for the emulated rehearsal). Prints "torch_<model>_step_ms <ms>", the
median of REPS runs of ITERS steps, or "torch_unavailable <why>" without a CUDA PyTorch.
"""
import statistics
import sys
import time

BATCH = {"full": {"mlp": 256, "cnn": 64}, "smoke": {"mlp": 2, "cnn": 2}}


def make_step(torch, kind, batch, dev):
    from mlp_step import model_for
    model = model_for(kind).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    lossf = torch.nn.CrossEntropyLoss()
    shape = (batch, 784) if kind == "mlp" else (batch, 1, 28, 28)
    x = torch.randn(*shape).to(dev)
    y = torch.randint(0, 10, (batch,)).to(dev)

    def step():
        opt.zero_grad()
        loss = lossf(model(x), y)
        loss.backward()
        opt.step()
        return loss

    return step


def time_step(step, iters, reps, sync):
    for _ in range(5):
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
    iters, reps, size = int(argv[0]), int(argv[1]), argv[2]
    dev = argv[3] if len(argv) > 3 else "cuda"
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
    for kind in ("mlp", "cnn"):
        ms = time_step(make_step(torch, kind, BATCH[size][kind], dev), iters, reps, sync)
        print("torch_%s_step_ms %.3f" % (kind, ms), flush=True)


if __name__ == "__main__":
    sys.path.insert(0, __import__("os").path.dirname(__import__("os").path.abspath(__file__)))
    main(sys.argv[1:])
