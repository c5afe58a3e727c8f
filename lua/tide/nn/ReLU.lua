-- nn.ReLU: elementwise relu
local Module = require "tide.nn.Module"
local I = require "tide.nn._internal"

local ReLU = Module:extend("ReLU")

function ReLU:forward(x)
    I.check_tensor(x, "ReLU")
    return x:relu()
end

return ReLU
