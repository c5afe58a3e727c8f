-- tide.nn.utils.fusion: PyTorch 1.13's torch.nn.utils.fusion, folding an eval-mode batch norm
-- into the convolution (or linear layer) before it, for inference: one layer whose output is
-- the pair's.
--
--     local fused = nn.utils.fuse_conv_bn_eval(conv:eval(), bn:eval())  -- conv then bn, in one
--
-- fuse_conv_bn_weights(conv_w, conv_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b[, transpose = false]):
-- w * (bn_w / sqrt(bn_rv + bn_eps)) per output channel (dim 1 of w, dim 2 with transpose, a
-- ConvTranspose's weight), b' = (conv_b - bn_rm) / sqrt(bn_rv + bn_eps) * bn_w + bn_b; nil
-- conv_b, bn_w, bn_b mean zeros, ones, zeros; returns the two as nn.Parameters (new leaves).
-- fuse_conv_bn_eval(conv, bn[, transpose = false]): a deep copy of conv (tide.deepcopy) with
-- the fused weight and bias (a conv without bias gets one). fuse_linear_bn_eval(linear, bn) and
-- fuse_linear_bn_weights(...) do the same for a Linear followed by a BatchNorm1d.
local autograd = require("tide.autograd")
local args = require("tide.op_args")
local Parameter = require("tide.nn.Parameter")

local raise = autograd.raise
local is_tensor = autograd.is_tensor

local M = {}

local function tensor_arg(who, name, v, optional)
    if (v == nil and optional) or is_tensor(v) then
        return v
    end
    raise(string.format("tide: %s: expected %s to be a tensor%s, got %s", who, name,
        optional and " or nil" or "", type(v)))
end

-- the fused (weight, bias), computed without recording; shape: where the channels go
local function fuse(who, w, b, rm, rv, eps, bw, bb, channels_dim)
    tensor_arg(who, "the weight", w)
    tensor_arg(who, "the bias", b, true)
    tensor_arg(who, "bn_rm (the running mean)", rm)
    tensor_arg(who, "bn_rv (the running variance)", rv)
    tensor_arg(who, "bn_w (the batch norm's weight)", bw, true)
    tensor_arg(who, "bn_b (the batch norm's bias)", bb, true)
    if type(eps) ~= "number" then
        raise(string.format("tide: %s: expected bn_eps to be a number, got %s", who, type(eps)))
    end
    if w:dim() < channels_dim then
        raise(string.format("tide: %s: expected a weight of at least %d dims, got shape {%s}",
            who, channels_dim, table.concat(w.shape, ", ")))
    end
    local c = w:size(channels_dim)
    if rm:numel() ~= c or rv:numel() ~= c then
        raise(string.format("tide: %s: the batch norm has %d channels (running mean) and the " ..
            "weight %d output channels (dim %d of shape {%s}); fuse a layer with the batch " ..
            "norm that follows it", who, rm:numel(), c, channels_dim,
            table.concat(w.shape, ", ")))
    end
    return autograd.no_grad(function()
        local tide = require("tide")
        b = b or tide.zeros_like(rm)
        bw = bw or tide.ones_like(rm)
        bb = bb or tide.zeros_like(rm)
        local scale = rv:add(eps):rsqrt()
        local shape = {}
        for d = 1, w:dim() do
            shape[d] = d == channels_dim and -1 or 1
        end
        local fw = w:mul(bw:mul(scale):reshape(shape))
        local fb = b:sub(rm):mul(scale):mul(bw):add(bb)
        return Parameter(fw), Parameter(fb)
    end)
end

function M.fuse_conv_bn_weights(conv_w, conv_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b, transpose,
                                 ...)
    local who = "fuse_conv_bn_weights"
    args.no_extra(who, 8, ...)
    if transpose ~= nil and type(transpose) ~= "boolean" then
        raise("tide: fuse_conv_bn_weights: expected transpose to be a boolean, got " ..
            type(transpose))
    end
    return fuse(who, conv_w, conv_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b, transpose and 2 or 1)
end

function M.fuse_linear_bn_weights(linear_w, linear_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b, ...)
    local who = "fuse_linear_bn_weights"
    args.no_extra(who, 7, ...)
    return fuse(who, linear_w, linear_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b, 1)
end

-- checks layer and bn (modules in eval mode, bn with running statistics)
local function check_pair(who, layer, bn, what)
    for _, m in ipairs({ { layer, what }, { bn, "bn" } }) do
        if type(m[1]) ~= "table" or not m[1].__ismodule then
            raise(string.format("tide: %s: expected %s to be a module, got %s", who, m[2],
                type(m[1])))
        end
    end
    if layer.training or bn.training then
        raise(string.format("tide: %s: fusion is for eval mode only (it folds the running " ..
            "statistics, which training mode does not use); call :eval() on both modules " ..
            "first", who))
    end
    if not is_tensor(rawget(layer, "weight")) then
        raise(string.format("tide: %s: %s (%s) has no weight tensor to fuse into", who, what,
            tostring(layer.__name)))
    end
    if not is_tensor(bn.running_mean) or not is_tensor(bn.running_var) then
        raise(string.format("tide: %s: bn (%s) has no running statistics (running_mean, " ..
            "running_var) to fold", who, tostring(bn.__name)))
    end
end

-- a copy of layer with its weight and bias replaced by the fused ones
local function fused_copy(layer, w, b)
    local copy = require("tide").deepcopy(layer)
    copy.weight, copy.bias = w, b
    return copy
end

function M.fuse_conv_bn_eval(conv, bn, transpose, ...)
    local who = "fuse_conv_bn_eval"
    args.no_extra(who, 3, ...)
    check_pair(who, conv, bn, "conv")
    if transpose ~= nil and type(transpose) ~= "boolean" then
        raise("tide: fuse_conv_bn_eval: expected transpose to be a boolean, got " ..
            type(transpose))
    end
    local w, b = fuse(who, conv.weight, conv.bias, bn.running_mean, bn.running_var, bn.eps,
        bn.weight, bn.bias, transpose and 2 or 1)
    return fused_copy(conv, w, b)
end

function M.fuse_linear_bn_eval(linear, bn, ...)
    local who = "fuse_linear_bn_eval"
    args.no_extra(who, 2, ...)
    check_pair(who, linear, bn, "linear")
    local w, b = fuse(who, linear.weight, linear.bias, bn.running_mean, bn.running_var, bn.eps,
        bn.weight, bn.bias, 1)
    return fused_copy(linear, w, b)
end

return M
