-- tide.nn._internal: what nn's modules and nn.functional share, out of the users' sight:
-- parameter creation, argument checks, and the loss bodies (each takes `who`, the name errors
-- carry: the module's, "CrossEntropyLoss", or the function's, "cross_entropy").
local compat = require("tide._compat")
local core = require("tide.core")
local autocast = require("tide._autocast")
local autograd = require("tide.autograd")
local fused = require("tide.nn._fused")
local args = require("tide.op_args")
local raise = autograd.raise

local I = {}

local is_tensor = autograd.is_tensor

-- a leaf parameter drawn from U(-bound, bound) on the default device (PyTorch's default
-- kaiming_uniform(a = sqrt(5)) for weights reduces to bound = 1/sqrt(fan_in), as does the bias)
function I.uniform_param(shape, bound, dtype)
    local p = core.empty(shape, dtype and { dtype = dtype } or nil)
    autograd.no_grad(function()
        p:uniform_(-bound, bound)
    end)
    return p:requires_grad_(true)
end

function I.const_param(shape, value, dtype)
    local p = core.full(shape, value, { dtype = dtype or core.get_default_dtype() })
    return p:requires_grad_(true)
end

-- m's weight (of shape) and, unless bias is false, its bias of n elements, both drawn from
-- U(-1/sqrt(fan_in), 1/sqrt(fan_in)): PyTorch's default for Linear and the convolutions
function I.weight_and_bias(m, shape, n, fan_in, bias)
    local bound = 1 / math.sqrt(fan_in)
    m:register_parameter("weight", I.uniform_param(shape, bound))
    if bias ~= false then
        m:register_parameter("bias", I.uniform_param({ n }, bound))
    end
end

-- m:reset_parameters() of Linear and the convolutions: weight and bias drawn again in place
-- from U(-1/sqrt(fan_in), 1/sqrt(fan_in)), fan_in the weight's elements per dim-1 slice
-- (PyTorch's kaiming_uniform_(a = sqrt(5)) has that bound)
function I.reset_weight_and_bias(m)
    local w, b = m.weight, m.bias
    local bound = w:numel() > 0 and 1 / math.sqrt(w:numel() / w:size(1)) or 0
    autograd.no_grad(function()
        w:uniform_(-bound, bound)
        if b then
            b:uniform_(-bound, bound)
        end
    end)
end

-- a norm's reset_parameters (PyTorch's LayerNorm / GroupNorm): weight ones and bias zeros
-- again, in place, where the module has them
function I.reset_affine(m)
    autograd.no_grad(function()
        if m.weight ~= nil then
            m.weight:fill_(1)
        end
        if m.bias ~= nil then
            m.bias:zero_()
        end
    end)
end

-- a normalization layer's affine parameters of shape: weight ones and, with bias, bias zeros
function I.affine_params(m, shape, bias)
    m:register_parameter("weight", I.const_param(shape, 1))
    if bias then
        m:register_parameter("bias", I.const_param(shape, 0))
    end
end

function I.shape_str(s)
    return "{" .. table.concat(s, ", ") .. "}"
end

-- true on cpu:0, where reading a value back is free (no transfer, no guard). For argument
-- checks only (an error there, a NaN-poisoned result elsewhere): what a result is computed
-- with never depends on it, so every CPU device gives the same bits (spec/cpu_devices_bits_spec)
function I.on_host(t)
    local d = t.device
    return d.type == "cpu" and d.index == 0
end

function I.check_tensor(x, who)
    if not is_tensor(x) then
        raise("tide: " .. who .. ": expected a tensor input, got " .. type(x))
    end
end

function I.check_int(v, what, who, min)
    if not compat.is_integer(v) or v < (min or 1) then
        raise("tide: " .. who .. ": expected " .. what .. " to be an integer >= " .. (min or 1) ..
            ", got " .. tostring(v)) -- check_int <- init <- constructor <- user
    end
    return v
end

-- a 1-d module's size option (Conv1d's, ConvTranspose1d's kernel_size, stride, padding,
-- dilation): an integer, or PyTorch's 1-tuple (kernel_size=(3,)) as a 1-element list {3},
-- which _single unwraps; a string (padding "same"/"valid") passes as it is
function I.single(v, what, who)
    -- a plain list only: an object (a complex tensor, whose # is its length) goes on to the
    -- caller's integer check, which names it
    if type(v) == "table" and not autograd.is_tensor(v) and getmetatable(v) == nil then
        if #v ~= 1 or next(v, #v > 0 and #v or nil) ~= nil then
            local parts = {}
            for i = 1, #v do
                parts[i] = tostring(v[i])
            end
            raise("tide: " .. who .. ": expected " .. what .. " to be an integer or a " ..
                "1-element list such as {3} (PyTorch's (3,)), got {" ..
                table.concat(parts, ", ") .. "}")
        end
        return v[1]
    end
    return v
end

-- a boolean option tide implements only at PyTorch's default false (an embedding's sparse, an
-- embedding bag's scale_grad_by_freq): nil or false passes; true raises as every option not
-- built yet does (docs/API.md), a non-boolean names its type
function I.check_false_only(v, what, who)
    if v == nil or v == false then
        return
    end
    if type(v) ~= "boolean" then
        raise("tide: " .. who .. ": expected " .. what .. " to be a boolean, got " .. type(v) ..
            " (" .. tostring(v) .. ")")
    end
    raise("tide: " .. who .. ': option "' .. what .. '" is not supported yet')
end

-- an embedding's sparse option, a boolean: true is taken with the weight's gradient dense (the
-- values PyTorch's sparse gradient has, made dense; optim.SparseAdam updates its rows). Returns
-- it as true or false
function I.check_sparse(v, who)
    if v ~= nil and type(v) ~= "boolean" then
        raise("tide: " .. who .. ": expected sparse to be a boolean, got " .. type(v) .. " (" ..
            tostring(v) .. ")")
    end
    return v == true
end

-- a convolution module's channel counts (integers >= 1) and groups (nil: 1, an integer >= 1
-- that divides both), checked and set on m
function I.conv_channels(m, in_channels, out_channels, groups, who)
    I.check_int(in_channels, "in_channels", who)
    I.check_int(out_channels, "out_channels", who)
    groups = I.check_int(groups or 1, "groups", who)
    if in_channels % groups ~= 0 then
        raise(string.format("tide: %s: in_channels %d is not divisible by groups %d", who,
            in_channels, groups))
    end
    if out_channels % groups ~= 0 then
        raise(string.format("tide: %s: out_channels %d is not divisible by groups %d", who,
            out_channels, groups))
    end
    m.in_channels, m.out_channels, m.groups = in_channels, out_channels, groups
end

local CONV_OPTIONS = { "stride", "padding", "dilation", "groups", "bias", "padding_mode" }

-- Conv1d's and Conv2d's arguments after kernel_size: (stride, padding, bias), or an options
-- table in stride's place, which also sets m.padding_mode and m.pad_with ("zeros" without
-- one); returns stride, padding, dilation, groups and bias
function I.conv_options(m, who, stride, padding, bias)
    if type(stride) ~= "table" then
        m.padding_mode = "zeros"
        return stride, padding, nil, nil, bias
    end
    local o = stride
    core._check_options(o, who, CONV_OPTIONS)
    m.padding_mode, m.pad_with = I.padding_mode(o.padding_mode, who)
    return o.stride, o.padding, o.dilation, o.groups, o.bias
