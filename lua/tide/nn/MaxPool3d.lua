-- nn.MaxPool3d(kernel_size[, stride = kernel_size, padding = 0]) or MaxPool3d(k, {stride =,
-- padding =, dilation = 1, ceil_mode = false, return_indices = false}): F.max_pool3d over input
-- {N, C, D, H, W} or {C, D, H, W}; sizes an integer or {d, h, w}; with return_indices forward
-- gives the values and the 1-based flat positions of the maxima in D H W
local Module = require("tide.nn.Module")
local I = require("tide.nn._internal")
local F = require("tide.nn.functional")
local T = require("tide.nn._args3d")
local S = require("tide.nn._signature")

local MaxPool3d = Module:extend("MaxPool3d")

local OPTIONS = { "stride", "padding", "dilation", "ceil_mode", "return_indices" }

function MaxPool3d:init(kernel_size, stride, padding)
    local o = T.pool_options("MaxPool3d", OPTIONS, kernel_size, stride, padding)
    T.triple(o.dilation, 1, "MaxPool3d", "dilation", 1)
    -- kept as given, as PyTorch's (and printed so)
    self.kernel_size, self.stride = kernel_size, o.stride or kernel_size
    self.padding, self.dilation = o.padding or 0, o.dilation or 1
    self.ceil_mode = o.ceil_mode or false
    self.return_indices = o.return_indices or false
end

function MaxPool3d:forward(x)
    I.check_tensor(x, "MaxPool3d")
    return F.max_pool3d(x, self.kernel_size, { stride = self.stride, padding = self.padding,
        dilation = self.dilation, ceil_mode = self.ceil_mode,
        return_indices = self.return_indices })
end

function MaxPool3d:extra_repr()
    local show = T.show
    return string.format("kernel_size=%s, stride=%s, padding=%s, dilation=%s, ceil_mode=%s",
        show(self.kernel_size), show(self.stride), show(self.padding), show(self.dilation),
        tostring(self.ceil_mode))
end

S.define(MaxPool3d, { names = { "kernel_size", "stride", "padding", "dilation", "return_indices",
    "ceil_mode" }, required = 1 })

return MaxPool3d
