-- nn.MaxPool2d(kernel_size[, stride = kernel_size, padding = 0]) or MaxPool2d(k, {stride =,
-- padding =, dilation = 1, ceil_mode = false, return_indices = false}): F.max_pool2d; with
-- return_indices forward gives the values and the 1-based positions of the maxima
local core = require("tide.core")
local raise = require("tide.autograd").raise
local Module = require("tide.nn.Module")
local I = require("tide.nn._internal")
local F = require("tide.nn.functional")
local S = require("tide.nn._signature")

local MaxPool2d = Module:extend("MaxPool2d")

local OPTIONS = { "stride", "padding", "dilation", "ceil_mode", "return_indices" }

function MaxPool2d:init(kernel_size, stride, padding)
    local o
    if type(stride) == "table" and stride[1] == nil then
        core._check_options(stride, "MaxPool2d", OPTIONS)
        o = stride
    else
        o = { stride = stride, padding = padding }
    end
    self.kh, self.kw = I.pair(kernel_size, "MaxPool2d", "kernel_size")
    if o.stride == nil then
        self.sh, self.sw = self.kh, self.kw
    else
        self.sh, self.sw = I.pair(o.stride, "MaxPool2d", "stride")
    end
    self.ph, self.pw = I.pair(o.padding or 0, "MaxPool2d", "padding")
    self.dh, self.dw = I.pair(o.dilation or 1, "MaxPool2d", "dilation")
    -- PyTorch's attributes, as given (stride = kernel_size when not given); forward reads them,
    -- so ported code may read or set them (m.stride = 1)
    self.kernel_size, self.stride = kernel_size, o.stride == nil and kernel_size or o.stride
    self.padding, self.dilation = o.padding or 0, o.dilation or 1
    self.ceil_mode = o.ceil_mode or false
    self.return_indices = o.return_indices or false
end

function MaxPool2d:forward(x)
    I.check_tensor(x, "MaxPool2d")
    local nd = x:dim()
    if self.kernel_size ~= nil then -- (a module saved before these attributes has none)
        local kh, kw = I.pair(self.kernel_size, "MaxPool2d", "kernel_size")
        local sh, sw = I.pair(self.stride, "MaxPool2d", "stride")
        local ph, pw = I.pair(self.padding, "MaxPool2d", "padding")
        local dh, dw = I.pair(self.dilation, "MaxPool2d", "dilation")
        self.kh, self.kw, self.sh, self.sw = kh, kw, sh, sw
        self.ph, self.pw, self.dh, self.dw = ph, pw, dh, dw
    end
    if nd ~= 4 and nd ~= 3 then
        raise("tide: MaxPool2d: expected input {N, C, H, W} or {C, H, W}, got " ..
            I.shape_str(x.shape))
    end
    local h, w = x:size(nd - 1) + 2 * self.ph, x:size(nd) + 2 * self.pw
    if not self.ceil_mode and (h < self.kh or w < self.kw) then -- ceil_mode: F's own check
        raise(string.format("tide: MaxPool2d: kernel %dx%d is larger than the padded input " ..
            "%dx%d; use a smaller kernel or more padding", self.kh, self.kw, h, w))
    end
    return F.max_pool2d(x, { self.kh, self.kw }, { stride = { self.sh, self.sw },
        padding = { self.ph, self.pw }, dilation = { self.dh, self.dw },
        ceil_mode = self.ceil_mode, return_indices = self.return_indices })
end

function MaxPool2d:extra_repr() -- PyTorch's
    local show = require("tide.nn._args3d").show
    return string.format("kernel_size=%s, stride=%s, padding=%s, dilation=%s, ceil_mode=%s",
        show(self.kernel_size), show(self.stride), show(self.padding), show(self.dilation),
        tostring(self.ceil_mode))
end

S.define(MaxPool2d, { names = { "kernel_size", "stride", "padding", "dilation", "return_indices",
    "ceil_mode" }, required = 1 })

return MaxPool2d
