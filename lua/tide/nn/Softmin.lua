-- nn.Softmin([dim = -1]): softmax of -x along dim (F.softmin)
local Module = require("tide.nn.Module")
local I = require("tide.nn._internal")
local F = require("tide.nn.functional")

local Softmin = Module:extend("Softmin")

function Softmin:init(dim)
    self.dim = dim or -1
    I.check_int(self.dim, "dim", "Softmin", -math.huge)
end

function Softmin:forward(x)
    I.check_tensor(x, "Softmin")
    return F.softmin(x, self.dim)
end

function Softmin:extra_repr()
    return "dim " .. self.dim
end

return Softmin
