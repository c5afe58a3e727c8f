-- tide.special: polygamma, the special function written over the op table's (lgamma, digamma,
-- erfinv and the Hurwitz zeta are kernels, include/tide_ops.def), and zeta's check of its
-- exponent. As PyTorch's torch.polygamma: digamma for n = 0, else (-1)^(n+1) n!
-- zeta(n + 1, x); its gradient comes from zeta's (polygamma(n + 1, x)), so it differentiates
-- to any order. igamma and igammac refuse a shape `a` that requires grad, as zeta its exponent.
local core = require("tide.core")
local raise = require("tide.autograd.raise")
local args = require("tide.op_args")

local Tensor = core.Tensor
local M = { functions = {} }

local function order(n)
    if core.is_tensor(n) then
        raise("tide: polygamma: n must be an integer >= 0 (the derivative's order), got a " ..
            "tensor; the order comes first: tide.polygamma(n, x), or x:polygamma(n)")
    end
    if type(n) ~= "number" or n < 0 or n ~= math.floor(n) or n == math.huge then
        raise(("tide: polygamma: n must be an integer >= 0 (the derivative's order), got %s")
            :format(tostring(n)))
    end
    return n
end

-- op(a, b) of the op table (tide.op, t:op and t:op_), refusing up front a first argument that
-- requires grad (PyTorch has no gradient for it either; its backward raises), as tide refuses
-- every op it cannot differentiate rather than detach the result; `why` ends the message
local function first_arg_not_differentiable(op, why)
    local kernel, kernel_ = Tensor[op], Tensor[op .. "_"]
    local function refuse(name, a)
        if core.is_tensor(a) and a.requires_grad and core.is_grad_enabled() then
            raise("tide: " .. name .. ": not differentiable with respect to " .. why)
        end
    end
    M.functions[op] = function(a, b)
        refuse(op, a)
        return kernel(a, b)
    end
    Tensor[op] = function(a, b, ...)
        args.no_extra(op, 2, ...)
        refuse(op, a)
        return kernel(a, b)
    end
    Tensor[op .. "_"] = function(a, b, ...)
        args.no_extra(op .. "_", 2, ...)
        refuse(op .. "_", a)
        return kernel_(a, b)
    end
end

-- zeta(x, q): the exponent x
first_arg_not_differentiable("zeta", "x (argument #1, the exponent), as in PyTorch; detach x, " ..
    "or pass the exponent as a number")

-- igamma(a, x) and igammac(a, x): the shape a (PyTorch: "derivative for igamma: input is not
-- implemented")
for _, op in ipairs({ "igamma", "igammac" }) do
    first_arg_not_differentiable(op, "a (argument #1, the shape), as in PyTorch; detach a, or " ..
        "pass it as a number")
end

-- trigamma, polygamma(1, x): zeta(2, x) but PyTorch's 0 at inf and NaN at -inf (the zeta's are
-- NaN and inf there), its gradient polygamma(2, x) everywhere (-inf at -inf, as PyTorch's);
-- digamma's gradient (its formula in the autograd registry)
local trigamma = require("tide.autograd").def {
    name = "trigamma",
    reads = { 1 },
    forward = function(_, x)
        local r = core.zeta(2, x)
        return core.where(x:eq(math.huge), 0, core.where(x:eq(-math.huge), 0 / 0, r))
    end,
    backward = function(nd, g)
        return g:mul(core.zeta(3, nd[1]):mul(-2))
    end,
}

-- polygamma(n, x) as PyTorch orders its arguments; t:polygamma(n) as its method does
function M.functions.polygamma(n, x, ...)
    local P = require("tide.pytorch_args")
    if x == nil and select("#", ...) == 0 and P.is_options(n) and next(n) ~= nil then
        -- torch.polygamma(n=1, input=x): both by name
        local o = args.options("polygamma", n, { "n", "input" })
        n, x = o.n, o.input
    elseif P.is_options(x) and next(x) ~= nil and select("#", ...) == 0 then
        x = args.options("polygamma", x, { "input" }).input -- polygamma(1, {input = x})
    end
    order(n)
    args.check("polygamma", x, 2)
    if n == 0 then
        return x:digamma()
    end
    local factorial = n > 170 and math.huge or 1 -- 171! overflows a double
    for k = 2, n > 170 and 1 or n do
        factorial = factorial * k
    end
    if n == 1 then
        return trigamma(x)
    end
    local sign = n % 2 == 1 and 1 or -1
    return core.zeta(n + 1, x):mul(sign * factorial)
end

function Tensor.polygamma(x, n, ...)
    args.no_extra("polygamma", 2, ...)
    args.check("polygamma", x)
    return M.functions.polygamma(n, x)
end

-- in place: while autograd records, from a copy of x, which the gradient reads after the write
function Tensor.polygamma_(x, n, ...)
    args.no_extra("polygamma_", 2, ...)
    args.check("polygamma_", x)
    local src = (x.requires_grad and core.is_grad_enabled()) and x:clone() or x
    return x:copy_(M.functions.polygamma(n, src))
end

M.names = { "polygamma", "zeta", "igamma", "igammac" }
return M
