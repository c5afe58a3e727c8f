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
    kernel_size = I.check_int(I.single(kernel_size, "kernel_size", "AvgPool1d"), "kernel_size",
        "AvgPool1d")
    -- PyTorch's attributes, its 1-tuples (pool.kernel_size[1]); forward reads them
    self.kernel_size = { kernel_size }
    self.stride = { I.single(o.stride, "stride", "AvgPool1d") or kernel_size }
    self.padding = { I.single(o.padding, "padding", "AvgPool1d") or 0 }
    self.ceil_mode = o.ceil_mode == true
    self.count_include_pad = o.count_include_pad ~= false
end

function AvgPool1d:forward(x)
    I.check_tensor(x, "AvgPool1d")
    local who = "AvgPool1d"
    return F.avg_pool1d(x, I.single(self.kernel_size, "kernel_size", who), {
        stride = I.single(self.stride, "stride", who),
        padding = I.single(self.padding, "padding", who), ceil_mode = self.ceil_mode,
        count_include_pad = self.count_include_pad })
end

function AvgPool1d:extra_repr() -- PyTorch's
    local show = require("tide.nn._args3d").show
    return string.format("kernel_size=%s, stride=%s, padding=%s", show(self.kernel_size),
        show(self.stride), show(self.padding))
end

S.define(AvgPool1d, { names = { "kernel_size", "stride", "padding", "ceil_mode",
    "count_include_pad" }, required = 1 })

return AvgPool1d
