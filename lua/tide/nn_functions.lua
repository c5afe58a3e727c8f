-- tide.nn_functions: PyTorch's top-level names for nn.functional's ops (torch.conv2d,
-- torch.dropout, torch.embedding, ...), so ported scripts that call them run. Each takes its
-- required arguments, then PyTorch's optional ones in torch.X's positional order, the last of
-- them (or all) in a table by name, as Python's keywords: tide.conv2d(x, w, b, 2, 1),
-- tide.conv2d(x, w, b, {stride = 2, padding = 1}) and tide.conv2d(x, w, {bias = b, stride =
-- 2, padding = 1}) are one call. Where torch.X's arguments differ from F.X's, torch.X's rule
-- (torch.embedding(weight, indices), torch.batch_norm(input, weight, bias, running_mean,
-- running_var, training, momentum, eps, cudnn_enabled), torch.dropout(input, p, train), an
-- integer reduction 0, 1, 2 for "none", "mean", "sum", "none" by default); the values are
-- F.X's.
local compat = require("tide._compat")
local core = require("tide.core")
local args = require("tide.op_args")
local raise = require("tide.autograd.raise")

local is_tensor = core.is_tensor
local pack, unpack = compat.pack, compat.unpack

local M = { functions = {}, names = {} }

local function F()
    return require("tide").nn.functional
end

-- cuDNN's switch (torch.batch_norm's cudnn_enabled, layer_norm's cudnn_enable): taken and
-- checked, no effect
local IGNORED = { cudnn_enabled = true, cudnn_enable = true }
-- PyTorch's reduction enum (at::Reduction), as torch.X takes it positionally
local REDUCTIONS = { [0] = "none", [1] = "mean", [2] = "sum" }

-- options by name against values (a stride {2, 2}), and a parameter given both ways: the rule
-- every PyTorch-positional call of tide shares
local P = require("tide.pytorch_args")
local by_name = P.is_options

