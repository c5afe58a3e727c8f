-- tide.nn._args: the argument checks of tide.nn.functional and the files that add to it
-- (_functional_*.lua). Errors name the function and point at the user's line (autograd.raise).
local compat = require("tide._compat")
local core = require("tide.core")
local autograd = require("tide.autograd")
local I = require("tide.nn._internal")
local op_args = require("tide.op_args")
local raise = autograd.raise
local is_tensor = autograd.is_tensor

local NO_OPTIONS = {}
local FLOAT_DTYPES = { float32 = true, float64 = true, float16 = true, bfloat16 = true }

local function tensor_arg(x, who, what)
    if not is_tensor(x) then
        raise(string.format("tide: %s: expected %s to be a tensor, got %s", who, what, type(x)))
    end
    return x
end

local function optional_tensor(x, who, what)
    if x ~= nil then
        tensor_arg(x, who, what)
    end
    return x
end

-- the options table (checked against known and not_yet), or {} when opts is nil
local function options(opts, who, known, not_yet)
    if opts == nil then
        return NO_OPTIONS
    end
    if type(opts) ~= "table" or is_tensor(opts) then
        raise(string.format("tide: %s: expected an options table, got %s", who,
            is_tensor(opts) and "a tensor" or type(opts)))
    end
    core._check_options(opts, who, known, not_yet)
    return opts
end

-- a number given in place of the options table stands for the option `key`
local function number_or_options(v, key, who, known, not_yet)
    if type(v) == "number" then
        return { [key] = v }
    end
    return options(v, who, known, not_yet)
end

local function number_opt(v, default, who, what)
    if v == nil then
        return default
    end
    if type(v) ~= "number" then
        raise(string.format("tide: %s: expected %s to be a number, got %s", who, what, type(v)))
    end
    return v
end

local function int_arg(v, who, what, min)
    if not compat.is_integer(v) or v < min then
        raise(string.format("tide: %s: expected %s to be an integer >= %d, got %s", who, what,
            min, tostring(v)))
    end
    return v
end

local function bool_opt(v, default, who, what)
    if v == nil then
        return default
    end
    if type(v) ~= "boolean" then
        raise(string.format("tide: %s: expected %s to be a boolean, got %s", who, what, type(v)))
    end
    return v
end

local function dim_arg(v, who)
    if v == nil then
        return -1
    end
    if not compat.is_integer(v) then
        raise(string.format("tide: %s: expected dim to be an integer, got %s", who, tostring(v)))
    end
    return v
end

local function probability(p, who)
    if type(p) ~= "number" or p < 0 or p > 1 then
        raise(string.format("tide: %s: expected a probability p in [0, 1], got %s", who,
            tostring(p)))
    end
    return p
end

-- a dropout's input and its options {p = 0.5, training =, inplace =} (or a number, p):
-- returns the options and p
local DROPOUT_OPTIONS = { "p", "training", "inplace" }
local function dropout_args(input, opts, who)
    tensor_arg(input, who, "input")
    local o = number_or_options(opts, "p", who, DROPOUT_OPTIONS)
    return o, probability(o.p == nil and 0.5 or o.p, who)
end

-- softmax's, log_softmax's and softmin's input and dim from their options {dim =, dtype =,
-- _stacklevel =}: with dtype (a float dtype) the input is cast first, as PyTorch's; _stacklevel
-- (Python's warning level, PyTorch's third positional) is checked and unused
-- Without a dim, PyTorch 1.13's deprecated implicit choice (_get_softmax_dim), with its warning
-- once: the first dim of a 0-, 1- or 3-D input, the second of any other (a 4-D batch of
-- images: the channels). A 2-D input's is its last dim, as before.
local function implicit_softmax_dim(input, who)
    require("tide._warn").once("implicit_dim." .. who, "Implicit dimension choice for " .. who ..
        " has been deprecated. Change the call to include dim=X as an argument.")
    local n = input:dim()
    if n == 0 then
        return -1
    end
    return (n == 1 or n == 3) and 1 or 2
end

