-- nn.Softmax([dim = -1])
local Module = require "tide.nn.Module"
local I = require "tide.nn._internal"

local Softmax = Module:extend("Softmax")

function Softmax:init(dim)
    self.dim = dim or -1
end

function Softmax:forward(x)
    I.check_tensor(x, "Softmax")
    return x:softmax(self.dim)
end

function Softmax:extra_repr()
    return "dim " .. self.dim
end

return Softmax
