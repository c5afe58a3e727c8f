-- PyTorch's keyword names of the creation functions, the random draws and the pointwise ops
-- with named parameters (tide.tensor_keywords): tide.arange(0, 10, {step = 2}),
-- tide.linspace(0, 1, {steps = 5, dtype = "float64"}), tide.randint(0, 10, {size = {3}}),
-- x:clamp({min = 0}), tide.dist(x, y, {p = 1}), x:round({decimals = 2}),
-- x:div(y, {rounding_mode = "floor"}), tide.multinomial(p, {num_samples = 2, replacement = true})
local core = require("tide.core")
local raise = require("tide.autograd.raise")
local twice = require("tide.pytorch_args").twice

local is_tensor = core.is_tensor

local CREATE = { "dtype", "device", "requires_grad" }
local RANDOM = { "dtype", "device", "requires_grad", "generator" }
local GENERATOR = { "generator" }

local S = {}

-- ---- creation ----

-- arange(start, end, step): PyTorch's arange(end) is start's place alone, and
-- arange(end=3) by name starts at 0; a step needs an end
S.arange = { first = "start", params = { "end", "step" }, options = CREATE, methods = false,
    call = function(f, start, stop, step, opts)
        if start == nil and stop ~= nil then
            start = 0
        end
        if stop == nil and step ~= nil then
            raise(("tide: arange: step needs an end: tide.arange(0, %s, {step = %s}), " ..
                "not tide.arange(%s, {step = %s})"):format(tostring(start), tostring(step),
                tostring(start), tostring(step)))
        end
        return f(start, stop, step, opts)
    end }
S.linspace = { first = "start", params = { "end", "steps" }, options = CREATE, methods = false }
S.logspace = { first = "start", params = { "end", "steps", "base" }, options = CREATE,
    methods = false }
S.eye = { first = "n", params = { "m" }, options = CREATE, methods = false }
S.full = { first = "size", params = { "fill_value" }, options = CREATE, methods = false }
S.full_like = { first = "input", params = { "fill_value" },
    options = { "dtype", "device", "requires_grad", "memory_format" }, methods = false }
S.tril_indices = { first = "row", params = { "col", "offset" }, options = { "dtype", "device" },
    methods = false }
S.triu_indices = { first = "row", params = { "col", "offset" }, options = { "dtype", "device" },
    methods = false }

-- ---- random draws ----

-- randint([low = 0,] high, size): PyTorch's randint(10, (3,)) is (high, size) positionally,
-- randint(10, size=(3,)) high with the size by name, randint(0, 10, size=(3,)) all three,
-- randint(high=10, size=(3,)) every one by name (low 0)
S.randint = { first = "low", params = { "high", "size" }, options = RANDOM, methods = false,
    call = function(f, low, high, size, opts)
        if low == nil and high ~= nil then
            low = 0
        end
        if type(high) == "table" and not is_tensor(high) then -- (high, size[, {...}])
            if size ~= nil then
                twice("randint", "size", 3)
            end
            return f(low, high, opts)
        end
        if size == nil then
            raise("tide: randint: give the size: tide.randint(0, 10, {size = {3}}) or " ..
                "tide.randint(0, 10, {3})")
        end
        if high == nil then -- randint(10, {size = {3}}): low's place is high
            return f(low, size, opts)
        end
        return f(low, high, size, opts)
    end }
-- randint_like(t, [low = 0,] high): one integer after t is high
S.randint_like = { params = { "low", "high" }, options = { "dtype", "device", "requires_grad",
    "memory_format" }, methods = false,
    call = function(f, t, low, high, opts)
        if high == nil then
            return f(t, low, opts)
        end
        return f(t, low == nil and 0 or low, high, opts)
    end }
