-- nn.Sigmoid: elementwise sigmoid
local Module = require "tide.nn.Module"
local I = require "tide.nn._internal"

local Sigmoid = Module:extend("Sigmoid")

function Sigmoid:forward(x)
    I.check_tensor(x, "Sigmoid")
    return x:sigmoid()
end

return Sigmoid
