-- nn.TransformerDecoder(decoder_layer, num_layers[, {norm =}]): num_layers copies of the layer
-- (same initial weights, as PyTorch's deep copies) in a ModuleList `layers` (state_dict keys
-- layers.1..., tide's 1-based ModuleList names), then the optional norm module.
-- y = dec(tgt, memory[, {tgt_mask =, memory_mask =, tgt_key_padding_mask =,
-- memory_key_padding_mask =, tgt_is_causal =, memory_is_causal =}]) (a tensor third argument is
-- tgt_mask), each layer given the same masks.
local core = require "tide.core"
local autograd = require "tide.autograd"
local raise = autograd.raise
local Module = require "tide.nn.Module"
local ModuleList = require "tide.nn.ModuleList"
local TDL = require "tide.nn.TransformerDecoderLayer"
local I = require "tide.nn._internal"
local compat = require "tide._compat"

local TD = Module:extend("TransformerDecoder")
local WHO = "TransformerDecoder"

-- a fresh layer with layer's configuration, values, device, dtype and mode
local function copy_layer(layer)
    local c = getmetatable(layer)(compat.unpack(layer._args, 1, 3))
    c:load_state_dict(layer:state_dict())
    local p = layer:parameters()[1]
    if p then
        c:to(p.device, p.dtype)
    end
    if not layer.training then
        c:eval()
    end
    return c
end

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
    local list = {}
    for i = 1, num_layers do
        list[i] = copy_layer(decoder_layer)
    end
    self.layers = ModuleList(list)
    self.num_layers = num_layers
    if opts.norm ~= nil then
        self.norm = opts.norm
    end
end

function TD:forward(tgt, memory, mask_or_opts)
    local o = TDL._masks(mask_or_opts, WHO)
    local x = tgt
    for i = 1, self.num_layers do
        x = self.layers[i](x, memory, o)
    end
    if self.norm then
        x = self.norm(x)
    end
    return x
end

return TD