-- normal(mean, std[, size]): std 1 with a tensor mean (PyTorch's default); the tensor overloads
-- take only {generator =} after std
S.normal = { first = "mean", params = { "std", "size" }, options = RANDOM, methods = false,
    call = function(f, mean, std, size, opts)
        if size == nil then
            return f(mean, std, opts)
        end
        return f(mean, std, size, opts)
    end }
S.bernoulli = { params = { "p" }, options = GENERATOR }
S.multinomial = { params = { "num_samples", "replacement" }, options = GENERATOR,
    call = function(f, probs, n, replacement, opts)
        if replacement == nil then
            return f(probs, n, opts)
        end
        return f(probs, n, replacement, opts)
    end }
-- poisson(input, generator=None): PyTorch's generator is a parameter, tide's an option
S.poisson = { params = { "generator" }, methods = false,
    call = function(f, rates, g)
        return f(rates, g ~= nil and { generator = g } or nil)
    end }

-- ---- pointwise ----

for _, name in ipairs({ "clamp", "clip" }) do
    S[name] = { params = { "min", "max" } }
    S[name .. "_"] = { params = { "min", "max" }, functions = false }
end
S.clamp_min = { params = { "min" } }
S.clamp_min_ = { params = { "min" }, functions = false }
S.clamp_max = { params = { "max" } }
S.clamp_max_ = { params = { "max" }, functions = false }
S.nan_to_num = { params = { "nan", "posinf", "neginf" } }
S.nan_to_num_ = { params = { "nan", "posinf", "neginf" }, functions = false }
-- torch.where(condition, input, other); the method x:where(condition, other) has x as input
-- (positional only)
S.where = { first = "condition", params = { "input", "other" }, methods = false }
S.lerp = { params = { "end", "weight" } }
S.lerp_ = { params = { "end", "weight" }, functions = false }
for _, name in ipairs({ "addcmul", "addcdiv" }) do
    S[name] = { params = { "tensor1", "tensor2" }, options = { "value" } }
    S[name .. "_"] = { params = { "tensor1", "tensor2" }, options = { "value" },
        functions = false }
end
S.dist = { params = { "other", "p" } }
-- cdist(x1, x2, p=2.0, compute_mode=...): the method checks and takes both
S.cdist = { params = { "x2", "p", "compute_mode" },
    call = function(f, x1, x2, p, mode)
        if p == nil and mode == nil then
            return f(x1, x2)
        end
        return f(x1, x2, { p = p, compute_mode = mode })
    end }
S.cross = { params = { "other", "dim" } }
for _, name in ipairs({ "trapezoid", "trapz", "cumulative_trapezoid" }) do
    S[name] = { params = { "x" }, options = { "dx", "dim" }, methods = false }
end
-- histc(bins=100, min=0, max=0), bincount(weights=None, minlength=0): tide's options table
S.histc = { params = { "bins", "min", "max" },
    call = function(f, x, bins, lo, hi)
        return f(x, { bins = bins, min = lo, max = hi })
    end }
-- histogram(bins=100, *, range=None, weight=None, density=False): tide.histograms' options
S.histogram = { params = { "bins" }, options = { "range", "weight", "density" } }
S.bincount = { params = { "weights", "minlength" },
    call = function(f, x, weights, minlength)
        return f(x, { weights = weights, minlength = minlength })
    end }
S.bucketize = { params = { "boundaries" }, options = { "out_int32", "right" }, methods = false }
-- searchsorted(sorted_sequence, input): PyTorch 1.13's parser names the values input
S.searchsorted = { params = { "values" }, aliases = { input = "values" },
    options = { "out_int32", "right", "side", "sorter" }, methods = false }
S.isin = { first = "elements", params = { "test_elements" },
    options = { "assume_unique", "invert" },
    methods = false }
for _, name in ipairs({ "isclose", "allclose" }) do
    S[name] = { params = { "other", "rtol", "atol", "equal_nan" } }
end

-- round(decimals=0) and div(other, rounding_mode=None): parameters tide's core ops lack
-- (tide.rounding_modes)
local function decimals_of(opts)
    return opts and opts.decimals
end
S.round = { params = {}, options = { "decimals" },
    call = function(f, x, opts)
        local d = decimals_of(opts)
        if d == nil then
            return f(x)
        end
        return require("tide.rounding_modes").round("round", x, d)
    end }
S.round_ = { params = {}, options = { "decimals" }, functions = false,
    call = function(f, x, opts)
        local d = decimals_of(opts)
        if d == nil then
            return f(x)
        end
        return require("tide.rounding_modes").round_("round_", x, d)
    end }
for _, name in ipairs({ "div", "divide" }) do
    S[name] = { params = { "other" }, options = { "rounding_mode" }, empty_options = true,
        call = function(f, x, other, opts)
            if opts == nil or opts.rounding_mode == nil then
                return f(x, other)
            end
            return require("tide.rounding_modes").div("div", x, other, opts.rounding_mode)
        end }
    S[name .. "_"] = { params = { "other" }, options = { "rounding_mode" }, functions = false,
        empty_options = true, call = function(f, x, other, opts)
            if opts == nil or opts.rounding_mode == nil then
                return f(x, other)
            end
            return require("tide.rounding_modes").div_("div_", x, other, opts.rounding_mode)
        end }
end

return S
