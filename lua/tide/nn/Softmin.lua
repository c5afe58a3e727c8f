-- nn.Softmin([dim]) or Softmin({dim =}): softmax of -x along dim (F.softmin)
local compat = require("tide._compat")
local raise = require("tide.autograd").raise
local Module = require("tide.nn.Module")
local I = require("tide.nn._internal")
local F = require("tide.nn.functional")
local A = require("tide.nn._activation")

local Softmin = Module:extend("Softmin")

function Softmin:init(...)
    local dim = A.constructor_options("Softmin", { "dim" }, ...).dim
    if dim ~= nil and not compat.is_integer(dim) then
        raise("tide: Softmin: expected dim to be an integer, got " .. tostring(dim))
    end
    self.dim = dim -- nil: PyTorch's implicit choice at each call (F.softmin's)
end

function Softmin:forward(x)
    I.check_tensor(x, "Softmin")
    return F.softmin(x, self.dim)
end

function Softmin:extra_repr()
    return "dim " .. tostring(self.dim)
end

return Softmin
