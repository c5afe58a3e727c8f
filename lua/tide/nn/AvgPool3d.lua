-- nn.AvgPool3d(kernel_size[, stride = kernel_size, padding = 0]) or AvgPool3d(k, {stride =,
-- padding =, ceil_mode = false, count_include_pad = true, divisor_override =}): the mean of each
-- window of input {N, C, D, H, W} or {C, D, H, W} (F.avg_pool3d); sizes an integer or {d, h, w}
local Module = require("tide.nn.Module")
local I = require("tide.nn._internal")
local F = require("tide.nn.functional")
local T = require("tide.nn._args3d")
local S = require("tide.nn._signature")

local AvgPool3d = Module:extend("AvgPool3d")

local OPTIONS = { "stride", "padding", "ceil_mode", "count_include_pad", "divisor_override" }

function AvgPool3d:init(kernel_size, stride, padding)
    local o = T.pool_options("AvgPool3d", OPTIONS, kernel_size, stride, padding)
    self.kernel_size, self.stride = kernel_size, o.stride or kernel_size
    self.padding = o.padding or 0
    self.ceil_mode = o.ceil_mode or false
    self.count_include_pad = o.count_include_pad ~= false
    self.divisor_override = o.divisor_override
end

function AvgPool3d:forward(x)
    I.check_tensor(x, "AvgPool3d")
    return F.avg_pool3d(x, self.kernel_size, { stride = self.stride, padding = self.padding,
        ceil_mode = self.ceil_mode, count_include_pad = self.count_include_pad,
        divisor_override = self.divisor_override })
end

function AvgPool3d:extra_repr()
    local show = T.show
    return string.format("kernel_size=%s, stride=%s, padding=%s", show(self.kernel_size),
        show(self.stride), show(self.padding))
end

S.define(AvgPool3d, { names = { "kernel_size", "stride", "padding", "ceil_mode",
    "count_include_pad", "divisor_override" }, required = 1 })

return AvgPool3d
