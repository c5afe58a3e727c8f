-- nn.Tanh: elementwise tanh
local Module = require "tide.nn.Module"
local I = require "tide.nn._internal"

local Tanh = Module:extend("Tanh")

function Tanh:forward(x)
    I.check_tensor(x, "Tanh")
    return x:tanh()
end

return Tanh
