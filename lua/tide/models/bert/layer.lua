-- BertLayer, one transformer encoder block as Hugging Face writes it (post-LayerNorm):
--   attention.self (BertSelfAttention), attention.output: LayerNorm(dropout(dense(a)) + x)
--   intermediate: act(dense(h))  (no dropout after the activation)
--   output: LayerNorm(dropout(dense(i)) + h)
-- hidden_dropout_prob is the dropout after each dense projection, layer_norm_eps the
-- LayerNorms' eps, hidden_act the activation (tide.models.bert.activations).
local core = require("tide.core")
local autograd = require("tide.autograd")
local autocast = require("tide._autocast")
local nn = require("tide.nn")
local P = require("tide.models.bert.params")
local activation = require("tide.models.bert.activations")
local BertSelfAttention = require("tide.models.bert.self_attention")
local hooks = require("tide.nn.module_hooks") -- globals: every module's hooks

local M = {}

local layer_norm_forward = nn.LayerNorm.forward

-- LayerNorm(h + residual) by the add_layer_norm kernel row in one pass, when nothing is
-- recorded, autocast is off (it runs layer norm in float32) and ln is a plain nn.LayerNorm over
-- the last dim; nil otherwise, or where the device has no kernel
local function add_norm(ln, h, residual)
    local w, b = ln.weight, ln.bias -- read once: a parametrized weight is computed per read
    if autocast.on or ln.forward ~= layer_norm_forward or rawget(ln, "_forward_pre_hooks") or
        rawget(ln, "_forward_hooks") or rawget(ln, "_backward_hooks") or next(hooks.globals) or
        #ln.normalized_shape ~= 1 or ln.eps < 0 or autograd.needs_record(h, residual, w, b) then
        return nil
    end
    local dt, hs, rs = h.dtype, h.shape, residual.shape
    if residual.dtype ~= dt or (w and w.dtype ~= dt) or (b and b.dtype ~= dt) or #hs == 0 or
        hs[#hs] ~= ln.d or #rs ~= #hs then
        return nil
    end
    for i = 1, #hs do -- the same shape: the composite would broadcast
        if hs[i] ~= rs[i] then
            return nil
        end
    end
    return core._internal.add_layer_norm(h, residual, w, b, ln.d, ln.eps)
end

-- a class: dense (from config[in_field] features to hidden_size), then dropout, then
-- LayerNorm over the sum with the residual (one kernel in inference: add_norm)
local function dense_add_norm(name, in_field)
    local cls = nn.Module:extend(name)
    function cls:init(config)
        self.dense = P.Linear(config[in_field], config.hidden_size)
        self.LayerNorm = nn.LayerNorm(config.hidden_size, { eps = config.layer_norm_eps })
        self.dropout = nn.Dropout(config.hidden_dropout_prob)
    end
    function cls:forward(x, residual)
        local h = self.dense(x)
        if not (self.training and self.dropout.p > 0) then
            local y = add_norm(self.LayerNorm, h, residual)
            if y then
                return y
            end
        end
        return self.LayerNorm(self.dropout(h):add(residual))
    end
    return cls
end

M.BertSelfOutput = dense_add_norm("BertSelfOutput", "hidden_size")
M.BertOutput = dense_add_norm("BertOutput", "intermediate_size")

M.BertAttention = nn.Module:extend("BertAttention")

function M.BertAttention:init(config)
    self.self = BertSelfAttention(config)
    self.output = M.BertSelfOutput(config)
end

function M.BertAttention:forward(x, mask, pk)
    return self.output(self.self(x, mask, pk), x)
end

M.BertIntermediate = nn.Module:extend("BertIntermediate")

function M.BertIntermediate:init(config)
    self.dense = P.Linear(config.hidden_size, config.intermediate_size)
    self.act = activation(config.hidden_act)
end

function M.BertIntermediate:forward(x)
    return activation.apply(self.act, self.dense, x)
end

M.BertLayer = nn.Module:extend("BertLayer")

function M.BertLayer:init(config)
    self.attention = M.BertAttention(config)
    self.intermediate = M.BertIntermediate(config)
    self.output = M.BertOutput(config)
end

-- x [B, T, H], mask nil or [B, 1, 1, T] (added to the scores) -> [B, T, H]; with a packing pk
-- (tide.models.bert.packing), x and the result are the real tokens [N, H]
function M.BertLayer:forward(x, mask, pk)
    local a = self.attention(x, mask, pk)
    return self.output(self.intermediate(a), a)
end

return M
