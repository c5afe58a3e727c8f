-- nn.MaxPool2d(kernel_size[, stride = kernel_size, padding = 0])
local autograd = require "tide.autograd"
local raise = autograd.raise
local core = require "tide.core"
local Module = require "tide.nn.Module"
local I = require "tide.nn._internal"

local MaxPool2d = Module:extend("MaxPool2d")

function MaxPool2d:init(kernel_size, stride, padding)
    if type(stride) == "table" and stride[1] == nil then
        local o = stride
        stride, padding = o.stride, o.padding
    end
    self.kh, self.kw = I.pair(kernel_size, "MaxPool2d", "kernel_size")
    if stride == nil then
        self.sh, self.sw = self.kh, self.kw
    else
        self.sh, self.sw = I.pair(stride, "MaxPool2d", "stride")
    end
    self.ph, self.pw = I.pair(padding or 0, "MaxPool2d", "padding")
end

function MaxPool2d:forward(x)
    I.check_tensor(x, "MaxPool2d")
    if x:dim() ~= 4 then
        raise("tide: MaxPool2d: expected 4-D input {N, C, H, W}, got " .. I.shape_str(x.shape))
    end
    local h, w = x:size(3) + 2 * self.ph, x:size(4) + 2 * self.pw
    if h < self.kh or w < self.kw then
        raise(string.format("tide: MaxPool2d: kernel %dx%d is larger than the padded input " ..
            "%dx%d; use a smaller kernel or more padding", self.kh, self.kw, h, w))
    end
    local y = core.maxpool2d(x, self.kh, self.kw, self.sh, self.sw, self.ph, self.pw)
    return y
end

function MaxPool2d:extra_repr()
    return string.format("kernel %dx%d, stride %d,%d", self.kh, self.kw, self.sh, self.sw)
end

return MaxPool2d
