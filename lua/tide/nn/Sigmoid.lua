-- nn.Sigmoid: elementwise sigmoid
local Module = require "tide.nn.Module"
local F = require "tide.nn.functional"

local Sigmoid = Module:extend("Sigmoid")

function Sigmoid:forward(x)
    F.check_tensor(x, "Sigmoid")
    return x:sigmoid()
end

return Sigmoid
