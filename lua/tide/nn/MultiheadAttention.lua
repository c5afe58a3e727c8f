-- nn.MultiheadAttention(embed_dim, num_heads[, {batch_first = false, dropout = 0, bias = true,
-- add_bias_kv = false, add_zero_attn = false, kdim = embed_dim, vdim = embed_dim}]):
-- out, weights = mha(query, key, value[, {attn_mask =, key_padding_mask =, need_weights = true,
-- average_attn_weights = true, is_causal = false}]), as PyTorch's: parameters in_proj_weight
-- [3E, E] (q, k, v rows; xavier-uniform), or q_proj_weight [E, E], k_proj_weight [E, kdim] and
-- v_proj_weight [E, vdim] when kdim or vdim differs from E; in_proj_bias [3E] (zeros); bias_k,
-- bias_v [1, 1, E] (xavier-normal) with add_bias_kv, appended to the projected keys and values;
-- add_zero_attn appends a zero key and value after them; out_proj (a Linear, bias zeros).
-- Masks follow PyTorch's MultiheadAttention: a bool attn_mask ([L, S] or [N*heads, L, S]) or
-- key_padding_mask ([N, S]) is true where attention is NOT allowed (uint8 as bool); a float one
-- is added; the appended keys are always allowed. is_causal applies the causal mask (a query
-- does not see later keys), with attn_mask too if given (PyTorch 2's hint, as a mask). The body
-- is tide.nn._attention, shared with F.multi_head_attention_forward.
-- weights: [N, L, S] averaged over heads (or [N, heads, L, S]), nil without need_weights; S
-- counts the appended keys.
local core = require("tide.core")
local autograd = require("tide.autograd")
local raise = autograd.raise
local Module = require("tide.nn.Module")
local Linear = require("tide.nn.Linear")
local idiv = require("tide._compat").idiv
local I = require("tide.nn._internal")
local A = require("tide.nn._attention")
local S = require("tide.nn._signature")

local MHA = Module:extend("MultiheadAttention")
local WHO = "MultiheadAttention"

function MHA:init(embed_dim, num_heads, opts)
    opts = opts or {}
    core._check_options(opts, WHO, { "batch_first", "dropout", "bias", "add_bias_kv",
        "add_zero_attn", "kdim", "vdim" })
    I.check_int(embed_dim, "embed_dim", WHO)
    I.check_int(num_heads, "num_heads", WHO)
    if embed_dim % num_heads ~= 0 then
        raise(string.format("tide: %s: embed_dim %d must be divisible by num_heads %d", WHO,
            embed_dim, num_heads))
    end
    local p = opts.dropout or 0
    if type(p) ~= "number" or p < 0 or p > 1 then
        raise(string.format("tide: %s: expected dropout in [0, 1], got %s", WHO, tostring(p)))
    end
    local E = embed_dim
    local kdim = opts.kdim == nil and E or I.check_int(opts.kdim, "kdim", WHO)
    local vdim = opts.vdim == nil and E or I.check_int(opts.vdim, "vdim", WHO)
    for _, key in ipairs({ "add_bias_kv", "add_zero_attn" }) do
        if opts[key] ~= nil and type(opts[key]) ~= "boolean" then
            raise(string.format("tide: %s: expected %s to be a boolean, got %s", WHO, key,
                tostring(opts[key])))
        end
    end
    self.embed_dim, self.num_heads, self.head_dim = embed_dim, num_heads, idiv(embed_dim, num_heads)
    self.kdim, self.vdim = kdim, vdim
    -- PyTorch's flag: one in_proj_weight (true) or q/k/v_proj_weight (false); informational
    self._qkv_same_embed_dim = kdim == E and vdim == E
    self.batch_first, self.dropout = opts.batch_first == true, p
    self.add_zero_attn = opts.add_zero_attn == true
    -- xavier-uniform over each weight's own fans, as PyTorch's _reset_parameters
    local function xavier(rows, cols)
        return I.uniform_param({ rows, cols }, math.sqrt(6 / (rows + cols)))
    end
    if kdim == E and vdim == E then
        self:register_parameter("in_proj_weight", xavier(3 * E, E))
    else
        self:register_parameter("q_proj_weight", xavier(E, E))
        self:register_parameter("k_proj_weight", xavier(E, kdim))
        self:register_parameter("v_proj_weight", xavier(E, vdim))
    end
    local bias = opts.bias ~= false
    if bias then
        self:register_parameter("in_proj_bias", I.const_param({ 3 * E }, 0))
    end
    if opts.add_bias_kv == true then
        -- xavier-normal of a [1, 1, E] tensor: fan_in = fan_out = E
        for _, name in ipairs({ "bias_k", "bias_v" }) do
            local t = core.empty({ 1, 1, E })
            autograd.no_grad(function()
                t:normal_(0, math.sqrt(1 / E))
            end)
            self:register_parameter(name, t:requires_grad_(true))
        end
    end
    self.out_proj = Linear(E, E, { bias = bias })
    if bias then
        autograd.no_grad(function()
            self.out_proj.bias:fill_(0)
        end)
    end
end

local function check_input(x, who, what, nd)
    if not autograd.is_tensor(x) then
        raise(string.format("tide: %s: expected %s to be a tensor, got %s", who, what, type(x)))
    end
    if x:dim() ~= nd then
        raise(string.format("tide: %s: expected %s of %d dims like query, got shape %s", who,
            what, nd, I.shape_str(x.shape)))
    end
end

-- PyTorch's positional order after query, key and value (is_causal: PyTorch 2's)
local FORWARD = { "key_padding_mask", "need_weights", "attn_mask", "average_attn_weights",
    "is_causal" }

