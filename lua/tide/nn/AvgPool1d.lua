-- nn.AvgPool1d(kernel_size[, stride = kernel_size, padding = 0]) or AvgPool1d(k, {stride =,
-- padding =, ceil_mode = false, count_include_pad = true}): the mean of each window of input
-- {N, C, L} or {C, L} (F.avg_pool1d)
local core = require("tide.core")
local Module = require("tide.nn.Module")
local I = require("tide.nn._internal")
local F = require("tide.nn.functional")
local S = require("tide.nn._signature")

local AvgPool1d = Module:extend("AvgPool1d")

function AvgPool1d:init(kernel_size, stride, padding)
    local o
    -- a positional stride given as PyTorch's 1-tuple (2,): {2}, not an options table
    if type(stride) == "table" and #stride == 1 and type(stride[1]) == "number" then
        stride = stride[1]
    end
    if type(stride) == "table" then
        core._check_options(stride, "AvgPool1d", { "stride", "padding", "ceil_mode",
            "count_include_pad" })
        o = stride
    else
        o = { stride = stride, padding = padding }
    end
    -- PyTorch's 1-tuples: kernel_size=(3,), stride=(2,), ...
    kernel_size = I.single(kernel_size, "kernel_size", "AvgPool1d")
    I.single(o.stride, "stride", "AvgPool1d")
    I.single(o.padding, "padding", "AvgPool1d")
    self.kernel_size = I.check_int(kernel_size, "kernel_size", "AvgPool1d")
    self.opts = o
end

function AvgPool1d:forward(x)
    I.check_tensor(x, "AvgPool1d")
    return F.avg_pool1d(x, self.kernel_size, self.opts)
end

function AvgPool1d:extra_repr()
    return "kernel " .. self.kernel_size
end

S.define(AvgPool1d, { names = { "kernel_size", "stride", "padding", "ceil_mode",
    "count_include_pad" }, required = 1 })

return AvgPool1d
