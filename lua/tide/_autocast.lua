-- tide._autocast: the state of tide.amp.autocast regions and the caster that applies them.
-- The binding calls the caster for the ops it casts itself (matmul; the op table's
-- AUTOCAST_FP32 rows; softmax), and tide's Lua ops that PyTorch's autocast lists (linear,
-- the convolutions, the norms, the losses) call M.lower / M.fp32 on their arguments when
-- M.on. Casts follow PyTorch's rule: float tensors other than float64 on a device of a type
-- whose region is on; LOWER goes to the region's dtype (float16 or bfloat16), FP32 to
-- float32. A cast is an ordinary recorded `to`, so gradients come back to the float32
-- parameters; the LOWER casts of leaves that require grad (the parameters) are made once a
-- region, as PyTorch's cache does.
local core = require("tide.core")
local compat = require("tide._compat")
local K = core._internal
local P = K.autocast_policies
local is_tensor = core.is_tensor
local version = core.Tensor._version
local raise = require("tide.autograd.raise")

local M = { on = false }

local dtypes = {}         -- device type ("cpu", "cuda") -> the dtype of its region now on
local cache = nil         -- dtype -> {leaf -> its cast}, the region's casts of parameters
local cache_enabled = true
local autograd            -- tide.autograd, at first use (the engine requires this file)
local depth = 0           -- regions entered and not left, on or off

local function target(t, policy)
    local dt = dtypes[t.device.type]
    if not dt then
        return nil
    end
    return policy == P.lower and dt or "float32"
end

local function caster(t, policy)
    local to = target(t, policy)
    local dt = t.dtype
    if not to or dt == to or dt == "float64" or not t:is_floating_point() then
        return t
    end
    if policy == P.lower and cache_enabled and cache and t.requires_grad and t.is_leaf and
        core.is_grad_enabled() then
        local per = cache[to]
        if not per then
            per = setmetatable({}, { __mode = "k" })
            cache[to] = per
        end
        -- keyed by the parameter and its version: an optimizer step inside the region (which
        -- PyTorch's cache would miss) gives a fresh cast of the new values
        local c, v = per[t], version(t)
        autograd = autograd or require("tide.autograd")
        if not c or c.version ~= v then
            c = { cast = autograd.no_grad(function() return t:to(to) end), version = v }
            per[t] = c
        end
        -- the values shared, a node of its own per use: a backward frees only its own (as
        -- PyTorch's cached cast, whose ToCopyBackward saves nothing, a backward through one use
        -- leaves the others' graph whole: several forward and backward passes in one region)
        local out = c.cast:detach()
        autograd.record("to", out, t)
        return out
    end
    return t:to(to)
end

local function cast_all(policy, n, ...)
    if n == 0 then
        return
    end
    local t = ...
    if is_tensor(t) then
        t = caster(t, policy)
    end
    return t, cast_all(policy, n - 1, select(2, ...))
end

-- the arguments, each float tensor cast to the region's dtype (PyTorch's lower-precision list)
function M.lower(...)
    return cast_all(P.lower, select("#", ...), ...)
end

-- the arguments, each float16 or bfloat16 tensor cast to float32 (PyTorch's float32 list)
function M.fp32(...)
    return cast_all(P.fp32, select("#", ...), ...)
end

-- fn with its first argument (a tensor) cast to float32 under autocast: the Lua-written ops
-- of PyTorch's float32 list (cumsum, logsumexp, norm, dist, ...)
function M.fp32_first(fn)
    return function(x, ...)
        if M.on and is_tensor(x) then
            x = caster(x, P.fp32)
        end
        return fn(x, ...)
    end
end

-- whether an op given x and w of different dtypes casts both to one dtype under autocast (a
-- float32 input and float16 weights, say): the layers' dtype check lets them through
function M.same_cast(x, w)
    if not M.on or not is_tensor(x) or not is_tensor(w) then
        return false
    end
    local a, b = x.dtype, w.dtype
    return a ~= "float64" and b ~= "float64" and x:is_floating_point() and
        w:is_floating_point() and dtypes[x.device.type] ~= nil
end

-- binary_cross_entropy's arguments under autocast: refused in a "cuda" region, as PyTorch
-- refuses it there (float16 probabilities near 0 and 1 round away the loss), float32 in a
-- "cpu" one (PyTorch's CPU list)
function M.bce(who, input, target, weight)
    if not (M.on and is_tensor(input)) then
        return input, target, weight
    end
    local kind = input.device.type
    if kind == "cuda" and dtypes.cuda then
        raise(("tide: %s: unsafe under autocast (the log of half-precision probabilities " ..
            "loses too much); use binary_cross_entropy_with_logits (nn.BCEWithLogitsLoss) " ..
            "on the logits, or compute the loss outside the autocast region"):format(who))
    end
    return M.fp32(input, target, weight)
end

-- whether a region of that device type is on, and its dtype
function M.dtype_of(device_type)
    return dtypes[device_type]
end

local function refresh()
    M.on = next(dtypes) ~= nil
    K.set_autocast(M.on and caster or nil)
end

-- whether the parameters' casts are cached now (PyTorch's torch.is_autocast_cache_enabled():
-- true outside every region)
function M.cache_enabled()
    return cache_enabled
end

-- torch.clear_autocast_cache(): drop the casts of parameters kept so far (made again at next use)
function M.clear_cache()
    if cache ~= nil then
        cache = {}
    end
end

-- fn(...) with device_type's region set to dtype (nil: off) and the cache setting (nil: the
-- enclosing region's, as PyTorch's cache_enabled=None); the previous state back afterwards,
-- also on error. The cache lives until the outermost region ends.
function M.run(device_type, dtype, cache_on, fn, ...)
    local prev_dtype, prev_cache = dtypes[device_type], cache_enabled
    dtypes[device_type] = dtype
    if cache_on ~= nil then
        cache_enabled = cache_on
    end
    depth = depth + 1
    if depth == 1 then
        cache = {}
    end
    refresh()
    local r = compat.pack(pcall(fn, ...))
    depth = depth - 1
    dtypes[device_type], cache_enabled = prev_dtype, prev_cache
    if depth == 0 then
        cache = nil
    end
    refresh()
    if not r[1] then
        error(r[2], 0)
    end
    return compat.unpack(r, 2, r.n)
end

-- the regions now on, to run fn under again later (tide.utils.checkpoint's recomputation)
function M.snapshot()
    local s = {}
    for k, v in pairs(dtypes) do
        s[k] = v
    end
    return s
end

-- the regions set to a snapshot's (the others off); returns the previous ones, to swap back.
-- The backward pass runs with none ({}): formulas keep the dtypes the forward gave them.
function M.swap(snap)
    local prev = dtypes
    dtypes = snap
    refresh()
    return prev
end

return M
