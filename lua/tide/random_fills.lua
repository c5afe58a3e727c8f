-- tide.random_fills: PyTorch's in-place random fills beyond uniform_ and normal_, each drawn
-- from tide's generator (tide.manual_seed; not PyTorch's sequence) by inverting a uniform draw:
-- bernoulli_(p = 0.5) (p a number or a tensor of probabilities), exponential_(lambd = 1),
-- geometric_(p) (trials up to the first success, >= 1), log_normal_(mean = 1, std = 2) (exp of
-- a normal draw), cauchy_(median = 0, sigma = 1) and random_([from,] to) (integers in
-- [from, to), from 0 when one bound is given, or only to by name; with none, [0, 2^mantissa]
-- for floats and [0, max] for integers). The tensor keeps its dtype and device. Each takes
-- PyTorch's generator as a last options table, {generator = g} (a tide.Generator), which may
-- stand for the omitted arguments: x:exponential_({generator = g}). Loaded on first use
-- (lua/tide/_lazy_ops.lua).
local core = require("tide.core")
local autograd = require("tide.autograd")
local args = require("tide.op_args")

local Tensor = core.Tensor
local raise = autograd.raise
local check, FLOAT = args.check, args.FLOAT
local written_back = require("tide.aliases").written_back
local generators = require("tide.generator_object")

local M = { functions = {} }

-- a uniform draw in [0, 1) of x's shape on x's device, in float64: the inversions (log of
-- 1 - u, tan near pi/2) keep their precision whatever x's dtype
local function uniform_like(x)
    return core.empty(x.shape, { dtype = "float64", device = x.device }):uniform_()
end

-- the core's rule for every write (tide_check_writable), named after the fill: the draws are
-- made apart and copied in, where copy_ would name itself
local function writable(op, x)
    local shape, strides = x:size(), x:stride()
    if x:numel() == 0 then
        return
    end
    for i = 1, #shape do
        if strides[i] == 0 and shape[i] > 1 then
            raise(("tide: %s: the output tensor is an expanded view (stride 0 at dim %d), so " ..
                "several results would land on one element; call :clone() first"):format(op, i))
        end
    end
end

local function number(op, name, v, default, ok, rule)
    if v == nil then
        return default
    end
    if type(v) ~= "number" or not ok(v) then
        raise(("tide: %s: %s must be %s, got %s"):format(op, name, rule, tostring(v)))
    end
    return v
end

local function positive(v)
    return v > 0 and v < math.huge
end

local function float_target(op, x)
    if not FLOAT[x.dtype] then
        raise(("tide: %s: needs a floating-point tensor, got %s (as PyTorch's); convert with " ..
            ":to(\"float32\")"):format(op, x.dtype))
    end
end

