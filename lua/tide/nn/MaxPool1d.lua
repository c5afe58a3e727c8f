-- nn.MaxPool1d(kernel_size[, stride = kernel_size, padding = 0]) or MaxPool1d(k, {stride =,
-- padding =, dilation = 1, ceil_mode = false, return_indices = false}): the max of each window
-- of input {N, C, L} (F.max_pool1d)
local core = require("tide.core")
local Module = require("tide.nn.Module")
local I = require("tide.nn._internal")
local F = require("tide.nn.functional")
local S = require("tide.nn._signature")

local MaxPool1d = Module:extend("MaxPool1d")

function MaxPool1d:init(kernel_size, stride, padding)
    local o = {}
    if type(stride) == "table" then
        core._check_options(stride, "MaxPool1d", { "stride", "padding", "dilation", "ceil_mode",
            "return_indices" })
        o = stride
        stride, padding = o.stride, o.padding
    end
    -- PyTorch's 1-tuples: kernel_size=(3,), stride=(2,), ...
    kernel_size = I.single(kernel_size, "kernel_size", "MaxPool1d")
    stride = I.single(stride, "stride", "MaxPool1d")
    padding = I.single(padding, "padding", "MaxPool1d")
    local dilation = I.single(o.dilation, "dilation", "MaxPool1d")
    self.kernel_size = I.check_int(kernel_size, "kernel_size", "MaxPool1d")
    self.stride = I.check_int(stride or kernel_size, "stride", "MaxPool1d")
    self.padding = I.check_int(padding or 0, "padding", "MaxPool1d", 0)
    self.dilation = I.check_int(dilation or 1, "dilation", "MaxPool1d")
    self.ceil_mode = o.ceil_mode or false
    self.return_indices = o.return_indices or false
end

function MaxPool1d:forward(x)
    I.check_tensor(x, "MaxPool1d")
    return F.max_pool1d(x, self.kernel_size, { stride = self.stride, padding = self.padding,
        dilation = self.dilation, ceil_mode = self.ceil_mode,
        return_indices = self.return_indices })
end

function MaxPool1d:extra_repr() -- PyTorch's
    local show = require("tide.nn._args3d").show
    return string.format("kernel_size=%s, stride=%s, padding=%s, dilation=%s, ceil_mode=%s",
        show(self.kernel_size), show(self.stride), show(self.padding), show(self.dilation),
        tostring(self.ceil_mode))
end

S.define(MaxPool1d, { names = { "kernel_size", "stride", "padding", "dilation", "return_indices",
    "ceil_mode" }, required = 1 })

return MaxPool1d
