-- tide.linalg_eig: PyTorch 1.13's torch.linalg.eig and eigvals, the eigendecomposition of a
-- general (non-symmetric) real square matrix, whose eigenvalues and eigenvectors are complex
-- (complex64 from float32, complex128 from float64: tide's complex tensors, lua/tide/complex/).
-- The device's own solver runs them (tide_linalg_eig: LAPACK's geev on the CPU, called on the
-- column-major matrix as PyTorch calls it, so the eigenvectors' phases are PyTorch's: each of
-- norm 1 with its largest component real); a device without one (CUDA) has A copied to the host
-- and the results back, as PyTorch runs geev on the host there too. No gradient yet: PyTorch's
-- is complex, and a recorded call raises rather than returning values autograd would skip.
local core = require("tide.core")
local autograd = require("tide.autograd")
local Complex = require("tide.complex.tensor")

local raise = autograd.raise
local K = core._internal -- the kernels (lua/linalg.c)

-- the kernel's results on A's device: its own solver's, or the host's on a copy
local function solve(op, A, vectors)
    local w, v = K.eig(A, vectors)
    if w ~= nil then
        return w, v
    end
    w, v = K.eig(A:to("cpu"), vectors)
    if w == nil then -- the host's LAPACK counts in int
        raise(("tide: %s: no solver for matrices this large"):format(op))
    end
    return w:to(A.device), v and v:to(A.device)
end

return function(L, matrix)
    local function checked(op, A, ...)
        if Complex.is(A) then
            raise(("tide: %s: expected a real float32 or float64 matrix, got a complex tensor " ..
                "(tide's eig solves real matrices)"):format(op))
        end
        matrix(op, A)
        if select("#", ...) > 0 then
            raise(("tide: %s: takes one matrix (PyTorch's out= is not supported), got %d " ..
                "more argument%s"):format(op, select("#", ...), select("#", ...) == 1 and "" or
                "s"))
        end
        if A.dtype ~= "float32" and A.dtype ~= "float64" then
            raise(("tide: %s: needs float32 or float64, got %s; convert with :to(\"float64\")")
                :format(op, A.dtype))
        end
        if autograd.needs_record(A) then
            raise(("tide: %s: no gradient yet (PyTorch's is complex); call it on A:detach() " ..
                "or under tide.no_grad() for the values"):format(op))
        end
    end

    -- eig(A): the eigenvalues [..., n] and the eigenvectors (the columns of [..., n, n]) of the
    -- real square A, complex; a conjugate pair of eigenvalues comes together, the one with the
    -- positive imaginary part first (LAPACK's order, PyTorch's)
    function L.eig(A, ...)
        local op = "linalg.eig"
        checked(op, A, ...)
        local w, v = solve(op, A, true)
        return Complex.wrap(w), Complex.wrap(v)
    end

    -- eigvals(A): eig's eigenvalues, without computing the eigenvectors
    function L.eigvals(A, ...)
        local op = "linalg.eigvals"
        checked(op, A, ...)
        return Complex.wrap((solve(op, A, false)))
    end
end
