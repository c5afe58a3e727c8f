-- nn.GLU([dim = -1]): the first half of the input along dim times the sigmoid of the second
-- (F.glu)
local Module = require("tide.nn.Module")
local I = require("tide.nn._internal")
local F = require("tide.nn.functional")

local GLU = Module:extend("GLU")

function GLU:init(dim)
    self.dim = dim or -1
end

function GLU:forward(x)
    I.check_tensor(x, "GLU")
    return F.glu(x, self.dim)
end

function GLU:extra_repr()
    return "dim " .. self.dim
end

require("tide.nn._signature").define(GLU, { names = { "dim" }, flat = true })

return GLU
