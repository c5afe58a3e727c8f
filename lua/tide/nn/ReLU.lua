-- nn.ReLU: elementwise relu
local Module = require "tide.nn.Module"
local F = require "tide.nn.functional"

local ReLU = Module:extend("ReLU")

function ReLU:forward(x)
    F.check_tensor(x, "ReLU")
    return x:relu()
end

return ReLU
