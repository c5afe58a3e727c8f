-- PyTorch's out= on tide.X functions (tide.tensor_keywords): tide.add(x, y, {out = z}),
-- tide.sum(x, 1, {out = s}), tide.max(x, 1, {out = {values, indices}}), tide.zeros(3, {out = z}).
--
-- The function runs as it would without out, and its result is then written into out: resized
-- to the result's shape when it differs (as PyTorch does), the values cast to out's dtype where
-- PyTorch allows it (tide.can_cast: an int64 result into a float32 out, not a float result into
-- an int64 one). out must be on the inputs' device: out= moves no values. A function of several
-- results takes a list of as many tensors, one for each. Everything is checked before anything
-- is written, and what can be checked before the function runs (out's type, its device against
-- the inputs', gradients) is, so a failed call changes no tensor and draws no random number.
--
-- As PyTorch's, out= is for the functions only (x:add(y, {out = z}) raises as an unknown
-- option) and takes no part in autograd: an input that requires grad, under grad mode, raises.
-- The creation functions (zeros, arange, rand, ...) make out's dtype on out's device.
local core = require("tide.core")
local raise = require("tide.autograd.raise")
local compat = require("tide._compat")

local is_tensor, unpack = core.is_tensor, compat.unpack

-- tide.can_cast, loaded with its lazy module on first use
local function can_cast(from, to)
    return require("tide.dtype_queries").functions.can_cast(from, to)
end

local M = {}

-- the tide.X functions whose torch.X takes out= in PyTorch 1.13 (from its docstrings, and
-- checked by calling each with out=)
M.names = {}
for name in ([[
abs absolute acos acosh add addbmm addcdiv addcmul addmm addmv addr all amax amin aminmax any
arange arccos arccosh arcsin arcsinh arctan arctan2 arctanh argmax argmin asin asinh atan atan2
atanh baddbmm bernoulli bitwise_and bitwise_left_shift bitwise_not bitwise_or bitwise_right_shift
bitwise_xor bmm bucketize cat ceil chain_matmul cholesky cholesky_inverse cholesky_solve clamp
clamp_max clamp_min clip column_stack concat concatenate copysign cos cosh cross cummax cummin
cumprod cumsum deg2rad diag diff digamma div divide dot dstack empty eq erf erfc erfinv exp exp2
expm1 eye fix float_power floor floor_divide fmax fmin fmod frac frexp frobenius_norm full gather
gcd ge geqrf ger greater greater_equal gt hardshrink heaviside histc histogram hstack hypot i0
igamma igammac index_add index_copy index_reduce index_select inner inverse isin isneginf isposinf
kron kthvalue lcm ldexp le lerp less less_equal lgamma linspace log log10 log1p log2 log_softmax
logaddexp logaddexp2 logcumsumexp logical_and logical_not logical_or logical_xor logit logspace
logsumexp lt lu lu_solve lu_unpack masked_select matmul matrix_power max maximum mean median min
minimum mm mode msort mul multinomial multiply mv mvlgamma nan_to_num nanmean nanmedian nanquantile
nansum narrow_copy ne neg negative nextafter nonzero norm normal not_equal nuclear_norm ones ormqr
outer polygamma pow prod qr quantile rad2deg rand randint randn randperm reciprocal remainder
renorm round row_stack rsqrt searchsorted sgn sigmoid sign signbit sin sinc sinh slogdet softmax
sort sqrt square stack std sub subtract sum svd symeig take take_along_dim tan tanh tensordot
threshold topk triangular_solve tril triu true_divide trunc var vdot vstack where xlogy zeros]]):gmatch("%S+") do
    M.names[name] = true
end

-- the creation functions: their result has out's dtype and device unless the call names them
local CREATES = {}
for _, name in ipairs({ "arange", "empty", "eye", "full", "linspace", "logspace", "ones", "rand",
    "randint", "randn", "randperm", "zeros" }) do
    CREATES[name] = true
end

local function describe(v)
    if is_tensor(v) then
        return ("a %s tensor on %s"):format(v.dtype, tostring(v.device))
    end
    return type(v) == "string" and ('"' .. v .. '"') or tostring(v)
end

-- out's tensors: out itself, or the tensors of a list
local function out_tensors(who, out)
    if is_tensor(out) then
        return { out }
    end
    if type(out) == "table" and getmetatable(out) == nil and #out > 0 then
        for i, o in ipairs(out) do
            if not is_tensor(o) then
                raise(("tide: %s: out must be a tensor, or a list of tensors for a function of " ..
                    "several results; out[%d] is %s"):format(who, i, describe(o)))
            end
        end
        return out
    end
    raise(("tide: %s: out must be a tensor, or a list of tensors for a function of several " ..
        "results, got %s"):format(who, describe(out)))
end

