"""gpu_torch.py — PyTorch on the same GPU, for bench/gpu_check.sh: sgemm and bf16 gemm 8192^3,
add of 2^28 float32, host-to-device and device-to-host of 1 GiB (pinned, pageable) and the
per-op cost of a small a + b. Prints "key value" lines; prints "torch_unavailable <why>" when it cannot run."""
import sys
import time

try:
    import torch
except Exception as e:  # noqa: BLE001
    print("torch_unavailable import failed: %s" % e)
    sys.exit(0)
if not torch.cuda.is_available():
    print("torch_unavailable torch has no CUDA device here")
    sys.exit(0)

dev = torch.device("cuda:0")
torch.backends.cuda.matmul.allow_tf32 = False


def best(reps, fn):
    t = 1e30
    for _ in range(reps):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        t = min(t, time.perf_counter() - t0)
    return t


n = 8192
for name, dt in (("sgemm", torch.float32), ("bf16_gemm", torch.bfloat16)):
    a = torch.rand(n, n, device=dev, dtype=dt)
    b = torch.rand(n, n, device=dev, dtype=dt)
    a @ b
    t = best(5, lambda: a @ b)
    print("torch_%s_tflops %.3f" % (name, 2.0 * n ** 3 / t / 1e12))
    del a, b

m = 1 << 28
a = torch.rand(m, device=dev)
b = torch.rand(m, device=dev)
c = torch.empty_like(a)
t = best(10, lambda: torch.add(a, b, out=c))
print("torch_add_gbs %.1f" % (3.0 * m * 4 / t / 1e9))
del a, b, c

h = torch.ones(m)
p = h.pin_memory()
t = best(5, lambda: p.to(dev))
print("torch_h2d_pinned_gbs %.2f" % (m * 4 / t / 1e9))
t = best(3, lambda: h.to(dev))
print("torch_h2d_pageable_gbs %.2f" % (m * 4 / t / 1e9))
# device to host: into the pinned tensor (as the raw copy), into a new pageable one (.cpu())
d = p.to(dev)
t = best(5, lambda: p.copy_(d))
print("torch_d2h_pinned_gbs %.2f" % (m * 4 / t / 1e9))
t = best(3, lambda: d.to("cpu"))
print("torch_d2h_pageable_gbs %.2f" % (m * 4 / t / 1e9))
del h, p, d

x = torch.ones(100, device=dev)
y = torch.ones(100, device=dev)
iters = 20000
times = []
for _ in range(5):
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(iters):
        z = x + y
    torch.cuda.synchronize()
    times.append((time.perf_counter() - t0) / iters * 1e6)
times.sort()
print("torch_small_add_us %.3f" % times[len(times) // 2])
