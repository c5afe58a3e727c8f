-- nn.LogSoftmax([dim = -1])
local Module = require "tide.nn.Module"
local I = require "tide.nn._internal"

local LogSoftmax = Module:extend("LogSoftmax")

function LogSoftmax:init(dim)
    self.dim = dim or -1
end

function LogSoftmax:forward(x)
    I.check_tensor(x, "LogSoftmax")
    return x:log_softmax(self.dim)
end

function LogSoftmax:extra_repr()
    return "dim " .. self.dim
end

return LogSoftmax
