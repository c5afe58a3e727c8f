-- nn.TransformerEncoderLayer(d_model, nhead[, {dim_feedforward = 2048, dropout = 0.1,
-- activation = "relu", batch_first = false, norm_first = false, layer_norm_eps = 1e-5}]):
-- y = layer(src[, {src_mask =, src_key_padding_mask =, is_causal =}]) (a tensor second argument
-- is src_mask; is_causal applies the causal mask),
-- PyTorch's: self-attention then a feed-forward block, each with dropout, a residual and a
-- LayerNorm (after each block, or before with norm_first); children self_attn, linear1, dropout,
-- linear2, norm1, norm2, dropout1, dropout2. activation: "relu", "gelu", a function (of the
-- tensor) or a module (nn.GELU()).
local core = require("tide.core")
local autograd = require("tide.autograd")
local raise = autograd.raise
local Module = require("tide.nn.Module")
local I = require("tide.nn._internal")
local T = require("tide.nn._transformer")
local S = require("tide.nn._signature")

local TEL = Module:extend("TransformerEncoderLayer")
local WHO = "TransformerEncoderLayer"

function TEL:init(d_model, nhead, opts)
    opts = opts or {}
    local ff, p, activation = T.layer_options(opts, d_model, nhead, WHO)
    T.add_children(self, 2, d_model, nhead, opts, ff, p, activation, opts.layer_norm_eps or 1e-5)
    -- PyTorch's stash of the activation: 1 relu, 2 gelu (function or module), else 0
    local nn_F = require("tide.nn.functional")
    local is = function(cls)
        return Module.is_module(activation) and activation.__name == cls
    end
    self.activation_relu_or_gelu = (activation == nn_F.relu or is("ReLU")) and 1
        or (activation == nn_F.gelu or is("GELU")) and 2 or 0
end

local function masks(o)
    core._check_options(o, WHO, { "src_mask", "src_key_padding_mask", "is_causal" })
    if o.is_causal ~= nil and type(o.is_causal) ~= "boolean" then
        raise("tide: " .. WHO .. ": expected is_causal to be a boolean, got " .. type(o.is_causal))
    end
    return o.src_mask, o.src_key_padding_mask, o.is_causal
end

-- forward(src[, src_mask, src_key_padding_mask, is_causal]), PyTorch's positional order, the
-- last of them (or all) in a table by name: is_causal applies the causal mask in the attention
-- (MultiheadAttention's is_causal), with src_mask too if one is given
local FORWARD = { "src_mask", "src_key_padding_mask", "is_causal" }
function TEL:forward(src, ...)
    I.check_tensor(src, WHO)
    I.check_input(src, self.linear1.weight, WHO) -- named here, not by an inner layer
    local mask, kpm, causal = masks(S.arguments(WHO, FORWARD, 1, ...))
    local function sa(x)
        return T.attend(self.self_attn, self.dropout1, x, x, mask, kpm, causal)
    end
    local function ff(x)
        return T.feed_forward(self, x, self.dropout2)
    end
    return T.residual(self, src, { sa, ff })
end

S.define(TEL, { names = { "d_model", "nhead", "dim_feedforward", "dropout", "activation",
    "layer_norm_eps", "batch_first", "norm_first", "device", "dtype" }, required = 2 })

return TEL
