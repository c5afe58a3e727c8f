-- nn.MaxUnpool1d(kernel_size[, stride = kernel_size[, padding = 0]]) or MaxUnpool1d(k,
-- {stride =, padding =}): max_pool1d's partial inverse, forward(input, indices[,
-- output_size]) with the 1-based indices its return_indices gives (F.max_unpool1d)
local core = require("tide.core")
local Module = require("tide.nn.Module")
local I = require("tide.nn._internal")
local F = require("tide.nn.functional")

local MaxUnpool1d = Module:extend("MaxUnpool1d")

function MaxUnpool1d:init(kernel_size, stride, padding)
    if type(stride) == "table" and #stride == 0 then
        core._check_options(stride, "MaxUnpool1d", { "stride", "padding" })
        stride, padding = stride.stride, stride.padding
    end
    self.kernel_size, self.stride, self.padding = kernel_size, stride or kernel_size, padding or 0
end

function MaxUnpool1d:forward(x, indices, output_size)
    I.check_tensor(x, "MaxUnpool1d")
    return F.max_unpool1d(x, indices, self.kernel_size, { stride = self.stride,
        padding = self.padding, output_size = output_size })
end

local function show(v)
    return type(v) == "table" and "{" .. table.concat(v, ", ") .. "}" or tostring(v)
end

function MaxUnpool1d:extra_repr()
    return string.format("kernel_size=%s, stride=%s, padding=%s", show(self.kernel_size),
        show(self.stride), show(self.padding))
end

return MaxUnpool1d
