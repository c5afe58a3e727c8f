-- nn.SiLU: x * sigmoid(x)
local Module = require "tide.nn.Module"
local I = require "tide.nn._internal"
local F = require "tide.nn.functional"

local SiLU = Module:extend("SiLU")

function SiLU:forward(x)
    I.check_tensor(x, "SiLU")
    return F.silu(x)
end

return SiLU
