-- nn.Softmax2d(): softmax over the channels (dim -3) of input {N, C, H, W} or {C, H, W}, at
-- each position
local raise = require("tide.autograd").raise
local Module = require("tide.nn.Module")
local I = require("tide.nn._internal")

local Softmax2d = Module:extend("Softmax2d")

function Softmax2d:init(...)
    require("tide.op_args").no_extra("Softmax2d", 0, ...)
end

function Softmax2d:forward(x)
    I.check_tensor(x, "Softmax2d")
    if x:dim() ~= 3 and x:dim() ~= 4 then
        raise("tide: Softmax2d: expected input {N, C, H, W} or {C, H, W}, got " ..
            I.shape_str(x.shape))
    end
    return x:softmax(-3)
end

return Softmax2d