-- fn(), op's draws and write into x, after every check of the arguments: from the generator of
-- opts (nil: tide's), which moves only when fn succeeds
local function drawn(op, x, opts, fn)
    return generators.run(op, generators.option(op, opts), x.device, fn)
end

function Tensor.bernoulli_(x, p, opts, ...)
    args.no_extra("bernoulli_", 3, ...)
    check("bernoulli_", x)
    writable("bernoulli_", x)
    p, opts = generators.take_options(1, p, opts)
    if core.is_tensor(p) then -- recorded with zero gradients, as PyTorch's
        require("tide._same_device")("bernoulli_", x, p) -- named so, not by the lt inside
        require("tide._broadcast_rule").check("bernoulli_", x, p)
        args.probabilities("bernoulli_", "p", p)
        return drawn("bernoulli_", x, opts, function()
            return written_back(x, uniform_like(x):lt(p:to("float64")), p)
        end)
    end
    p = number("bernoulli_", "p", p, 0.5, function(v) return v >= 0 and v <= 1 end,
        "a probability in [0, 1] or a tensor of them")
    return drawn("bernoulli_", x, opts, function()
        return x:copy_(uniform_like(x):lt(p))
    end)
end

function Tensor.exponential_(x, lambd, opts, ...)
    args.no_extra("exponential_", 3, ...)
    check("exponential_", x)
    writable("exponential_", x)
    float_target("exponential_", x)
    lambd, opts = generators.take_options(1, lambd, opts)
    lambd = number("exponential_", "lambd", lambd, 1, positive, "a positive number")
    return drawn("exponential_", x, opts, function()
        return x:copy_(uniform_like(x):neg():log1p():div(-lambd))
    end)
end

function Tensor.geometric_(x, p, opts, ...)
    args.no_extra("geometric_", 3, ...)
    check("geometric_", x)
    writable("geometric_", x)
    p, opts = generators.take_options(1, p, opts)
    if p == nil then
        raise("tide: geometric_: p must be given, a probability in (0, 1]")
    end
    p = number("geometric_", "p", p, nil, function(v) return v > 0 and v <= 1 end,
        "a probability in (0, 1]")
    return drawn("geometric_", x, opts, function()
        if p == 1 then
            return x:fill_(1)
        end
        -- 1 - u is in (0, 1]: its log is finite, and the count at least 1
        local u = uniform_like(x)
        return x:copy_(u:neg():add(1):log():div(math.log(1 - p)):ceil():clamp(1, nil))
    end)
end

function Tensor.log_normal_(x, mean, std, opts, ...)
    args.no_extra("log_normal_", 4, ...)
    check("log_normal_", x)
    writable("log_normal_", x)
    float_target("log_normal_", x)
    mean, std, opts = generators.take_options(2, mean, std, opts)
    mean = number("log_normal_", "mean", mean, 1, function(v) return v == v end, "a number")
    std = number("log_normal_", "std", std, 2, positive, "a positive number")
    return drawn("log_normal_", x, opts, function()
        -- drawn apart and copied in once: a write refused (an expanded x) leaves x as it was
        local draw = core.empty(x.shape, { dtype = "float64", device = x.device })
        return x:copy_(draw:normal_(mean, std):exp_())
    end)
end

function Tensor.cauchy_(x, median, sigma, opts, ...)
    args.no_extra("cauchy_", 4, ...)
    check("cauchy_", x)
    writable("cauchy_", x)
    float_target("cauchy_", x)
    median, sigma, opts = generators.take_options(2, median, sigma, opts)
    median = number("cauchy_", "median", median, 0, function(v) return v == v end, "a number")
    sigma = number("cauchy_", "sigma", sigma, 1, positive, "a positive number")
    return drawn("cauchy_", x, opts, function()
        return x:copy_(uniform_like(x):sub(0.5):mul(math.pi):tan():mul(sigma):add(median))
    end)
end

-- the largest integer each dtype holds exactly (floats: their mantissa's)
local TOP = { float32 = 2 ^ 24, float64 = 2 ^ 53, float16 = 2 ^ 11, bfloat16 = 2 ^ 8,
    int32 = 2 ^ 31 - 1, int64 = 2 ^ 53, uint8 = 255, bool = 1 }

-- the values of each dtype (PyTorch's check_from_to; float32's and float64's any Lua number)
local RANGE = { uint8 = { 0, 255 }, bool = { 0, 1 }, int32 = { -2 ^ 31, 2 ^ 31 - 1 },
    float16 = { -65504, 65504 } }
local function fmt(v)
    return ("%.0f"):format(v)
end

function Tensor.random_(x, from, to, opts, ...)
    args.no_extra("random_", 4, ...)
    check("random_", x)
    writable("random_", x)
    from, to, opts = generators.take_options(2, from, to, opts)
    local function integer(name, v)
        if type(v) ~= "number" or v % 1 ~= 0 then
            raise(("tide: random_: %s must be an integer, got %s"):format(name, tostring(v)))
        end
        return v
    end
    if from == nil and to == nil then
        from, to = 0, (TOP[x.dtype] or 2 ^ 24) + 1
    elseif from == nil then -- random_({to = 5}): PyTorch's from 0
        from, to = 0, integer("to", to)
    elseif to == nil then
        from, to = 0, integer("to", from)
    else
        from, to = integer("from", from), integer("to", to)
    end
    if from >= to then
        raise(("tide: random_: from (%s) must be below to (%s): the draws are in [from, to)")
            :format(tostring(from), tostring(to)))
    end
    -- PyTorch's bounds: from and to - 1 must be values of x's dtype
    local range = RANGE[x.dtype]
    if range then
        local bad = from < range[1] and "from" or to - 1 > range[2] and "to - 1" or nil
        if bad then
            raise(("tide: random_: %s (%s) is out of bounds for %s (its values are %s to %s)")
                :format(bad, fmt(bad == "from" and from or to - 1), x.dtype,
                    fmt(range[1]), fmt(range[2])))
        end
    end
    return drawn("random_", x, opts, function()
        return x:copy_(uniform_like(x):mul(to - from):floor():add(from))
    end)
end

return M
