-- nn.MaxUnpool2d(kernel_size[, stride = kernel_size[, padding = 0]]) or MaxUnpool2d(k,
-- {stride =, padding =}): max_pool2d's partial inverse, forward(input, indices[,
-- output_size]) with the 1-based indices its return_indices gives (F.max_unpool2d)
local core = require("tide.core")
local Module = require("tide.nn.Module")
local I = require("tide.nn._internal")
local F = require("tide.nn.functional")

local MaxUnpool2d = Module:extend("MaxUnpool2d")

function MaxUnpool2d:init(kernel_size, stride, padding)
    if type(stride) == "table" and #stride == 0 then
        core._check_options(stride, "MaxUnpool2d", { "stride", "padding" })
        stride, padding = stride.stride, stride.padding
    end
    self.kernel_size, self.stride, self.padding = kernel_size, stride or kernel_size, padding or 0
end

function MaxUnpool2d:forward(x, indices, output_size)
    I.check_tensor(x, "MaxUnpool2d")
    return F.max_unpool2d(x, indices, self.kernel_size, { stride = self.stride,
        padding = self.padding, output_size = output_size })
end

local function show(v)
    return type(v) == "table" and "{" .. table.concat(v, ", ") .. "}" or tostring(v)
end

function MaxUnpool2d:extra_repr()
    return string.format("kernel_size=%s, stride=%s, padding=%s", show(self.kernel_size),
        show(self.stride), show(self.padding))
end

return MaxUnpool2d
