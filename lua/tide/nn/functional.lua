-- nn.functional: the stateless pieces the layers and losses share (initialisation, argument
-- checks, the loss formulas).
local core = require "tide.core"
local autograd = require "tide.autograd"
local raise = autograd.raise

local F = {}

local is_tensor = autograd.is_tensor

-- a leaf parameter drawn from U(-bound, bound) on the default device (PyTorch's default
-- kaiming_uniform(a = sqrt(5)) for weights reduces to bound = 1/sqrt(fan_in), as does the bias)
function F.uniform_param(shape, bound, dtype)
    local p = core.empty(shape, dtype and { dtype = dtype } or nil)
    autograd.no_grad(function()
        p:uniform_(-bound, bound)
    end)
    return p:requires_grad_(true)
end

function F.const_param(shape, value, dtype)
    local p = core.full(shape, value, { dtype = dtype or "float32" })
    return p:requires_grad_(true)
end

function F.shape_str(s)
    return "{" .. table.concat(s, ", ") .. "}"
end

-- true on cpu:0, where reading a value back is free (no transfer, no guard)
function F.on_host(t)
    local d = t.device
    return d.type == "cpu" and d.index == 0
end

function F.check_tensor(x, who, level)
    if not is_tensor(x) then
        raise("tide: " .. who .. ": expected a tensor input, got " .. type(x))
    end
end

function F.check_int(v, what, who, min)
    if math.type(v) ~= "integer" or v < (min or 1) then
        raise("tide: " .. who .. ": expected " .. what .. " to be an integer >= " .. (min or 1) ..
            ", got " .. tostring(v)) -- check_int <- init <- constructor <- user
    end
    return v
end

-- a layer's input on another device than its weight: the core's device error, raised at the
-- user's line (the core would name matmul and point inside the library)
function F.check_device(x, w, who)
    local xd, wd = x.device, w.device
    if xd ~= wd then
        raise(string.format("tide: %s: expected all tensors on the same device, found " ..
            "%s (input) and %s (parameters); move the input with x:to(\"%s\")", who,
            tostring(xd), tostring(wd), tostring(wd)))
    end
end

-- a loss's input and target on different devices: named after the loss, at the user's line
-- (the core would name sub or mul, met somewhere inside the formula)
function F.check_same_device(input, target, who)
    local a, b = input.device, target.device
    if a ~= b then
        raise(string.format("tide: %s: expected input and target on the same device, found " ..
            "%s and %s; move one with :to(\"%s\")", who, tostring(a), tostring(b), tostring(b)))
    end
end

-- (a) or ({a, b}) -> a, b
function F.pair(v, who, what)
    if type(v) == "table" then
        return v[1], v[2] or v[1]
    end
    if math.type(v) ~= "integer" then
        raise("tide: " .. who .. ": expected " .. what .. " to be an integer or {h, w}, got " ..
            tostring(v))
    end
    return v, v
end

local REDUCTIONS = { mean = true, sum = true, none = true }

function F.check_reduction(r, who)
    if not REDUCTIONS[r] then
        raise("tide: " .. who .. ": unknown reduction '" .. tostring(r) ..
            "'; use \"mean\", \"sum\" or \"none\"")
    end
    return r
end

local function reduce(loss, reduction, who)
    if reduction == nil or reduction == "mean" then
        return loss:mean()
    elseif reduction == "sum" then
        return loss:sum()
    elseif reduction == "none" then
        return loss
    end
    raise("tide: " .. who .. ": unknown reduction '" .. tostring(reduction) ..
        "'; use \"mean\", \"sum\" or \"none\"")
end

-- one-hot bool [N, C] from 1-based class targets [N], with the checks both losses share
local function onehot_targets(input, target, who)
    if not is_tensor(input) or not is_tensor(target) then
        raise("tide: " .. who .. ": expected (input, target) tensors")
    end
    F.check_same_device(input, target, who)
    if input:dim() ~= 2 then
        raise("tide: " .. who .. ": expected input of shape {N, C}, got " ..
            F.shape_str(input.shape))
    end
    local n, c = input:size(1), input:size(2)
    local tdt = target.dtype
    if tdt ~= "int64" and tdt ~= "int32" then
        raise("tide: " .. who .. ": expected integer class targets (int64, 1-based), " ..
            "got " .. tdt .. "; convert with target:long()")
    end
    if target:dim() ~= 1 or target:size(1) ~= n then
        raise("tide: " .. who .. ": expected target of shape {" .. n .. "} for input " ..
            F.shape_str(input.shape) .. ", got " .. F.shape_str(target.shape))
    end
    local classes = core.arange(1, c + 1, { device = target.device, dtype = tdt })
    local onehot = target:view(n, 1):eq(classes:view(1, c))
    -- a target outside 1..C matches no class. On the host one cheap count finds it; elsewhere
    -- reading it back would be an implicit transfer (and a sync) per step, so the caller
    -- poisons the loss instead (a NaN, like CUDA's device-side assert without the sync)
    local poison
    if n > 0 then
        if F.on_host(target) then
            if onehot:sum():item() ~= n then
                local lo, hi = target:min():item(), target:max():item()
                local bad = lo < 1 and lo or hi
                raise(string.format("tide: %s: target %d out of range for %d " ..
                    "classes; class targets are 1-based, in 1..%d", who,
                    math.tointeger(bad) or bad, c, c))
            end
        else
            poison = onehot:sum():to(input.dtype):sub(n - 1):log() -- 0 when all are in range
        end
    end
    return onehot, poison
end


-- cross entropy = -log_softmax(x)[target]: the log-softmax is one fused, stable op
function F.cross_entropy(input, target, reduction)
    local onehot, poison = onehot_targets(input, target, "CrossEntropyLoss")
    local loss
    if reduction == nil or reduction == "mean" or reduction == "sum" then
        loss = autograd.cross_entropy(input, onehot, reduction ~= "sum")
    else
        loss = reduce(input:log_softmax(2):mul(onehot):sum(2):neg(), reduction, "CrossEntropyLoss")
    end
    return poison and loss:add(poison) or loss
end

function F.nll_loss(input, target, reduction)
    local onehot, poison = onehot_targets(input, target, "NLLLoss")
    local nll = input:mul(onehot)
    local loss
    if reduction == nil or reduction == "mean" then
        loss = nll:sum():mul(-1 / input:size(1))
    else
        loss = reduce(nll:sum(2):neg(), reduction, "NLLLoss")
    end
    return poison and loss:add(poison) or loss
end

local function same_shape_check(input, target, who)
    if not is_tensor(input) or not is_tensor(target) then
        raise("tide: " .. who .. ": expected (input, target) tensors")
    end
    F.check_same_device(input, target, who)
    local a, b = input.shape, target.shape
    local same = #a == #b
    for i = 1, #a do
        same = same and a[i] == b[i]
    end
    if not same then
        raise("tide: " .. who .. ": expected target of the input's shape " ..
            F.shape_str(a) .. ", got " .. F.shape_str(b))
    end
end

function F.mse_loss(input, target, reduction)
    same_shape_check(input, target, "MSELoss")
    local d = input:sub(target)
    return reduce(d:mul(d), reduction, "MSELoss")
end

-- max(x, 0) - x*y + log(1 + exp(-|x|)): stable for large |x|
function F.binary_cross_entropy_with_logits(input, target, reduction)
    same_shape_check(input, target, "BCEWithLogitsLoss")
    local loss = input:relu():sub(input:mul(target)):add(input:abs():neg():exp():add(1):log())
    return reduce(loss, reduction, "BCEWithLogitsLoss")
end

return F