local function softmax_args(input, opts, who)
    tensor_arg(input, who, "input")
    if type(opts) == "number" then -- F.softmax(x, dim): the usual call, no table
        return input, dim_arg(opts, who)
    end
    local o = options(opts, who, { "dim", "_stacklevel", "dtype" })
    if o._stacklevel ~= nil then
        int_arg(o._stacklevel, who, "_stacklevel", 0)
    end
    local dim = o.dim == nil and implicit_softmax_dim(input, who) or dim_arg(o.dim, who)
    if o.dtype ~= nil and o.dtype ~= input.dtype then
        if not FLOAT_DTYPES[o.dtype] then
            raise(string.format("tide: %s: expected dtype to be a floating-point dtype " ..
                "(\"float32\", \"float64\", \"float16\" or \"bfloat16\"), got %s", who,
                tostring(o.dtype)))
        end
        input = input:to(o.dtype)
    end
    return input, dim
end

-- dropout2d's spatial dims: 2, or 0 for a 2-D input {N, C}, PyTorch 1.13's deprecated case
-- (each element its own channel), warned about once with PyTorch's words
local DROPOUT2D_2D = "dropout2d: Received a 2-D input to dropout2d, which is deprecated and " ..
    "will result in an error in a future release. To retain the behavior and silence this " ..
    "warning, please use dropout instead. Note that dropout2d exists to provide channel-wise " ..
    "dropout on inputs with 2 spatial dimensions, a channel dimension, and an optional batch " ..
    "dimension (i.e. 3D or 4D inputs)."
local function dropout2d_spatial(input)
    if input:dim() == 2 then
        require("tide._warn").once("dropout2d.2d", DROPOUT2D_2D)
        return 0
    end
    return 2
end

local function same_device(x, y, who, what)
    if y ~= nil then
        I.check_device(x, y, who, what)
    end
end

local function shape_str(t)
    return I.shape_str(t.shape)
end

-- f(input), or f written into input with {inplace = true}
local function maybe_inplace(input, o, who, f)
    if bool_opt(o.inplace, false, who, "inplace") then
        return I.inplace(input, f, who)
    end
    return f(input)
end

