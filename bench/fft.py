"""fft.py — the PyTorch reference for bench/fft.lua: torch.fft's fft, rfft, rfft2 / irfft2 and
torch.stft on float32, in the thread setting bench/compare.lua picked. Same signals, same
repetitions as fft.lua's side.

Prints "result <case> <fastest run's ms per call>". Run by fft.lua in rounds, with Debian's
/usr/bin/python3 and python3-torch.
"""
import math
import sys
import time

import torch

import torch_ref

torch_ref.setup()
REPS = int(sys.argv[1]) if len(sys.argv) > 1 else 5
FFT = torch.fft


def signal(*shape):
    """the deterministic signal fft.lua builds: sin(0.37 i) + 0.5 cos(1.3 i)"""
    n = math.prod(shape)
    i = torch.arange(n, dtype=torch.float32)
    return (torch.sin(i * 0.37) + torch.cos(i * 1.3) * 0.5).view(*shape)


def case_fft(n):
    z = FFT.fft(signal(n))
    return lambda: FFT.fft(z)


def case_rfft(n):
    x = signal(n)
    return lambda: FFT.rfft(x)


def case_real_fft(n):
    x = signal(n)
    return lambda: FFT.fft(x)


def case_rfft2():
    x = signal(32, 64, 64)
    return lambda: FFT.irfft2(FFT.rfft2(x), s=(64, 64))


def case_stft():
    x, w = signal(8, 16000), torch.hann_window(512)
    return lambda: torch.stft(x, 512, hop_length=128, window=w, return_complex=True)


CASES = {
    "fft_65536": lambda: case_fft(65536),
    "rfft_65536": lambda: case_rfft(65536),
    "fft_100000": lambda: case_fft(100000),
    "rfft_100000": lambda: case_rfft(100000),
    "fft_4099": lambda: case_real_fft(4099),
    "rfft2_b32_64x64": case_rfft2,
    "stft_b8_16000": case_stft,
}
for name, make in CASES.items():
    fn = make()
    fn()  # warm up
    best = math.inf
    for _ in range(REPS):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    torch_ref.report(name, best * 1e3)
