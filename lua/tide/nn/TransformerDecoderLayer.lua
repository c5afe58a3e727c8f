-- nn.TransformerDecoderLayer(d_model, nhead[, {dim_feedforward = 2048, dropout = 0.1,
-- activation = "relu", layer_norm_eps = 1e-5, batch_first = false, norm_first = false}]):
-- y = layer(tgt, memory[, {tgt_mask =, memory_mask =, tgt_key_padding_mask =,
-- memory_key_padding_mask =, tgt_is_causal =, memory_is_causal =}]) (a tensor third argument is
-- tgt_mask), PyTorch 1.13's: self-attention over tgt, attention from tgt to memory, then a
-- feed-forward block, each with dropout, a residual and a LayerNorm (after each block, or before
-- with norm_first); children self_attn, multihead_attn, linear1, dropout, linear2, norm1, norm2,
-- norm3, dropout1, dropout2, dropout3. Masks as MultiheadAttention's (bool: true where attention
-- is not allowed; float: added); the *_is_causal options apply the causal mask (PyTorch 2's
-- names), with the given mask too. activation: "relu", "gelu", a function or a module.
local core = require("tide.core")
local autograd = require("tide.autograd")
local raise = autograd.raise
local Module = require("tide.nn.Module")
local I = require("tide.nn._internal")
local T = require("tide.nn._transformer")
local S = require("tide.nn._signature")

local TDL = Module:extend("TransformerDecoderLayer")
local WHO = "TransformerDecoderLayer"
local MASKS = { "tgt_mask", "memory_mask", "tgt_key_padding_mask", "memory_key_padding_mask",
    "tgt_is_causal", "memory_is_causal" }

function TDL:init(d_model, nhead, opts)
    opts = opts or {}
    local ff, p, activation = T.layer_options(opts, d_model, nhead, WHO)
    local eps = opts.layer_norm_eps or 1e-5
    if type(eps) ~= "number" or eps <= 0 then
        raise(string.format("tide: %s: expected layer_norm_eps to be a positive number, got %s",
            WHO, tostring(eps)))
    end
    self.d_model, self.nhead = d_model, nhead
    T.add_children(self, 3, d_model, nhead, opts, ff, p, activation, eps)
end

-- the masks of a call (the arguments after tgt and memory): PyTorch's positional order, the
-- last of them (or all) in a table by name
function TDL._masks(who, ...)
    local o = S.arguments(who, MASKS, 2, ...)
    core._check_options(o, who, MASKS)
    for _, k in ipairs({ "tgt_is_causal", "memory_is_causal" }) do
        if o[k] ~= nil and type(o[k]) ~= "boolean" then
            raise(string.format("tide: %s: expected %s to be a boolean, got %s", who, k,
                type(o[k])))
        end
    end
    return o
end

function TDL:forward(tgt, memory, ...)
    I.check_tensor(tgt, WHO)
    if not autograd.is_tensor(memory) then
        raise(string.format("tide: %s: expected memory (the encoder's output) to be a tensor, " ..
            "got %s", WHO, type(memory)))
    end
    I.check_input(tgt, self.linear1.weight, WHO) -- named here, not by an inner layer
    I.check_input(memory, self.linear1.weight, WHO)
    local o = TDL._masks(WHO, ...)
    local function sa(x)
        return T.attend(self.self_attn, self.dropout1, x, x, o.tgt_mask, o.tgt_key_padding_mask,
            o.tgt_is_causal)
    end
    local function mha(x)
        return T.attend(self.multihead_attn, self.dropout2, x, memory, o.memory_mask,
            o.memory_key_padding_mask, o.memory_is_causal)
    end
    local function ff(x)
        return T.feed_forward(self, x, self.dropout3)
    end
    return T.residual(self, tgt, { sa, mha, ff })
end

S.define(TDL, { names = { "d_model", "nhead", "dim_feedforward", "dropout", "activation",
    "layer_norm_eps", "batch_first", "norm_first", "device", "dtype" }, required = 2 })

return TDL