-- dropout1d's and dropout3d's body (PyTorch's feature dropout): input of `spatial` dims after
-- its channels, with or without the batch dim (`layout` says which, in the error); in training
-- whole channels zeroed with probability p, the rest scaled by 1/(1-p); the input otherwise
local function feature_dropout(input, opts, who, spatial, layout)
    local o, p = dropout_args(input, opts, who)
    local nd = input:dim()
    if nd ~= spatial + 1 and nd ~= spatial + 2 then
        raise("tide: " .. who .. ": expected input " .. layout .. ", got " .. shape_str(input))
    end
    if not bool_opt(o.training, true, who, "training") or p == 0 then
        return input
    end
    return maybe_inplace(input, o, who, function(x)
        return I.channel_dropout(x, p, spatial)
    end)
end

-- SELU's alpha times its scale: the value alpha dropout's dropped elements take before the
-- affine correction (PyTorch's constant)
local ALPHA_PRIME = 1.7580993408473766

-- alpha_dropout's and feature_alpha_dropout's body: in training (default false, PyTorch's
-- default here) each element, or with per_channel each whole channel of input {N, C, *} (one
-- draw per sample and channel), is kept with probability 1 - p, the others set to SELU's
-- negative saturation, then all scaled and shifted so that zero mean and unit variance stay
-- (PyTorch's a and b); with p = 1 zeros, as PyTorch's. The input itself otherwise.
local function alpha_dropout(input, opts, who, per_channel)
    local o, p = dropout_args(input, opts, who)
    if not bool_opt(o.training, false, who, "training") or p == 0 or input:numel() == 0 then
        return input
    end
    if per_channel and input:dim() < 2 then
        raise("tide: " .. who .. ": expected input {N, C, *} with at least 2 dims (channels " ..
            "to drop), got " .. shape_str(input))
    end
    return maybe_inplace(input, o, who, function(x)
        if p == 1 then
            return x:mul(0)
        end
        local shape = x.shape
        if per_channel then
            for d = 3, #shape do
                shape[d] = 1
            end
        end
        local a = 1 / math.sqrt((ALPHA_PRIME * ALPHA_PRIME * p + 1) * (1 - p))
        local keep = core.rand(shape, { device = x.device, dtype = x.dtype }):ge(p):to(x.dtype)
        local b = keep:sub(1):mul(ALPHA_PRIME * a):add(ALPHA_PRIME * a * p)
        return x:mul(keep:mul(a)):add(b)
    end)
end

-- a norm's per-channel tensors ({tensor or nil, name} pairs: running_mean, running_var, weight,
-- bias): c elements each (the input's channels), on input's device
local function channel_tensors(who, input, c, list)
    for _, t in ipairs(list) do
        if t[1] then
            if t[1]:numel() ~= c then
                raise(string.format("tide: %s: expected %s with %d elements (the input's " ..
                    "channels), got %s", who, t[2], c, shape_str(t[1])))
            end
            same_device(input, t[1], who, t[2])
        end
    end
end

local P = require("tide.pytorch_args")
local by_name = P.is_options

-- PyTorch's optional parameters of F.<who> as Python takes them: `names` by position, in
-- PyTorch's order, after the `nfixed` required arguments; then, or in place of any of them, one
-- table by name. A name given both ways raises, so does anything after the table or past the
-- names (op_args.no_extra: a trailing nil is an omitted argument). Returns a fresh table of the
-- options (its keys are checked by the function that reads it).
local function positional(who, nfixed, names, ...)
    local o = {}
    for k = 1, select("#", ...) do
        local v = select(k, ...)
        if by_name(v) then
            op_args.no_extra(who, nfixed + k, select(k + 1, ...))
            for key, value in pairs(v) do
                if o[key] ~= nil then
                    P.twice(who, key, nfixed + P.position(names, key))
                end
                o[key] = value
            end
            return o
        end
        if k > #names then
            op_args.no_extra(who, nfixed + #names, select(k, ...))
            return o
        end
        if v ~= nil then
            o[names[k]] = v
        end
    end
    return o
end

-- body(fixed..., passed..., options) called PyTorch's way: body's own form (its `nfixed`
-- required arguments, then an options table) also takes the optional parameters `names` by
-- position (positional above); those in `passed` (a conv's bias) go to body by position after
-- the fixed ones, the rest in the table (nil when empty)
local pack, unpack = compat.pack, compat.unpack
local function pytorch_form(who, nfixed, names, passed, body, scalar_first)
    local npassed, first = #passed, names[1]
    return function(...)
        local n = select("#", ...)
        if n <= nfixed then
            return body(...)
        end
        if n == nfixed + 1 and npassed == 0 then
            local last = select(n, ...)
            -- body's own form as it stands (nothing optional, or one options table): no copy
            if last == nil or by_name(last) or (scalar_first and type(last) == "number") then
                return body(...)
            end
            -- the one optional parameter PyTorch scripts pass most (softmax's dim, dropout's
            -- p, an activation's inplace), without the general path's copies
            if nfixed == 1 and type(last) ~= "table" then
                return body((...), { [first] = last })
            end
        end
        local a = pack(...)
        local o = positional(who, nfixed, names, unpack(a, nfixed + 1, math.max(a.n, nfixed)))
        for i, name in ipairs(passed) do
            a[nfixed + i] = o[name]
            o[name] = nil
        end
        a[nfixed + npassed + 1] = next(o) ~= nil and o or nil
        return body(unpack(a, 1, nfixed + npassed + 1))
    end
end

local arity = op_args.arity

-- f, raising for an argument past the parameters it declares (a fixed parameter list drops
-- extras silently, op_args.no_extra's message); a function ending in `...` checks its own
local function strict(who, f)
    local n, vararg = arity(f)
    if not n or vararg then
        return f
    end
    return function(...)
        if select("#", ...) > n then
            op_args.no_extra(who, n, select(n + 1, ...))
        end
        return f(...)
    end
end

local function pair_opt(v, default, who, what, min)
    local a, b = I.pair(v or default, who, what)
    return int_arg(a, who, what, min), int_arg(b, who, what, min)
end

return {
    NO_OPTIONS = NO_OPTIONS, FLOAT_DTYPES = FLOAT_DTYPES, tensor_arg = tensor_arg,
    optional_tensor = optional_tensor, options = options, number_or_options = number_or_options,
    number_opt = number_opt, int_arg = int_arg, bool_opt = bool_opt, dim_arg = dim_arg,
    probability = probability, same_device = same_device, shape_str = shape_str,
    maybe_inplace = maybe_inplace, pair_opt = pair_opt, channel_tensors = channel_tensors,
    dropout_args = dropout_args, feature_dropout = feature_dropout, alpha_dropout = alpha_dropout,
    by_name = by_name, positional = positional, pytorch_form = pytorch_form, arity = arity,
    strict = strict, softmax_args = softmax_args, dropout2d_spatial = dropout2d_spatial,
}
