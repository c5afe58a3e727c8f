-- nn.TransformerDecoder(decoder_layer, num_layers[, {norm =}]): num_layers copies of the layer
-- (same initial weights, as PyTorch's deep copies) in a ModuleList `layers` (state_dict keys
-- layers.1..., tide's 1-based ModuleList names), then the optional norm module.
-- y = dec(tgt, memory[, {tgt_mask =, memory_mask =, tgt_key_padding_mask =,
-- memory_key_padding_mask =, tgt_is_causal =, memory_is_causal =}]) (a tensor third argument is
-- tgt_mask), each layer given the same masks.
local core = require("tide.core")
local raise = require("tide.autograd").raise
local Module = require("tide.nn.Module")
local TDL = require("tide.nn.TransformerDecoderLayer")
local I = require("tide.nn._internal")
local T = require("tide.nn._transformer")
local S = require("tide.nn._signature")

local TD = Module:extend("TransformerDecoder")
local WHO = "TransformerDecoder"

function TD:init(decoder_layer, num_layers, opts)
    opts = opts or {}
    core._check_options(opts, WHO, { "norm" })
    if not (Module.is_module(decoder_layer) and rawget(decoder_layer, "_args") and
            rawget(decoder_layer, "multihead_attn")) then
        raise("tide: " .. WHO .. ": expected an nn.TransformerDecoderLayer, got " ..
            (Module.is_module(decoder_layer) and tostring(decoder_layer.__name) or
                type(decoder_layer)))
    end
    I.check_int(num_layers, "num_layers", WHO)
    if opts.norm ~= nil and not Module.is_module(opts.norm) then
        raise("tide: " .. WHO .. ": expected norm to be a Module (nn.LayerNorm(d_model)), got " ..
            type(opts.norm))
    end
    T.init_stack(self, decoder_layer, num_layers, opts.norm)
end

function TD:forward(tgt, memory, ...)
    local o = TDL._masks(WHO, ...)
    return T.forward_stack(self, tgt, memory, o)
end

S.define(TD, { names = { "decoder_layer", "num_layers", "norm" }, required = 2 })

return TD