local function no_grad_error(who)
    raise(("tide: %s: out= takes no part in autograd, and an input requires grad; call it " ..
        "without out= (its result records the gradient), or under tide.no_grad()"):format(who))
end

-- the tensors among the call's arguments (and in its lists: tide.cat's)
local function each_input(v, n, fn)
    for i = 1, n do
        local a = v[i]
        if is_tensor(a) then
            fn(a)
        elseif type(a) == "table" and getmetatable(a) == nil then
            for _, t in ipairs(a) do
                if is_tensor(t) then
                    fn(t)
                end
            end
        end
    end
end

--- before(who, out, v, n, rest) -> rest: the checks that need no result (out's type; its
--- tensors' requires_grad and device against the inputs'; the inputs' requires_grad); for a
--- creation function, rest (the call's other options, or nil) gains out's dtype and device
function M.before(who, out, v, n, rest)
    local outs = out_tensors(who, out)
    local grad = core.is_grad_enabled()
    for i, o in ipairs(outs) do
        if grad and o.requires_grad then
            raise(("tide: %s: out%s requires grad, and out= takes no part in autograd; pass " ..
                "an out that does not (o:detach()), or call it under tide.no_grad()"):format(who,
                #outs > 1 and "[" .. i .. "]" or ""))
        end
    end
    local device = outs[1].device
    each_input(v, n, function(t)
        if t.device ~= device then
            raise(("tide: %s: out is on %s, the inputs on %s; out= moves no values: pass an out " ..
                "on %s (t:to(\"%s\"))"):format(who, tostring(device), tostring(t.device),
                tostring(t.device), tostring(t.device)))
        end
        if grad and t.requires_grad then
            no_grad_error(who)
        end
    end)
    if CREATES[who] then
        local o = outs[1]
        rest = rest or {}
        if rest.dtype ~= nil and rest.dtype ~= o.dtype then
            raise(("tide: %s: dtype %s does not match out's dtype (%s); leave dtype out, it is " ..
                "out's"):format(who, tostring(rest.dtype), o.dtype))
        end
        rest.dtype = o.dtype
        rest.device = rest.device or device
    end
    return rest
end

-- one result r and its out o: checked, not written
local function check(who, where, o, r)
    if not is_tensor(r) then
        raise(("tide: %s: out= needs a tensor result, and this call returns %s; call it " ..
            "without out="):format(who, describe(r)))
    end
    if r.requires_grad then
        no_grad_error(who)
    end
    if o.device ~= r.device then
        raise(("tide: %s: the result is on %s, out%s on %s; out= moves no values: pass an out on " ..
            "%s"):format(who, tostring(r.device), where, tostring(o.device), tostring(r.device)))
    end
    if r.dtype ~= o.dtype and not can_cast(r.dtype, o.dtype) then
        raise(("tide: %s: the result's dtype %s can't be cast to out%s's %s (as PyTorch's); pass " ..
            "an out of dtype %s"):format(who, r.dtype, where, o.dtype, r.dtype))
    end
end

local function same_shape(a, b)
    local n = a:dim()
    if n ~= b:dim() then
        return false
    end
    for d = 1, n do
        if a:size(d) ~= b:size(d) then
            return false
        end
    end
    return true
end

--- write(who, out, ...) -> out's tensors: the function's results written into out
function M.write(who, out, ...)
    local n = select("#", ...)
    local results = { ... }
    local outs = out_tensors(who, out)
    if n ~= #outs then
        if n == 1 then
            raise(("tide: %s: this call has one result; out must be a tensor, got a list of %d")
                :format(who, #outs))
        end
        raise(("tide: %s: this call has %d results; out must be a list of %d tensors, one for " ..
            "each, got %s"):format(who, n, n, is_tensor(out) and "a tensor"
            or ("a list of %d"):format(#outs)))
    end
    for i = 1, n do
        check(who, n > 1 and "[" .. i .. "]" or "", outs[i], results[i])
        -- an integer result beside others (max's and sort's indices, frexp's exponent) takes
        -- an out of its own dtype only, as PyTorch's ("expected out tensor to have dtype long")
        local r, o = results[i], outs[i]
        if n > 1 and r.dtype ~= o.dtype and (r.dtype == "int64" or r.dtype == "int32") then
            raise(("tide: %s: out[%d] must be %s, as the result it takes (as PyTorch's: " ..
                "expected out tensor to have dtype %s, but got %s)"):format(who, i, r.dtype,
                r.dtype, o.dtype))
        end
    end
    -- neither out nor the result requires grad (checked), so the copy records nothing
    for i = 1, n do
        local o, r = outs[i], results[i]
        if not same_shape(o, r) then
            o:resize_(r:size())
        end
        o:copy_(r)
    end
    return unpack(outs, 1, n)
end

return M