end

-- normalized_shape (an integer or a list of integers >= 1) as a list, and its element count
function I.normalized_shape(ns, who)
    if type(ns) ~= "table" then
        ns = { ns }
    end
    local d = 1
    for i = 1, #ns do
        I.check_int(ns[i], "normalized_shape[" .. i .. "]", who)
        d = d * ns[i]
    end
    return ns, d
end

-- raises unless shape ends in the dims ns (a normalization's input)
function I.check_trailing(shape, ns, who)
    local k, nd = #ns, #shape
    local ok = nd >= k
    for i = 1, k do
        ok = ok and shape[nd - k + i] == ns[i]
    end
    if not ok then
        raise("tide: " .. who .. ": expected input ending in " .. I.shape_str(ns) .. ", got " ..
            I.shape_str(shape))
    end
end

-- LayerNorm's and RMSNorm's constructor: (normalized_shape, eps, elementwise_affine) or
-- (normalized_shape, {eps =, elementwise_affine =}) set m.normalized_shape (a list), m.d (its
-- element count) and m.eps (default_eps when nil); unless elementwise_affine is false, the
-- weight (ones) and, with bias, the bias (zeros)
function I.norm_init(m, who, normalized_shape, eps, affine, default_eps, bias)
    if type(eps) == "table" then
        core._check_options(eps, who, { "eps", "elementwise_affine" })
        eps, affine = eps.eps, eps.elementwise_affine
    end
    m.normalized_shape, m.d = I.normalized_shape(normalized_shape, who)
    m.eps = I.check_number(eps, default_eps, "eps", who)
    m.elementwise_affine = affine ~= false -- PyTorch's attribute (LayerNorm, RMSNorm)
    if affine ~= false then
        I.affine_params(m, m.normalized_shape, bias)
    end
end

-- an input x on another device than w (a layer's parameters, or the tensor `what` names): the
-- core's device error, raised at the user's line (the core would name matmul and point inside
-- the library)
function I.check_device(x, w, who, what)
    local xd, wd = x.device, w.device
    if xd ~= wd then
        raise(string.format("tide: %s: expected all tensors on the same device, found " ..
            "%s (input) and %s (%s); move the input with x:to(\"%s\")", who, tostring(xd),
            tostring(wd), what or "parameters", tostring(wd)))
    end
end

-- an argument beside the input and the weights (offsets, per-sample weights) on another
-- device than the input x: the argument is the one to move
function I.check_arg_device(x, arg, who, what)
    local xd, ad = x.device, arg.device
    if xd ~= ad then
        raise(string.format("tide: %s: expected all tensors on the same device, found " ..
            "%s (input) and %s (%s); move the %s with %s:to(\"%s\")", who, tostring(xd),
            tostring(ad), what, what, what, tostring(xd)))
    end
end

local FLOAT_DTYPES = { float32 = true, float64 = true, float16 = true, bfloat16 = true }

-- a layer's input and weight in one dtype, as PyTorch requires (a float64 batch into a float32
-- model would otherwise run at float64 and return float64)
function I.check_dtype(x, w, who)
    if x.dtype ~= w.dtype and not autocast.same_cast(x, w) then
        local fix = string.format("convert the input (x:to(\"%s\"))", w.dtype)
        if FLOAT_DTYPES[x.dtype] then -- a float input: the model may move to its dtype instead
            fix = fix .. string.format(" or the model (model:to(\"%s\"))", x.dtype)
        end
        raise(string.format("tide: %s: the input is %s and the weight %s; %s", who, x.dtype,
            w.dtype, fix))
    end
end

-- a normalization's parameter or running estimate v (named name) in the input's dtype, or
-- float32 under a float16/bfloat16 input (the layer then computes in float32, as PyTorch's
-- mixed-type norms). module: the fix names the model (a layer), else the tensor (functional)
function I.check_norm_dtype(x, v, who, name, module)
    if v == nil or v.dtype == x.dtype or (v.dtype == "float32" and args.HALF[x.dtype]) or
        autocast.same_cast(x, v) then
        return
    end
    local to_x = module and string.format("the model (model:to(\"%s\"))", x.dtype) or
        string.format("the %s (%s:to(\"%s\"))", name, name, x.dtype)
    local fix = "convert " .. to_x -- an integer weight or estimate: the input's dtype
    if FLOAT_DTYPES[v.dtype] then
        fix = string.format("convert the input (x:to(\"%s\"))", v.dtype) ..
            (FLOAT_DTYPES[x.dtype] and " or " .. to_x or "")
    end
    raise(string.format("tide: %s: the input is %s and the %s %s; %s", who, x.dtype, name,
        v.dtype, fix))
end

-- a layer's input on its weight's device and of its dtype (check_device, then check_dtype)
function I.check_input(x, w, who)
    if x.device ~= w.device then
        I.check_device(x, w, who)
    end
    if x.dtype ~= w.dtype then
        I.check_dtype(x, w, who) -- under autocast, the op casts both to one dtype
    end
end

-- a loss's input and target on different devices: named after the loss, at the user's line
-- (the core would name sub or mul, met somewhere inside the formula)
function I.check_same_device(input, target, who)
    local a, b = input.device, target.device
    if a ~= b then
        raise(string.format("tide: %s: expected input and target on the same device, found " ..
            "%s and %s; move one with :to(\"%s\")", who, tostring(a), tostring(b), tostring(b)))
    end
end

-- a number option (default when nil)
function I.check_number(v, default, what, who)
    if v == nil then
        return default
    end
    if type(v) ~= "number" then
        raise("tide: " .. who .. ": expected " .. what .. " to be a number, got " .. type(v))
    end
    return v
end

-- (a) or ({a, b}) -> a, b: integers, each >= min when min is given
function I.pair(v, who, what, min)
    local a, b = I.pair_any(v, who, what)
    if min and (a < min or b < min) then -- a zero stride divided by zero in forward
        raise(string.format("tide: %s: expected %s to be an integer >= %d, got %s", who, what,
            min, type(v) == "table" and ("{" .. a .. ", " .. b .. "}") or tostring(v)))
    end
    return a, b
end

-- the same without a bound
function I.pair_any(v, who, what)
    if type(v) == "table" then
        -- one or two integers: anything else would fail later, far from its cause
        local a, b = v[1], v[2] or v[1]
        if not (compat.is_integer(a) and compat.is_integer(b)) or v[3] ~= nil then
            local shown = {}
            for k, x in pairs(v) do
                shown[#shown + 1] = (compat.is_integer(k) and "" or tostring(k) .. " = ") ..
                    (type(x) == "number" and tostring(x) or type(x))
            end
            raise("tide: " .. who .. ": expected " .. what .. " to be an integer or {h, w}, got {" ..
                table.concat(shown, ", ") .. "}")
        end
        return a, b
    end
    if not compat.is_integer(v) then
        raise("tide: " .. who .. ": expected " .. what .. " to be an integer or {h, w}, got " ..
            tostring(v))
    end
    return v, v
end

local REDUCTIONS = { mean = true, sum = true, none = true }

function I.check_reduction(r, who)
    if not REDUCTIONS[r] then
        raise("tide: " .. who .. ": unknown reduction '" .. tostring(r) ..
            "'; use \"mean\", \"sum\" or \"none\"")
    end
    return r
end

-- PyTorch's legacy size_average and reduce (torch.nn._reduction.legacy_get_string): the losses
-- and loss modules that take them, by the name their errors carry
local LEGACY = {}
for name in ([[cross_entropy nll_loss mse_loss l1_loss soft_margin_loss multilabel_margin_loss
    smooth_l1_loss kl_div binary_cross_entropy multilabel_soft_margin_loss
    binary_cross_entropy_with_logits multi_margin_loss hinge_embedding_loss poisson_nll_loss
    margin_ranking_loss cosine_embedding_loss triplet_margin_loss CrossEntropyLoss NLLLoss
    NLLLoss2d MSELoss L1Loss SoftMarginLoss MultiLabelMarginLoss SmoothL1Loss KLDivLoss BCELoss
    MultiLabelSoftMarginLoss BCEWithLogitsLoss MultiMarginLoss HingeEmbeddingLoss PoissonNLLLoss
    MarginRankingLoss CosineEmbeddingLoss TripletMarginLoss]]):gmatch("%S+") do
    LEGACY[name] = true
end
I.LEGACY_REDUCTION = LEGACY

-- opts with PyTorch's legacy pair turned into its reduction, as PyTorch 1.13 does for `who`
-- (a loss in LEGACY): either given (not nil) overrides `reduction`; nil counts as true; both
-- true is "mean", reduce alone "sum", reduce false "none". Warns once per reduction, PyTorch's
-- deprecation message. A fresh table (the caller's is left as it is); opts itself when neither
-- is given or who takes no such pair (its option check then names them as unknown).
function I.legacy_reduction(opts, who)
    if type(opts) ~= "table" or not LEGACY[who] or getmetatable(opts) ~= nil or
        (opts.size_average == nil and opts.reduce == nil) then
        return opts
    end
    for _, key in ipairs({ "size_average", "reduce" }) do
        local v = opts[key]
        if v ~= nil and type(v) ~= "boolean" then
            local shown = type(v) == "string" and ("%q"):format(v) or tostring(v)
            raise(("tide: %s: %s must be a boolean (or nil), got %s %s; use reduction = " ..
                "\"mean\", \"sum\" or \"none\""):format(who, key, type(v), shown))
        end
    end
    local size_average, reduce = opts.size_average ~= false, opts.reduce ~= false
    local r = (size_average and reduce) and "mean" or (reduce and "sum" or "none")
    require("tide._warn").once("legacy_reduction_" .. r, "size_average and reduce args will " ..
        "be deprecated, please use reduction='" .. r .. "' instead.")
    local o = {}
    for k, v in pairs(opts) do
        o[k] = v
    end
    o.size_average, o.reduce, o.reduction = nil, nil, r
    return o
end

-- loss (each element times weight first, when given) reduced as reduction says
function I.reduce(loss, reduction, who, weight)
    if weight then
        loss = loss:mul(weight)
    end
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

-- the class losses' options: weight (nil, or one per class on the input's device) and
-- label_smoothing (in [0, 1], 0 when absent)
local function class_weight(o, c, input, who)
    local weight = o.weight
    if weight ~= nil then
        if not is_tensor(weight) or weight:dim() ~= 1 or weight:size(1) ~= c then
            raise(string.format("tide: %s: expected weight of shape {%d} (one per class), got %s",
                who, c, is_tensor(weight) and I.shape_str(weight.shape) or type(weight)))
        end
        I.check_device(input, weight, who, "weight")
    end
    return weight
end

local function label_smoothing(o, who)
    local eps = o.label_smoothing or 0
    if type(eps) ~= "number" or eps < 0 or eps > 1 then
        raise("tide: " .. who .. ": expected label_smoothing in [0, 1], got " .. tostring(eps))
    end
    return eps
end

-- Cross entropy and NLL with PyTorch's options (o: weight [C] or nil, ignore_index (default
-- -100), label_smoothing) on input [N, C] or [N, C, d1, ...] and 1-based targets [N] or
-- [N, d1, ...]. Rows whose target is ignore_index count for nothing, in the loss and in the
-- weighted mean's denominator. `logp` says input is already log-probabilities (nll_loss).
function I.class_loss(input, target, reduction, o, logp, who)
    if not is_tensor(input) or not is_tensor(target) then
        raise("tide: " .. who .. ": expected (input, target) tensors")
    end
    I.check_same_device(input, target, who)
    local nd = input:dim()
    if nd < 2 then
        raise("tide: " .. who .. ": expected input of shape {N, C} or {N, C, d1, ...}, got " ..
            I.shape_str(input.shape))
    end
    local tdt = target.dtype
    if tdt ~= "int64" and tdt ~= "int32" then
        raise("tide: " .. who .. ": expected integer class targets (int64, 1-based), " ..
            "got " .. tdt .. "; convert with target:long()")
    end
    local c, ishape, tshape = input:size(2), input.shape, target.shape
    local ok = #tshape == nd - 1 and tshape[1] == ishape[1]
    for d = 3, nd do
        ok = ok and tshape[d - 1] == ishape[d]
    end
    if not ok then
        table.remove(ishape, 2)
        raise("tide: " .. who .. ": expected target of shape " .. I.shape_str(ishape) ..
            " for input " .. I.shape_str(input.shape) .. ", got " .. I.shape_str(tshape))
    end
    local weight = class_weight(o, c, input, who)
    local ignore = o.ignore_index == nil and -100 or o.ignore_index
    if not compat.is_integer(ignore) then
        raise("tide: " .. who .. ": expected ignore_index to be an integer, got " ..
            tostring(ignore))
    end
    local eps = label_smoothing(o, who)
    -- classes on the last dim: rows [M, C], targets [M]
    local x = input
    if nd > 2 then
        local perm = { 1 }
        for d = 3, nd do
            perm[#perm + 1] = d
        end
        perm[#perm + 1] = 2
        x = input:permute(perm)
    end
    x = x:reshape(-1, c)
    local t = target:reshape(-1)
    local m = t:size(1)
    local valid = t:ne(ignore)
    -- each row's class (1 for an ignored row, whose pick the valid mask drops): the picks are
    -- gathers, O(rows), where a one-hot mask of every row's classes was O(rows x classes)
    -- (cross_entropy of 256 x 1000 logits took 7x PyTorch's time)
    local pick = core.where(valid, t, 1):view(m, 1)
    local poison
    if m > 0 then
        local bad = pick:lt(1):logical_or(pick:gt(c)):sum() -- neither ignored nor in 1..C
        if I.on_host(t) then
            if bad:item() ~= 0 then
                local first
                for _, v in ipairs(t:totable()) do
                    if v ~= ignore and (v < 1 or v > c) then
                        first = first or v
                    end
                end
                local also = o.ignore_index == nil and "" or
                    string.format(" (or ignore_index %d)", ignore)
                raise(string.format("tide: %s: target %d out of range for %d classes; class " ..
                    "targets are 1-based, in 1..%d%s", who, compat.tointeger(first) or first, c,
                    c, also))
            end
        else
            poison = bad:to(input.dtype):neg():sqrt() -- NaN when one is out of range
        end
    end
    if poison then -- an out-of-range class on a device: a NaN loss, and a pick in range
        pick = pick:clamp(1, math.max(c, 1))
    end
    if not logp and not weight and eps == 0 and reduction ~= "none" then
        -- one fused node (log_softmax inside); the same ops on every device
        local denom = reduction ~= "sum" and valid:sum():to(x.dtype) or nil
        local loss = fused.cross_entropy(x, pick, valid:view(m, 1), denom)
        return poison and loss:add(poison) or loss
    end
    local lp = logp and x or x:log_softmax(2)
    -- the target's log-probability gathered, an ignored row's dropped by where (a -inf logit,
    -- a masked class, is -inf in lp, and -inf * 0 is NaN); a class weight gathered likewise
    local w = weight and weight:gather(1, pick:view(m)):mul(valid) or nil
    local picked = lp:gather(2, pick):view(m)
    local nll = core.where(valid, w and picked:mul(w) or picked, 0):neg()
    local denom = w and w:sum() or valid:sum():to(lp.dtype)
    local loss, all_ignored
    if reduction == "mean" then
        -- every row ignored (denom 0): the mean is NaN (0/0) and the gradient 0, as PyTorch's,
        -- whose backward skips ignored rows: the division by 1 there, the NaN added as a
        -- constant at the end (the fused path's rule, nn/_fused.lua)
        local none = denom:eq(0)
        all_ignored = core.where(none, denom:add(0 / 0), denom:mul(0))
        denom = denom:add(none:to(denom.dtype))
    end
    if reduction == "none" then
        loss = nll
    elseif reduction == "sum" then
        loss = nll:sum()
    else
        loss = nll:sum():div(denom)
    end
    if eps > 0 then
        local smooth = (weight and lp:mul(weight:view(1, c)) or lp):sum(2):neg():mul(valid)
        if reduction == "none" then
            smooth = smooth
        elseif reduction == "sum" then
            smooth = smooth:sum()
        else -- over the kept rows (their weights' sum with a weight), as PyTorch 1.13's
            smooth = smooth:sum():div(denom)
        end
        loss = loss:mul(1 - eps):add(smooth:mul(eps / c))
    end
    if reduction == "none" then
        loss = loss:view(tshape)
    elseif all_ignored then
        loss = loss:add(all_ignored)
    end
    return poison and loss:add(poison) or loss
end

-- Cross entropy with class probabilities (PyTorch 1.10+): a floating-point target of the
-- input's shape, {N, C}, {N, C, d1, ...} or an unbatched {C}, each row's weights over the
-- classes (a one-hot row is its class index's loss). -sum_c w_c * t_c * log_softmax(input)_c
-- per row; label_smoothing mixes the target with the uniform row first (t * (1 - eps) + eps/C);
-- "mean" divides by the rows (numel / C), not by the weights (PyTorch's
-- cross_entropy_loss_prob_target). ignore_index must stay negative, as PyTorch's.
function I.prob_class_loss(input, target, reduction, o, who)
    I.same_shape_check(input, target, who)
    local nd = input:dim()
    if nd < 1 or not FLOAT_DTYPES[input.dtype] then
        raise(string.format("tide: %s: class-probability targets need floating-point logits " ..
            "of shape {N, C}, {N, C, d1, ...} or {C}, got %s %s", who, input.dtype,
            I.shape_str(input.shape)))
    end
    local cd = nd == 1 and 1 or 2
    local c = input:size(cd)
    local ignore = o.ignore_index
    if ignore ~= nil and (not compat.is_integer(ignore) or ignore >= 0) then
        raise(string.format("tide: %s: ignore_index is not supported with class-probability " ..
            "targets (a floating-point target of the input's shape), got %s; pass 1-based " ..
            "integer class targets to ignore a class", who, tostring(ignore)))
    end
    local weight = class_weight(o, c, input, who)
    local eps = label_smoothing(o, who)
    local lp = input:log_softmax(cd)
    local t = eps > 0 and target:mul(1 - eps):add(eps / c) or target
    local prod = lp:mul(t)
    if weight then
        local wshape = {}
        for d = 1, nd do
            wshape[d] = d == cd and c or 1
        end
        prod = prod:mul(weight:view(wshape))
    end
    if reduction == "none" then
        return prod:sum(cd):neg()
    elseif reduction == "sum" then
        return prod:sum():neg()
    end
    -- numel 0: 0/0, NaN, as PyTorch's
    return prod:sum():neg():div(c > 0 and input:numel() / c or 0)
end

-- cross entropy (or nll with logp): the bool-target check, then class_loss (which takes the
-- fused one-node path when no option is in play), on every device alike; cross entropy with a
-- floating-point target takes class probabilities (prob_class_loss)
function I.class_loss_entry(input, target, reduction, o, logp, who)
    if autocast.on then -- the losses compute in float32 under autocast, as PyTorch's
        input, target = autocast.fp32(input, target)
    end
    if is_tensor(target) and target.dtype == "bool" then
        raise(string.format("tide: %s: the target is a bool tensor; class targets are integer " ..
            "class indices (1-based): convert it with target:long() + 1, or use " ..
            "binary_cross_entropy for true/false targets", who))
    end
    if not logp and is_tensor(input) and is_tensor(target) then
        local a, b = input.shape, target.shape
        local same = #a == #b
        for i = 1, #a do
            same = same and a[i] == b[i]
        end
        if FLOAT_DTYPES[target.dtype] then
            if not same then
                raise(string.format("tide: %s: expected integer class targets (int64, 1-based), " ..
                    "got %s of shape %s; convert with target:long() (a floating-point target " ..
                    "holds class probabilities, of the input's shape %s)", who, target.dtype,
                    I.shape_str(b), I.shape_str(a)))
            end
            I.check_same_device(input, target, who)
            return I.prob_class_loss(input, target, reduction, o, who)
        end
        if same and #a >= 2 then
            local idx = { compat.unpack(a) }
            table.remove(idx, 2)
            raise(string.format("tide: %s: a target of the input's shape %s holds class " ..
                "probabilities and must be floating point, got %s; convert it with " ..
                "target:float(), or pass 1-based class indices of shape %s", who,
                I.shape_str(a), target.dtype, I.shape_str(idx)))
        end
    end
    return I.class_loss(input, target, reduction, o, logp, who)
end

function I.same_shape_check(input, target, who)
    if not is_tensor(input) or not is_tensor(target) then
        raise("tide: " .. who .. ": expected (input, target) tensors")
    end
    I.check_same_device(input, target, who)
    local a, b = input.shape, target.shape
    local same = #a == #b
    for i = 1, #a do
        same = same and a[i] == b[i]
    end
    if not same then
        raise("tide: " .. who .. ": expected target of the input's shape " ..
            I.shape_str(a) .. ", got " .. I.shape_str(b))
    end
end

-- the pointwise loss kind (tide.nn._fused.pointwise_loss's) of input and target, already
-- checked, by the kernel row where it applies, else by the composite: elementwise(input,
-- target) reduced
function I.pointwise_loss(kind, input, target, reduction, beta, who, elementwise)
    local function composite(x, t)
        return I.reduce(elementwise(x, t), reduction, who)
    end
    return fused.pointwise_loss(kind, input, target, reduction, beta, composite) or
        composite(input, target)
end

local function squared_error(x, t)
    local d = x:sub(t)
    return d:mul(d)
end

function I.mse_loss(input, target, reduction, who)
    if autocast.on then
        input, target = autocast.fp32(input, target)
    end
    I.same_shape_check(input, target, who)
    return I.pointwise_loss("mse", input, target, reduction, 0, who, squared_error)
end

-- max(x, 0) - x*y + log(1 + exp(-|x|)): stable for large |x|
-- t (optional) broadcasts to x's shape, and sits on x's device
local function broadcasts_to(t, x, who, what)
    if t == nil then
        return
    end
    if not is_tensor(t) then
        raise(string.format("tide: %s: expected %s to be a tensor, got %s", who, what, type(t)))
    end
    local ok = t:dim() <= x:dim()
    for i = 0, t:dim() - 1 do
        local a, b = t:size(t:dim() - i), x:size(x:dim() - i)
        ok = ok and (a == 1 or a == b)
    end
    if not ok then
        raise(string.format("tide: %s: %s %s does not broadcast to the input's shape %s", who,
            what, I.shape_str(t.shape), I.shape_str(x.shape)))
    end
    I.check_device(x, t, who, what)
end

-- log(1 + exp(-|x|))
local function softplus_abs(x)
    return x:abs():neg():exp():add(1):log()
end

-- max(x, 0) - x y + log(1 + exp(-|x|)), without weights
local function bce_logits(x, t)
    return x:relu():sub(x:mul(t)):add(softplus_abs(x))
end

-- (1 - y) x + lw (log(1 + exp(-|x|)) + max(-x, 0)), lw = 1 + (pos_weight - 1) y: PyTorch's
-- stable form; weight (broadcast) scales each element's loss. Without pos_weight, the kernel row
-- (PyTorch's own formula; its losses times weight, then reduced, as PyTorch's)
function I.binary_cross_entropy_with_logits(input, target, reduction, who, weight, pos_weight)
    if autocast.on then
        input, target, weight, pos_weight = autocast.fp32(input, target, weight, pos_weight)
    end
    I.same_shape_check(input, target, who)
    broadcasts_to(weight, input, who, "weight")
    broadcasts_to(pos_weight, input, who, "pos_weight")
    if not pos_weight then
        if not weight then
            return I.pointwise_loss("bce_with_logits", input, target, reduction, 0, who,
                bce_logits)
        end
        local loss = I.pointwise_loss("bce_with_logits", input, target, "none", 0, who,
            bce_logits)
        return I.reduce(loss, reduction, who, weight)
    end
    local lw = pos_weight:sub(1):mul(target):add(1)
    local loss = target:neg():add(1):mul(input):add(lw:mul(softplus_abs(input)
        :add(input:neg():relu())))
    return I.reduce(loss, reduction, who, weight)
end

-- ---- bodies shared by modules and nn.functional (arguments already checked) ----

-- f(x) written into x itself ({inplace = true}), with autograd's in-place rules: a leaf that
-- requires grad is refused; otherwise x takes the result and a gradient that flows through the
-- copy. f runs on a clone when x is in a graph, so the formulas inside f that read their input
-- read values the write leaves alone (PyTorch's in-place ELU reads its result instead).
function I.inplace(x, f, who)
    if x.requires_grad and core.is_grad_enabled() then
        local why = autograd._inplace_refusal(x) -- the engine's rule, named after the caller
        if why then
            raise("tide: " .. who .. ": in-place operation " .. why[1] .. "; leave inplace " ..
                "off, or " .. (why[1]:find("view", 1, true) and "clone() it first" or
                "wrap it in tide.no_grad"))
        end
        return x:copy_(f(x:clone()))
    end
    return x:copy_(f(x))
end

-- in training: zeroes each element with probability p, scales the rest by 1/(1-p)
function I.dropout(x, p)
    if p == 0 then
        return x
    end
    if p == 1 then
        return x:mul(0)
    end
    -- the mask holds 1/(1-p) or 0, drawn in one pass: the forward is one product, and so is
    -- the gradient (the mask times g)
    local keep = core.empty(x.shape, { device = x.device, dtype = x.dtype })
    return x:mul(keep:_keep_mask_(p, 1 / (1 - p)))
end

-- in training, for p > 0: zeroes whole channels of x with probability p, scaling the rest by
-- 1/(1-p): one draw per channel, broadcast over its last `spatial` dims (dropout1d's 1,
-- dropout2d's 2, dropout3d's 3)
function I.channel_dropout(x, p, spatial)
    if p == 1 then
        return x:mul(0)
    end
    local shape = x.shape
    for d = #shape - spatial + 1, #shape do
        shape[d] = 1
    end
    local keep = core.rand(shape, { device = x.device, dtype = x.dtype }):ge(p)
    return x:mul(keep):mul(1 / (1 - p))
end

-- p (a weight or a bias) nil, or of x's dtype with the shape of x's trailing dims (d elements):
-- what the kernel takes; anything else keeps the composite's broadcasting and errors
local LN_KERNEL = { float32 = true, float64 = true }
local function ln_param_fits(p, x, d)
    if not p then
        return true
    end
    if p.dtype ~= x.dtype or p:numel() ~= d then
        return false
    end
    local ps, xs = p.shape, x.shape
    local off = #xs - #ps
    if off < 0 then
        return false
    end
    for i = 1, #ps do
        if ps[i] ~= xs[off + i] then
            return false
        end
    end
    return true
end

-- a convolution module's padding_mode (PyTorch's): "zeros" (the default) pads inside the
-- convolution; the others pad with F.pad's mode of that name first
local PADDING_MODES = { zeros = "constant", reflect = "reflect", replicate = "replicate",
    circular = "circular" }
function I.padding_mode(mode, who)
    mode = mode == nil and "zeros" or mode
    if not PADDING_MODES[mode] then
        raise(string.format("tide: %s: unknown padding_mode \"%s\"; use \"zeros\", " ..
            "\"reflect\", \"replicate\" or \"circular\"", who, tostring(mode)))
    end
    return mode, PADDING_MODES[mode]
end

-- normalizes over the trailing dims holding d elements (biased variance, as PyTorch): one
-- kernel and one autograd node (tide.nn._fused) for float32/float64, else the composite (which
-- also keeps a negative eps's NaNs, where the kernel refuses it)
function I.layer_norm(x, d, weight, bias, eps)
    if autocast.on then -- float32 under autocast, as PyTorch's
        x, weight, bias = autocast.fp32(x, weight, bias)
    end
    if args.HALF[x.dtype] then -- float16, bfloat16: in float32, rounded once (op_args.in_float)
        return I.layer_norm(x:float(), d, weight and weight:float(), bias and bias:float(), eps)
            :to(x.dtype)
    end
    if eps >= 0 and LN_KERNEL[x.dtype] and ln_param_fits(weight, x, d) and
        ln_param_fits(bias, x, d) then
        local y = fused.layer_norm(x, d, weight, bias, eps)
        if y then
            return y
        end
    end
    local xr = x:reshape(-1, d)
    local xc = xr:sub(xr:mean(2, true))
    local var = xc:mul(xc):mean(2, true)
    local y = xc:mul(var:add(eps):rsqrt()):view(x.shape)
    if weight then
        y = y:mul(weight)
    end
    if bias then
        y = y:add(bias)
    end
    return y
end

-- y * weight + bias with the per-channel weight and bias (each may be nil) viewed as bshape
-- ({1, C, 1, ...}): the affine step of batch_norm and group_norm
function I.channel_affine(y, weight, bias, bshape)
    if weight then
        y = y:mul(weight:view(bshape))
    end
    if bias then
        y = y:add(bias:view(bshape))
    end
    return y
end

-- x with the channels on dim 2: batch statistics in training (biased variance to normalize,
-- unbiased in the running estimates, updated in place when given), running ones otherwise
local BN_FLOAT = FLOAT_DTYPES

-- all of batch_norm's checks, before anything is updated (a failed call changes nothing):
-- each given tensor on x's device with c elements; in training the running estimates, written
-- in place, also floating-point, of shape {c} (or with c on their last dim) and not an
-- expanded view
local function batch_norm_check(x, running_mean, running_var, weight, bias, training, who)
    local c = x:size(2)
    for _, t in ipairs({ { running_mean, "running_mean" }, { running_var, "running_var" },
        { weight, "weight" }, { bias, "bias" } }) do
        local v, name = t[1], t[2]
        if v then
            if v:numel() ~= c then
                raise(string.format("tide: %s: expected %s with %d elements (the input's " ..
                    "channels), got %s", who, name, c, I.shape_str(v.shape)))
            end
            I.check_device(x, v, who)
        end
    end
    if training then
        for _, t in ipairs({ { running_mean, "running_mean" },
            { running_var, "running_var" } }) do
            local v, name = t[1], t[2]
            if v then
                if not BN_FLOAT[v.dtype] then
                    raise(string.format("tide: %s: %s must be floating-point to hold the " ..
                        "running estimate, got %s; convert it with :to(\"float32\")", who, name,
                        v.dtype))
                end
                if v:dim() == 0 or v:size(-1) ~= c then
                    raise(string.format("tide: %s: expected %s of shape {%d} (the input's " ..
                        "channels), got %s", who, name, c, I.shape_str(v.shape)))
                end
                -- an expanded view cannot be written in place; mul_(1) leaves any other as it is
                if c > 1 and not v:is_contiguous() then
                    local ok = pcall(autograd.no_grad, function() v:mul_(1) end)
                    if not ok then
                        raise(string.format("tide: %s: %s is an expanded view, which cannot " ..
                            "hold a running estimate; pass %s:clone()", who, name, name))
                    end
                end
            end
        end
    end
    I.check_norm_dtype(x, running_mean, who, "running_mean")
    I.check_norm_dtype(x, running_var, who, "running_var")
    I.check_norm_dtype(x, weight, who, "weight")
    I.check_norm_dtype(x, bias, who, "bias")
end

local normalize

function I.batch_norm(x, running_mean, running_var, weight, bias, training, momentum, eps, who)
    batch_norm_check(x, running_mean, running_var, weight, bias, training, who)
    if args.HALF[x.dtype] then -- float16, bfloat16: in float32, rounded once (the estimates
        -- keep their dtype, updated in place)
        return normalize(x:float(), running_mean, running_var, weight and weight:float(),
            bias and bias:float(), training, momentum, eps, who):to(x.dtype)
    end
    return normalize(x, running_mean, running_var, weight, bias, training, momentum, eps, who)
end

-- batch_norm once checked
function normalize(x, running_mean, running_var, weight, bias, training, momentum, eps, who)
    local c, bshape, dims = x:size(2), { 1, x:size(2) }, { 1 }
    for d = 3, x:dim() do
        bshape[d], dims[#dims + 1] = 1, d
    end
    if training and x:numel() < 2 * c then
        raise("tide: " .. who .. ": expected more than 1 value per channel in training, " ..
            "got input " .. I.shape_str(x.shape))
    end
    -- one pass for the statistics, one for the result, one node (the rows); else the ops below
    local y = fused.batch_norm(x, running_mean, running_var, weight, bias, training, momentum,
        eps)
    if y then
        return y
    end
    if training then
        local m, xc, v = fused.batch_stats(x, dims)
        local n = x:numel() / c
        autograd.no_grad(function()
            if running_mean then
                running_mean:mul_(1 - momentum):add_(m:reshape(c):mul(momentum))
            end
            if running_var then
                running_var:mul_(1 - momentum):add_(v:reshape(c):mul(momentum * n / (n - 1)))
            end
        end)
        y = xc:mul(v:add(eps):rsqrt())
    else
        y = x:sub(running_mean:view(bshape)):mul(running_var:view(bshape):add(eps):rsqrt())
    end
    return I.channel_affine(y, weight, bias, bshape)
end

-- rows of weight for 1-based integer ids, shape ids.shape .. {embedding_dim}
-- ids' dtype, device and (on the host) range for weight's rows
function I.embedding_ids(ids, weight, who)
    if ids.dtype ~= "int64" and ids.dtype ~= "int32" then
        raise("tide: " .. who .. ": expected integer ids (int64, 1-based), got " .. ids.dtype)
    end
    I.check_device(ids, weight, who)
    local n = weight:size(1)
    -- off the host, index_select checks the range itself (reading ids back would be a transfer)
    if ids:numel() > 0 and I.on_host(ids) then
        local lo, hi = ids:min():item(), ids:max():item()
        if lo < 1 or hi > n then
            local bad = lo < 1 and lo or hi
            raise(string.format("tide: %s: id %d out of range for %d embeddings; ids " ..
                "are 1-based, in 1..%d", who, compat.tointeger(bad) or bad, n, n))
        end
    end
end

-- rows of weight for ids; the padding_idx row's lookups pass no gradient
function I.embedding(ids, weight, who, padding_idx, checked, scale_grad_by_freq)
    if not checked then
        I.embedding_ids(ids, weight, who)
    end
    local shape = ids.shape
    shape[#shape + 1] = weight:size(2)
    local flat = ids:reshape(-1)
    local y = weight:index_select(1, flat):view(shape)
    if padding_idx and y.requires_grad then
        y = core.where(ids:eq(padding_idx):unsqueeze(-1), y:detach(), y)
    end
    if scale_grad_by_freq and y.requires_grad and flat:numel() > 0 then
        -- each looked-up row's gradient divided by how often its id occurs in ids (PyTorch's
        -- scale_grad_by_freq): y + (y - y) * (1 / count) is y itself, its gradient g / count
        local counts = core.zeros({ weight:size(1) }, { dtype = weight.dtype,
            device = weight.device })
        counts:index_add_(1, flat, core.ones({ flat:numel() }, { dtype = weight.dtype,
            device = weight.device }))
        local inv = counts:index_select(1, flat):reciprocal():view(ids.shape):unsqueeze(-1)
        local yd = y:detach()
        y = yd:add(y:sub(yd):mul(inv))
    end
    return y
end

-- a 1-based padding_idx in 1..n or -n..-1 (from the end), as a positive row (nil stays nil)
function I.padding_idx(p, n, who)
    if p == nil then
        return nil
    end
    if not compat.is_integer(p) or p == 0 or p < -n or p > n then
        raise(string.format("tide: %s: padding_idx must be a row of the %d embeddings: 1..%d, " ..
            "or -%d..-1 from the end; got %s", who, n, n, n, tostring(p)))
    end
    return p > 0 and p or n + 1 + p
end

-- an embedding table {n, dim} requiring grad: N(0, 1) as PyTorch's, the padding row zero
-- (fills w in place, its requires_grad kept, when given: Embedding:reset_parameters)
function I.embedding_weight(n, dim, padding_idx, w)
    local given = w
    w = w or core.empty({ n, dim })
    autograd.no_grad(function()
        w:normal_(0, 1)
        if padding_idx then
            w:select(1, padding_idx):fill_(0)
        end
    end)
    return given or w:requires_grad_(true)
end

-- rescales in place (no gradient) each row of weight that ids look up whose norm_type-norm
-- exceeds max_norm to max_norm / (norm + 1e-7) times itself, as PyTorch's embedding_renorm_
function I.embedding_renorm_(weight, ids, max_norm, norm_type)
    autograd.no_grad(function()
        local flat = ids:reshape(-1)
        if flat:numel() == 0 then
            return
        end
        local rows = weight:index_select(1, flat)
        local a, norms = rows:abs(), nil
        if norm_type == math.huge then
            norms = a:amax(2, true)
        else
            norms = a:pow(norm_type):sum(2, true):pow(1 / norm_type)
        end
        local scale = core.where(norms:gt(max_norm), norms:add(1e-7):reciprocal():mul(max_norm), 1)
        local at = flat:view(-1, 1):expand(flat:numel(), weight:size(2))
        weight:scatter_(1, at, rows:mul(scale)) -- a repeated id writes its one value again
    end)
end

-- PyTorch's reset_running_stats() (running_mean 0, running_var 1, num_batches_tracked 0;
-- nothing without track_running_stats) and reset_parameters() (also weight 1 and bias 0 when
-- affine), installed on a norm layer's class (BatchNorm's and InstanceNorm's bases)
function I.define_norm_resets(cls)
    function cls:reset_running_stats(...)
        if select("#", ...) > 0 then
            raise("tide: " .. self.__name .. ":reset_running_stats() takes no arguments, got " ..
                select("#", ...) .. "; call m:reset_running_stats()")
        end
        if self.running_mean ~= nil then
            autograd.no_grad(function()
                self.running_mean:zero_()
                self.running_var:fill_(1)
                self.num_batches_tracked:zero_()
            end)
        end
    end

    function cls:reset_parameters(...)
        if select("#", ...) > 0 then
            raise("tide: " .. self.__name .. ":reset_parameters() takes no arguments, got " ..
                select("#", ...) .. "; call m:reset_parameters()")
        end
        self:reset_running_stats()
        if self.weight ~= nil then
            autograd.no_grad(function()
                self.weight:fill_(1)
                self.bias:zero_()
            end)
        end
    end
end

return I
