-- nn.Tanhshrink(): x - tanh(x) (F.tanhshrink)
local Module = require("tide.nn.Module")
local I = require("tide.nn._internal")
local F = require("tide.nn.functional")

local Tanhshrink = Module:extend("Tanhshrink")

function Tanhshrink:forward(x)
    I.check_tensor(x, "Tanhshrink")
    return F.tanhshrink(x)
end

return Tanhshrink
