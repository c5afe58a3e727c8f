-- More activations for tide.nn.functional, as PyTorch 1.13 computes them (values, and the
-- gradient at each kink): prelu, celu, softmin, threshold, hardshrink, softshrink, tanhshrink,
-- rrelu and gumbel_softmax. celu, threshold and the shrinks run the kernel row activation
-- (tide.nn._fused.activation), with the composite each passes where the row does not apply and
-- for the gradient's own graph.
-- Required from the end of functional.lua; its argument checks are tide.nn._args (C).
local core = require("tide.core")
local autograd = require("tide.autograd")
local I = require("tide.nn._internal")
local fused = require("tide.nn._fused")
local raise = autograd.raise

-- value(x), recorded as the piecewise-linear op `name` (autograd/formulas.lua, PyTorch's
-- name) with slope(x) its per-element slopes: a second backward gives zeros, as PyTorch's
-- threshold_backward, hardshrink_backward, softshrink_backward...
local function piecewise(name, x, value, slope)
    if not autograd.needs_record(x) then
        return value(x)
    end
    local out = value(x:detach())
    autograd.record(name, out, x).slope = slope
    return out
end

local C = require("tide.nn._args")

return function(F)
    local tensor_arg, options, number_opt = C.tensor_arg, C.options, C.number_opt
    local number_or_options, maybe_inplace = C.number_or_options, C.maybe_inplace

    -- prelu(input, weight): input where input > 0, else weight * input; weight has one element
    -- or one per channel (dim 2 of input, broadcast over the others), as PyTorch's. Gradients:
    -- weight at 0, as PyTorch's kernel.
    function F.prelu(input, weight)
        local who = "prelu"
        tensor_arg(input, who, "input")
        tensor_arg(weight, who, "weight")
        local n, nd = weight:numel(), input:dim()
        if n ~= 1 then
            local channels = nd >= 2 and input:size(2) or 1
            if nd == 0 or n ~= channels then
                raise(string.format("tide: prelu: weight %s has %d elements; expected 1 or one " ..
                    "per channel (dim 2 of input %s: %s)", C.shape_str(weight), n,
                    C.shape_str(input), nd >= 2 and tostring(channels) or "none"))
            end
        end
        C.same_device(input, weight, who, "weight")
        I.check_dtype(input, weight, who)
        local w
        if n == 1 then
            w = weight:reshape({})
        else
            local shape = { 1, n }
            for d = 3, nd do
                shape[d] = 1
            end
            w = weight:reshape(shape)
        end
        if autograd.needs_record(weight) then
            return core.where(input:gt(0), input, w:mul(input))
        end
        -- a constant weight: piecewise linear in input (a second backward gives zeros, as
        -- PyTorch's prelu_backward)
        return piecewise("prelu", input, function(v)
            return core.where(v:gt(0), v, w:mul(v))
        end, function(v)
            return core.where(v:gt(0), 1, w):expand(v.shape)
        end)
    end

    -- celu: x where x > 0, else alpha (exp(x / alpha) - 1); PyTorch's elu with input_scale
    -- 1 / alpha, which it multiplies by
    function F.celu(input, opts)
        local who = "celu"
        tensor_arg(input, who, "input")
        local o = number_or_options(opts, "alpha", who, { "alpha", "inplace" })
        local alpha = number_opt(o.alpha, 1, who, "alpha")
        if alpha == 0 then
            raise("tide: celu: alpha must not be 0 (it divides the input); use a non-zero alpha")
        end
        local function ops(x)
            -- in float32 for the half dtypes, rounded once (as F.elu, PyTorch's kernels)
            local half = x.dtype == "float16" or x.dtype == "bfloat16"
            local v = half and x:float() or x
            local r = core.where(v:gt(0), v, v:clamp(nil, 0):mul(1 / alpha):exp():sub(1):mul(alpha))
            return half and r:to(x.dtype) or r
        end
        return maybe_inplace(input, o, who, function(x)
            return fused.activation("elu", x, ops, "CeluBackward0", alpha, 1, 1 / alpha)
        end)
    end

    -- softmin(input[, dim[, _stacklevel[, dtype]]]), any of them by name: softmax of
    -- -input (cast to dtype first), as PyTorch's
    function F.softmin(input, opts)
        local x, dim = C.softmax_args(input, opts, "softmin")
        return x:neg():softmax(dim)
    end

    -- threshold(input, threshold, value[, {inplace =}]): value where input <= threshold, input
    -- elsewhere (NaN stays); the gradient is 0 at the threshold, as PyTorch's
    function F.threshold(input, threshold, value, opts)
        local who = "threshold"
        tensor_arg(input, who, "input")
        if type(threshold) ~= "number" or type(value) ~= "number" then
            raise(string.format("tide: threshold: expected the numbers threshold and value, " ..
                "got %s and %s; call F.threshold(x, threshold, value)", type(threshold),
                type(value)))
        end
        local function ops(x)
            return piecewise("threshold", x, function(v)
                return core.where(v:le(threshold), value, v)
            end, function(v)
                return v:le(threshold):logical_not():to(v.dtype)
            end)
        end
        return maybe_inplace(input, options(opts, who, { "inplace" }), who, function(x)
            return fused.activation("threshold", x, ops, "ThresholdBackward0", threshold, value)
        end)
    end

    local function lambd_of(opts, who)
        local o = number_or_options(opts, "lambd", who, { "lambd" })
        return number_opt(o.lambd, 0.5, who, "lambd")
    end

    -- hardshrink(input[, lambd = 0.5]): 0 in [-lambd, lambd] (its bounds included), else input
    function F.hardshrink(input, opts)
        tensor_arg(input, "hardshrink", "input")
        local lambd = lambd_of(opts, "hardshrink")
        local function inside(v)
            return v:ge(-lambd):logical_and(v:le(lambd))
        end
        return fused.activation("hardshrink", input, function(x)
            return piecewise("hardshrink", x, function(v)
                return core.where(inside(v), 0, v)
            end, function(v)
                return inside(v):logical_not():to(v.dtype)
            end)
        end, "HardshrinkBackward0", lambd)
    end

    -- softshrink(input[, lambd = 0.5]): input - lambd above lambd, input + lambd below -lambd,
    -- 0 between (and for NaN, as PyTorch's kernel)
    function F.softshrink(input, opts)
        tensor_arg(input, "softshrink", "input")
        local lambd = lambd_of(opts, "softshrink")
        if lambd < 0 then
            raise("tide: softshrink: lambd must be >= 0, got " .. tostring(lambd))
        end
        -- its gradient is PyTorch's: g outside [-lambd, lambd] (NaN included, whose value is
        -- 0), 0 inside, its bounds included
        return fused.activation("softshrink", input, function(v)
            return piecewise("softshrink", v, function(x)
                return core.where(x:gt(lambd), x:sub(lambd), core.where(x:lt(-lambd),
                    x:add(lambd), 0))
            end, function(x)
                return x:ge(-lambd):logical_and(x:le(lambd)):logical_not():to(x.dtype)
            end)
        end, "SoftshrinkBackward0", lambd)
    end

    -- tanhshrink: input - tanh(input), PyTorch's own composition (its grad_fn the subtraction's)
    function F.tanhshrink(input)
        tensor_arg(input, "tanhshrink", "input")
        return fused.activation("tanhshrink", input, function(x)
            return x:sub(x:tanh())
        end, "SubBackward0")
    end

    -- rrelu(input[, {lower = 1/8, upper = 1/3, training = false, inplace = false}]): input
    -- where input > 0, else input times a slope: drawn uniform in [lower, upper] for each
    -- element when training (PyTorch's kernel draws it for input <= 0, and the gradient is
    -- that slope), (lower + upper) / 2 otherwise (leaky_relu's)
    function F.rrelu(input, opts)
        local who = "rrelu"
        tensor_arg(input, who, "input")
        local o = options(opts, who, { "lower", "upper", "training", "inplace" })
        local lower = number_opt(o.lower, 1 / 8, who, "lower")
        local upper = number_opt(o.upper, 1 / 3, who, "upper")
        if lower > upper then
            raise(string.format("tide: rrelu: lower %s must not exceed upper %s", lower, upper))
        end
        local training = C.bool_opt(o.training, false, who, "training")
        return maybe_inplace(input, o, who, function(x)
            if not training then -- leaky_relu's, its gradient's graph too
                return F.leaky_relu(x, (lower + upper) / 2)
            end
            local slope = autograd.no_grad(function()
                local u = core.rand(x.shape, { dtype = x.dtype, device = x.device })
                return core.where(x:le(0), u:mul(upper - lower):add(lower), 1)
            end)
            return piecewise("rrelu_with_noise", x, function(v)
                return v:mul(slope)
            end, function()
                return slope
            end)
        end)
    end

    -- gumbel_softmax(logits[, {tau = 1, hard = false, dim = -1, eps}]): softmax((logits + g) /
    -- tau) over dim, g standard Gumbel noise (-log of an exponential draw); with hard, the
    -- one-hot of its maximum, whose gradient is the soft sample's (y_hard - y_soft:detach() +
    -- y_soft, PyTorch's). eps is accepted and unused, as in PyTorch 1.13.
    function F.gumbel_softmax(logits, opts)
        local who = "gumbel_softmax"
        tensor_arg(logits, who, "logits")
        local o = options(opts, who, { "tau", "hard", "dim", "eps" })
        local tau = number_opt(o.tau, 1, who, "tau")
        local hard = C.bool_opt(o.hard, false, who, "hard")
        local dim = C.dim_arg(o.dim, who)
        local gumbels = autograd.no_grad(function()
            return core.empty(logits.shape, { dtype = logits.dtype, device = logits.device })
                :exponential_():log():neg()
        end)
        local y_soft = logits:add(gumbels):div(tau):softmax(dim)
        if not hard then
            return y_soft
        end
        local index = y_soft:detach():argmax(dim, true)
        local y_hard = core.zeros(logits.shape, { dtype = logits.dtype, device = logits.device })
            :scatter_(dim, index, 1)
        return y_hard:sub(y_soft:detach()):add(y_soft)
    end
end
