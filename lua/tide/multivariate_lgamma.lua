-- tide.multivariate_lgamma: PyTorch's mvlgamma, the log of the multivariate gamma function of
-- dimension p: t:mvlgamma(p), t:mvlgamma_(p), tide.mvlgamma(t, p) = p (p - 1) / 4 log(pi) +
-- sum over j = 0 .. p - 1 of lgamma(t - j / 2) (tide.special.multigammaln's value), for every
-- element of t above (p - 1) / 2 or NaN (else an error); integers give the default float
-- dtype. Written in lgamma over the p terms at once (their memory checked against the budget
-- first), so autograd's gradient is PyTorch's (digamma's sum). Loaded on
-- first use (lua/tide/_lazy_ops.lua).
local core = require("tide.core")
local args = require("tide.op_args")
local autograd = require("tide.autograd")
local raise = autograd.raise
local no_grad = autograd.no_grad

local Tensor = core.Tensor

local M = { functions = {} }

local function mvlgamma(op, x, p)
    args.check(op, x)
    if x.dtype == "bool" then
        raise(("tide: %s: needs a number tensor, got bool"):format(op))
    end
    p = args.integer(op, p, "p")
    if p < 1 then
        raise(("tide: %s: p must be an integer >= 1, got %d"):format(op, p))
    end
    local a = args.FLOAT[x.dtype] and x or x:to(core.get_default_dtype())
    local low = (p - 1) / 2
    -- (a NaN passes, and gives NaN, as PyTorch's)
    if a:numel() > 0 and no_grad(function() return a:le(low):any():item() end) then
        raise(("tide: %s: every element must be greater than (p - 1) / 2 = %g (p = %d)")
            :format(op, low, p))
    end
    -- the p terms side by side, summed over the last dim, as PyTorch computes them: one pass
    -- whatever p, and a p too large for memory is refused before anything is built
    if a:numel() == 0 then
        return a:mul(0) -- no element, no term: the empty result in a's dtype, recorded
    end
    local es = (a.dtype == "float64") and 8 or 4
    -- (the p halves, the terms and their lgamma)
    args.check_budget(op, (2.0 * a:numel() + 1) * p, es, ("the %d terms of %d elements")
        :format(p, a:numel()), "use a smaller p or fewer elements")
    local half_j = core.arange(0, p, { dtype = a.dtype, device = a.device }):div(2)
    local r = a:unsqueeze(-1):sub(half_j):lgamma():sum(-1)
    return r + p * (p - 1) / 4 * math.log(math.pi)
end

function Tensor.mvlgamma(x, p, ...)
    args.no_extra("mvlgamma", 2, ...)
    return mvlgamma("mvlgamma", x, p)
end
function Tensor.mvlgamma_(x, p, ...)
    args.no_extra("mvlgamma_", 2, ...)
    args.check("mvlgamma_", x)
    if not args.FLOAT[x.dtype] then
        raise(("tide: mvlgamma_: the result is a float, which the %s tensor cannot hold; " ..
            "use x:mvlgamma(p)"):format(x.dtype))
    end
    -- recorded: from a copy, so that lgamma's saved input is not the tensor written
    local src = autograd.needs_record(x) and x:clone() or x
    return x:copy_(mvlgamma("mvlgamma_", src, p))
end
M.functions.mvlgamma = function(x, p, ...)
    args.no_extra("mvlgamma", 2, ...)
    return mvlgamma("mvlgamma", x, p)
end

-- (op, x, p): tide.special.multigammaln's computation too, under its own name
M.compute = mvlgamma

M.names = { "mvlgamma" }
return M
