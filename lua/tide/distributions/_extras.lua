-- tide.distributions._extras: what the third batch's classes share (FisherSnedecor,
-- LKJCholesky, MixtureSameFamily, Multinomial, NegativeBinomial, VonMises, Wishart,
-- LowRankMultivariateNormal): PyTorch's validate_args option, expand's shape check and copy,
-- the support as a constraint (tide.distributions.constraints' when it has the name, else a
-- small one of this file's with PyTorch's check), and the dtype constants (finfo).
local autograd = require("tide.autograd")
local args = require("tide.op_args")
local raise = autograd.raise
local is_tensor = autograd.is_tensor
local unpack = require("tide._compat").unpack

local X = {}

X.EPS = { float64 = 2.220446049250313e-16, float32 = 1.1920928955078125e-07,
    float16 = 0.0009765625, bfloat16 = 0.0078125 }
X.TINY = { float64 = 2.2250738585072014e-308, float32 = 1.1754943508222875e-38,
    float16 = 6.103515625e-05, bfloat16 = 1.1754943508222875e-38 }

-- o.validate_args as a flag: nil and true validate, false does not
function X.validate_flag(who, o)
    local v = o.validate_args
    if v ~= nil and type(v) ~= "boolean" then
        raise(("tide: %s: validate_args must be true or false, got %s"):format(who, type(v)))
    end
    return v ~= false
end

-- the options table after n positional parameters ({validate_args =}; nil for none): the flag
function X.trailing(who, n, opts, ...)
    args.no_extra(who, n + 1, ...)
    if opts ~= nil and (type(opts) ~= "table" or is_tensor(opts)) then
        raise(("tide: %s: expected an options table such as {validate_args = false} after " ..
            "the %d parameters, got %s"):format(who, n, is_tensor(opts) and "a tensor" or
            type(opts)))
    end
    return X.validate_flag(who, args.options(who, opts, { "validate_args" },
        "{validate_args = false}"))
end

-- the broadcast of the shapes (lists of sizes), or nil when they do not broadcast
function X.broadcast_shapes(...)
    local out = {}
    for _, s in ipairs({ ... }) do
        local n, m = #out, #s
        local r = {}
        for i = 1, math.max(n, m) do
            local a, b = out[n - i + 1] or 1, s[m - i + 1] or 1
            if a ~= b and a ~= 1 and b ~= 1 then
                return nil
            end
            r[math.max(n, m) - i + 1] = a == 1 and b or a
        end
        out = r
    end
    return out
end

-- true when d is an instance of cls or of a class extended from it
function X.is_instance(d, cls)
    return require("tide.distributions.ExponentialFamily").is_instance(d, cls)
end

-- the new batch shape of d:expand(batch_shape), checked: a list of sizes to which the batch
-- broadcasts (PyTorch's Tensor.expand rule)
function X.expand_shape(d, batch_shape)
    local who = d.__name .. ".expand"
    if type(batch_shape) ~= "table" or is_tensor(batch_shape) then
        raise(("tide: %s: the batch shape must be a list of sizes such as {3}, got %s")
            :format(who, is_tensor(batch_shape) and "a tensor" or type(batch_shape)))
    end
    args.check_list(who, batch_shape, "the batch shape")
    local out = {}
    for i, s in ipairs(batch_shape) do
        out[i] = args.integer(who, s, "a batch size")
    end
    local old, n, m = d.batch_shape, #out, #d.batch_shape
    local ok = n >= m
    for i = 1, m do
        local a, b = old[m - i + 1], out[n - i + 1]
        ok = ok and (a == b or a == 1)
    end
    if not ok then
        raise(("tide: %s: the batch shape %s cannot expand to %s; each size must be 1 or " ..
            "the new one, new dims in front"):format(who, args.shape_str(old),
            args.shape_str(out)))
    end
    return out
end

-- a new instance of d's class with d's fields (to be replaced by the expanded ones)
function X.copy(d)
    local new = setmetatable({}, getmetatable(d))
    for k, v in pairs(d) do
        new[k] = v
    end
    return new
end

-- shape .. more (lists of sizes)
function X.concat(shape, more)
    local out = { unpack(shape) }
    for _, s in ipairs(more) do
        out[#out + 1] = s
    end
    return out
end

-- ---- support: PyTorch's constraints by name ----

local function all_last(ok, n) -- ok reduced over its last n dims
    for _ = 1, n do
        ok = ok:all(-1)
    end
    return ok
end

local CHECKS = {
    real = { 0, function(x) return x:eq(x) end },
    positive = { 0, function(x) return x:gt(0) end },
    nonnegative_integer = { 0, function(x) return x:ge(0):logical_and(x:eq(x:floor())) end },
    real_vector = { 1, function(x) return x:eq(x):all(-1) end },
    one_hot = { 1, function(x)
        return x:eq(0):logical_or(x:eq(1)):all(-1):logical_and(x:sum(-1):eq(1))
    end },
    lower_cholesky = { 2, function(x)
        return all_last(x:tril():eq(x), 2):logical_and(all_last(x:diagonal(0, -2, -1):gt(0), 1))
    end },
    corr_cholesky = { 2, function(x)
        local tol = X.EPS[x.dtype] * x:size(-1) * 10
        local unit = all_last((x:norm(2, -1) - 1):abs():le(tol), 1)
        return all_last(x:tril():eq(x), 2):logical_and(all_last(x:diagonal(0, -2, -1):gt(0), 1))
            :logical_and(unit)
    end },
    positive_definite = { 2, function(x)
        local sym = all_last(x:isclose(x:transpose(-2, -1), 0, 1e-6), 2)
        if not sym:all():item() then
            return sym
        end
        local _, info = require("tide.linalg").cholesky_ex(x)
        return info:eq(0)
    end },
}

local Constraint = {}
Constraint.__index = Constraint
function Constraint:__tostring()
    return self.name
end

-- c:check(value): a bool tensor of value's shape less the constraint's event dims
function Constraint:check(value)
    return autograd.no_grad(function()
        return self._check(value:detach())
    end)
end

-- this file's constraint called name (with PyTorch's arguments: multinomial's upper bound)
function X.constraint(name, ...)
    local c = setmetatable({ name = name }, Constraint)
    if name == "multinomial" then
        local bound = ...
        c.upper_bound, c.event_dim, c.is_discrete = bound, 1, true
        c._check = function(x)
            return x:ge(0):all(-1):logical_and(x:sum(-1):le(bound))
        end
        return c
    end
    local spec = assert(CHECKS[name], name)
    c.event_dim, c._check = spec[1], spec[2]
    c.is_discrete = name == "nonnegative_integer" or name == "one_hot"
    return c
end

-- the support: tide.distributions.constraints' constraint called name where it has one, else
-- this file's
function X.support(name, ...)
    local ok, C = pcall(require, "tide.distributions.constraints")
    local c = ok and type(C) == "table" and C[name]
    if c ~= nil and c ~= false then
        local mt = getmetatable(c)
        if select("#", ...) == 0 then
            return c
        elseif type(c) == "function" or (type(mt) == "table" and mt.__call) then
            return c(...) -- (a parametrized constraint: its class)
        end
    end
    return X.constraint(name, ...)
end

-- raises unless value (a tensor) lies in this file's constraint name, as the call who
function X.require_in(name, value, who, what, ...)
    local ok = X.constraint(name, ...):check(value)
    if ok:numel() > 0 and not ok:all():item() then
        raise(("tide: %s: %s"):format(who, what))
    end
end

return X
