-- tide.random_draws: PyTorch's random functions beyond rand/randn/randint, from tide's generator
-- (tide.manual_seed; not PyTorch's sequence): tide.seed() and tide.initial_seed(),
-- tide.normal(mean, std[, size][, opts]) in PyTorch's four overloads, tide.randint_like(t,
-- [low,] high[, opts]), tide.poisson(rates[, opts]) and tide.binomial(count, prob[, opts]);
-- normal, poisson and binomial take PyTorch's generator option (a tide.Generator). Loaded on
-- first use (lua/tide/_lazy_ops.lua).
local core = require("tide.core")
local autograd = require("tide.autograd")
local args = require("tide.op_args")
local compat = require("tide._compat")
local same_device = require("tide._same_device")
local zero_grad_op = require("tide._zero_grad_op")
local generators = require("tide.generator_object")

local raise = autograd.raise
local check, FLOAT, shape_str = args.check, args.FLOAT, args.shape_str
local no_grad = autograd.no_grad

local M = { functions = {} }
local F = M.functions

-- ---- the generator's seed ----

-- tide.initial_seed(): the seed the generator started from (tide.manual_seed's, or tide's
-- default), as an integer: the first 8 bytes of its state, little-endian, read as int64 (a
-- negative seed given to manual_seed comes back as given; beyond 2^53 rounded on 5.1)
function F.initial_seed(...)
    args.no_extra("initial_seed", 0, ...)
    local b = { core._rng_state():byte(1, 8) }
    local lo = b[1] + b[2] * 256 + b[3] * 65536 + b[4] * 16777216
    local hi = b[5] + b[6] * 256 + b[7] * 65536 + b[8] * 16777216
    if hi >= 2147483648 then
        hi = hi - 4294967296
    end
    return hi * 4294967296 + lo
end

local calls = 0

