-- PyTorch's keyword names of the products and the binary pointwise ops (tide.tensor_keywords):
-- x:mm({mat2 = w}), tide.addmm(b, x, w, {beta = 0.5, alpha = 2}), tide.baddbmm(b, q, k,
-- {beta = 0, alpha = s}), tide.tensordot(a, b, {dims = 2}), x:matrix_power({n = 3}),
-- x:add(y, {alpha = 2}), x:pow({exponent = 2}), x:atan2({other = y}), x:heaviside({values = v}),
-- tide.eq(x, {other = y}), tide.add({input = x, other = y}) (every parameter by name).
--
-- The names are those PyTorch 1.13's argument parser takes, which are not always its
-- docstrings' (x.mul(other=y), not value; x.bmm(mat2=b), not batch2; x.dot(tensor=y), other in
-- its docs, taken here as an alias). div and divide (rounding_mode) are creation.lua's.
-- A plain positional call goes straight to the op through the trampoline (lua/keywords.c).
local S = {}

-- name(params) and its in-place twin name_(params) (a method only, PyTorch's)
local function with_twin(name, params, t)
    t = t or {}
    S[name] = { first = "input", params = params, options = t.options, aliases = t.aliases,
        methods = t.methods }
    if t.twin ~= false then
        S[name .. "_"] = { params = params, options = t.options, aliases = t.aliases,
            functions = false }
    end
end

-- ---- products ----

with_twin("mm", { "mat2" }, { twin = false })
with_twin("bmm", { "mat2" }, { twin = false })
with_twin("matmul", { "other" }, { twin = false })
with_twin("mv", { "vec" }, { twin = false })
-- dot(input, tensor): PyTorch's parser's name; its docs' other is an alias
with_twin("dot", { "tensor" }, { twin = false, aliases = { other = "tensor" } })
with_twin("vdot", { "other" }, { twin = false })
with_twin("inner", { "other" }, { twin = false })
with_twin("outer", { "vec2" }, { twin = false })
with_twin("ger", { "vec2" }, { twin = false })
with_twin("kron", { "other" }, { twin = false })
with_twin("matrix_power", { "n" }, { twin = false })
-- beta x + alpha (product): beta and alpha are keyword-only in PyTorch, tide's options table
local SCALES = { options = { "beta", "alpha" } }
with_twin("addmm", { "mat1", "mat2" }, SCALES)
with_twin("addmv", { "mat", "vec" }, SCALES)
with_twin("addr", { "vec1", "vec2" }, SCALES)
with_twin("baddbmm", { "batch1", "batch2" }, SCALES)
with_twin("addbmm", { "batch1", "batch2" }, SCALES)
-- ---- linear algebra, PyTorch's older functions (PyTorch 1.13's parser's names) ----

with_twin("cholesky", { "upper" }, { twin = false })
with_twin("cholesky_inverse", { "upper" }, { twin = false })
with_twin("cholesky_solve", { "input2", "upper" }, { twin = false })
with_twin("pinverse", { "rcond" }, { twin = false })
with_twin("qr", { "some" }, { twin = false })
with_twin("svd", { "some" }, { twin = false })
with_twin("triangular_solve", { "A", "upper", "transpose", "unitriangular" }, { twin = false })
-- lu_solve(b, LU_data, LU_pivots): b first, torch's order
with_twin("lu_solve", { "LU_data", "LU_pivots" }, { twin = false })
S.lu_unpack = { first = "LU_data", params = { "LU_pivots" },
    options = { "unpack_data", "unpack_pivots" }, methods = false }
S.frobenius_norm = { first = "input", params = { "dim", "keepdim" }, methods = false }
S.nuclear_norm = { first = "input", params = { "dim", "keepdim" }, methods = false }
-- orgqr(input, input2) and ormqr(input, input2, input3, left, transpose): the parser's names
-- (tau and other, as PyTorch's docs call them, are not taken by PyTorch 1.13)
with_twin("orgqr", { "input2" }, { twin = false })
with_twin("ormqr", { "input2", "input3", "left", "transpose" }, { twin = false })

-- ---- unary ops with a parameter ----

with_twin("logit", { "eps" })
with_twin("mvlgamma", { "p" })
with_twin("hardshrink", { "lambd" }, { twin = false })
with_twin("prelu", { "weight" }, { twin = false })
-- polygamma(n, input) as a function (n first), input.polygamma(n) as a method: the method's
S.polygamma = { params = { "n" }, functions = false }
S.polygamma_ = { params = { "n" }, functions = false }

-- tensordot(a, b, dims=2): a Python function in PyTorch, its parameters a, b, dims
S.tensordot = { first = "a", params = { "b", "dims" } }

-- ---- binary pointwise ops ----

-- add and sub (and subtract) take PyTorch's keyword-only alpha at tide's position 3
-- (x:add(y, 2) is x + 2 y); rsub(input, other, alpha) is a function only
for _, name in ipairs({ "add", "sub", "subtract" }) do
    with_twin(name, { "other", "alpha" })
end
S.rsub = { first = "input", params = { "other", "alpha" }, methods = false }

-- (fmax, fmin, logaddexp, logaddexp2 have no in-place twin, in PyTorch or tide)
for _, name in ipairs({ "fmax", "fmin", "logaddexp", "logaddexp2" }) do
    with_twin(name, { "other" }, { twin = false })
end
for _, name in ipairs({
    "mul", "multiply", "true_divide", "floor_divide", "remainder", "fmod",
    "atan2", "arctan2", "maximum", "minimum", "hypot", "copysign", "xlogy", "nextafter", "ldexp",
    "eq", "ne", "lt", "le", "gt", "ge",
    "greater", "greater_equal", "less", "less_equal", "not_equal",
    "logical_and", "logical_or", "logical_xor",
    "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift",
}) do
    with_twin(name, { "other" })
end
-- (gcd_, lcm_, igamma_, igammac_: the twins tide has)
for _, name in ipairs({ "gcd", "lcm", "igamma", "igammac" }) do
    with_twin(name, { "other" })
end
with_twin("pow", { "exponent" })
with_twin("float_power", { "exponent" })
with_twin("heaviside", { "values" })

return S
