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
local core = require "tide.core"
local autograd = require "tide.autograd"
local raise = autograd.raise
local Module = require "tide.nn.Module"
local nn_F = require "tide.nn.functional"
local I = require "tide.nn._internal"

local TDL = Module:extend("TransformerDecoderLayer")
local WHO = "TransformerDecoderLayer"
local KNOWN = { "dim_feedforward", "dropout", "activation", "batch_first", "norm_first",
    "layer_norm_eps" }
local MASKS = { "tgt_mask", "memory_mask", "tgt_key_padding_mask", "memory_key_padding_mask",
    "tgt_is_causal", "memory_is_causal" }

function TDL:init(d_model, nhead, opts)
    opts = opts or {}
    core._check_options(opts, WHO, KNOWN)
    I.check_int(d_model, "d_model", WHO)
    I.check_int(nhead, "nhead", WHO)
    local ff = I.check_int(opts.dim_feedforward or 2048, "dim_feedforward", WHO)
    local p = opts.dropout or 0.1
    local act = opts.activation or "relu"
    local activation
    if act == "relu" then
        activation = nn_F.relu
    elseif act == "gelu" then
        activation = nn_F.gelu
    elseif type(act) == "function" or Module.is_module(act) then
        activation = act -- a module (nn.GELU()) becomes the child "activation", as in PyTorch
    else
        raise(string.format('tide: %s: activation must be "relu", "gelu", a function or a ' ..
            "module, got %s", WHO, tostring(act)))
    end
    local eps = opts.layer_norm_eps or 1e-5
    if type(eps) ~= "number" or eps <= 0 then
        raise(string.format("tide: %s: expected layer_norm_eps to be a positive number, got %s",
            WHO, tostring(eps)))
    end
    -- what TransformerDecoder needs to make copies
    self._args = { d_model, nhead, opts }
    self.d_model, self.nhead = d_model, nhead
    local nn = require "tide.nn"
    local bf = opts.batch_first == true
    self.self_attn = nn.MultiheadAttention(d_model, nhead, { dropout = p, batch_first = bf })
    self.multihead_attn = nn.MultiheadAttention(d_model, nhead, { dropout = p, batch_first = bf })
    self.linear1 = nn.Linear(d_model, ff)
    self.dropout = nn.Dropout(p)
    self.linear2 = nn.Linear(ff, d_model)
    self.norm_first = opts.norm_first == true
    self.norm1 = nn.LayerNorm(d_model, { eps = eps })
    self.norm2 = nn.LayerNorm(d_model, { eps = eps })
    self.norm3 = nn.LayerNorm(d_model, { eps = eps })
    self.dropout1 = nn.Dropout(p)
    self.dropout2 = nn.Dropout(p)
    self.dropout3 = nn.Dropout(p)
    self.activation = activation
end

-- the masks of a call: a tensor is tgt_mask, a table the options
function TDL._masks(mask_or_opts, who)
    if autograd.is_tensor(mask_or_opts) then
        return { tgt_mask = mask_or_opts }
    end
    if mask_or_opts ~= nil and type(mask_or_opts) ~= "table" then
        raise(string.format("tide: %s: expected tgt_mask (a tensor) or an options table, got %s",
            who, type(mask_or_opts)))
    end
    local o = mask_or_opts or {}
    core._check_options(o, who, MASKS)
    for _, k in ipairs({ "tgt_is_causal", "memory_is_causal" }) do
        if o[k] ~= nil and type(o[k]) ~= "boolean" then
            raise(string.format("tide: %s: expected %s to be a boolean, got %s", who, k,
                type(o[k])))
        end
    end
    return o
end

function TDL:forward(tgt, memory, mask_or_opts)
    I.check_tensor(tgt, WHO)
    if not autograd.is_tensor(memory) then
        raise(string.format("tide: %s: expected memory (the encoder's output) to be a tensor, " ..
            "got %s", WHO, type(memory)))
    end
    local o = TDL._masks(mask_or_opts, WHO)
    local function sa(x)
        local y = self.self_attn(x, x, x, { attn_mask = o.tgt_mask,
            key_padding_mask = o.tgt_key_padding_mask, need_weights = false,
            is_causal = o.tgt_is_causal })
        return self.dropout1(y)
    end
    local function mha(x)
        local y = self.multihead_attn(x, memory, memory, { attn_mask = o.memory_mask,
            key_padding_mask = o.memory_key_padding_mask, need_weights = false,
            is_causal = o.memory_is_causal })
        return self.dropout2(y)
    end
    local function ff(x)
        return self.dropout3(self.linear2(self.dropout(self.activation(self.linear1(x)))))
    end
    local x = tgt
    if self.norm_first then
        x = x:add(sa(self.norm1(x)))
        x = x:add(mha(self.norm2(x)))
        x = x:add(ff(self.norm3(x)))
    else
        x = self.norm1(x:add(sa(x)))
        x = self.norm2(x:add(mha(x)))
        x = self.norm3(x:add(ff(x)))
    end
    return x
end

return TDL
