-- PyTorch's fixed forms of tide.nn.functional's functions: the in-place activations (F.relu_,
-- elu_, celu_, selu_, leaky_relu_, hardtanh_, rrelu_, threshold_: F.X with {inplace = true},
-- returning the input) and the pools that always give their indices (F.max_pool1d_with_indices
-- ... F.adaptive_max_pool3d_with_indices: F.X with {return_indices = true}). Each takes F.X's
-- arguments but that option; errors name the fixed form. Required from the end of
-- functional.lua; its argument checks are tide.nn._args.
local core = require("tide.core")
local autograd = require("tide.autograd")
local args = require("tide.op_args")
local raise = autograd.raise

local C = require("tide.nn._args")

-- autograd's in-place rule, as t:relu_() words it: a leaf that requires grad, or a view of
-- one, is refused outside tide.no_grad
local function refuse(x, who)
    if x.requires_grad and core.is_grad_enabled() then
        local why = autograd._inplace_refusal(x)
        if why then
            raise("tide: " .. who .. ": in-place operation " .. why[1] .. "; " .. why[2])
        end
    end
end

-- opts (a table of known keys, or a number standing for the option key when key is given)
-- copied, with flag set to true
local function with_flag(opts, who, known, key, flag)
    local o = key and C.number_or_options(opts, key, who, known) or C.options(opts, who, known)
    local copy = {}
    for k, v in pairs(o) do
        copy[k] = v
    end
    copy[flag] = true
    return copy
end

return function(F)
    -- F.relu_(input): t:relu_()
    function F.relu_(input, ...)
        args.no_extra("relu_", 1, ...)
        C.tensor_arg(input, "relu_", "input")
        return input:relu_()
    end

    -- F.X_(input[, opts]): F.X(input, opts with inplace = true); key: the option a number
    -- stands for
    local function inplace(name, known, key)
        local who = name .. "_"
        F[who] = function(input, opts, ...)
            args.no_extra(who, 2, ...)
            C.tensor_arg(input, who, "input")
            local o = with_flag(opts, who, known, key, "inplace")
            refuse(input, who)
            return args.as_op(who, name, F[name], input, o)
        end
    end
    inplace("elu", { "alpha" }, "alpha")
    inplace("celu", { "alpha" }, "alpha")
    inplace("selu", {})
    inplace("leaky_relu", { "negative_slope" }, "negative_slope")
    inplace("hardtanh", { "min_val", "max_val" })
    inplace("rrelu", { "lower", "upper", "training" })

    -- F.threshold_(input, threshold, value)
    function F.threshold_(input, threshold, value, ...)
        args.no_extra("threshold_", 3, ...)
        C.tensor_arg(input, "threshold_", "input")
        refuse(input, "threshold_")
        return args.as_op("threshold_", "threshold", F.threshold, input, threshold, value,
            { inplace = true })
    end

    -- F.X_with_indices(input, size[, opts]): F.X's output and its 1-based indices
    local function with_indices(name, known)
        local who = name .. "_with_indices"
        F[who] = function(input, size, opts, ...)
            local o = { return_indices = true }
            if known then
                args.no_extra(who, 3, ...)
                o = with_flag(opts, who, known, nil, "return_indices")
            else -- the adaptive pools take no options
                args.no_extra(who, 2, opts, ...)
            end
            return args.as_op(who, name, F[name], input, size, o)
        end
    end
    local POOL = { "stride", "padding", "dilation", "ceil_mode" }
    with_indices("max_pool1d", POOL)
    with_indices("max_pool2d", POOL)
    with_indices("max_pool3d", POOL)
    with_indices("adaptive_max_pool1d")
    with_indices("adaptive_max_pool2d")
    with_indices("adaptive_max_pool3d")
end