-- tide.seed(): seeds the generator from the clock and a fresh address (not from math.random,
-- whose state is the script's) and returns the seed, below 2^52 so that every Lua holds it
function F.seed(...)
    args.no_extra("seed", 0, ...)
    calls = calls + 1
    local addr = tonumber(tostring({}):match("0x(%x+)") or "0", 16) or 0
    local s = (os.time() % 1048576) * 4294967296 + (math.floor(os.clock() * 1e6) % 65536) * 65536
        + (addr % 65536) + calls * 2654435761
    s = compat.tointeger(math.floor(s % 4503599627370496))
    core.manual_seed(s)
    return s
end

-- ---- normal ----

-- the draw, recorded with zero gradients to mean and std (PyTorch's formulas for normal's
-- tensor overloads): the result requires grad with them, as PyTorch's
local drawn = zero_grad_op("normal_draw")

local NORMAL_OPTIONS = { "dtype", "device", "requires_grad", "generator" }

local function number_arg(what, v)
    if type(v) ~= "number" then
        raise(("tide: normal: %s must be a tensor or a number, got %s"):format(what, type(v)))
    end
    return v
end

-- tide.normal(mean, std[, {generator =}]) with mean or std a tensor (both: broadcast together):
-- a draw of N(mean, std^2) for each element, in their float dtype on their device;
-- tide.normal(mean, std, size[, {dtype =, device =, requires_grad =, generator =}]) with
-- numbers; from the generator's stream when given (a tide.Generator)
function F.normal(mean, std, size, opts, ...)
    local op = "normal"
    if std == nil and core.is_tensor(mean) then -- normal(mean): PyTorch's std = 1
        std = 1
    end
    local mt, st = core.is_tensor(mean), core.is_tensor(std)
    if not mt and not st then
        args.no_extra(op, 4, ...)
        number_arg("mean", mean)
        number_arg("std", std)
        if type(size) ~= "table" then
            raise(("tide: normal: with a number mean and std, give the size: " ..
                "tide.normal(%s, %s, {2, 3}), got %s"):format(tostring(mean), tostring(std),
                type(size)))
        end
        local o = args.options(op, opts, NORMAL_OPTIONS, "{dtype = \"float64\"}")
        if std < 0 or std ~= std then
            raise(("tide: normal: std = %s; expected std >= 0"):format(tostring(std)))
        end
        local dtype = o.dtype or core.get_default_dtype()
        if not FLOAT[dtype] then
            raise(("tide: normal: random values need a floating-point dtype, got %s; pass " ..
                "{dtype = \"float32\"}"):format(tostring(dtype)))
        end
        local r = generators.run(op, o.generator, o.device or core.get_default_device(),
            core.randn, size, { dtype = dtype, device = o.device }):mul(std):add(mean)
        return o.requires_grad and r:requires_grad_(true) or r
    end
    -- a tensor overload: an options table {generator =} may follow (PyTorch's also take out,
    -- which tide has not)
    local gen
    if size ~= nil then
        if type(size) ~= "table" then
            raise(("tide: normal: options must be a table, got %s; with a tensor mean or std " ..
                "the size is theirs"):format(type(size)))
        end
        for k in pairs(size) do
            if k ~= "generator" then
                raise(("tide: normal: unknown option \"%s\"; with a tensor mean or std normal " ..
                    "takes only generator (the draw has their dtype and device)")
                    :format(tostring(k)))
            end
        end
        args.no_extra(op, 3, opts, ...)
        gen = size.generator
        if gen ~= nil then
            generators.check(op, gen)
        end
    end
    if not mt then
        number_arg("mean", mean)
    end
    if not st then
        number_arg("std", std)
    end
    same_device(op, mean, std)
    for _, v in ipairs({ { "mean", mean }, { "std", std } }) do
        if core.is_tensor(v[2]) and not FLOAT[v[2].dtype] then
            raise(("tide: normal: %s must be a floating-point tensor, got %s; convert with " ..
                ":to(\"float32\")"):format(v[1], v[2].dtype))
        end
    end
    local like = mt and mean or std
    local dtype = mt and st and require("tide").result_type(mean, std) or like.dtype
    local shape = like:size()
    if mt and st then
        shape = require("tide").broadcast_shapes(mean:size(), std:size())
    end
    local r = no_grad(function()
        if st then
            if std:numel() > 0 and std:lt(0):logical_or(std:ne(std)):any():item() then
                raise("tide: normal: std has elements below 0 (or NaN); expected std >= 0")
            end
        elseif std < 0 or std ~= std then
            raise(("tide: normal: std = %s; expected std >= 0"):format(tostring(std)))
        end
        local noise = generators.run(op, gen, like.device, core.randn, shape,
            { dtype = dtype, device = like.device })
        return noise:mul(std):add(mean)
    end)
    if autograd.needs_record(mt and mean or nil, st and std or nil) then
        return drawn(r, mt and mean or nil, st and std or nil)
    end
    return r
end

-- ---- randint_like ----

local LIKE_OPTIONS = { "dtype", "device", "requires_grad", "memory_format" }

-- tide.randint_like(t, [low = 0,] high[, {dtype =, device =, requires_grad =, memory_format =}]):
-- integers in [low, high) of t's shape, in t's dtype on t's device unless opts says otherwise
function F.randint_like(t, low, high, opts, ...)
    local op = "randint_like"
    check(op, t)
    if type(high) ~= "number" then -- (t, high[, opts])
        args.no_extra(op, 3, opts, ...)
        low, high, opts = 0, low, high
    else
        args.no_extra(op, 4, ...)
    end
    if type(low) ~= "number" or type(high) ~= "number" then
        raise(("tide: randint_like: high (and low) must be integers, got %s")
            :format(type(high) ~= "number" and type(high) or type(low)))
    end
    local o = args.options(op, opts, LIKE_OPTIONS, "{dtype = \"int64\"}")
    args.memory_format(op, t, o.memory_format)
    local dtype = o.dtype or t.dtype
    if o.requires_grad and not FLOAT[dtype] then
        raise(("tide: randint_like: %s tensors cannot require grad; drop requires_grad")
            :format(tostring(dtype)))
    end
    local r = args.as_op(op, "randint", require("tide.creation_like").functions.randint, low,
        high, t:size(), { dtype = dtype, device = o.device or t.device })
    return o.requires_grad and r:requires_grad_(true) or r
end

-- ---- poisson ----

-- tide.poisson(rates): a Poisson draw for each rate (>= 0, float), in rates' dtype. Rates
-- below 10 by counting uniform draws until their product falls below e^-rate, the others by
-- Hörmann's transformed rejection (PTRS), as PyTorch samples; both run on every element at
-- once, round after round, each element leaving when accepted. Recorded with a zero gradient.
local function poisson_draw(lam)
    local dev = lam.device
    local out = core.zeros(lam:size(), { dtype = "float64", device = dev })
    local small = lam:lt(10)
    -- the product method: count the draws whose running product stays above e^-rate
    local pending = small:logical_and(lam:gt(0))
    local enlam = lam:neg():exp()
    local prod = core.ones(lam:size(), { dtype = "float64", device = dev })
    while pending:any():item() do
        prod = prod * core.rand(lam:size(), { dtype = "float64", device = dev })
        local more = pending:logical_and(prod:gt(enlam))
        out = out + more:to("float64")
        pending = more
    end
    -- PTRS for the large rates
    pending = small:logical_not()
    if pending:any():item() then
        local l = core.where(pending, lam, core.full({}, 10, { dtype = "float64", device = dev }))
        local slam, loglam = l:sqrt(), l:log()
        local b = slam * 2.53 + 0.931
        local a = b * 0.02483 - 0.059
        local invalpha = (b - 3.4):reciprocal() * 1.1328 + 1.1239
        local vr = (b - 2):reciprocal() * -3.6224 + 0.9277
        while pending:any():item() do
            local U = core.rand(l:size(), { dtype = "float64", device = dev }) - 0.5
            local V = core.rand(l:size(), { dtype = "float64", device = dev })
            local us = 0.5 - U:abs()
            local k = ((a * 2 / us + b) * U + l + 0.43):floor()
            local quick = us:ge(0.07):logical_and(V:le(vr))
            local bad = k:lt(0):logical_or(us:lt(0.013):logical_and(V:gt(us)))
            local lhs = V:log() + invalpha:log() - (a / (us * us) + b):log()
            local rhs = l:neg() + k * loglam - (k + 1):lgamma()
            local ok = quick:logical_or(bad:logical_not():logical_and(lhs:le(rhs)))
            ok = ok:logical_and(pending)
            out = core.where(ok, k, out)
            pending = pending:logical_and(ok:logical_not())
        end
    end
    return out
end

local drawn_poisson = zero_grad_op("poisson_draw")

-- tide.poisson(rates[, {generator =}]) or PyTorch's positional tide.poisson(rates, generator)
function F.poisson(rates, opts, ...)
    local op = "poisson"
    args.no_extra(op, 2, ...)
    check(op, rates)
    if generators.is_generator(opts) then
        opts = { generator = opts }
    end
    local gen = generators.option(op, opts)
    args.float_input(op, rates)
    local r = no_grad(function()
        local lam = rates:to("float64")
        if lam:numel() > 0 and lam:lt(0):logical_or(lam:ne(lam)):logical_or(lam:eq(math.huge))
            :any():item() then
            raise(("tide: poisson: rates %s has an element below 0, infinite or NaN; rates " ..
                "must be finite and >= 0"):format(shape_str(rates:size())))
        end
        return generators.run(op, gen, rates.device, poisson_draw, lam):to(rates.dtype)
    end)
    if autograd.needs_record(rates) then
        return drawn_poisson(r, rates)
    end
    return r
end

-- ---- binomial ----

-- tide.binomial(count, prob[, {generator =}]): a Binomial(count, prob) draw for each element of
-- count and prob (float tensors of one dtype, broadcast together; count whole numbers >= 0,
-- prob in [0, 1]), in their dtype, by tide.distributions.Binomial's exact sampler (summed
-- geometric gaps, or BTRS rejection). The result needs no grad (PyTorch's has no gradient).
function F.binomial(count, prob, opts, ...)
    local op = "binomial"
    local P = require("tide.pytorch_args")
    if opts == nil and select("#", ...) == 0 then
        -- torch.binomial(count=c, prob=p, generator=g): all by name, or after count
        local named = prob == nil and P.is_options(count) and next(count) ~= nil and count or
            P.is_options(prob) and next(prob) ~= nil and prob
        if named then
            local o = args.options(op, named, { "count", "prob", "generator" })
            if named == count then
                count = o.count
            end
            prob, opts = o.prob, o.generator ~= nil and { generator = o.generator } or nil
        end
    end
    args.no_extra(op, 3, ...)
    check(op, count)
    check(op, prob, 2)
    local gen = generators.option(op, opts)
    args.float_input(op, count)
    args.float_input(op, prob)
    same_device(op, count, prob)
    if count.dtype ~= prob.dtype then
        raise(("tide: binomial: count is %s, prob %s; convert one with :to(\"%s\")")
            :format(count.dtype, prob.dtype, count.dtype))
    end
    return no_grad(function()
        local n, p = require("tide").broadcast_tensors(count:detach(), prob:detach())
        if n:numel() > 0 and n:lt(0):logical_or(n:ne(n:floor())):logical_or(n:eq(math.huge))
            :any():item() then
            raise(("tide: binomial: count %s has an element that is not a whole number >= 0 " ..
                "(or is infinite or NaN); counts must be whole numbers >= 0"):format(
                shape_str(count:size())))
        end
        if p:numel() > 0 and p:ge(0):logical_and(p:le(1)):logical_not():any():item() then
            raise(("tide: binomial: prob %s has an element outside [0, 1] (or NaN); " ..
                "probabilities must lie in [0, 1]"):format(shape_str(prob:size())))
        end
        local Binomial = require("tide.distributions.Binomial")
        return generators.run(op, gen, count.device, function()
            return Binomial(n, { probs = p }):sample()
        end)
    end)
end

M.names = { "seed", "initial_seed", "normal", "randint_like", "poisson", "binomial" }
return M
