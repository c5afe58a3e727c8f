-- nn.TransformerEncoder(encoder_layer, num_layers[, {norm =}]): num_layers copies of the layer
-- (same initial weights, as PyTorch's deep copies) in a ModuleList `layers` (state_dict keys
-- layers.1..., tide's 1-based ModuleList names), then the optional norm module.
-- y = enc(src[, {mask =, src_key_padding_mask =}]) (a tensor second argument is mask).
local core = require("tide.core")
local autograd = require("tide.autograd")
local raise = autograd.raise
local Module = require("tide.nn.Module")
local I = require("tide.nn._internal")
local T = require("tide.nn._transformer")
local S = require("tide.nn._signature")

local TE = Module:extend("TransformerEncoder")
local WHO = "TransformerEncoder"

function TE:init(encoder_layer, num_layers, opts)
    opts = opts or {}
    -- enable_nested_tensor and mask_check change nothing here (no nested tensors)
    core._check_options(opts, WHO, { "norm", "enable_nested_tensor", "mask_check" })
    if not (Module.is_module(encoder_layer) and rawget(encoder_layer, "_args")) then
        raise("tide: " .. WHO .. ": expected an nn.TransformerEncoderLayer, got " ..
            (Module.is_module(encoder_layer) and tostring(encoder_layer) or type(encoder_layer)))
    end
    I.check_int(num_layers, "num_layers", WHO)
    T.init_stack(self, encoder_layer, num_layers, opts.norm)
    self.enable_nested_tensor = opts.enable_nested_tensor ~= false -- PyTorch's attributes
    self.mask_check = opts.mask_check ~= false
end

local FORWARD = { "mask", "src_key_padding_mask", "is_causal" }

-- forward(src[, mask, src_key_padding_mask, is_causal]): PyTorch's positional order, the last
-- of them (or all) in a table by name
function TE:forward(src, ...)
    local o = S.arguments(WHO, FORWARD, 1, ...)
    if next(o) == nil then
        return T.forward_stack(self, src, nil)
    end
    core._check_options(o, WHO, FORWARD)
    return T.forward_stack(self, src, { src_mask = o.mask,
        src_key_padding_mask = o.src_key_padding_mask, is_causal = o.is_causal })
end

S.define(TE, { names = { "encoder_layer", "num_layers", "norm", "enable_nested_tensor",
    "mask_check" }, required = 2 })

return TE
