-- nn.Tanh: elementwise tanh
local Module = require "tide.nn.Module"
local F = require "tide.nn.functional"

local Tanh = Module:extend("Tanh")

function Tanh:forward(x)
    F.check_tensor(x, "Tanh")
    return x:tanh()
end

return Tanh
