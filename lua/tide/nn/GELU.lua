-- nn.GELU: elementwise gelu
local Module = require "tide.nn.Module"
local I = require "tide.nn._internal"

local GELU = Module:extend("GELU")

function GELU:forward(x)
    I.check_tensor(x, "GELU")
    return x:gelu()
end

return GELU
