"""dlpack_torch.py — tide <-> PyTorch through DLPack, no copies, checked both ways.

    python3 examples/embed/dlpack_torch.py build/libtide_embed.so

(`make embed-dlpack-torch` builds the shared library and runs this.) Checks, with PyTorch as
the other framework: same memory (data pointers), values, shapes and strides, writes seen on
both sides, and that memory stays alive while the other side holds it (tide's side is counted
exactly: its context's bytes in use return to 0 when torch lets go).
Prints "N passed, N failed" last and exits non-zero on failure.
"""
import ctypes as C
import sys

import torch
import torch.utils.dlpack as dl

lib = C.CDLL(sys.argv[1] if len(sys.argv) > 1 else "build/libtide_embed.so")
P = C.c_void_p
lib.tide_errmsg.restype = C.c_char_p
lib.tide_device_get.argtypes = [C.c_char_p, C.POINTER(P)]
lib.tide_tensor_empty.argtypes = [P, P, C.c_int, C.c_int, C.POINTER(C.c_int64), C.POINTER(P)]
lib.tide_tensor_data.restype = P
lib.tide_tensor_data.argtypes = [P]
lib.tide_tensor_release.argtypes = [P]
lib.tide_tensor_get.argtypes = [P, C.POINTER(C.c_int64), C.POINTER(C.c_double)]
lib.tide_tensor_set.argtypes = [P, C.POINTER(C.c_int64), C.c_double]
lib.tide_tensor_to_dlpack.argtypes = [P, C.POINTER(P)]
lib.tide_tensor_from_dlpack.argtypes = [P, P, C.POINTER(P)]
lib.tide_tensor_strides.restype = C.POINTER(C.c_int64)
lib.tide_tensor_strides.argtypes = [P]
lib.tide_tensor_dtype.argtypes = [P]
lib.tide_ctx_new.argtypes = [C.POINTER(P)]
lib.tide_ctx_memory_in_use.restype = C.c_size_t
lib.tide_ctx_memory_in_use.argtypes = [P]
lib.tide_ctx_release.argtypes = [P]

capi = C.pythonapi
capi.PyCapsule_New.restype = C.py_object
capi.PyCapsule_New.argtypes = [P, C.c_char_p, P]
capi.PyCapsule_GetPointer.restype = P
capi.PyCapsule_GetPointer.argtypes = [C.py_object, C.c_char_p]
capi.PyCapsule_SetName.argtypes = [C.py_object, C.c_char_p]

F32, I64 = 0, 5  # tide_dtype enum order: F32 F64 F16 BF16 I32 I64 U8 BOOL
passed = failed = 0


def check(cond, what):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAILED:", what, "|", lib.tide_errmsg().decode(), file=sys.stderr)


def ok(st, what):
    check(st == 0, what)


def get(t, *idx):
    v = C.c_double()
    ok(lib.tide_tensor_get(t, (C.c_int64 * len(idx))(*idx), C.byref(v)), "get")
    return v.value


cpu, ctx = P(), P()
ok(lib.tide_device_get(b"cpu", C.byref(cpu)), "device")
ok(lib.tide_ctx_new(C.byref(ctx)), "ctx")

# tide -> torch: torch sees tide's memory; tide's storage lives until torch lets go
t = P()
ok(lib.tide_tensor_empty(ctx, cpu, F32, 2, (C.c_int64 * 2)(2, 3), C.byref(t)), "empty")
for i in range(2):
    for j in range(3):
        lib.tide_tensor_set(t, (C.c_int64 * 2)(i, j), 10.0 * i + j)
m = P()
ok(lib.tide_tensor_to_dlpack(t, C.byref(m)), "to_dlpack")
x = dl.from_dlpack(capi.PyCapsule_New(m, b"dltensor", None))
check(x.data_ptr() == lib.tide_tensor_data(t), "torch views tide's memory")
check(x.dtype == torch.float32 and list(x.shape) == [2, 3], "dtype and shape")
check(x.tolist() == [[0, 1, 2], [10, 11, 12]], "values in torch")
x[1, 2] = -5.0
check(get(t, 1, 2) == -5.0, "torch's write seen by tide")
in_use = lib.tide_ctx_memory_in_use(ctx)
lib.tide_tensor_release(t)
check(lib.tide_ctx_memory_in_use(ctx) == in_use, "torch keeps the memory alive")
check(x.sum().item() == 0 + 1 + 2 + 10 + 11 - 5, "still readable after tide let go")
del x
check(lib.tide_ctx_memory_in_use(ctx) == 0, "torch's release ran tide's deleter")

# torch -> tide: a transposed (strided) int64 tensor
y = torch.arange(12, dtype=torch.int64).view(3, 4).t()  # [4, 3], strides (1, 4)
cap = dl.to_dlpack(y)
ptr = capi.PyCapsule_GetPointer(cap, b"dltensor")
u = P()
ok(lib.tide_tensor_from_dlpack(ctx, ptr, C.byref(u)), "from_dlpack")
capi.PyCapsule_SetName(cap, b"used_dltensor")  # tide owns it now (the DLPack protocol)
check(lib.tide_tensor_dtype(u) == I64, "int64 in tide")
check(lib.tide_tensor_data(u) == y.data_ptr(), "tide views torch's memory")
s = lib.tide_tensor_strides(u)
check((s[0], s[1]) == (1, 4), "strides kept")
check(get(u, 3, 2) == y[3, 2].item() == 11, "values in tide")
lib.tide_tensor_set(u, (C.c_int64 * 2)(0, 1), 100)
check(y[0, 1].item() == 100, "tide's write seen by torch")
check(y.sum().item() == sum(range(12)) - 4 + 100, "torch tensor intact")
del cap
lib.tide_tensor_release(u)

# tide alone keeps a torch tensor alive once torch's side is gone
z = torch.full((1000,), 7.0)
cap = dl.to_dlpack(z)
w = P()
ok(lib.tide_tensor_from_dlpack(ctx, capi.PyCapsule_GetPointer(cap, b"dltensor"), C.byref(w)), "from_dlpack")
capi.PyCapsule_SetName(cap, b"used_dltensor")
del z, cap
junk = [torch.zeros(1000) for _ in range(100)]  # reuse of freed memory would show here
check(get(w, 999) == 7.0, "memory held by tide")
lib.tide_tensor_release(w)

lib.tide_ctx_release(ctx)
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
