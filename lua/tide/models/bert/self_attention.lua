-- BertSelfAttention: multi-head scaled dot-product attention with separate query, key and
-- value projections (Hugging Face's names and layout: head h reads features h*d+1..(h+1)*d).
-- mask: nil or [B, 1, 1, T], added to the scores: 0 where a key takes part, the dtype's lowest
-- finite value where it is padding (a fully padded row gets uniform weights, not NaN).
-- attention_probs_dropout_prob applies to the attention weights in training. Where no mask
-- beyond a packing is asked for, the attention is one kernel over the packed tokens and one
-- autograd node (tide.nn._fused.attention), its dropout inside; else the composite below.
local core = require("tide.core")
local fused = require("tide.nn._fused")
local nn = require("tide.nn")
local I = require("tide.nn._internal")
local idiv = require("tide._compat").idiv
local P = require("tide.models.bert.params")
local packing = require("tide.models.bert.packing")

local BertSelfAttention = nn.Module:extend("BertSelfAttention")

function BertSelfAttention:init(config)
    local H = config.hidden_size
    self.num_attention_heads = config.num_attention_heads
    self.attention_head_size = idiv(H, config.num_attention_heads)
    self.all_head_size = H
    self.query = P.Linear(H, H)
    self.key = P.Linear(H, H)
    self.value = P.Linear(H, H)
    self.dropout = nn.Dropout(config.attention_probs_dropout_prob)
end

-- the attention kernel row on q, k, v [N, H]: each sequence of the packing pk (or, without one,
-- each row of T tokens) attends to itself, no mask or padding, the weights dropped out in
-- training; nil where the device has no kernel for the call
local function packed_attention(self, q, k, v, pk, B, T)
    local offsets = pk and pk.offsets or
        core.arange(0, B * T + 1, T, { dtype = "int64", device = q.device })
    local d = self.attention_head_size
    return fused.attention(q, k, v, offsets, d, self.num_attention_heads, 1 / math.sqrt(d),
        self.training and self.dropout.p or 0)
end

-- hidden [B, T, H] -> [B, T, H]; or, with a packing (tide.models.bert.packing), the real
-- tokens [N, H] -> [N, H]
function BertSelfAttention:forward(hidden, mask, pk)
    local B, T
    if pk then
        B, T = pk.B, pk.T
    else
        B, T = hidden:size(1), hidden:size(2)
    end
    local nh, d = self.num_attention_heads, self.attention_head_size
    -- one kernel when no mask beyond the packing is asked for
    local q, k, v = self.query(hidden), self.key(hidden), self.value(hidden)
    if (pk or not mask) and T > 0 then
        local H = self.all_head_size
        if not pk then -- [B * T, H]: views (the composite's heads view them back)
            q, k, v = q:view(B * T, H), k:view(B * T, H), v:view(B * T, H)
        end
        local out = packed_attention(self, q, k, v, pk, B, T)
        if out then
            return pk and out or out:view(B, T, H)
        end
    end
    local function heads(x) -- [B, nh, T, d]
        if pk then
            x = packing.unpack(pk, x)
        end
        return x:view(B, T, nh, d):transpose(2, 3)
    end
    -- q scaled before the product (a pass over [B, nh, T, d], not over the [B, nh, T, T]
    -- scores; exact when d is a power of 4, within rounding otherwise)
    q = heads(q:mul(1 / math.sqrt(d)))
    k, v = heads(k), heads(v)
    local scores = q:matmul(k:transpose(3, 4))
    if mask then
        scores = scores:add(mask)
    end
    local probs = scores:softmax(-1)
    if self.training and self.dropout.p > 0 then
        probs = I.dropout(probs, self.dropout.p)
    end
    local context = probs:matmul(v):transpose(2, 3):reshape(B, T, self.all_head_size)
    return pk and packing.pack(pk, context) or context
end

return BertSelfAttention
