-- nn.TransformerEncoderLayer(d_model, nhead[, {dim_feedforward = 2048, dropout = 0.1,
-- activation = "relu", batch_first = false, norm_first = false, layer_norm_eps = 1e-5}]):
-- y = layer(src[, {src_mask =, src_key_padding_mask =, is_causal =}]) (a tensor second argument
-- is src_mask; is_causal applies the causal mask),
-- PyTorch's: self-attention then a feed-forward block, each with dropout, a residual and a
-- LayerNorm (after each block, or before with norm_first); children self_attn, linear1, dropout,
-- linear2, norm1, norm2, dropout1, dropout2. activation: "relu", "gelu", a function (of the
-- tensor) or a module (nn.GELU()).
local core = require "tide.core"
local autograd = require "tide.autograd"
local raise = autograd.raise
local Module = require "tide.nn.Module"
local nn_F = require "tide.nn.functional"
local I = require "tide.nn._internal"

local TEL = Module:extend("TransformerEncoderLayer")
local WHO = "TransformerEncoderLayer"
local KNOWN = { "dim_feedforward", "dropout", "activation", "batch_first", "norm_first",
    "layer_norm_eps" }

function TEL:init(d_model, nhead, opts)
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
    -- what TransformerEncoder needs to make copies
    self._args = { d_model, nhead, opts }
    local nn = require "tide.nn"
    self.self_attn = nn.MultiheadAttention(d_model, nhead,
        { dropout = p, batch_first = opts.batch_first == true })
    self.linear1 = nn.Linear(d_model, ff)
    self.dropout = nn.Dropout(p)
    self.linear2 = nn.Linear(ff, d_model)
    self.norm_first = opts.norm_first == true
    local eps = opts.layer_norm_eps or 1e-5
    self.norm1 = nn.LayerNorm(d_model, { eps = eps })
    self.norm2 = nn.LayerNorm(d_model, { eps = eps })
    self.dropout1 = nn.Dropout(p)
    self.dropout2 = nn.Dropout(p)
    self.activation = activation
end

local function masks(mask_or_opts)
    if autograd.is_tensor(mask_or_opts) then
        return mask_or_opts, nil, nil
    end
    local o = mask_or_opts or {}
    core._check_options(o, WHO, { "src_mask", "src_key_padding_mask", "is_causal" })
    if o.is_causal ~= nil and type(o.is_causal) ~= "boolean" then
        raise("tide: " .. WHO .. ": expected is_causal to be a boolean, got " .. type(o.is_causal))
    end
    return o.src_mask, o.src_key_padding_mask, o.is_causal
end

-- forward(src[, src_mask | {src_mask =, src_key_padding_mask =, is_causal =}]): is_causal
-- applies the causal mask in the attention (MultiheadAttention's is_causal), with src_mask too
-- if one is given
function TEL:forward(src, mask_or_opts)
    I.check_tensor(src, WHO)
    local mask, kpm, causal = masks(mask_or_opts)
    local function sa(x)
        local y = self.self_attn(x, x, x, { attn_mask = mask, key_padding_mask = kpm,
            need_weights = false, is_causal = causal })
        return self.dropout1(y)
    end
    local function ff(x)
        return self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(x)))))
    end
    local x = src
    if self.norm_first then
        x = x:add(sa(self.norm1(x)))
        x = x:add(ff(self.norm2(x)))
    else
        x = self.norm1(x:add(sa(x)))
        x = self.norm2(x:add(ff(x)))
    end
    return x
end

return TEL
