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

local TE = Module:extend("TransformerEncoder")
local WHO = "TransformerEncoder"

function TE:init(encoder_layer, num_layers, opts)
    opts = opts or {}
    core._check_options(opts, WHO, { "norm", "enable_nested_tensor" })
    if not (Module.is_module(encoder_layer) and rawget(encoder_layer, "_args")) then
        raise("tide: " .. WHO .. ": expected an nn.TransformerEncoderLayer, got " ..
            (Module.is_module(encoder_layer) and tostring(encoder_layer) or type(encoder_layer)))
    end
    I.check_int(num_layers, "num_layers", WHO)
    T.init_stack(self, encoder_layer, num_layers, opts.norm)
end

function TE:forward(src, mask_or_opts)
    local o = mask_or_opts
    if autograd.is_tensor(o) then
        o = { src_mask = o }
    elseif o ~= nil then
        core._check_options(o, WHO, { "mask", "src_key_padding_mask", "is_causal" })
        o = { src_mask = o.mask, src_key_padding_mask = o.src_key_padding_mask,
            is_causal = o.is_causal }
    end
    return T.forward_stack(self, src, o)
end

return TE
