-- tide.nn.functional: the user-facing functions of docs/API.md ("nn.functional"). Each checks
-- its arguments (errors name the function and point at the user's line), rejects unknown
-- option keys, and runs the same body as the matching module (tide.nn._internal,
-- tide.nn._fused). Required arguments are positional; optional ones come in a last options
-- table (a plain number is accepted for the one a PyTorch user passes positionally: p, alpha,
-- negative_slope, num_classes).
local compat = require("tide._compat")
local idiv = compat.idiv
local core = require("tide.core")
local autocast = require("tide._autocast")
local K = core._internal -- the internal kernels (tide._internal in docs/API.md)
local autograd = require("tide.autograd")
local I = require("tide.nn._internal")
local args = require("tide.op_args")
local fused = require("tide.nn._fused")
local raise = autograd.raise
local warn = require("tide._warn")

local F = {}

-- the argument checks every functional shares (also the files below that add to F)
local A = require("tide.nn._args")
local FLOAT_DTYPES = A.FLOAT_DTYPES
local tensor_arg, optional_tensor, options = A.tensor_arg, A.optional_tensor, A.options
local number_or_options, number_opt, int_arg = A.number_or_options, A.number_opt, A.int_arg
local bool_opt, dim_arg, probability = A.bool_opt, A.dim_arg, A.probability
local same_device, shape_str, maybe_inplace = A.same_device, A.shape_str, A.maybe_inplace
local pair_opt = A.pair_opt

-- ---- activations ----

-- {inplace = false}: with true the result is written into input (autograd's in-place rules:
-- not on a leaf that requires grad), here and in each function that takes the option
function F.relu(input, opts)
    tensor_arg(input, "relu", "input")
    if bool_opt(options(opts, "relu", { "inplace" }).inplace, false, "relu", "inplace") then
        return I.inplace(input, function(x)
            return x:relu()
        end, "relu")
    end
    return input:relu()
end

-- F.sigmoid and F.tanh are deprecated in PyTorch 1.13, which warns (once, by Python's default
-- filter) and computes them: so does tide, after checking the input
function F.sigmoid(input)
    tensor_arg(input, "sigmoid", "input")
    warn.once("F.sigmoid", "nn.functional.sigmoid is deprecated. Use torch.sigmoid instead.")
    return input:sigmoid()
end

function F.tanh(input)
    tensor_arg(input, "tanh", "input")
    warn.once("F.tanh", "nn.functional.tanh is deprecated. Use torch.tanh instead.")
    return input:tanh()
end

-- The activations below run the kernel row activation (tide.nn._fused.activation: one pass,
-- one node named as PyTorch's, its gradient the row activation_backward); the composite each
-- passes is the same function by ops, for a dtype or device without the row and for the
-- gradient's own graph (create_graph).

-- x * sigmoid(x)
local function silu_ops(x)
    return x:mul(x:sigmoid())
end
function F.silu(input, opts)
    tensor_arg(input, "silu", "input")
    return maybe_inplace(input, options(opts, "silu", { "inplace" }), "silu", function(x)
        return fused.activation("silu", x, silu_ops, "SiluBackward0")
    end)
end

-- glu(input[, dim = -1]): a * sigmoid(b), a and b the two halves of input along dim
function F.glu(input, dim, opts)
    require("tide.op_args").options("glu", opts, { "dim" }, "{dim = 2}")
    tensor_arg(input, "glu", "input")
    local d = dim_arg(dim, "glu")
    local n = input:dim()
    local dd = d < 0 and n + 1 + d or d
    if dd < 1 or dd > n then
        raise(string.format("tide: glu: dim %d is out of range for a %d-D input", d, n))
    end
    local size = input:size(dd)
    if size % 2 ~= 0 then
        raise(string.format("tide: glu: dim %d has size %d; it must be even (two halves)", d,
            size))
    end
    local h = idiv(size, 2)
    return input:narrow(dd, 1, h):mul(input:narrow(dd, h + 1, h):sigmoid())
end

-- mish: x tanh(log(1 + exp(x))), as PyTorch's kernel; {inplace = true} writes into input
local function mish_ops(x)
    return x:mul(x:exp():log1p():tanh())
end
function F.mish(input, opts)
    tensor_arg(input, "mish", "input")
    return maybe_inplace(input, options(opts, "mish", { "inplace" }), "mish", function(x)
        return fused.activation("mish", x, mish_ops, "MishBackward0")
    end)
end

-- f(x) computed in float32 for a float16 or bfloat16 x and rounded once, as PyTorch's kernels
-- compute the half dtypes (each step rounded to half lost small values: elu(-2^-24) gave 0,
-- softplus(-2.5) 5%, hardswish(65504) inf)
local function opmath(x, f)
    if x.dtype == "float16" or x.dtype == "bfloat16" then
        return f(x:float()):to(x.dtype)
    end
    return f(x)
end

-- hardswish: x min(max(x + 3, 0), 6) / 6
local function hardswish_ops(x)
    return opmath(x, function(v) return v:mul(v:add(3):clamp(0, 6)):div(6) end)
end
function F.hardswish(input, opts)
    tensor_arg(input, "hardswish", "input")
    return maybe_inplace(input, options(opts, "hardswish", { "inplace" }), "hardswish",
        function(x)
            return fused.activation("hardswish", x, hardswish_ops, "HardswishBackward0")
        end)
end

-- selu: scale x for x > 0, scale alpha (exp(x) - 1) otherwise, with the self-normalising
-- constants of Klambauer et al. (PyTorch's)
local SELU_ALPHA, SELU_SCALE = 1.6732632423543772848170429916717,
    1.0507009873554804934193349852946
local function selu_ops(x)
    return opmath(x, function(v)
        return core.where(v:gt(0), v:mul(SELU_SCALE),
            v:clamp(nil, 0):exp():sub(1):mul(SELU_ALPHA * SELU_SCALE))
    end)
end
function F.selu(input, opts)
    tensor_arg(input, "selu", "input")
    return maybe_inplace(input, options(opts, "selu", { "inplace" }), "selu", function(x)
        -- PyTorch's selu is its elu with these alpha and scale (grad_fn EluBackward0)
        return fused.activation("elu", x, selu_ops, "EluBackward0", SELU_ALPHA, SELU_SCALE, 1)
    end)
end

-- relu6: min(max(x, 0), 6); hardsigmoid: (x + 3) / 6 clamped to [0, 1], its gradient 1/6
-- strictly inside (-3, 3), as PyTorch's; logsigmoid: min(x, 0) - log1p(exp(-|x|)), PyTorch's
-- kernel; softsign: x / (1 + |x|)
function F.relu6(input, opts)
    tensor_arg(input, "relu6", "input")
    return maybe_inplace(input, options(opts, "relu6", { "inplace" }), "relu6", function(x)
        return F.hardtanh(x, { min_val = 0, max_val = 6 }) -- PyTorch's (its gradient too)
    end)
end

local function hardsigmoid_ops(x)
    local inside = x:gt(-3):logical_and(x:lt(3))
    -- outside: 0 or 1, and NaN stays NaN (PyTorch's; its gradient 0 there too)
    local outside = core.where(x:ne(x), x:detach(), x:ge(3):to(x.dtype))
    return core.where(inside, x:add(3):div(6), outside)
end
function F.hardsigmoid(input, opts)
    tensor_arg(input, "hardsigmoid", "input")
    return maybe_inplace(input, options(opts, "hardsigmoid", { "inplace" }), "hardsigmoid",
        function(x)
            return fused.activation("hardsigmoid", x, hardsigmoid_ops, "HardsigmoidBackward0")
        end)
end

local function logsigmoid_ops(x)
    -- min(x, 0) - log1p(exp(-|x|)) by sign, so the gradient is sigmoid(-x) everywhere (0.5 at
    -- 0); each side on its clamped half, so the side where() leaves out stays finite (a NaN
    -- there would reach the gradient as 0 * NaN)
    local neg, pos = x:clamp(nil, 0), x:clamp(0, nil)
    -- (+ 0: a zero on the positive side is +0, PyTorch's min(x, 0) - 0, not -0)
    return core.where(x:lt(0), neg:sub(neg:exp():log1p()), pos:neg():exp():log1p():neg():add(0))
end
function F.logsigmoid(input)
    tensor_arg(input, "logsigmoid", "input")
    return fused.activation("logsigmoid", input, logsigmoid_ops, "LogSigmoidBackward0")
end

-- (PyTorch's is this composition: its grad_fn is the division's)
local function softsign_ops(x)
    return x:div(x:abs():add(1))
end
function F.softsign(input)
    tensor_arg(input, "softsign", "input")
    return fused.activation("softsign", input, softsign_ops, "DivBackward0")
end

-- exact (the erf form), or {approximate = "tanh"}: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
function F.gelu(input, opts)
    tensor_arg(input, "gelu", "input")
    local approximate = options(opts, "gelu", { "approximate" }).approximate or "none"
    if approximate == "none" then
        return input:gelu()
    elseif approximate == "tanh" then
        local inner = input:mul(input):mul(input):mul(0.044715):add(input)
        return inner:mul(math.sqrt(2 / math.pi)):tanh():add(1):mul(input):mul(0.5)
    end
    raise("tide: gelu: unknown approximate \"" .. tostring(approximate) ..
        "\"; use \"none\" or \"tanh\"")
end

-- x where x > 0, else negative_slope * x (the gradient at 0 is negative_slope, as PyTorch)
function F.leaky_relu(input, opts)
    tensor_arg(input, "leaky_relu", "input")
    local o = number_or_options(opts, "negative_slope", "leaky_relu",
        { "negative_slope", "inplace" })
    local slope = number_opt(o.negative_slope, 0.01, "leaky_relu", "negative_slope")
    local function value(x)
        return core.where(x:gt(0), x, x:mul(slope))
    end
    local function ops(x)
        if not autograd.needs_record(x) then
            return value(x)
        end
        -- the gradient's own graph is PyTorch's leaky_relu_backward (autograd/formulas.lua)
        local out = value(x:detach())
        autograd.record("leaky_relu", out, x).slope = function(v)
            return v:gt(0):to(v.dtype):mul(1 - slope):add(slope) -- NaN: slope, as PyTorch
        end
        return out
    end
    return maybe_inplace(input, o, "leaky_relu", function(x)
        return fused.activation("leaky_relu", x, ops, "LeakyReluBackward0", slope)
    end)
end

-- x where x > 0, else alpha (exp(x) - 1); exp reads min(x, 0) so the unused branch stays finite
function F.elu(input, opts)
    tensor_arg(input, "elu", "input")
    local o = number_or_options(opts, "alpha", "elu", { "alpha", "inplace" })
    local alpha = number_opt(o.alpha, 1, "elu", "alpha")
    local function ops(x)
        return opmath(x, function(v)
            return core.where(v:gt(0), v, v:clamp(nil, 0):exp():sub(1):mul(alpha))
        end)
    end
    return maybe_inplace(input, o, "elu", function(x)
        return fused.activation("elu", x, ops, "EluBackward0", alpha, 1, 1)
    end)
end

-- log(1 + exp(beta x)) / beta, and x itself where beta x > threshold
function F.softplus(input, opts)
    tensor_arg(input, "softplus", "input")
    local o = options(opts, "softplus", { "beta", "threshold" })
    local beta = number_opt(o.beta, 1, "softplus", "beta")
    local threshold = number_opt(o.threshold, 20, "softplus", "threshold")
    if autocast.on then -- in PyTorch's float32 list
        input = autocast.fp32(input)
    end
    -- PyTorch's kernel: log1p(exp(beta x)) / beta below the threshold
    local function ops(v)
        return opmath(v, function(x)
            local bx = x:mul(beta)
            return core.where(bx:gt(threshold), x,
                bx:clamp(nil, threshold):exp():log1p():div(beta))
        end)
    end
    return fused.activation("softplus", input, ops, "SoftplusBackward0", beta, threshold)
end

-- x clamped to [min_val, max_val]; {min_val = -1, max_val = 1}
function F.hardtanh(input, opts)
    tensor_arg(input, "hardtanh", "input")
    local o = options(opts, "hardtanh", { "min_val", "max_val", "inplace" })
    local lo = number_opt(o.min_val, -1, "hardtanh", "min_val")
    local hi = number_opt(o.max_val, 1, "hardtanh", "max_val")
    if lo > hi then
        raise(string.format("tide: hardtanh: expected min_val <= max_val, got %s > %s", lo, hi))
    end
    local function ops(x)
        if not autograd.needs_record(x) then
            return x:clamp(lo, hi)
        end
        -- gradient 0 at and beyond the bounds (NaN passes it), recorded as PyTorch's
        -- hardtanh_backward when its own graph is (create_graph; autograd/formulas.lua)
        local out = x:detach():clamp(lo, hi)
        autograd.record("hardtanh", out, x).slope = function(v)
            return v:le(lo):logical_or(v:ge(hi)):logical_not():to(v.dtype)
        end
        return out
    end
    return maybe_inplace(input, o, "hardtanh", function(x)
        return fused.activation("hardtanh", x, ops, "HardtanhBackward0", lo, hi)
    end)
end

-- softmax(input[, dim[, _stacklevel[, dtype]]]), any of them by name ({dim =, dtype =}):
-- with dtype the input is cast to it first, as PyTorch's
function F.softmax(input, opts)
    local x, dim = A.softmax_args(input, opts, "softmax")
    return x:softmax(dim)
end

function F.log_softmax(input, opts)
    local x, dim = A.softmax_args(input, opts, "log_softmax")
    return x:log_softmax(dim)
end

-- ---- linear and convolution ----

-- y = x W^T (+ b): x [..., in], weight [out, in], bias [out]; one autograd node
function F.linear(input, weight, bias, opts)
    local who = "linear"
    require("tide.op_args").options(who, opts, { "bias" }, "{bias = b}")
    tensor_arg(input, who, "input")
    tensor_arg(weight, who, "weight")
    optional_tensor(bias, who, "bias")
    if weight:dim() == 1 and input:dim() > 0 and input:size(-1) == weight:size(1) then
        if bias then -- (PyTorch 1.13 raises too: "mat2 must be a matrix")
            raise("tide: linear: a 1-D weight takes no bias; got bias " .. shape_str(bias))
        end
        same_device(input, weight, who, "weight")
        I.check_dtype(input, weight, who)
        return input:matmul(weight) -- PyTorch's: x @ w, the last dim dropped
    end
    if weight:dim() ~= 2 then
        raise("tide: linear: expected a 2-D weight {out, in}, got " .. shape_str(weight))
    end
    if input:dim() == 0 or input:size(-1) ~= weight:size(2) then
        raise(string.format("tide: linear: expected input with last dim %d (weight %s), got %s",
            weight:size(2), shape_str(weight), shape_str(input)))
    end
    if bias and (bias:dim() ~= 1 or bias:size(1) ~= weight:size(1)) then
        raise(string.format("tide: linear: expected bias of shape {%d}, got %s", weight:size(1),
            shape_str(bias)))
    end
    same_device(input, weight, who, "weight")
    I.check_dtype(input, weight, who)
    same_device(input, bias, who, "bias")
    return fused.linear(input, weight, bias)
end

local CONV_OPTIONS = { "stride", "padding", "dilation", "groups" }

-- PyTorch's unbatched input ({C, L}, {C, H, W}, {C, D, H, W}) as a batch of one: fn's results
-- (a convolution's or pool's values, and a pool's indices when asked for) with that batch dim
-- dropped
local function batch_of_one(fn, input, ...)
    local y, ix = fn(input:unsqueeze(1), ...)
    if ix ~= nil then
        return y:squeeze(1), ix:squeeze(1)
    end
    return y:squeeze(1)
end

F._batch_of_one = batch_of_one -- also the 3-D convolutions'

-- F.conv1d/2d/3d with PyTorch's string padding (>= 1.9): "valid" is none, "same" the modules'
-- rule (tide.nn._signature's conv_padding: stride 1, half the dilated kernel before, the rest
-- after); an uneven "same" pads the input with F.pad first, as PyTorch's _convolution_mode.
-- nil when opts' padding is not a string
local function string_padding(fn, who, input, weight, bias, opts, nd)
    if type(opts) ~= "table" or type(opts.padding) ~= "string" then
        return nil
    end
    tensor_arg(weight, who, "weight") -- (read for its kernel size before conv_args checks it)
    if weight:dim() < nd + 1 then
        raise(string.format("tide: %s: expected %d-D weight {out_channels, in_channels / " ..
            "groups, kernel...}, got %s", who, nd + 2, shape_str(weight)))
    end
    local S = require("tide.nn._signature")
    local function per(v, i)
        return type(v) == "table" and (v[i] or v[1]) or v or 1
    end
    local k, d, s = {}, {}, {}
    for i = 1, nd do
        k[i] = weight:size(weight:dim() - nd + i)
        d[i], s[i] = per(opts.dilation, i), per(opts.stride, i)
    end
    local before, after = S.conv_padding(who, opts.padding, k, d, s)
    local o = {}
    for key, v in pairs(opts) do
        o[key] = v
    end
    local pad = S.asymmetric_pad(before, after)
    if pad then
        input, o.padding = F.pad(input, pad), 0
    else
        o.padding = nd == 1 and before[1] or before
    end
    return fn(input, weight, bias, o)
end
F._string_padding = string_padding -- also conv3d's

-- checks a convolution's tensors; returns the options and the groups
local function conv_args(who, input, weight, bias, opts, nd, layout)
    tensor_arg(input, who, "input")
    tensor_arg(weight, who, "weight")
    optional_tensor(bias, who, "bias")
    local o = options(opts, who, CONV_OPTIONS) -- no padding_mode: PyTorch's modules pad first
    local groups = int_arg(o.groups or 1, who, "groups", 1)
    if input:dim() ~= nd then
        raise(string.format("tide: %s: expected %d-D input %s or unbatched %s, got %s", who, nd,
            layout, "{" .. layout:sub(5), shape_str(input)))
    end
    if weight:dim() ~= nd then
        raise(string.format("tide: %s: expected %d-D weight {out_channels, in_channels / " ..
            "groups, kernel...}, got %s", who, nd, shape_str(weight)))
    end
    if weight:size(1) % groups ~= 0 then
        raise(string.format("tide: %s: out_channels %d (weight %s) is not divisible by " ..
            "groups %d", who, weight:size(1), shape_str(weight), groups))
    end
    if input:size(2) ~= weight:size(2) * groups then
        raise(string.format("tide: %s: expected input with %d channels (dim 2, as weight %s%s), " ..
            "got %d", who, weight:size(2) * groups, shape_str(weight),
            groups > 1 and " with groups " .. groups or "", input:size(2)))
    end
    if bias and (bias:dim() ~= 1 or bias:size(1) ~= weight:size(1)) then
        raise(string.format("tide: %s: expected bias of shape {%d}, got %s", who, weight:size(1),
            shape_str(bias)))
    end
    same_device(input, weight, who, "weight")
    I.check_dtype(input, weight, who)
    same_device(input, bias, who, "bias")
    return o, groups
end
F._conv_args = conv_args -- also conv3d's (_functional_3d.lua)

-- the output size of a convolution; (dh, dw) the dilation
local function conv_out(who, h, w, kh, kw, sh, sw, ph, pw, dh, dw)
    local eh, ew = dh * (kh - 1) + 1, dw * (kw - 1) + 1 -- the dilated kernel's span
    local oh, ow = idiv(h + 2 * ph - eh, sh) + 1, idiv(w + 2 * pw - ew, sw) + 1
    if oh < 1 or ow < 1 then
        local dil = (dh ~= 1 or dw ~= 1) and string.format(" (dilation %d,%d)", dh, dw) or ""
        raise(string.format("tide: %s: input %dx%d (padding %d,%d) is smaller than the " ..
            "kernel %dx%d%s", who, h, w, ph, pw, kh, kw, dil))
    end
    return oh, ow
end
F._conv_out = conv_out

-- an option that is an integer or {h, w}, each >= min
-- input [N, C, H, W], weight [Cout, C / groups, kh, kw], bias [Cout]; {stride =, padding =,
-- dilation =} (an integer or {h, w}), groups =; one autograd node, as nn.Conv2d
function F.conv2d(input, weight, bias, opts)
    local who = "conv2d"
    tensor_arg(input, who, "input")
    if type(opts) == "table" and type(opts.padding) == "string" then
        return string_padding(F.conv2d, who, input, weight, bias, opts, 2)
    end
    if input:dim() == 3 then -- unbatched {C, H, W}, as PyTorch
        return batch_of_one(F.conv2d, input, weight, bias, opts)
    end
    local o, groups = conv_args(who, input, weight, bias, opts, 4, "{N, C, H, W}")
    local kh, kw = weight:size(3), weight:size(4)
    local sh, sw = pair_opt(o.stride, 1, who, "stride", 1)
    local ph, pw = pair_opt(o.padding, 0, who, "padding", 0)
    local dh, dw = pair_opt(o.dilation, 1, who, "dilation", 1)
    local oh, ow = conv_out(who, input:size(3), input:size(4), kh, kw, sh, sw, ph, pw, dh, dw)
    return fused.conv2d(input, weight, bias, { kh, kw, sh, sw, ph, pw, dh, dw }, oh, ow, groups)
end

-- input [N, C, L], weight [Cout, C / groups, k], bias [Cout]; {stride =, padding =, dilation =,
-- groups =}: conv2d on a height of 1
function F.conv1d(input, weight, bias, opts)
    local who = "conv1d"
    tensor_arg(input, who, "input")
    if type(opts) == "table" and type(opts.padding) == "string" then
        return string_padding(F.conv1d, who, input, weight, bias, opts, 1)
    end
    if input:dim() == 2 then -- unbatched {C, L}, as PyTorch
        return batch_of_one(F.conv1d, input, weight, bias, opts)
    end
    local o, groups = conv_args(who, input, weight, bias, opts, 3, "{N, C, L}")
    local k = weight:size(3)
    -- PyTorch's 1-tuples: stride=(1,), padding=(2,), dilation=(1,)
    local s = int_arg(I.single(o.stride, "stride", who) or 1, who, "stride", 1)
    local p = int_arg(I.single(o.padding, "padding", who) or 0, who, "padding", 0)
    local d = int_arg(I.single(o.dilation, "dilation", who) or 1, who, "dilation", 1)
    local _, ol = conv_out(who, 1, input:size(3), 1, k, 1, s, 0, p, 1, d)
    local y = fused.conv2d(input:unsqueeze(3), weight:unsqueeze(3), bias,
        { 1, k, 1, s, 0, p, 1, d }, 1, ol, groups)
    return y:squeeze(3)
end

-- the gradient of col2im is im2col with the same geometry (conv_transpose2d records one node,
-- nd.geom: col2im itself is a backward helper that the binding does not record)
autograd.def {
    name = "col2im",
    backward = function(nd, g)
        local k = nd.geom
        return K.im2col(g, k[1], k[2], k[3], k[4], k[5], k[6], k[7], k[8])
    end,
}

-- checks a transposed convolution's tensors and its options table; returns the options
local function conv_transpose_args(who, input, weight, bias, opts)
    tensor_arg(input, who, "input")
    tensor_arg(weight, who, "weight")
    optional_tensor(bias, who, "bias")
    return options(opts, who, { "stride", "padding", "output_padding", "dilation", "groups" })
end
F._conv_transpose_args = conv_transpose_args -- also conv_transpose1d's and conv_transpose3d's

-- a transposed convolution's weight [Cin, Cout / groups, ...] and bias [Cout], once their dims
-- are checked: Cin divisible by groups, bias of Cout; returns Cout
local function conv_transpose_channels(who, weight, bias, groups)
    if weight:size(1) % groups ~= 0 then
        raise(string.format("tide: %s: in_channels %d (weight %s) is not divisible by groups %d",
            who, weight:size(1), shape_str(weight), groups))
    end
    local cout = weight:size(2) * groups
    if bias and (bias:dim() ~= 1 or bias:size(1) ~= cout) then
        raise(string.format("tide: %s: expected bias of shape {%d}, got %s", who, cout,
            shape_str(bias)))
    end
    return cout
end
F._conv_transpose_channels = conv_transpose_channels

-- input [N, Cin, H, W], weight [Cin, Cout / groups, kh, kw], bias [Cout]; {stride =, padding =,
-- output_padding =, dilation =, groups =}: conv2d's gradient with respect to its input, as a
-- gemm and a col2im
function F.conv_transpose2d(input, weight, bias, opts)
    if autocast.on then
        input, weight, bias = autocast.lower(input, weight, bias)
    end
    local who = "conv_transpose2d"
    local o = conv_transpose_args(who, input, weight, bias, opts)
    if input:dim() == 3 then -- unbatched {Cin, H, W}, as PyTorch
        return batch_of_one(F.conv_transpose2d, input, weight, bias, o)
    end
    local groups = int_arg(o.groups or 1, who, "groups", 1)
    if input:dim() ~= 4 or weight:dim() ~= 4 or input:size(2) ~= weight:size(1) then
        raise(string.format("tide: %s: expected input {N, Cin, H, W} (or unbatched {Cin, H, " ..
            "W}) and weight {Cin, Cout / groups, kh, kw} with the same Cin, got %s and %s", who,
            shape_str(input),
            shape_str(weight)))
    end
    local cout = conv_transpose_channels(who, weight, bias, groups)
    local kh, kw = weight:size(3), weight:size(4)
    same_device(input, weight, who, "weight")
    I.check_dtype(input, weight, who)
    same_device(input, bias, who, "bias")
    local sh, sw = pair_opt(o.stride, 1, who, "stride", 1)
    local ph, pw = pair_opt(o.padding, 0, who, "padding", 0)
    local oph, opw = pair_opt(o.output_padding, 0, who, "output_padding", 0)
    local dh, dw = pair_opt(o.dilation, 1, who, "dilation", 1)
    if (oph >= sh and oph >= dh) or (opw >= sw and opw >= dw) then
        raise(string.format("tide: %s: output_padding %d,%d must be smaller than the stride " ..
            "%d,%d or the dilation %d,%d", who, oph, opw, sh, sw, dh, dw))
    end
    local n, cin, h, w = input:size(1), input:size(2), input:size(3), input:size(4)
    local oh = (h - 1) * sh - 2 * ph + dh * (kh - 1) + 1 + oph
    local ow = (w - 1) * sw - 2 * pw + dw * (kw - 1) + 1 + opw
    if oh < 1 or ow < 1 then
        raise(string.format("tide: %s: padding %d,%d leaves no output for input %dx%d", who, ph,
            pw, h, w))
    end
    -- an output_padding of a stride or more (allowed below the dilation) leaves rows that no
    -- column of an h-row input reaches in col2im's geometry: zero input rows are added until the
    -- geometry covers the output, and the surplus cropped after
    local eh = oph >= sh and -idiv(-oph, sh) or 0
    local ew = opw >= sw and -idiv(-opw, sw) or 0
    if eh > 0 or ew > 0 then
        input = F.pad(input, { 0, ew, 0, eh })
        h, w = h + eh, w + ew
    end
    local ch = (eh > 0) and (h - 1) * sh - 2 * ph + dh * (kh - 1) + 1 or oh
    local cw = (ew > 0) and (w - 1) * sw - 2 * pw + dw * (kw - 1) + 1 or ow
    -- columns [N, Cout*kh*kw, H*W] = W^T x, group by group (rows of group g follow group g-1's),
    -- then each column added back into its window
    local cols
    if groups == 1 then
        cols = weight:reshape(cin, -1):t():matmul(input:reshape(n, cin, h * w))
    else
        local cing = idiv(cin, groups)
        cols = weight:reshape(groups, cing, -1):transpose(2, 3)
            :matmul(input:reshape(n, groups, cing, h * w)):reshape(n, cout * kh * kw, h * w)
    end
    local geom = { kh, kw, sh, sw, ph, pw, dh, dw }
    local y = K.col2im(cols:detach(), cout, ch, cw, kh, kw, sh, sw, ph, pw, dh, dw)
    if autograd.needs_record(cols) then
        autograd.record("col2im", y, cols).geom = geom
    end
    if ch ~= oh or cw ~= ow then
        y = F.pad(y, { 0, ow - cw, 0, oh - ch })
    end
    if bias then
        y = y:add(bias:view(1, cout, 1, 1))
    end
    return y
end

-- ---- pooling ----

-- PyTorch's pooled size of one dim (0 when the window does not fit): with ceil_mode the size
-- rounds up, but the last window still starts inside the input or its left padding (a 1x1
-- input pools to 1x1 under kernel 2, stride 2, ceil_mode, as timm's downsample_avg does)
local function pool_out(size, k, s, p, d, ceil_mode)
    local span = size + 2 * p - d * (k - 1) - 1
    local n = idiv(span + (ceil_mode and s - 1 or 0), s) + 1
    if n < 1 then
        return 0
    end
    if ceil_mode and (n - 1) * s >= size + p then
        n = n - 1
    end
    return n
end
F._pool_out = pool_out -- also the 3-D pools' (_functional_3d.lua)

-- the geometry of a 2-D pooling over input [N, C, H, W]: kernel, stride (default: the kernel),
-- padding, dilation (max pooling only), ceil_mode; a table g = {kh, kw, sh, sw, ph, pw, dh, dw,
-- ceil, oh, ow}
local function pool_args(who, input, kernel_size, o)
    tensor_arg(input, who, "input")
    if input:dim() ~= 4 then
        raise("tide: " .. who .. ": expected input {N, C, H, W} or {C, H, W}, got " ..
            shape_str(input))
    end
    if not FLOAT_DTYPES[input.dtype] then
        raise("tide: " .. who .. ": expected a floating-point input, got " .. input.dtype)
    end
    local kh, kw = I.pair(kernel_size, who, "kernel_size")
    local sh, sw = kh, kw
    if o.stride ~= nil then
        sh, sw = I.pair(o.stride, who, "stride")
    end
    local ph, pw = I.pair(o.padding or 0, who, "padding")
    local dh, dw = I.pair(o.dilation or 1, who, "dilation")
    int_arg(kh, who, "kernel_size", 1)
    int_arg(kw, who, "kernel_size", 1)
    int_arg(sh, who, "stride", 1)
    int_arg(sw, who, "stride", 1)
    int_arg(ph, who, "padding", 0)
    int_arg(pw, who, "padding", 0)
    int_arg(dh, who, "dilation", 1)
    int_arg(dw, who, "dilation", 1)
    local ceil = bool_opt(o.ceil_mode, false, who, "ceil_mode")
    if 2 * ph > kh or 2 * pw > kw then
        raise(string.format("tide: %s: padding %d,%d should be at most half the kernel %dx%d",
            who, ph, pw, kh, kw))
    end
    local h, w = input:size(3), input:size(4)
    local oh, ow = pool_out(h, kh, sh, ph, dh, ceil), pool_out(w, kw, sw, pw, dw, ceil)
    if oh < 1 or ow < 1 then
        if dh == 1 and dw == 1 then
            raise(string.format("tide: %s: kernel %dx%d is larger than the padded input %dx%d; " ..
                "use a smaller kernel or more padding", who, kh, kw, h + 2 * ph, w + 2 * pw))
        end
        raise(string.format("tide: %s: kernel %dx%d with dilation %d,%d spans %dx%d, larger " ..
            "than the padded input %dx%d; use a smaller kernel, dilation or more padding", who, kh,
            kw, dh, dw, dh * (kh - 1) + 1, dw * (kw - 1) + 1, h + 2 * ph, w + 2 * pw))
    end
    return { kh, kw, sh, sw, ph, pw, dh, dw, ceil, oh, ow }
end

local MAX_POOL_OPTIONS = { "stride", "padding", "dilation", "ceil_mode", "return_indices" }

-- max over each window; {stride = kernel_size, padding = 0, dilation = 1, ceil_mode = false,
-- return_indices = false}; with return_indices also the int64 1-based position of each maximum
-- within its plane (h - 1) * W + w, as PyTorch's flat index plus one
function F.max_pool2d(input, kernel_size, opts)
    local who = "max_pool2d"
    local o = options(opts, who, MAX_POOL_OPTIONS)
    tensor_arg(input, who, "input")
    if input:dim() == 3 then -- unbatched {C, H, W}, as PyTorch
        return batch_of_one(F.max_pool2d, input, kernel_size, o)
    end
    local g = pool_args(who, input, kernel_size, o)
    local y, ix = K.maxpool2d(input, g[1], g[2], g[3], g[4], g[5], g[6], g[7], g[8], g[9])
    if bool_opt(o.return_indices, false, who, "return_indices") then
        return y, ix:add(1)
    end
    return y
end

-- max over each window of input [N, C, L]; the options of max_pool2d (integers), indices the
-- 1-based positions along L
function F.max_pool1d(input, kernel_size, opts)
    local who = "max_pool1d"
    local o = options(opts, who, MAX_POOL_OPTIONS)
    tensor_arg(input, who, "input")
    if input:dim() == 2 then -- unbatched {C, L}, as PyTorch
        return batch_of_one(F.max_pool1d, input, kernel_size, o)
    end
    if input:dim() ~= 3 then
        raise("tide: max_pool1d: expected input {N, C, L} or {C, L}, got " .. shape_str(input))
    end
    -- PyTorch's 1-tuples: kernel_size=(3,), stride=(2,), ...
    kernel_size = I.single(kernel_size, "kernel_size", who)
    int_arg(kernel_size, who, "kernel_size", 1)
    local s = int_arg(I.single(o.stride, "stride", who) or kernel_size, who, "stride", 1)
    local p = int_arg(I.single(o.padding, "padding", who) or 0, who, "padding", 0)
    local d = int_arg(I.single(o.dilation, "dilation", who) or 1, who, "dilation", 1)
    -- the 1-d pool's own messages (not the 2-d pool's "kernel 1x3" below)
    if 2 * p > kernel_size then
        raise(("tide: max_pool1d: padding %d should be at most half the kernel %d"):format(p,
            kernel_size))
    end
    local l, span = input:size(3) + 2 * p, d * (kernel_size - 1) + 1
    if pool_out(input:size(3), kernel_size, s, p, d, o.ceil_mode == true) < 1 then
        raise(("tide: max_pool1d: kernel %d%s larger than the padded input %d; use a " ..
            "smaller kernel%s or more padding"):format(kernel_size, d > 1 and
            (" with dilation %d spans %d,"):format(d, span) or " is", l, d > 1 and ", dilation"
            or ""))
    end
    local x = input:unsqueeze(3)
    local g = pool_args(who, x, { 1, kernel_size }, { stride = { 1, s }, padding = { 0, p },
        dilation = { 1, d }, ceil_mode = o.ceil_mode })
    local y, ix = K.maxpool2d(x, 1, kernel_size, 1, s, 0, p, 1, d, g[9])
    if bool_opt(o.return_indices, false, who, "return_indices") then
        return y:squeeze(3), ix:squeeze(3):add(1)
    end
    return y:squeeze(3)
end

-- [out, size] averaging matrix of PyTorch's adaptive windows: row i averages the cells
-- floor(i size / out) .. ceil((i + 1) size / out) - 1 (0-based); built by tensor ops (no Lua
-- table as large as the matrix), kept per shape, dtype and device (a model pools the same sizes
-- every step: no transfer each time)
local adaptive_cache = {}
local function adaptive_matrix(out, size, like)
    local key = out .. ":" .. size .. ":" .. like.dtype .. ":" .. tostring(like.device)
    if adaptive_cache[key] then
        return adaptive_cache[key]
    end
    local i = core.arange(0, out, { dtype = "int64" })
    local lo = (i * size):floor_divide(out):view(out, 1)
    local hi = ((i + 1) * size + (out - 1)):floor_divide(out):view(out, 1)
    local j = core.arange(0, size, { dtype = "int64" }):view(1, size)
    local inside = j:ge(lo):to(like.dtype) * j:lt(hi):to(like.dtype)
    local m = (inside / (hi - lo):to(like.dtype)):to(like.device)
    adaptive_cache[key] = m
    return m
end

-- PyTorch 1.13's check of an adaptive pool's input: dims first..last non-empty (its avg_pool1d
-- / 2d: the spatial ones; the max pools and adaptive_avg_pool3d: all but the first, the batch)
function F._adaptive_nonempty(who, input, first)
    for d = first, input:dim() do
        if input:size(d) == 0 then
            raise(("tide: %s: expected a non-empty size in dim %d (only %s may be 0), got " ..
                "input %s; skip the pool for an empty input"):format(who, d, first == 2 and
                "dim 1, the batch," or "the batch and channel dims", shape_str(input)))
        end
    end
end

-- input [N, C, H, W] or [C, H, W] to output_size (an integer or {h, w}, nil keeping a size;
-- 0 gives an empty output): the windows are separable, so the pooling is two small matmuls,
-- Ah x Aw^T
function F.adaptive_avg_pool2d(input, output_size)
    local who = "adaptive_avg_pool2d"
    tensor_arg(input, who, "input")
    local nd = input:dim()
    if nd ~= 3 and nd ~= 4 then
        raise("tide: adaptive_avg_pool2d: expected input {N, C, H, W} or {C, H, W}, got " ..
            shape_str(input))
    end
    local h, w = input:size(nd - 1), input:size(nd)
    local oh, ow
    if type(output_size) == "table" then
        oh, ow = output_size[1] or h, output_size[2] or w
    else
        oh, ow = output_size, output_size
    end
    int_arg(oh, who, "output_size", 0)
    int_arg(ow, who, "output_size", 0)
    if not FLOAT_DTYPES[input.dtype] then
        raise("tide: adaptive_avg_pool2d: expected a floating-point input, got " .. input.dtype)
    end
    F._adaptive_nonempty(who, input, nd - 1)
    -- the output and the two window matrices are sized by output_size: checked before either
    local planes = nd == 4 and input:size(1) * input:size(2) or input:size(1)
    args.check_budget(who, 1.0 * planes * oh * ow + 1.0 * oh * h + 1.0 * ow * w, 8,
        ("an output of %d x %d per plane"):format(oh, ow), "ask for a smaller output_size")
    if oh * ow == 0 then -- output_size 0: an empty output
        local shape = input.shape
        shape[nd - 1], shape[nd] = oh, ow
        return core.zeros(shape, { dtype = input.dtype, device = input.device })
    end
    if oh == 1 and ow == 1 then -- the global average pool: one mean over each plane
        return input:mean({ nd - 1, nd }, true)
    end
    local y = input
    if oh ~= h then
        y = adaptive_matrix(oh, h, input):matmul(y)
    end
    if ow ~= w then
        y = y:matmul(adaptive_matrix(ow, w, input):t())
    end
    return y == input and input:clone() or y
end

-- [1, 1, kh*kw, OH*OW] window sums of a 2-D mask: the cells that count toward each divisor
local function window_counts(mask, g)
    local cols = K.im2col(mask, g[1], g[2], g[3], g[4], 0, 0)
    return cols:sum(2):view(1, 1, g[10], g[11])
end

-- an average pool's count_include_pad (default true) and divisor_override (nil or a non-zero
-- integer), checked
local function avg_divisor_args(who, o)
    local include_pad = bool_opt(o.count_include_pad, true, who, "count_include_pad")
    local divisor = o.divisor_override
    if divisor ~= nil and (not compat.is_integer(divisor) or divisor == 0) then
        raise("tide: " .. who .. ": expected divisor_override to be a non-zero integer, got " ..
            tostring(divisor))
    end
    return include_pad, divisor
end
F._avg_divisor_args = avg_divisor_args -- also avg_pool3d's (_functional_3d.lua)

-- mean over each window; {stride = kernel_size, padding = 0, ceil_mode = false,
-- count_include_pad = true (false: a window's padded cells are left out of its count),
-- divisor_override = (a non-zero integer: every window's divisor)}. With ceil_mode a window
-- may run past the padded input: the cells beyond count for nothing, as in PyTorch.
function F.avg_pool2d(input, kernel_size, opts)
    local who = "avg_pool2d"
    local o = options(opts, who, { "stride", "padding", "count_include_pad", "ceil_mode",
        "divisor_override" })
    tensor_arg(input, who, "input")
    if input:dim() == 3 then -- unbatched {C, H, W}, as PyTorch
        return batch_of_one(F.avg_pool2d, input, kernel_size, o)
    end
    local g = pool_args(who, input, kernel_size, o)
    local include_pad, divisor = avg_divisor_args(who, o)
    local kh, kw, sh, sw, ph, pw, oh, ow = g[1], g[2], g[3], g[4], g[5], g[6], g[10], g[11]
    local n, c, h, w = input:size(1), input:size(2), input:size(3), input:size(4)
    -- rows and columns the last windows read past the padded input (ceil_mode)
    local eh = math.max(0, (oh - 1) * sh + kh - (h + 2 * ph))
    local ew = math.max(0, (ow - 1) * sw + kw - (w + 2 * pw))
    local x = input
    if eh > 0 or ew > 0 then
        x = F.pad(input, { 0, ew, 0, eh })
    end
    local cols = K.im2col(x, kh, kw, sh, sw, ph, pw) -- [N, C*kh*kw, OH*OW]
    local sums = cols:reshape(n, c, kh * kw, oh * ow):sum(3):view(n, c, oh, ow)
    if divisor ~= nil then
        return sums:div(divisor)
    end
    if eh == 0 and ew == 0 and (include_pad or (ph == 0 and pw == 0)) then
        return sums:div(kh * kw)
    end
    local like = { device = input.device, dtype = input.dtype }
    local mask
    if include_pad then -- the padded input counts, what lies beyond it does not
        mask = F.pad(core.ones({ 1, 1, h + 2 * ph, w + 2 * pw }, like), { 0, ew, 0, eh })
    else
        mask = F.pad(core.ones({ 1, 1, h, w }, like), { pw, pw + ew, ph, ph + eh })
    end
    return sums:div(window_counts(mask, g))
end

-- ---- dropout and normalization ----

-- {p = 0.5, training = true}: in training, zeroes each element with probability p and scales
-- the rest by 1/(1-p); the input itself otherwise
function F.dropout(input, opts)
    local o, p = A.dropout_args(input, opts, "dropout")
    if p == 0 or not bool_opt(o.training, true, "dropout", "training") then
        return input -- as PyTorch's: p = 0 in training is the input itself, even with inplace
    end
    return maybe_inplace(input, o, "dropout", function(x)
        return I.dropout(x, p)
    end)
end

-- {p = 0.5, training = true}: in training, zeroes whole channels of {N, C, H, W} or {C, H, W}
-- with probability p and scales the rest by 1/(1-p); the input itself otherwise
-- A 2-D input {N, C} is PyTorch's deprecated case: a warning, then each element its own channel.
function F.dropout2d(input, opts)
    local o, p = A.dropout_args(input, opts, "dropout2d")
    local nd = input:dim()
    -- PyTorch 1.13's rules: a rank other than 3 or 4 is warned about (a 2-D one as before),
    -- a 3-D input is read as {N, C, L} (one draw per (n, c)), with PyTorch's warnings once
    if nd == 2 then
        A.dropout2d_spatial(input)
    elseif nd ~= 3 and nd ~= 4 then
        require("tide._warn").once("dropout2d." .. nd .. "d", "dropout2d: Received a " .. nd ..
            "-D input to dropout2d, which is deprecated and will result in an error in a " ..
            "future release. To retain the behavior and silence this warning, please use " ..
            "dropout instead. Note that dropout2d exists to provide channel-wise dropout on " ..
            "inputs with 2 spatial dimensions, a channel dimension, and an optional batch " ..
            "dimension (i.e. 3D or 4D inputs).")
    elseif nd == 3 then
        require("tide._warn").once("dropout2d.3d", "dropout2d: Received a 3D input to " ..
            "dropout2d and assuming that channel-wise 1D dropout behavior is desired - input " ..
            "is interpreted as shape (N, C, L), where C is the channel dim. This behavior will " ..
            "change in a future release to interpret the input as one without a batch " ..
            "dimension, i.e. shape (C, H, W). To maintain the 1D channel-wise dropout " ..
            "behavior, please switch to using dropout1d instead.")
    end
    if p == 0 or not bool_opt(o.training, true, "dropout2d", "training") then
        return input
    end
    if nd < 2 and p < 1 then
        raise("tide: dropout2d: expected input {N, C, H, W} or {C, H, W}, got " ..
            shape_str(input))
    end
    return maybe_inplace(input, o, "dropout2d", function(x)
        return I.channel_dropout(x, p, math.max(nd - 2, 0)) -- one draw per (n, c)
    end)
end

local NORM_OPTIONS = { "weight", "bias", "eps" }

-- over the trailing dims normalized_shape (an integer or a table); {weight =, bias =, eps = 1e-5}
function F.layer_norm(input, normalized_shape, opts)
    local who = "layer_norm"
    tensor_arg(input, who, "input")
    local o = options(opts, who, NORM_OPTIONS)
    local ns, d = I.normalized_shape(normalized_shape, who)
    I.check_trailing(input.shape, ns, who)
    local weight = optional_tensor(o.weight, who, "weight")
    local bias = optional_tensor(o.bias, who, "bias")
    same_device(input, weight, who, "weight")
    same_device(input, bias, who, "bias")
    I.check_norm_dtype(input, weight, who, "weight")
    I.check_norm_dtype(input, bias, who, "bias")
    return I.layer_norm(input, d, weight, bias, number_opt(o.eps, 1e-5, who, "eps"))
end

-- each float dtype's limits: the machine epsilon (PyTorch's torch.finfo(dtype).eps) is
-- rms_norm's eps
local LIMITS = require("tide._dtype_limits")

-- PyTorch 2's F.rms_norm: input / sqrt(mean(input^2 over the trailing dims normalized_shape) +
-- eps) * weight; weight nil or of normalized_shape's elements, eps nil for the dtype's machine
-- epsilon; or {weight =, eps =} in weight's place. The kernel row rms_norm
-- (include/tide_kernels.def) as one node, else (another dtype, a device without it) the
-- composite.
function F.rms_norm(input, normalized_shape, weight, eps)
    local who = "rms_norm"
    tensor_arg(input, who, "input")
    if type(weight) == "table" then
        local o = options(weight, who, { "weight", "eps" })
        weight, eps = o.weight, o.eps
    end
    local ns, d = I.normalized_shape(normalized_shape, who)
    I.check_trailing(input.shape, ns, who)
    optional_tensor(weight, who, "weight")
    same_device(input, weight, who, "weight")
    if weight and weight:numel() ~= d then
        raise("tide: rms_norm: expected weight of " .. d .. " elements (normalized_shape " ..
            I.shape_str(ns) .. "), got " .. I.shape_str(weight.shape))
    end
    eps = number_opt(eps, (LIMITS[input.dtype] or LIMITS.float32).eps, who, "eps")
    if args.HALF[input.dtype] then -- in float32, rounded once (tide.op_args.in_float)
        return F.rms_norm(input:float(), normalized_shape, weight and weight:float(), eps)
            :to(input.dtype)
    end
    local kernel = eps >= 0 and (input.dtype == "float32" or input.dtype == "float64") and
        (not weight or weight.dtype == input.dtype)
    local y = kernel and fused.kernel("rms_norm", input, weight, d, eps)
    if y then
        return y
    end
    local xr = input:reshape(-1, d)
    y = xr:mul(xr:mul(xr):mean(2, true):add(eps):rsqrt()):view(input.shape)
    return weight and y:mul(weight:reshape(ns)) or y
end

-- input [N, C, *] in num_groups groups of channels; {weight =, bias =} per channel, eps = 1e-5
function F.group_norm(input, num_groups, opts)
    if autocast.on then
        input = autocast.fp32(input)
    end
    local who = "group_norm"
    tensor_arg(input, who, "input")
    local o = options(opts, who, NORM_OPTIONS)
    int_arg(num_groups, who, "num_groups", 1)
    if input:dim() < 2 or input:size(2) % num_groups ~= 0 then
        raise(string.format("tide: group_norm: expected input {N, C, ...} with C divisible by " ..
            "num_groups = %d, got %s", num_groups, shape_str(input)))
    end
    local weight = optional_tensor(o.weight, who, "weight")
    local bias = optional_tensor(o.bias, who, "bias")
    same_device(input, weight, who, "weight")
    same_device(input, bias, who, "bias")
    I.check_norm_dtype(input, weight, who, "weight")
    I.check_norm_dtype(input, bias, who, "bias")
    local eps = number_opt(o.eps, 1e-5, who, "eps")
    -- float16/bfloat16: normalized and scaled in float32, rounded once
    local x = args.HALF[input.dtype] and input:float() or input
    local n, c = x:size(1), x:size(2)
    local grouped = x:reshape(n, num_groups, -1)
    local y = I.layer_norm(grouped, grouped:size(3), nil, nil, eps):view(x.shape)
    local bshape = { 1, c }
    for i = 3, x:dim() do
        bshape[i] = 1
    end
    return I.channel_affine(y, weight, bias, bshape):to(input.dtype)
end

-- input [N, C, *]; running_mean and running_var [C] (nil in training: no running estimates);
-- {weight =, bias =, training = false, momentum = 0.1, eps = 1e-5}; in training the running
-- estimates are updated in place
function F.batch_norm(input, running_mean, running_var, opts)
    local who = "batch_norm"
    tensor_arg(input, who, "input")
    optional_tensor(running_mean, who, "running_mean")
    optional_tensor(running_var, who, "running_var")
    local o = options(opts, who, { "weight", "bias", "training", "momentum", "eps" })
    local training = bool_opt(o.training, false, who, "training")
    if input:dim() < 2 then
        raise("tide: batch_norm: expected input {N, C, ...}, got " .. shape_str(input))
    end
    if not training and (running_mean == nil or running_var == nil) then
        raise("tide: batch_norm: running_mean and running_var are needed when training is " ..
            "false; pass them, or {training = true}")
    end
    local c = input:size(2)
    local weight = optional_tensor(o.weight, who, "weight")
    local bias = optional_tensor(o.bias, who, "bias")
    A.channel_tensors(who, input, c, { { running_mean, "running_mean" },
        { running_var, "running_var" }, { weight, "weight" }, { bias, "bias" } })
    return I.batch_norm(input, running_mean, running_var, weight, bias, training,
        number_opt(o.momentum, 0.1, who, "momentum"), number_opt(o.eps, 1e-5, who, "eps"), who)
end

-- ---- embeddings and encodings ----

-- rows of weight [num_embeddings, dim] for 1-based integer ids; {padding_idx = (a row, 1-based
-- or negative from the end, whose lookups pass no gradient), max_norm = (rows looked up with a
-- larger norm are rescaled to it in weight itself, without gradient), norm_type = 2,
-- scale_grad_by_freq = false (each row's gradient divided by its id's count in input)}
function F.embedding(input, weight, opts)
    local who = "embedding"
    tensor_arg(input, who, "input")
    tensor_arg(weight, who, "weight")
    local o = options(opts, who, { "padding_idx", "max_norm", "norm_type",
        "scale_grad_by_freq", "sparse" })
    I.check_sparse(o.sparse, who)
    if o.scale_grad_by_freq ~= nil and type(o.scale_grad_by_freq) ~= "boolean" then
        raise("tide: embedding: expected scale_grad_by_freq to be a boolean, got " ..
            type(o.scale_grad_by_freq))
    end
    if weight:dim() ~= 2 then
        raise("tide: embedding: expected a 2-D weight {num_embeddings, dim}, got " ..
            shape_str(weight))
    end
    local pad = I.padding_idx(o.padding_idx, weight:size(1), who)
    I.embedding_ids(input, weight, who)
    if o.max_norm ~= nil then -- the rows are rescaled before they are looked up
        local max_norm = number_opt(o.max_norm, nil, who, "max_norm")
        local p = number_opt(o.norm_type, 2, who, "norm_type")
        if max_norm <= 0 or p <= 0 then
            raise(string.format("tide: embedding: expected max_norm > 0 and norm_type > 0, got " ..
                "%s and %s", tostring(max_norm), tostring(p)))
        end
        I.embedding_renorm_(weight, input, max_norm, p)
    end
    return I.embedding(input, weight, who, pad, true, o.scale_grad_by_freq)
end

-- int64 tensor of shape input.shape .. {num_classes}: 1 at each 1-based class; num_classes
-- (default -1: the largest class in input)
-- (F.one_hot(x, {num_classes = n}) too: PYTORCH_ORDER puts it in place, and any other name
-- is left in opts, which raises)
function F.one_hot(input, num_classes, opts)
    local who = "one_hot"
    require("tide.op_args").options(who, opts, { "num_classes" }, "{num_classes = 10}")
    tensor_arg(input, who, "input")
    if input.dtype ~= "int64" and input.dtype ~= "int32" then
        raise("tide: one_hot: expected integer classes (int64, 1-based), got " .. input.dtype ..
            "; convert with :long()")
    end
    local n = num_classes == nil and -1 or num_classes
    if n ~= -1 then
        int_arg(n, who, "num_classes", 1)
    end
    if input:numel() > 0 and (n == -1 or I.on_host(input)) then
        local lo, hi = input:min():item(), input:max():item()
        if n == -1 then
            n = compat.tointeger(hi)
        end
        if lo < 1 or hi > n then
            local bad = lo < 1 and lo or hi
            raise(string.format("tide: one_hot: class %d out of range for %d classes; classes " ..
                "are 1-based, in 1..%d", compat.tointeger(bad) or bad, n, n))
        end
    elseif n == -1 then
        raise("tide: one_hot: cannot infer num_classes from an empty tensor; pass num_classes")
    end
    local classes = core.arange(1, n + 1, { device = input.device, dtype = input.dtype })
    local shape = input.shape
    shape[#shape + 1] = n
    return input:reshape(-1, 1):eq(classes:view(1, n)):long():view(shape)
end

-- dim d padded by lo and hi in mode, as three parts: the source positions (1-based) of the
-- cells before the kept range, that range (first, count), and the positions of the cells after
-- it. The cells -lo+1 .. size+hi of the input, reflected, clamped or wrapped back into 1..size;
-- circular crops first (PyTorch's order), then wraps the cropped range. Only the padding is
-- listed (a loop over a 10^6-sample signal's positions took 0.24 s; an empty batch of 2^32
-- samples never ended)
local function pad_parts(mode, size, lo, hi)
    local before, after = {}, {}
    if mode == "circular" then
        local first, n = 1 - math.min(lo, 0), size + math.min(lo, 0) + math.min(hi, 0)
        for j = -math.max(lo, 0), -1 do
            before[#before + 1] = first + j % n
        end
        for j = n, n - 1 + math.max(hi, 0) do
            after[#after + 1] = first + j % n
        end
        return before, first, n, after
    end
    local function source(k)
        if mode == "reflect" then
            return k < 1 and 2 - k or k > size and 2 * size - k or k
        end
        return math.max(1, math.min(size, k))
    end
    for j = 1 - lo, 0 do
        before[#before + 1] = source(j)
    end
    for j = size + 1, size + hi do
        after[#after + 1] = source(j)
    end
    local first, last = math.max(1, 1 - lo), math.min(size, size + hi)
    return before, first, math.max(last - first + 1, 0), after
end

-- the input ranks each non-constant mode pads with #pad sizes (PyTorch's rules)
local function check_pad_rank(mode, input, n)
    local nd, ok = input:dim(), false
    if mode == "circular" then
        ok = nd >= 3 and nd <= 5 and n == 2 * (nd - 2)
    else
        ok = (n == 2 or n == 4 or n == 6) and (nd == idiv(n, 2) + 1 or nd == idiv(n, 2) + 2)
    end
    if not ok then
        local want = mode == "circular" and "2 sizes for a 3-D input {N, C, W}, 4 for a 4-D " ..
            "input, 6 for a 5-D input" or "2 sizes for a 2-D or 3-D input, 4 for a 3-D or 4-D " ..
            "input, 6 for a 4-D or 5-D input"
        raise(string.format("tide: pad: mode \"%s\" takes %s; got %d sizes for a %d-D input",
            mode, want, n, nd))
    end
end

-- "reflect", "replicate" and "circular": each padded dim gathered with index_select (its
-- gradient adds each cell's share back), after PyTorch's checks
local function pad_gather(input, pad, mode)
    check_pad_rank(mode, input, #pad)
    local y = input
    for i = 1, idiv(#pad, 2) do
        local d = input:dim() - i + 1
        local lo, hi, size = pad[2 * i - 1], pad[2 * i], input:size(d)
        if mode == "reflect" and (lo >= size or hi >= size) then
            raise(string.format("tide: pad: mode \"reflect\" needs each size smaller than " ..
                "its dim, got %d, %d for dim %d of size %d (input %s)", lo, hi, d, size,
                shape_str(input)))
        end
        if mode == "circular" and (lo > size or hi > size) then
            raise(string.format("tide: pad: mode \"circular\" wraps around at most once: " ..
                "sizes %d, %d exceed dim %d of size %d (input %s)", lo, hi, d, size,
                shape_str(input)))
        end
        if size + lo + hi < 1 then
            raise(string.format("tide: pad: sizes %d, %d leave nothing of dim %d of size %d",
                lo, hi, d, size))
        end
        if lo ~= 0 or hi ~= 0 then
            -- replicate's sizes are unbounded: the padded result is checked before the positions
            args.check_budget("pad", (size > 0 and y:numel() / size or 0) * (size + lo + hi), 8,
                ("dim %d padded to %d"):format(d, size + lo + hi), "pad by less")
            local before, first, count, after = pad_parts(mode, size, lo, hi)
            local function gathered(pos)
                return y:index_select(d, core.tensor(pos, { dtype = "int64",
                    device = input.device }))
            end
            local parts = {}
            if #before > 0 then
                parts[#parts + 1] = gathered(before)
            end
            if count > 0 then
                parts[#parts + 1] = y:narrow(d, first, count)
            end
            if #after > 0 then
                parts[#parts + 1] = gathered(after)
            end
            -- one part: a crop, copied as the gather did (the result never aliases the input)
            y = #parts == 1 and parts[1]:clone() or core.cat(parts, d)
        end
    end
    return y
end

-- y in a tensor of shape filled with value, at window ({dim, start, length} per padded dim):
-- one fill and one copy (a cat per padded dim had made each intermediate whole: F.pad of a
-- [8, 64, 32, 32] batch by 1 took 6x PyTorch's time); the gradient is the window of g
local constant_pad = autograd.def {
    name = "constant_pad",
    frees = { 1 },
    forward = function(_, y, shape, window, value)
        local out = core.full(shape, value, { device = y.device, dtype = y.dtype })
        local at = out
        for _, w in ipairs(window) do
            at = at:narrow(w[1], w[2], w[3])
        end
        at:copy_(y)
        return out
    end,
    backward = function(nd, g)
        for _, w in ipairs(nd[3]) do
            g = g:narrow(w[1], w[2], w[3])
        end
        return g
    end,
}

-- pads (or, with negative sizes, crops) the last dims: pad = {left, right[, top, bottom, ...]}
-- from the last dim backwards; {mode = "constant" | "reflect" | "replicate" | "circular",
-- value = 0 (constant only)}
function F.pad(input, pad, opts)
    local who = "pad"
    tensor_arg(input, who, "input")
    local o = options(opts, who, { "mode", "value" })
    local mode = o.mode or "constant"
    if mode ~= "constant" and mode ~= "reflect" and mode ~= "replicate" and mode ~= "circular" then
        raise("tide: pad: unknown mode \"" .. tostring(mode) .. "\"; use \"constant\", " ..
            "\"reflect\", \"replicate\" or \"circular\"")
    end
    local value = number_opt(o.value, 0, who, "value")
    if type(pad) == "table" and A.by_name(pad) then -- F.pad(x, {value = 0}): pad not given
        raise("tide: pad: missing pad: give the sizes as argument #2 ({left, right, ...}) " ..
            "or by name (F.pad(x, {pad = {left, right}, value = 0}))")
    end
    if type(pad) ~= "table" or #pad % 2 ~= 0 or #pad > 2 * input:dim() then
        raise(string.format("tide: pad: expected pad as a table of 2 sizes per padded dim " ..
            "(at most %d for a %d-D input), got %s", 2 * input:dim(), input:dim(),
            type(pad) == "table" and #pad .. " sizes" or type(pad)))
    end
    for i = 1, #pad do
        if not compat.is_integer(pad[i]) then
            raise("tide: pad: expected integer sizes, got " .. tostring(pad[i]))
        end
    end
    if mode ~= "constant" then
        if value ~= 0 then
            raise("tide: pad: mode \"" .. mode .. "\" takes no value (got " .. tostring(value) ..
                "); drop the value option")
        end
        return pad_gather(input, pad, mode)
    end
    local y = input
    for i = 1, idiv(#pad, 2) do -- the crops first, each a narrow view
        local d = input:dim() - i + 1
        local lo, hi = pad[2 * i - 1], pad[2 * i]
        local size = y:size(d)
        if size + math.min(lo, 0) + math.min(hi, 0) < 0 then
            raise(string.format("tide: pad: cropping %d and %d from dim %d of size %d leaves " ..
                "nothing", -math.min(lo, 0), -math.min(hi, 0), d, size))
        end
        if lo < 0 or hi < 0 then
            local start = 1 - math.min(lo, 0)
            y = y:narrow(d, start, size + math.min(lo, 0) + math.min(hi, 0))
        end
    end
    local shape, window = y.shape, {}
    for i = 1, idiv(#pad, 2) do -- then the padding: y's place in the result
        local d = input:dim() - i + 1
        local lo, hi = math.max(pad[2 * i - 1], 0), math.max(pad[2 * i], 0)
        if lo > 0 or hi > 0 then
            window[#window + 1] = { d, lo + 1, shape[d] }
            shape[d] = shape[d] + lo + hi
        end
    end
    if #window == 0 then
        return y
    end
    return constant_pad(y, shape, window, value)
end

-- x / max(||x||_p, eps) along dim; {p = 2, dim = 2, eps = 1e-12}
function F.normalize(input, opts)
    local who = "normalize"
    tensor_arg(input, who, "input")
    local o = options(opts, who, { "p", "dim", "eps" })
    local p = number_opt(o.p, 2, who, "p")
    local dim = o.dim == nil and 2 or o.dim
    if not compat.is_integer(dim) then
        raise("tide: normalize: expected dim to be an integer, got " .. tostring(dim))
    end
    local eps = number_opt(o.eps, 1e-12, who, "eps")
    if p < 0 then
        raise("tide: normalize: expected p >= 0, got " .. tostring(p))
    end
    if p == 2 and not autograd.needs_record(input) and input:is_floating_point() then
        -- no gradient to keep finite: PyTorch's norm, clamped (over the last dim, one pass)
        return input:div(input:norm(2, dim, true):clamp(eps))
    end
    local a = input:abs()
    local norm
    if p == 0 then -- the count of nonzero elements (a constant: PyTorch's gradient 1 / count)
        norm = a:detach():ne(0):to(a.dtype):sum(dim, true):clamp(eps)
    elseif p == math.huge then
        norm = a:max(dim, true):clamp(eps)
    elseif p == 1 then
        norm = a:sum(dim, true):clamp(eps)
    else -- the clamp before the root keeps the root's gradient finite at a zero vector
        norm = a:pow(p):sum(dim, true):clamp(eps ^ p):pow(1 / p)
    end
    return input:div(norm)
end

-- ---- resampling: pixel_shuffle, pixel_unshuffle, interpolate ----

local function upscale_arg(r, who, what)
    if not compat.is_integer(r) or r < 1 then
        raise(string.format("tide: %s: %s must be an integer >= 1, got %s", who, what,
            tostring(r)))
    end
    return r
end

-- x [*, C, H, W] reshaped to the leading dims then split (5 sizes), those 5 permuted by perm,
-- then reshaped to the leading dims then out: pixel_shuffle and pixel_unshuffle
local function regroup(x, split, perm, out)
    local s, b = x.shape, x:dim() - 3
    local sizes, order, final = {}, {}, {}
    for i = 1, b do
        sizes[i], order[i], final[i] = s[i], i, s[i]
    end
    for i = 1, 5 do
        sizes[b + i], order[b + i] = split[i], b + perm[i]
    end
    for i = 1, 3 do
        final[b + i] = out[i]
    end
    return x:reshape(sizes):permute(order):reshape(final)
end

-- pixel_shuffle(x, r): [*, C r^2, H, W] -> [*, C, H r, W r], each group of r^2 channels laid
-- out as an r x r block (PyTorch's order); pixel_unshuffle(x, r) is its inverse. r by name
-- too: F.pixel_shuffle(x, {upscale_factor = 2})
function F.pixel_shuffle(input, r, opts)
    local who = "pixel_shuffle"
    require("tide.op_args").options(who, opts, { "upscale_factor" }, "{upscale_factor = 2}")
    tensor_arg(input, who, "input")
    upscale_arg(r, who, "upscale_factor")
    local s, n = input.shape, input:dim()
    if n < 3 or s[n - 2] % (r * r) ~= 0 then
        raise(string.format("tide: %s: expected {*, C * %d, H, W} (channels divisible by " ..
            "upscale_factor^2 = %d), got %s", who, r * r, r * r, shape_str(input)))
    end
    local c, h, w = idiv(s[n - 2], r * r), s[n - 1], s[n]
    return regroup(input, { c, r, r, h, w }, { 1, 4, 2, 5, 3 }, { c, h * r, w * r }) -- C H r W r
end

function F.pixel_unshuffle(input, r, opts)
    local who = "pixel_unshuffle"
    require("tide.op_args").options(who, opts, { "downscale_factor" }, "{downscale_factor = 2}")
    tensor_arg(input, who, "input")
    upscale_arg(r, who, "downscale_factor")
    local s, n = input.shape, input:dim()
    if n < 3 or s[n - 1] % r ~= 0 or s[n] % r ~= 0 then
        raise(string.format("tide: %s: expected {*, C, H, W} with H and W divisible by " ..
            "downscale_factor %d, got %s", who, r, shape_str(input)))
    end
    local c, h, w = s[n - 2], idiv(s[n - 1], r), idiv(s[n], r)
    return regroup(input, { c, h, r, w, r }, { 1, 3, 5, 2, 4 }, { c * r * r, h, w }) -- C r r H W
end

-- a and b expanded to their common shape (NumPy's broadcasting), or an error naming both
local function broadcast(who, a, b, an, bn)
    local sa, sb = a.shape, b.shape
    local n = math.max(#sa, #sb)
    local out = {}
    for i = 1, n do
        local x, y = sa[#sa - n + i] or 1, sb[#sb - n + i] or 1
        if x ~= y and x ~= 1 and y ~= 1 then
            raise(string.format("tide: %s: %s %s and %s %s do not broadcast (dim %d: %d and %d)",
                who, an, shape_str(a), bn, shape_str(b), i, x, y))
        end
        out[i] = x == 1 and y or x
    end
    return a:expand(out), b:expand(out)
end

-- cosine similarity as one node, PyTorch 1.13's arithmetic: each input divided by its 2-norm
-- clamped to eps, the products summed over dim. Its gradient is PyTorch's too, whose norm
-- gradient x / norm reads the clamped norm (nd.n1, nd.n2: kept by the forward)
autograd.def {
    name = "cosine_similarity",
    reads = { 1, 2, "out" },
    frees = { "n1", "n2" },
    backward = function(nd, g)
        local x1, x2, d, n1, n2 = nd[1], nd[2], nd[3], nd.n1, nd.n2
        local out = nd.out:unsqueeze(d)
        g = g:unsqueeze(d)
        local n12 = n1 * n2
        return g * (x2 / n12 - x1 * out / (n1 * n1)), g * (x1 / n12 - x2 * out / (n2 * n2))
    end,
}

-- cosine_similarity(x1, x2[, {dim = 2, eps = 1e-8}]): the cosine of the angle between x1 and
-- x2 along dim (1-based, of their broadcast shape, which loses it), each norm at least eps
function F.cosine_similarity(x1, x2, opts)
    if autocast.on then
        x1, x2 = autocast.fp32(x1, x2)
    end
    local who = "cosine_similarity"
    tensor_arg(x1, who, "x1")
    tensor_arg(x2, who, "x2")
    same_device(x1, x2, who, "x2")
    local o = options(opts, who, { "dim", "eps" })
    local eps = number_opt(o.eps, 1e-8, who, "eps")
    local a, b = broadcast(who, x1, x2, "x1", "x2")
    local n = a:dim()
    local d = o.dim == nil and 2 or dim_arg(o.dim, who)
    if d < 0 then
        d = n + 1 + d
    end
    if d < 1 or d > n then
        raise(string.format("tide: %s: dim %s is out of range for the %d-D broadcast shape %s",
            who, tostring(o.dim or 2), n, shape_str(a)))
    end
    local n1, n2, out = autograd.no_grad(function()
        local m1 = a:norm(2, d, true):clamp(eps)
        local m2 = b:norm(2, d, true):clamp(eps)
        return m1, m2, (a / m1 * (b / m2)):sum(d)
    end)
    if autograd.needs_record(a, b) then
        local nd = autograd.record("cosine_similarity", out, a, b, d)
        nd.n1, nd.n2 = n1, n2
    end
    return out
end

-- pairwise_distance(x1, x2[, {p = 2, eps = 1e-6, keepdim = false}]): the p-norm of x1 - x2 +
-- eps over the last dim, as PyTorch's
function F.pairwise_distance(x1, x2, opts)
    local who = "pairwise_distance"
    tensor_arg(x1, who, "x1")
    tensor_arg(x2, who, "x2")
    same_device(x1, x2, who, "x2")
    local o = options(opts, who, { "p", "eps", "keepdim" })
    local p = number_opt(o.p, 2, who, "p")
    local eps = number_opt(o.eps, 1e-6, who, "eps")
    local keep = bool_opt(o.keepdim, false, who, "keepdim")
    local a, b = broadcast(who, x1, x2, "x1", "x2")
    local d = (a - b):add(eps)
    if a:dim() == 0 then
        return d:abs()
    end
    return d:norm(p, -1, keep)
end

-- ---- losses: {reduction = "mean" | "sum" | "none"} ----

local function loss_options(opts, who, known, not_yet)
    local o = options(opts, who, known or { "reduction" }, not_yet)
    return o, I.check_reduction(o.reduction or "mean", who)
end

-- logits [N, C] or [N, C, d1, ...], 1-based class targets [N] or [N, d1, ...]; {weight =
-- (per class), ignore_index = -100, label_smoothing = 0}
function F.cross_entropy(input, target, opts)
    local o, reduction = loss_options(opts, "cross_entropy",
        { "reduction", "weight", "ignore_index", "label_smoothing" })
    return require("tide.nn._loss").class_entry(input, target, reduction, o, false,
        "cross_entropy")
end

-- log-probabilities [N, C] or [N, C, d1, ...], 1-based class targets; {weight =,
-- ignore_index = -100}
function F.nll_loss(input, target, opts)
    local o, reduction = loss_options(opts, "nll_loss", { "reduction", "weight", "ignore_index" })
    return require("tide.nn._loss").class_entry(input, target, reduction, o, true, "nll_loss")
end

function F.mse_loss(input, target, opts)
    local _, reduction = loss_options(opts, "mse_loss")
    return I.mse_loss(input, target, reduction, "mse_loss")
end

-- margin_ranking_loss(x1, x2, y[, {margin = 0, reduction =}]): max(0, -y (x1 - x2) + margin)
function F.margin_ranking_loss(x1, x2, y, opts)
    if autocast.on then
        x1, x2, y = autocast.fp32(x1, x2, y)
    end
    local who = "margin_ranking_loss"
    local o, reduction = loss_options(opts, who, { "reduction", "margin" })
    tensor_arg(x1, who, "input1")
    tensor_arg(x2, who, "input2")
    tensor_arg(y, who, "target")
    if x1:dim() ~= x2:dim() or x1:dim() ~= y:dim() then -- PyTorch's check: no broadcast by rank
        raise(string.format("tide: %s: expected input1, input2 and target of one rank, got %s, " ..
            "%s and %s", who, shape_str(x1), shape_str(x2), shape_str(y)))
    end
    local margin = number_opt(o.margin, 0, who, "margin")
    return I.reduce(y:neg():mul(x1 - x2):add(margin):clamp(0, nil), reduction, who)
end

-- triplet_margin_loss(anchor, positive, negative[, {margin = 1, p = 2, eps = 1e-6, swap =
-- false, reduction =}]): max(d(a, p) - d(a, n) + margin, 0), d pairwise_distance; with swap,
-- d(a, n) is the smaller of it and d(p, n)
function F.triplet_margin_loss(anchor, positive, negative, opts)
    if autocast.on then
        anchor, positive, negative = autocast.fp32(anchor, positive, negative)
    end
    local who = "triplet_margin_loss"
    local o, reduction = loss_options(opts, who, { "reduction", "margin", "p", "eps", "swap" })
    tensor_arg(anchor, who, "anchor")
    tensor_arg(positive, who, "positive")
    tensor_arg(negative, who, "negative")
    local margin = number_opt(o.margin, 1, who, "margin")
    local d = { p = number_opt(o.p, 2, who, "p"), eps = number_opt(o.eps, 1e-6, who, "eps") }
    local d_ap = F.pairwise_distance(anchor, positive, d)
    local d_an = F.pairwise_distance(anchor, negative, d)
    if bool_opt(o.swap, false, who, "swap") then
        d_an = core.minimum(d_an, F.pairwise_distance(positive, negative, d))
    end
    return I.reduce((d_ap - d_an):add(margin):clamp(0, nil), reduction, who)
end

-- cosine_embedding_loss(x1, x2, y[, {margin = 0, reduction =}]): 1 - cos(x1, x2) where y is 1,
-- max(0, cos - margin) where y is -1, cos over the last dim with PyTorch 1.13's epsilon 1e-12
-- added to each squared norm
function F.cosine_embedding_loss(x1, x2, y, opts)
    if autocast.on then
        x1, x2, y = autocast.fp32(x1, x2, y)
    end
    local who = "cosine_embedding_loss"
    local o, reduction = loss_options(opts, who, { "reduction", "margin" })
    tensor_arg(x1, who, "input1")
    tensor_arg(x2, who, "input2")
    tensor_arg(y, who, "target")
    local margin = number_opt(o.margin, 0, who, "margin")
    local d = x1:dim() - 1
    if d < 0 or x1:dim() ~= x2:dim() then
        raise(string.format("tide: %s: expected input1 and input2 of one rank, 1-D or 2-D, got " ..
            "%s and %s", who, shape_str(x1), shape_str(x2)))
    end
    local prod = x1:mul(x2):sum(d + 1)
    local m1 = x1:mul(x1):sum(d + 1):add(1e-12)
    local m2 = x2:mul(x2):sum(d + 1):add(1e-12)
    local cos = prod:div(m1:mul(m2):sqrt())
    local out = core.where(y:eq(1), cos:neg():add(1), 0) +
        core.where(y:eq(-1), cos:sub(margin):clamp(0, nil), 0)
    return I.reduce(out, reduction, who)
end

function F.l1_loss(input, target, opts)
    if autocast.on then
        input, target = autocast.fp32(input, target)
    end
    local _, reduction = loss_options(opts, "l1_loss")
    I.same_shape_check(input, target, "l1_loss")
    return I.pointwise_loss("l1", input, target, reduction, 0, "l1_loss", function(x, t)
        return x:sub(t):abs()
    end)
end

-- 0.5 d^2 / beta where |d| < beta, |d| - 0.5 beta elsewhere; {beta = 1}
function F.smooth_l1_loss(input, target, opts)
    if autocast.on then
        input, target = autocast.fp32(input, target)
    end
    local who = "smooth_l1_loss"
    local o, reduction = loss_options(opts, who, { "reduction", "beta" })
    local beta = number_opt(o.beta, 1, who, "beta")
    if beta < 0 then
        raise("tide: smooth_l1_loss: expected beta >= 0, got " .. tostring(beta))
    end
    I.same_shape_check(input, target, who)
    return I.pointwise_loss("smooth_l1", input, target, reduction, beta, who, function(x, t)
        local a = x:sub(t):abs()
        if beta > 0 then
            return core.where(a:lt(beta), a:mul(a):mul(0.5 / beta), a:sub(0.5 * beta))
        end
        return a
    end)
end

-- 0.5 d^2 where |d| < delta, delta (|d| - 0.5 delta) elsewhere; {delta = 1}
function F.huber_loss(input, target, opts)
    if autocast.on then
        input, target = autocast.fp32(input, target)
    end
    local who = "huber_loss"
    local o, reduction = loss_options(opts, who, { "reduction", "delta" })
    local delta = number_opt(o.delta, 1, who, "delta")
    if delta <= 0 then
        raise("tide: huber_loss: expected delta > 0, got " .. tostring(delta))
    end
    I.same_shape_check(input, target, who)
    return I.pointwise_loss("huber", input, target, reduction, delta, who, function(x, t)
        local d = x:sub(t)
        local a = d:abs()
        return core.where(a:lt(delta), d:mul(d):mul(0.5), a:sub(0.5 * delta):mul(delta))
    end)
end

-- probabilities input and targets in [0, 1]; each log clamped at -100, as PyTorch; {weight =}
-- scales each element's loss
function F.binary_cross_entropy(input, target, opts)
    if autocast.on then -- refused in a "cuda" region, float32 in a "cpu" one
        input, target = autocast.bce("binary_cross_entropy", input, target)
    end
    local who = "binary_cross_entropy"
    local o, reduction = loss_options(opts, who, { "reduction", "weight" })
    I.same_shape_check(input, target, who)
    local weight = optional_tensor(o.weight, who, "weight")
    same_device(input, weight, who, "weight")
    local loss = require("tide.nn._loss").bce_terms(input, target) -- PyTorch's gradients
    return I.reduce(loss, reduction, who, weight)
end

-- logits input, targets in [0, 1]; {weight = (scales each element's loss, broadcast),
-- pos_weight = (weighs the positive term, broadcast along the last dim: one per class)}
function F.binary_cross_entropy_with_logits(input, target, opts)
    local who = "binary_cross_entropy_with_logits"
    local o, reduction = loss_options(opts, who, { "reduction", "weight", "pos_weight" })
    return I.binary_cross_entropy_with_logits(input, target, reduction, who, o.weight,
        o.pos_weight)
end

-- input: log-probabilities; target: probabilities (log-probabilities with {log_target = true});
-- pointwise xlogy(target, target) - target * input (0 where target is 0 and input finite, nan
-- where input is -inf, as PyTorch's); reduction also "batchmean" (the
-- sum over the batch size, the KL divergence proper)
function F.kl_div(input, target, opts)
    if autocast.on then
        input, target = autocast.fp32(input, target)
    end
    local who = "kl_div"
    local o = options(opts, who, { "reduction", "log_target" })
    local reduction = o.reduction or "mean"
    if reduction ~= "batchmean" then
        I.check_reduction(reduction, who)
    end
    local log_target = bool_opt(o.log_target, false, who, "log_target")
    I.same_shape_check(input, target, who)
    local loss
    if log_target then
        loss = target:exp():mul(target:sub(input))
    else
        -- PyTorch's xlogy(target, target) - target * input: a zero target adds 0 * -input, so
        -- an input of -inf there (log(0), the Annotated Transformer's label-smoothing example)
        -- is nan, as PyTorch's
        local tiny = target:clamp(1e-38) -- log of the unused branch stays finite
        loss = core.where(target:gt(0), target:mul(tiny:log()), 0):sub(target:mul(input))
    end
    if reduction == "batchmean" then
        local n = input:dim() > 0 and input:size(1) or 1
        return loss:sum():div(n)
    end
    return I.reduce(loss, reduction, who)
end

-- ---- attention ----

-- softmax(q k^T * scale + mask) v over q [..., L, E], k [..., S, E], v [..., S, Ev];
-- {attn_mask = bool [L, S] (true takes part) or float (added), is_causal = false,
-- dropout_p = 0, scale = 1/sqrt(E), enable_gqa = false (key/value heads shared by groups of
-- query heads, PyTorch 2.5)}
function F.scaled_dot_product_attention(q, k, v, opts)
    local who = "scaled_dot_product_attention"
    tensor_arg(q, who, "query")
    tensor_arg(k, who, "key")
    tensor_arg(v, who, "value")
    local o = options(opts, who, { "attn_mask", "is_causal", "dropout_p", "scale", "enable_gqa" })
    local mask = optional_tensor(o.attn_mask, who, "attn_mask")
    local causal = bool_opt(o.is_causal, false, who, "is_causal")
    local gqa = bool_opt(o.enable_gqa, false, who, "enable_gqa")
    local p = probability(o.dropout_p or 0, who)
    if q:dim() < 2 or k:dim() < 2 or v:dim() < 2 then
        raise(string.format("tide: %s: expected query, key and value with at least 2 dims, " ..
            "got %s, %s and %s", who, shape_str(q), shape_str(k), shape_str(v)))
    end
    if q:size(-1) ~= k:size(-1) or k:size(-2) ~= v:size(-2) then
        raise(string.format("tide: %s: expected query {..., L, E}, key {..., S, E} and value " ..
            "{..., S, Ev}, got %s, %s and %s", who, shape_str(q), shape_str(k), shape_str(v)))
    end
    if mask and causal then
        raise("tide: scaled_dot_product_attention: pass attn_mask or is_causal, not both")
    end
    if (q.dtype ~= k.dtype or q.dtype ~= v.dtype) and not autocast.on then
        raise(string.format("tide: %s: expected query, key and value of one dtype, got %s, " ..
            "%s and %s (as PyTorch's); convert them with :to(\"%s\")", who, q.dtype, k.dtype,
            v.dtype, q.dtype))
    end
    if gqa then -- PyTorch 2.5's grouped-query attention: each key/value head serves
        -- q.size(-3) / k.size(-3) query heads (repeat_interleave along dim -3)
        if q:dim() < 3 or k:dim() < 3 or v:dim() < 3 then
            raise(string.format("tide: %s: enable_gqa=true needs query, key and value with " ..
                "a heads dim {..., H, L, E}, got %s, %s and %s", who, shape_str(q),
                shape_str(k), shape_str(v)))
        end
        local hq, hk, hv = q:size(-3), k:size(-3), v:size(-3)
        if hk ~= hv or hq % hk ~= 0 then
            raise(string.format("tide: %s: enable_gqa=true needs key and value with the same " ..
                "number of heads, dividing the query's: got %d query, %d key and %d value " ..
                "heads (shapes %s, %s, %s)", who, hq, hk, hv, shape_str(q), shape_str(k),
                shape_str(v)))
        end
        if hq ~= hk then
            local rep = math.floor(hq / hk)
            k = k:repeat_interleave(rep, { dim = -3 })
            v = v:repeat_interleave(rep, { dim = -3 })
        end
    end
    same_device(q, k, who, "key")
    same_device(q, v, who, "value")
    same_device(q, mask, who, "attn_mask")
    local scale = number_opt(o.scale, 1 / math.sqrt(q:size(-1)), who, "scale")
    local scores = q:mul(scale):matmul(k:transpose(-2, -1)) -- scaled before: L x E, not L x S
    local L, S = q:size(-2), k:size(-2)
    if causal then
        local rows = core.arange(1, L + 1, { device = q.device, dtype = "int64" }):view(L, 1)
        local cols = core.arange(1, S + 1, { device = q.device, dtype = "int64" }):view(1, S)
        mask = rows:ge(cols)
    end
    if mask then
        if mask.dtype == "bool" then -- 0 where allowed, -inf elsewhere, added (as PyTorch)
            mask = core.zeros(mask.shape, { dtype = scores.dtype, device = scores.device })
                :masked_fill(mask:logical_not(), -math.huge)
        end
        scores = scores:add(mask)
    end
    local attn = scores:softmax(-1)
    if p > 0 then
        attn = I.dropout(attn, p)
    end
    return attn:matmul(v)
end

-- the functionals of the files below load on first use (each file defines its names on F): a
-- script's Lua heap holds only those it calls. spec/lazy_ops_spec.lua checks the lists
local EXTENSIONS = {
    ["tide.nn._functional_activation"] = { "celu", "gumbel_softmax", "hardshrink", "prelu",
        "rrelu", "softmin", "softshrink", "tanhshrink", "threshold" },
    ["tide.nn._functional_pool"] = { "adaptive_avg_pool1d", "adaptive_max_pool1d",
        "adaptive_max_pool2d", "avg_pool1d", "fold", "lp_pool1d", "lp_pool2d", "max_unpool1d",
        "max_unpool2d", "max_unpool3d", "unfold" },
    ["tide.nn._functional_fractional"] = { "fractional_max_pool2d",
        "fractional_max_pool2d_with_indices", "fractional_max_pool3d",
        "fractional_max_pool3d_with_indices" },
    ["tide.nn._functional_attention"] = { "multi_head_attention_forward" },
    ["tide.nn._functional_layers"] = { "alpha_dropout", "bilinear", "channel_shuffle",
        "conv_tbc", "conv_transpose1d", "dropout1d", "embedding_bag", "instance_norm",
        "local_response_norm", "native_channel_shuffle" },
    ["tide.nn._functional_vision"] = { "affine_grid", "grid_sample" },
    ["tide.nn._functional_interpolate"] = { "interpolate" },
    ["tide.nn._functional_more"] = { "feature_alpha_dropout", "pdist",
        "triplet_margin_with_distance_loss", "upsample", "upsample_bilinear", "upsample_nearest" },
    ["tide.nn._functional_3d"] = { "adaptive_avg_pool3d", "adaptive_max_pool3d", "avg_pool3d",
        "conv3d", "conv_transpose3d", "dropout3d", "max_pool3d" },
    ["tide.nn._functional_losses"] = { "ctc_loss", "gaussian_nll_loss", "hinge_embedding_loss",
        "multi_margin_loss", "multilabel_margin_loss", "multilabel_soft_margin_loss",
        "poisson_nll_loss", "soft_margin_loss" },
    ["tide.nn._functional_forms"] = { "adaptive_max_pool1d_with_indices",
        "adaptive_max_pool2d_with_indices", "adaptive_max_pool3d_with_indices", "celu_",
        "elu_", "hardtanh_", "leaky_relu_", "max_pool1d_with_indices", "max_pool2d_with_indices",
        "max_pool3d_with_indices", "relu_", "rrelu_", "selu_", "threshold_" },
}
F._extensions = EXTENSIONS

-- PyTorch's positional order of the optional parameters of F.X, {required, names[, passed]}:
-- after its `required` arguments F.X takes `names` by position, optionally followed by a table
-- by name for the rest, as well as its own form (the required arguments, then one options
-- table); `passed`: the names its body takes by position (a conv's bias). A.pytorch_form.
local INPLACE = { 1, { "inplace" } }
local DROPOUT = { 1, { "p", "training", "inplace" } }
local SOFTMAX = { 1, { "dim", "_stacklevel", "dtype" } }
local CONV = { 2, { "bias", "stride", "padding", "dilation", "groups" }, { "bias" } }
local CONV_T = { 2, { "bias", "stride", "padding", "output_padding", "groups", "dilation" },
    { "bias" } }
local MAX_POOL = { 2, { "stride", "padding", "dilation", "ceil_mode", "return_indices" } }
-- (the *_with_indices forms always return the indices: PyTorch's flag there is not tide's)
local MAX_POOL_WI = { 2, { "stride", "padding", "dilation", "ceil_mode" } }
local AVG_POOL = { 2, { "stride", "padding", "ceil_mode", "count_include_pad",
    "divisor_override" } }
local ADAPTIVE_MAX = { 2, { "return_indices" } }
local FRACTIONAL = { 2, { "output_size", "output_ratio", "return_indices", "_random_samples" } }
local UNPOOL = { 3, { "stride", "padding", "output_size" } }
local LP_POOL = { 3, { "stride", "ceil_mode" } }
local REDUCED = { 2, { "size_average", "reduce", "reduction" } } -- the losses with only these
local WEIGHTED = { 2, { "weight", "size_average", "reduce", "reduction" } }
local MARGIN3 = { 3, { "margin", "size_average", "reduce", "reduction" } }
local PYTORCH_ORDER = {
    relu = INPLACE, relu6 = INPLACE, silu = INPLACE, mish = INPLACE, hardswish = INPLACE,
    hardsigmoid = INPLACE, selu = INPLACE,
    leaky_relu = { 1, { "negative_slope", "inplace" } },
    elu = { 1, { "alpha", "inplace" } }, celu = { 1, { "alpha", "inplace" } },
    hardtanh = { 1, { "min_val", "max_val", "inplace" } },
    threshold = { 3, { "inplace" } },
    rrelu = { 1, { "lower", "upper", "training", "inplace" } },
    softplus = { 1, { "beta", "threshold" } },
    hardshrink = { 1, { "lambd" } }, softshrink = { 1, { "lambd" } },
    gumbel_softmax = { 1, { "tau", "hard", "eps", "dim" } },
    elu_ = { 1, { "alpha" } }, celu_ = { 1, { "alpha" } },
    leaky_relu_ = { 1, { "negative_slope" } }, hardtanh_ = { 1, { "min_val", "max_val" } },
    rrelu_ = { 1, { "lower", "upper", "training" } },
    softmax = SOFTMAX, log_softmax = SOFTMAX, softmin = SOFTMAX,
    dropout = DROPOUT, dropout1d = DROPOUT, dropout2d = DROPOUT, dropout3d = DROPOUT,
    alpha_dropout = DROPOUT, feature_alpha_dropout = DROPOUT,
    conv1d = CONV, conv2d = CONV, conv3d = CONV,
    conv_transpose1d = CONV_T, conv_transpose2d = CONV_T, conv_transpose3d = CONV_T,
    max_pool1d = MAX_POOL, max_pool2d = MAX_POOL, max_pool3d = MAX_POOL,
    max_pool1d_with_indices = MAX_POOL_WI, max_pool2d_with_indices = MAX_POOL_WI,
    max_pool3d_with_indices = MAX_POOL_WI,
    avg_pool1d = { 2, { "stride", "padding", "ceil_mode", "count_include_pad" } },
    avg_pool2d = AVG_POOL, avg_pool3d = AVG_POOL,
    adaptive_max_pool1d = ADAPTIVE_MAX, adaptive_max_pool2d = ADAPTIVE_MAX,
    adaptive_max_pool3d = ADAPTIVE_MAX,
    fractional_max_pool2d = FRACTIONAL, fractional_max_pool3d = FRACTIONAL,
    fractional_max_pool2d_with_indices = { 2, { "output_size", "output_ratio" } },
    fractional_max_pool3d_with_indices = { 2, { "output_size", "output_ratio" } },
    max_unpool1d = UNPOOL, max_unpool2d = UNPOOL, max_unpool3d = UNPOOL,
    lp_pool1d = LP_POOL, lp_pool2d = LP_POOL,
    unfold = { 2, { "dilation", "padding", "stride" } },
    fold = { 3, { "dilation", "padding", "stride" } },
    interpolate = { 1, { "size", "scale_factor", "mode", "align_corners",
        "recompute_scale_factor", "antialias" } },
    upsample = { 1, { "size", "scale_factor", "mode", "align_corners" } },
    grid_sample = { 2, { "mode", "padding_mode", "align_corners" } },
    affine_grid = { 2, { "align_corners" } },
    pad = { 2, { "mode", "value" } },
    layer_norm = { 2, { "weight", "bias", "eps" } },
    group_norm = { 2, { "weight", "bias", "eps" } },
    batch_norm = { 3, { "weight", "bias", "training", "momentum", "eps" } },
    instance_norm = { 3, { "weight", "bias", "use_input_stats", "momentum", "eps" } },
    local_response_norm = { 2, { "alpha", "beta", "k" } },
    normalize = { 1, { "p", "dim", "eps" } }, -- (PyTorch's out: tide writes no out tensors)
    embedding = { 2, { "padding_idx", "max_norm", "norm_type", "scale_grad_by_freq",
        "sparse" } },
    embedding_bag = { 3, { "max_norm", "norm_type", "scale_grad_by_freq", "mode", "sparse",
        "per_sample_weights", "include_last_offset", "padding_idx" } },
    cosine_similarity = { 2, { "dim", "eps" } },
    pairwise_distance = { 2, { "p", "eps", "keepdim" } },
    scaled_dot_product_attention = { 3, { "attn_mask", "dropout_p", "is_causal", "scale",
        "enable_gqa" } },
    cross_entropy = { 2, { "weight", "size_average", "ignore_index", "reduce", "reduction",
        "label_smoothing" } },
    nll_loss = { 2, { "weight", "size_average", "ignore_index", "reduce", "reduction" } },
    mse_loss = REDUCED, l1_loss = REDUCED, soft_margin_loss = REDUCED,
    multilabel_margin_loss = REDUCED,
    smooth_l1_loss = { 2, { "size_average", "reduce", "reduction", "beta" } },
    huber_loss = { 2, { "reduction", "delta" } },
    kl_div = { 2, { "size_average", "reduce", "reduction", "log_target" } },
    binary_cross_entropy = WEIGHTED, multilabel_soft_margin_loss = WEIGHTED,
    binary_cross_entropy_with_logits = { 2, { "weight", "size_average", "reduce", "reduction",
        "pos_weight" } },
    multi_margin_loss = { 2, { "p", "margin", "weight", "size_average", "reduce",
        "reduction" } },
    hinge_embedding_loss = { 2, { "margin", "size_average", "reduce", "reduction" } },
    poisson_nll_loss = { 2, { "log_input", "full", "size_average", "eps", "reduce",
        "reduction" } },
    gaussian_nll_loss = { 3, { "full", "eps", "reduction" } },
    margin_ranking_loss = MARGIN3, cosine_embedding_loss = MARGIN3,
    triplet_margin_loss = { 3, { "margin", "p", "eps", "swap", "size_average", "reduce",
        "reduction" } },
    ctc_loss = { 4, { "blank", "reduction", "zero_infinity" } },
    one_hot = { 1, { "num_classes" }, { "num_classes" } },
    glu = { 1, { "dim" }, { "dim" } },
    linear = { 2, { "bias" }, { "bias" } },
    pdist = { 1, { "p" }, { "p" } },
    bilinear = { 3, { "bias" }, { "bias" } },
    pixel_shuffle = { 1, { "upscale_factor" }, { "upscale_factor" } },
    pixel_unshuffle = { 1, { "downscale_factor" }, { "downscale_factor" } },
}

-- the functions whose own form already reads a number in place of the options table as their
-- first optional parameter (softmax's dim, dropout's p, an activation's slope or alpha): such a
-- call goes straight to them
local SCALAR_FIRST = { softmax = true, log_softmax = true, softmin = true, dropout = true,
    dropout1d = true, dropout2d = true, dropout3d = true, alpha_dropout = true,
    feature_alpha_dropout = true, leaky_relu = true, elu = true, celu = true, hardshrink = true,
    softshrink = true }

-- body(fixed..., opts) with PyTorch's legacy size_average/reduce in opts turned into its
-- reduction (I.legacy_reduction), for the losses PyTorch gives that pair
local function legacy_losses(who, nfixed, body)
    return function(...)
        local opts = select(nfixed + 1, ...)
        if type(opts) == "table" and (opts.size_average ~= nil or opts.reduce ~= nil) then
            local a = compat.pack(...)
            a[nfixed + 1] = I.legacy_reduction(opts, who)
            return body(compat.unpack(a, 1, a.n))
        end
        return body(...)
    end
end

-- F.name as users call it: PyTorch's positional form where PYTORCH_ORDER lists it, and no
-- argument past the last it takes dropped in silence (A.strict: a fixed parameter list would)
-- the losses' required tensors by PyTorch's names, which a call may also give in its last
-- table: F.mse_loss(x, {target = y}), F.cosine_embedding_loss(a, b, {target = t})
local TWO = { "input", "target" }
local LOSS_TENSORS = {
    cross_entropy = TWO, nll_loss = TWO, mse_loss = TWO, l1_loss = TWO, soft_margin_loss = TWO,
    multilabel_margin_loss = TWO, smooth_l1_loss = TWO, huber_loss = TWO, kl_div = TWO,
    binary_cross_entropy = TWO, multilabel_soft_margin_loss = TWO,
    binary_cross_entropy_with_logits = TWO, multi_margin_loss = TWO, hinge_embedding_loss = TWO,
    poisson_nll_loss = TWO, gaussian_nll_loss = { "input", "target", "var" },
    margin_ranking_loss = { "input1", "input2", "target" },
    cosine_embedding_loss = { "input1", "input2", "target" },
    triplet_margin_loss = { "anchor", "positive", "negative" },
}

-- the pools' required kernel_size (output_size, norm_type) by PyTorch's name, which a call may
-- give in its last table as Python's keyword: F.max_pool2d(x, {kernel_size = 3, stride = 1})
local POOL = { "input", "kernel_size" }
local ADAPTIVE = { "input", "output_size" }
local UNPOOL_BY_NAME = { "input", "indices", "kernel_size" }
local WEIGHT, SHAPE = { "input", "weight" }, { "input", "normalized_shape" }
local RUNNING = { "input", "running_mean", "running_var" }
local REQUIRED_BY_NAME = {
    max_pool1d = POOL, max_pool2d = POOL, max_pool3d = POOL, max_pool1d_with_indices = POOL,
    max_pool2d_with_indices = POOL, max_pool3d_with_indices = POOL, avg_pool1d = POOL,
    avg_pool2d = POOL, avg_pool3d = POOL, lp_pool1d = { "input", "norm_type", "kernel_size" },
    lp_pool2d = { "input", "norm_type", "kernel_size" }, adaptive_avg_pool1d = ADAPTIVE,
    adaptive_avg_pool2d = ADAPTIVE, adaptive_avg_pool3d = ADAPTIVE,
    adaptive_max_pool1d = ADAPTIVE, adaptive_max_pool2d = ADAPTIVE,
    adaptive_max_pool3d = ADAPTIVE,
    pad = { "input", "pad" }, -- F.pad(x, {pad = {0, 1}, value = 0}): F.pad(x, pad=..., value=0)
    adaptive_max_pool1d_with_indices = ADAPTIVE, adaptive_max_pool2d_with_indices = ADAPTIVE,
    adaptive_max_pool3d_with_indices = ADAPTIVE,
    fractional_max_pool2d = POOL, fractional_max_pool3d = POOL,
    fractional_max_pool2d_with_indices = POOL, fractional_max_pool3d_with_indices = POOL,
    max_unpool1d = UNPOOL_BY_NAME, max_unpool2d = UNPOOL_BY_NAME, max_unpool3d = UNPOOL_BY_NAME,
    unfold = POOL, fold = { "input", "output_size", "kernel_size" },
    -- the other required arguments after the first, F.conv2d(x, {weight = w, stride = 2}) too
    threshold = { "input", "threshold", "value" }, threshold_ = { "input", "threshold", "value" },
    prelu = WEIGHT, linear = WEIGHT, bilinear = { "input1", "input2", "weight" },
    conv1d = WEIGHT, conv2d = WEIGHT, conv3d = WEIGHT, conv_transpose1d = WEIGHT,
    conv_transpose2d = WEIGHT, conv_transpose3d = WEIGHT, embedding = WEIGHT,
    embedding_bag = { "input", "weight", "offsets" },
    affine_grid = { "theta", "size" }, grid_sample = { "input", "grid" },
    channel_shuffle = { "input", "groups" }, native_channel_shuffle = { "input", "groups" },
    conv_tbc = { "input", "weight", "bias" }, local_response_norm = { "input", "size" },
    layer_norm = SHAPE, rms_norm = SHAPE, group_norm = { "input", "num_groups" },
    batch_norm = RUNNING, instance_norm = RUNNING,
    cosine_similarity = { "x1", "x2" }, pairwise_distance = { "x1", "x2" },
    scaled_dot_product_attention = { "query", "key", "value" },
    triplet_margin_with_distance_loss = { "anchor", "positive", "negative" },
    ctc_loss = { "log_probs", "targets", "input_lengths", "target_lengths" },
}

-- the arguments PyTorch requires but lets be None (F.batch_norm's running stats), or does not
-- require (F.embedding_bag's offsets): a call by name may leave them out
local MAY_BE_NIL = { running_mean = true, running_var = true, offsets = true }
local OWN_MISSING = { pad = true } -- F.pad says how to give its missing sizes itself

-- f(...) with the required tensors a call's last table names (those after its positional
-- ones) put in their places; a call without such a name is f's own. A table by name in place
-- of a required argument that it does not hold raises, as Python's missing argument:
-- F.layer_norm(x, {eps = 1e-3}) would otherwise take the table for normalized_shape
local function tensors_by_name(who, fixed, f)
    local nf = #fixed
    local twice = require("tide.pytorch_args").twice
    return function(...)
        local n = select("#", ...)
        local last = n > 0 and select(n, ...) or nil
        if n == 0 or not A.by_name(last) then
            return f(...)
        end
        for i = n, OWN_MISSING[who] and 0 or nf do
            if last[fixed[i]] == nil and not MAY_BE_NIL[fixed[i]] then
                raise(("tide: %s: missing required argument %s (argument #%d); pass it by " ..
                    "position or by name in the last table"):format(who, fixed[i], i))
            end
        end
        if n > nf then -- every tensor by position: one named too is given twice
            for i = 1, nf do
                if last[fixed[i]] ~= nil then
                    twice(who, fixed[i], i)
                end
            end
            return f(...)
        end
        local named = false
        for i = n, nf do
            named = named or last[fixed[i]] ~= nil
        end
        if not named then
            return f(...)
        end
        local a, rest = compat.pack(...), {}
        a[n] = nil
        for k, v in pairs(last) do
            rest[k] = v
        end
        for i = 1, nf do
            local v = rest[fixed[i]]
            if v ~= nil then
                if i < n then
                    twice(who, fixed[i], i)
                end
                a[i], rest[fixed[i]] = v, nil
            end
        end
        a[nf + 1] = next(rest) ~= nil and rest or nil
        return f(compat.unpack(a, 1, nf + 1))
    end
end

local function finish(name)
    local f = rawget(F, name)
    if type(f) ~= "function" or name:sub(1, 1) == "_" then
        return
    end
    local order = PYTORCH_ORDER[name]
    if order and I.LEGACY_REDUCTION[name] then
        f = legacy_losses(name, order[1], A.strict(name, f))
    end
    if order and order[3] and A.arity(f) == order[1] + #order[3] then
        f = A.strict(name, f) -- a body without an options table (bilinear): none dropped
    end
    if order then
        f = A.pytorch_form(name, order[1], order[2], order[3] or {}, f, SCALAR_FIRST[name])
    end
    if LOSS_TENSORS[name] or REQUIRED_BY_NAME[name] then
        if not order then -- its own parameter list counts the arguments (the wrapper's cannot)
            f = A.strict(name, f)
        end
        f = tensors_by_name(name, LOSS_TENSORS[name] or REQUIRED_BY_NAME[name], f)
    end
    rawset(F, name, A.strict(name, f))
end
local own = {}
for name in pairs(F) do
    own[#own + 1] = name
end
for _, name in ipairs(own) do
    finish(name)
end

local lazy = {}
for name, names in pairs(EXTENSIONS) do
    local function install() -- _lazy calls it for a missing name: the file defines them all
        if not package.loaded[name] then
            require(name)(F)
            for _, k in ipairs(names) do
                finish(k)
            end
        end
    end
    for _, k in ipairs(names) do
        lazy[k] = install
    end
end

return require("tide._lazy")(F, lazy)
