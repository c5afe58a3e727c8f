-- nn.AvgPool2d(kernel_size[, stride = kernel_size, padding = 0]) or AvgPool2d(k, {stride =,
-- padding =, ceil_mode = false, count_include_pad = true, divisor_override =}): the mean of
-- each window (F.avg_pool2d)
local core = require("tide.core")
local Module = require("tide.nn.Module")
local I = require("tide.nn._internal")
local F = require("tide.nn.functional")
local S = require("tide.nn._signature")

local AvgPool2d = Module:extend("AvgPool2d")

function AvgPool2d:init(kernel_size, stride, padding)
    local o
    if type(stride) == "table" and stride[1] == nil then
        core._check_options(stride, "AvgPool2d", { "stride", "padding", "count_include_pad",
            "ceil_mode", "divisor_override" })
        o = stride
    else
        o = { stride = stride, padding = padding }
    end
    I.pair(kernel_size, "AvgPool2d", "kernel_size")
    self.kernel_size, self.opts = kernel_size, o
    -- PyTorch's attributes, as given (stride = kernel_size when not given); forward reads them
    self.stride, self.padding = o.stride == nil and kernel_size or o.stride, o.padding or 0
    self.ceil_mode, self.count_include_pad = o.ceil_mode or false, o.count_include_pad ~= false
    self.divisor_override = o.divisor_override
end

function AvgPool2d:forward(x)
    I.check_tensor(x, "AvgPool2d")
    local o = self.opts
    if self.padding ~= nil then -- (a module saved before these attributes has none)
        o = { stride = self.stride, padding = self.padding, ceil_mode = self.ceil_mode,
            count_include_pad = self.count_include_pad, divisor_override = self.divisor_override }
    end
    return F.avg_pool2d(x, self.kernel_size, o)
end

S.define(AvgPool2d, { names = { "kernel_size", "stride", "padding", "ceil_mode",
    "count_include_pad", "divisor_override" }, required = 1 })

function AvgPool2d:extra_repr() -- PyTorch's
    local show = require("tide.nn._args3d").show
    return string.format("kernel_size=%s, stride=%s, padding=%s", show(self.kernel_size),
        show(self.stride), show(self.padding))
end

return AvgPool2d