-- the options of a call (a, n: its arguments): those after the required ones, by position or,
-- the last of them, in a table by name; each once
local function gather(name, required, optional, a, n)
    local nreq = #required
    local last = n
    while last > nreq and a[last] == nil do
        last = last - 1
    end
    local named = #optional > 0 and last > nreq and by_name(a[last]) and a[last]
    local positional = named and last - 1 or last
    if positional > nreq + #optional then
        local all = compat.move(optional, 1, #optional, nreq + 1, compat.move(required, 1,
            nreq, 1, {}))
        raise(("tide: %s: expected at most %d argument%s (%s), got %d"):format(name, #all,
            #all == 1 and "" or "s", table.concat(all, ", "), positional))
    end
    local o = {}
    for i = nreq + 1, positional do
        o[optional[i - nreq]] = a[i]
    end
    if named then
        core._check_options(named, name, optional)
        for k, v in pairs(named) do
            if o[k] ~= nil then
                P.twice(name, k, nreq + P.position(optional, k))
            end
            o[k] = v
        end
    end
    for k in pairs(IGNORED) do
        if o[k] ~= nil and type(o[k]) ~= "boolean" then
            raise(("tide: %s: expected %s to be a boolean (it changes nothing here), got %s")
                :format(name, k, type(o[k])))
        end
        o[k] = nil
    end
    if type(o.reduction) == "number" then
        local r = REDUCTIONS[o.reduction]
        if not r then
            raise(('tide: %s: reduction must be "none", "mean" or "sum" (or PyTorch\'s 0, 1, ' ..
                "2), got %s"):format(name, tostring(o.reduction)))
        end
        o.reduction = r
    end
    return o
end

-- required arguments by name, as Python's keywords: a table by name in a required argument's
-- place (tide.layer_norm(x, {normalized_shape = {6}, eps = 1e-3})) gives that one and those
-- after it, the optional ones staying in it; a is the call's arguments, put in place
local function required_by_name(name, required, a)
    local last = a.n
    while last > 1 and a[last] == nil do
        last = last - 1
    end
    local kw = a[last]
    if last > #required or not by_name(kw) or next(kw) == nil then
        return a
    end
    local rest
    for k, v in pairs(kw) do
        local i = P.position(required, k)
        if i and i < last then
            P.twice(name, k, i)
        elseif i == nil then
            rest = rest or {}
            rest[k] = v
        end
    end
    for i = last, #required do
        a[i] = kw[required[i]]
        if a[i] == nil then
            raise(("tide: %s: missing %s: give it as argument #%d or by name"):format(name,
                required[i], i))
        end
    end
    a[#required + 1] = rest
    a.n = #required + 1
    return a
end

-- tide.<name>(required..., optional...): call(o, required...), o the options by name; errors
-- of the F function fname are raised as name's
local function define(name, required, optional, call, fname)
    local nreq = #required
    M.functions[name] = function(...)
        local a = required_by_name(name, required, pack(...))
        local o = gather(name, required, optional, a, a.n)
        if fname and fname ~= name then
            return args.as_op(name, fname, call, o, unpack(a, 1, nreq))
        end
        return call(o, unpack(a, 1, nreq))
    end
    M.names[#M.names + 1] = name
end

-- F[fname](required..., o): F.X takes the same options, by the same names
local function options_last(fname)
    return function(o, ...)
        local a = pack(...)
        a[a.n + 1] = o
        return F()[fname](unpack(a, 1, a.n + 1))
    end
end

-- F[fname](required...): F.X takes nothing more
local function required_only(fname)
    return function(_, ...)
        return F()[fname](...)
    end
end

-- tide.<name> as F[fname] (default the same name)
local function same(name, required, optional, fname)
    fname = fname or name
    define(name, required, optional,
        #optional > 0 and options_last(fname) or required_only(fname), fname)
end

-- F.X(input, weight, bias, opts): bias taken out of the options
local function biased(fname)
    return function(o, input, weight)
        local bias = o.bias
        o.bias = nil
        return F()[fname](input, weight, bias, o)
    end
end

-- ---- convolutions ----

for _, n in ipairs({ "conv1d", "conv2d", "conv3d" }) do
    define(n, { "input", "weight" }, { "bias", "stride", "padding", "dilation", "groups" },
        biased(n))
end
for _, n in ipairs({ "conv_transpose1d", "conv_transpose2d", "conv_transpose3d" }) do
    define(n, { "input", "weight" }, { "bias", "stride", "padding", "output_padding", "groups",
        "dilation" }, biased(n))
end
define("bilinear", { "input1", "input2", "weight" }, { "bias" }, function(o, x1, x2, w)
    return F().bilinear(x1, x2, w, o.bias)
end)

-- ---- pooling and padding ----

-- torch.max_pool*: one result (no return_indices); max_pool1d_with_indices: both
local POOL = { "stride", "padding", "dilation", "ceil_mode" }
for _, n in ipairs({ "max_pool1d", "max_pool2d", "max_pool3d" }) do
    same(n, { "input", "kernel_size" }, POOL)
end
define("max_pool1d_with_indices", { "input", "kernel_size" }, POOL, function(o, x, k)
    o.return_indices = true
    return F().max_pool1d(x, k, o)
end, "max_pool1d")
same("avg_pool1d", { "input", "kernel_size" }, { "stride", "padding", "ceil_mode",
    "count_include_pad" })
same("adaptive_avg_pool1d", { "input", "output_size" }, {})
-- torch.adaptive_max_pool1d gives the indices too, always
define("adaptive_max_pool1d", { "input", "output_size" }, {}, function(_, x, size)
    return F().adaptive_max_pool1d(x, size, { return_indices = true })
end)
-- constant_pad_nd(input, pad[, value = 0]): F.pad's constant mode
define("constant_pad_nd", { "input", "pad" }, { "value" }, function(o, x, pad)
    return F().pad(x, pad, { value = o.value })
end, "pad")

-- ---- dropout: torch.X(input, p, train), both required ----

for _, n in ipairs({ "dropout", "alpha_dropout", "feature_alpha_dropout" }) do
    define(n, { "input", "p", "train" }, {}, function(_, x, p, train)
        if type(p) ~= "number" then
            raise(("tide: %s: expected p to be a number, got %s; call %s(input, p, train)")
                :format(n, type(p), n))
        end
        if type(train) ~= "boolean" then
            raise(("tide: %s: expected train to be a boolean, got %s; call %s(input, p, train)")
                :format(n, type(train), n))
        end
        return F()[n](x, { p = p, training = train })
    end)
end

-- ---- normalization ----

define("layer_norm", { "input", "normalized_shape" }, { "weight", "bias", "eps",
    "cudnn_enable" }, options_last("layer_norm"))
define("group_norm", { "input", "num_groups" }, { "weight", "bias", "eps", "cudnn_enabled" },
    options_last("group_norm"))
-- torch's order: weight and bias first, then the running estimates
define("batch_norm", { "input" }, { "weight", "bias", "running_mean", "running_var",
    "training", "momentum", "eps", "cudnn_enabled" }, function(o, x)
    local rm, rv = o.running_mean, o.running_var
    o.running_mean, o.running_var = nil, nil
    return F().batch_norm(x, rm, rv, o)
end)
define("instance_norm", { "input" }, { "weight", "bias", "running_mean", "running_var",
    "use_input_stats", "momentum", "eps", "cudnn_enabled" }, function(o, x)
    local rm, rv = o.running_mean, o.running_var
    o.running_mean, o.running_var = nil, nil
    return F().instance_norm(x, rm, rv, o)
end)

-- ---- embeddings: weight first ----

-- sparse = false is the only kind tide has (true raises as F.embedding's)
local function dense(o)
    if o.sparse == false then
        o.sparse = nil
    end
    return o
end
define("embedding", { "weight", "indices" }, { "padding_idx", "scale_grad_by_freq", "sparse" },
    function(o, weight, indices)
        if not is_tensor(weight) then
            raise("tide: embedding: expected weight to be a tensor, got " .. type(weight) ..
                "; call embedding(weight, indices) (torch's order, not F.embedding's)")
        end
        if not is_tensor(indices) then
            raise("tide: embedding: expected indices to be a tensor, got " .. type(indices))
        end
        if args.FLOAT[indices.dtype] and not args.FLOAT[weight.dtype] then
            raise(("tide: embedding: weight is %s and indices %s: torch.embedding takes " ..
                "(weight, indices), F.embedding (input, weight); swap them"):format(
                weight.dtype, indices.dtype))
        end
        return F().embedding(indices, weight, dense(o))
    end)

-- embedding_bag(weight, indices, offsets[, scale_grad_by_freq, mode = 0, sparse,
-- per_sample_weights, include_last_offset, padding_idx]): mode 0, 1, 2 (or "sum", "mean",
-- "max"), sum by default as torch's; the bags' result only (torch's other three results are
-- its kernel's bookkeeping)
local BAG_MODES = { [0] = "sum", [1] = "mean", [2] = "max" }
define("embedding_bag", { "weight", "indices", "offsets" }, { "scale_grad_by_freq", "mode",
    "sparse", "per_sample_weights", "include_last_offset", "padding_idx" },
    function(o, weight, indices, offsets)
        if not is_tensor(weight) then
            raise("tide: embedding_bag: expected weight to be a tensor, got " .. type(weight) ..
                "; call embedding_bag(weight, indices, offsets) (torch's order)")
        end
        if o.scale_grad_by_freq == false then
            o.scale_grad_by_freq = nil
        end
        local mode = o.mode == nil and 0 or o.mode
        o.mode = BAG_MODES[mode] or mode
        return (F().embedding_bag(indices, weight, offsets, dense(o)))
    end)

-- ---- distances ----

define("pdist", { "input" }, { "p" }, function(o, x)
    return F().pdist(x, o.p)
end)
same("pairwise_distance", { "x1", "x2" }, { "p", "eps", "keepdim" })
same("cosine_similarity", { "x1", "x2" }, { "dim", "eps" })

-- ---- losses: reduction "none" | "mean" | "sum", or PyTorch's 0 | 1 | 2 ----

-- torch.X's reduction defaults to "none", not F.X's "mean": PyTorch 1.13's argument parser
-- reads the enum's default, Mean, as 0 (torch.kl_div(x, y) is unreduced); tide.X does the same
local function loss(name, required, optional)
    local call = options_last(name)
    define(name, required, optional, function(o, ...)
        if o.reduction == nil then
            o.reduction = "none"
        end
        return call(o, ...)
    end)
end
loss("kl_div", { "input", "target" }, { "reduction", "log_target" })
loss("cosine_embedding_loss", { "input1", "input2", "target" }, { "margin", "reduction" })
loss("hinge_embedding_loss", { "input", "target" }, { "margin", "reduction" })
loss("margin_ranking_loss", { "input1", "input2", "target" }, { "margin", "reduction" })
loss("poisson_nll_loss", { "input", "target" }, { "log_input", "full", "eps", "reduction" })
loss("triplet_margin_loss", { "anchor", "positive", "negative" }, { "margin", "p", "eps",
    "swap", "reduction" })
loss("binary_cross_entropy_with_logits", { "input", "target" }, { "weight", "pos_weight",
    "reduction" })
loss("ctc_loss", { "log_probs", "targets", "input_lengths", "target_lengths" }, { "blank",
    "reduction", "zero_infinity" })

-- ---- activations ----

-- (tide.prelu and tide.hardshrink are the methods t:prelu and t:hardshrink, torch's
-- arguments: lua/tide/activation_methods.lua)
same("selu", { "input" }, {})
same("celu", { "input" }, { "alpha" })
same("threshold", { "input", "threshold", "value" }, {})
-- torch.rrelu's generator: not yet (F.rrelu draws from tide's generator)
define("rrelu", { "input" }, { "lower", "upper", "training", "generator" }, function(o, x)
    if o.generator ~= nil then
        raise('tide: rrelu: option "generator" is not supported yet')
    end
    return F().rrelu(x, o)
end)

-- ---- rearranging ----

same("pixel_shuffle", { "input", "upscale_factor" }, {})
same("pixel_unshuffle", { "input", "downscale_factor" }, {})
same("channel_shuffle", { "input", "groups" }, {})
same("native_channel_shuffle", { "input", "groups" }, {}, "channel_shuffle")

return M
