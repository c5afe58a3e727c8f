-- tide.nn._transformer: what the Transformer encoder and decoder (layers and stacks) share, out
-- of the users' sight: the layer options, the feed-forward and residual blocks, and the stack of
-- layer copies.
local core = require("tide.core")
local raise = require("tide.autograd").raise
local Module = require("tide.nn.Module")
local ModuleList = require("tide.nn.ModuleList")
local nn_F = require("tide.nn.functional")
local I = require("tide.nn._internal")
local compat = require("tide._compat")
local S = require("tide.nn._signature")

local T = {}

local KNOWN = { "dim_feedforward", "dropout", "activation", "batch_first", "norm_first",
    "layer_norm_eps", "device", "dtype" }

-- a layer's checked arguments: dim_feedforward, dropout and the activation function (or module)
function T.layer_options(opts, d_model, nhead, who)
    core._check_options(opts, who, KNOWN)
    I.check_int(d_model, "d_model", who)
    I.check_int(nhead, "nhead", who)
    S.check_factory(who, opts.device, opts.dtype)
    local ff = I.check_int(opts.dim_feedforward or 2048, "dim_feedforward", who)
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
            "module, got %s", who, tostring(act)))
    end
    return ff, p, activation
end

-- a layer's children in PyTorch's order, for blocks 2 (an encoder layer: self-attention and the
-- feed-forward block) or 3 (a decoder layer: attention to memory, multihead_attn, too):
-- self_attn[, multihead_attn], linear1, dropout, linear2, norm1.., dropout1..; ff, p and
-- activation are T.layer_options'. _args: what the stacks copy the layer from.
function T.add_children(layer, blocks, d_model, nhead, opts, ff, p, activation, eps)
    layer._args = { d_model, nhead, opts }
    local nn = require("tide.nn")
    local attn = { dropout = p, batch_first = opts.batch_first == true }
    layer.self_attn = nn.MultiheadAttention(d_model, nhead, attn)
    if blocks == 3 then
        layer.multihead_attn = nn.MultiheadAttention(d_model, nhead, attn)
    end
    layer.linear1 = nn.Linear(d_model, ff)
    layer.dropout = nn.Dropout(p)
    layer.linear2 = nn.Linear(ff, d_model)
    layer.norm_first = opts.norm_first == true
    for i = 1, blocks do
        layer["norm" .. i] = nn.LayerNorm(d_model, { eps = eps })
    end
    for i = 1, blocks do
        layer["dropout" .. i] = nn.Dropout(p)
    end
    layer.activation = activation
    -- PyTorch's factory arguments: the layer built, then moved and cast (as nn.Linear's)
    if opts.device ~= nil or opts.dtype ~= nil then
        layer:to({ device = opts.device, dtype = opts.dtype })
    end
end

-- dropout(attn(q, kv, kv)), the attention's output without its weights
function T.attend(attn, dropout, q, kv, mask, key_padding_mask, is_causal)
    return dropout(attn(q, kv, kv, { attn_mask = mask, key_padding_mask = key_padding_mask,
        need_weights = false, is_causal = is_causal }))
end

-- the feed-forward block of a layer, its output through the dropout module `out`
function T.feed_forward(layer, x, out)
    return out(layer.linear2(layer.dropout(layer.activation(layer.linear1(x)))))
end

-- x through blocks[i] each with a residual and norm<i>: after each block, or before with
-- norm_first
function T.residual(layer, x, blocks)
    for i, block in ipairs(blocks) do
        local norm = layer["norm" .. i]
        if layer.norm_first then
            x = x:add(block(norm(x)))
        else
            x = norm(x:add(block(x)))
        end
    end
    return x
end

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

-- fills a stack's `layers` (num_layers copies of layer), num_layers and the optional norm
function T.init_stack(stack, layer, num_layers, norm)
    local list = {}
    for i = 1, num_layers do
        list[i] = copy_layer(layer)
    end
    stack.layers = ModuleList(list)
    stack.num_layers = num_layers
    if norm ~= nil then
        stack.norm = norm
    end
end

-- x through every layer of a stack (each given the same further arguments), then its norm
function T.forward_stack(stack, x, ...)
    for i = 1, stack.num_layers do
        x = stack.layers[i](x, ...)
    end
    if stack.norm then
        x = stack.norm(x)
    end
    return x
end

return T
