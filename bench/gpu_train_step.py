"""gpu_train_step.py: the PyTorch reference for bench/gpu_train_step.lua on the same GPU, for
bench/gpu_check.sh.

One training step (zero_grad, forward, cross-entropy, backward, SGD momentum step) of the
models of bench/mlp_step.py: mlp (784-256-128-10, batch 256) and cnn (1x28x28, batch 64).
Usage: gpu_train_step.py ITERS REPS SIZE [DEVICE]  (SIZE full or smoke: batch 2; DEVICE cuda,
the default, or cpu for the emulated rehearsal). Prints "torch_<model>_step_ms <ms>", the
median of REPS runs of ITERS steps, or "torch_unavailable <why>" without a CUDA PyTorch.
"""
import sys

BATCH = {"full": {"mlp": 256, "cnn": 64}, "smoke": {"mlp": 2, "cnn": 2}}


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
    from mlp_step import make_step  # the models and the step of the CPU benchmark
    from seq_step import time_step  # the GPU timing loop of the sequence models' steps
    torch.manual_seed(0)
    sync = torch.cuda.synchronize if dev != "cpu" else (lambda: None)
    for kind in ("mlp", "cnn"):
        step = make_step(kind, BATCH[size][kind], dev)
        for _ in range(3):  # with time_step's 2: as many warm-up steps as tide's side takes
            step()
        ms = time_step(torch, step, iters, reps, sync)
        print("torch_%s_step_ms %.3f" % (kind, ms), flush=True)


if __name__ == "__main__":
    sys.path.insert(0, __import__("os").path.dirname(__import__("os").path.abspath(__file__)))
    main(sys.argv[1:])
