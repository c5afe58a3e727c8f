-- nn.MaxPool1d(kernel_size[, stride = kernel_size, padding = 0]) or MaxPool1d(k, {stride =,
-- padding =}): the max of each window of input {N, C, L}
local core = require "tide.core"
local Module = require "tide.nn.Module"
local I = require "tide.nn._internal"
local F = require "tide.nn.functional"

local MaxPool1d = Module:extend("MaxPool1d")

function MaxPool1d:init(kernel_size, stride, padding)
    if type(stride) == "table" then
        core._check_options(stride, "MaxPool1d", { "stride", "padding" },
            { "dilation", "ceil_mode", "return_indices" })
        stride, padding = stride.stride, stride.padding
    end
    self.kernel_size = I.check_int(kernel_size, "kernel_size", "MaxPool1d")
    self.stride = I.check_int(stride or kernel_size, "stride", "MaxPool1d")
    self.padding = I.check_int(padding or 0, "padding", "MaxPool1d", 0)
end

function MaxPool1d:forward(x)
    I.check_tensor(x, "MaxPool1d")
    return F.max_pool1d(x, self.kernel_size, { stride = self.stride, padding = self.padding })
end

function MaxPool1d:extra_repr()
    return string.format("kernel %d, stride %d", self.kernel_size, self.stride)
end

return MaxPool1d
