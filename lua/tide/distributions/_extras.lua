-- tide.distributions._extras: what the third batch's classes share (FisherSnedecor,
-- LKJCholesky, MixtureSameFamily, Multinomial, NegativeBinomial, VonMises, Wishart,
-- LowRankMultivariateNormal): PyTorch's validate_args option, expand's shape check and copy,
-- the support as a constraint (tide.distributions.constraints', by name) and the dtype
-- constants (finfo).
local autograd = require("tide.autograd")
local args = require("tide.op_args")
local raise = autograd.raise
local is_tensor = autograd.is_tensor
local unpack = require("tide._compat").unpack

local X = {}

-- (the transforms' tables: PyTorch's torch.finfo eps and tiny)
X.EPS = require("tide.distributions.transforms._util").EPS
X.TINY = require("tide.distributions.transforms._util").TINY

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

-- the support: tide.distributions.constraints' constraint called name (a parametrized one
-- made with the arguments: multinomial's upper bound)
function X.support(name, ...)
    local c = require("tide.distributions.constraints")[name]
    if select("#", ...) > 0 then
        return c(...)
    end
    return c
end

-- raises unless value (a tensor) lies in the constraint name, as the call who
function X.require_in(name, value, who, what, ...)
    local c = X.support(name, ...)
    local ok = autograd.no_grad(function()
        return c:check(value:detach())
    end)
    if ok:numel() > 0 and not ok:all():item() then
        raise(("tide: %s: %s"):format(who, what))
    end
end

return X