-- Python's self_attention(query=x, key=x, value=x, need_weights=False): query, key and value
-- by name in the table that ends the call (mha({query = x, key = x, value = x}) or
-- mha(x, {key = x, value = x})), the other options beside them
local QKV = { "query", "key", "value" }
local function qkv_by_name(query, key, value, ...)
    if select("#", ...) > 0 then
        return query, key, value, ...
    end
    local pos, last = { query, key, value }, nil
    for i = 3, 1, -1 do
        if pos[i] ~= nil then
            last = i
            break
        end
    end
    if not last or core.is_tensor(pos[last]) or not S.by_name(pos[last]) then
        return query, key, value
    end
    local o = {}
    for k, v in pairs(pos[last]) do
        o[k] = v
    end
    pos[last] = nil
    for i, name in ipairs(QKV) do
        if o[name] ~= nil then
            if pos[i] ~= nil then
                raise(string.format("tide: %s: got %s both as argument #%d and by name {%s =}; " ..
                    "give it once", WHO, name, i, name))
            end
            pos[i], o[name] = o[name], nil
        end
    end
    return pos[1], pos[2], pos[3], next(o) ~= nil and o or nil
end

local attend

function MHA:forward(...)
    return attend(self, qkv_by_name(...))
end

function attend(self, query, key, value, ...)
    local opts = S.arguments(WHO, FORWARD, 3, ...)
    core._check_options(opts, WHO, FORWARD)
    I.check_tensor(query, WHO)
    local nd = query:dim()
    if (nd ~= 2 and nd ~= 3) or query:size(-1) ~= self.embed_dim then
        raise(string.format("tide: %s: expected query of 2 or 3 dims with last dim %d " ..
            "(embed_dim), got shape %s", WHO, self.embed_dim, I.shape_str(query.shape)))
    end
    check_input(key, WHO, "key", nd)
    check_input(value, WHO, "value", nd)
    if opts.is_causal ~= nil and type(opts.is_causal) ~= "boolean" then
        raise(string.format("tide: %s: expected is_causal to be a boolean, got %s", WHO,
            tostring(opts.is_causal)))
    end
    local W = self.in_proj_weight or self.q_proj_weight
    I.check_input(query, W, WHO) -- named here, not by the projection's Linear
    local same_kv, same_qk = rawequal(key, value), rawequal(query, key)
    -- batch-major [N, L, E] inside
    local function batch_major(x)
        if nd == 2 then
            return x:unsqueeze(1)
        end
        return self.batch_first and x or x:transpose(1, 2)
    end
    local q = batch_major(query)
    local k = same_qk and q or batch_major(key)
    local v = same_kv and k or batch_major(value)
    local N, S = q:size(1), k:size(2)
    if k:size(1) ~= N or v:size(1) ~= N or v:size(2) ~= S or k:size(3) ~= self.kdim or
        v:size(3) ~= self.vdim then
        raise(string.format("tide: %s: expected key of last dim %d (kdim) and value of last " ..
            "dim %d (vdim), with query's batch and one length, got query %s, key %s and " ..
            "value %s", WHO, self.kdim, self.vdim, I.shape_str(query.shape),
            I.shape_str(key.shape), I.shape_str(value.shape)))
    end
    local out, attn = A.attend(self, q, k, v, opts, WHO, nd)
    if nd == 2 then
        out = out:squeeze(1)
    elseif not self.batch_first then
        out = out:transpose(1, 2)
    end
    if opts.need_weights == false then
        return out, nil
    end
    local w = opts.average_attn_weights == false and attn or attn:mean(2)
    if nd == 2 then
        w = w:squeeze(1)
    end
    return out, w
end

function MHA:extra_repr()
    local s = string.format("embed_dim=%d, num_heads=%d", self.embed_dim, self.num_heads)
    if self.kdim ~= self.embed_dim or self.vdim ~= self.embed_dim then
        s = s .. string.format(", kdim=%d, vdim=%d", self.kdim, self.vdim)
    end
    if self.bias_k then s = s .. ", add_bias_kv=true" end
    if self.add_zero_attn then s = s .. ", add_zero_attn=true" end
    if self.batch_first then s = s .. ", batch_first=true" end
    return s
end

S.define(MHA, { names = { "embed_dim", "num_heads", "dropout", "bias", "add_bias_kv",
    "add_zero_attn", "kdim", "vdim", "batch_first" }, required = 2 })

-- m:_reset_parameters(): PyTorch's, the input projections drawn again by xavier_uniform_ (each
-- weight over its own fans), in_proj_bias and out_proj.bias zeros, bias_k and bias_v by
-- xavier_normal_ (out_proj.weight keeps its value, as PyTorch's)
function MHA:_reset_parameters()
    local init = require("tide.nn.initializers")
    local weights = { "in_proj_weight", "q_proj_weight", "k_proj_weight", "v_proj_weight" }
    for _, name in ipairs(weights) do
        if self[name] ~= nil then
            init.xavier_uniform_(self[name])
        end
    end
    for _, b in ipairs({ self.in_proj_bias, self.out_proj.bias }) do
        init.zeros_(b)
    end
    for _, name in ipairs({ "bias_k", "bias_v" }) do
        if self[name] ~= nil then
            init.xavier_normal_(self[name])
        end
    end
end

return MHA
