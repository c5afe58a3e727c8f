-- nn.GELU: elementwise gelu
local Module = require "tide.nn.Module"
local F = require "tide.nn.functional"

local GELU = Module:extend("GELU")

function GELU:forward(x)
    F.check_tensor(x, "GELU")
    return x:gelu()
end

return GELU
