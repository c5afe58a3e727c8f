-- nn.Unflatten(dim, sizes): dim (1-based) split into sizes (t:unflatten), the inverse of Flatten
local raise = require("tide.autograd").raise
local Module = require("tide.nn.Module")
local I = require("tide.nn._internal")
local compat = require("tide._compat")
local S = require("tide.nn._signature")

local Unflatten = Module:extend("Unflatten")

function Unflatten:init(dim, sizes)
    if not compat.is_integer(dim) then
        raise("tide: Unflatten: expected dim to be an integer, got " .. tostring(dim))
    end
    if type(sizes) ~= "table" or #sizes == 0 then
        raise("tide: Unflatten: expected sizes as a list such as {2, 3}, got " .. type(sizes))
    end
    -- unflattened_size: PyTorch's name (the same list as sizes); forward reads it
    self.dim, self.sizes, self.unflattened_size = dim, sizes, sizes
end

function Unflatten:forward(x)
    I.check_tensor(x, "Unflatten")
    return x:unflatten(self.dim, self.unflattened_size)
end

function Unflatten:extra_repr() -- PyTorch's (tide's 1-based dim)
    return string.format("dim=%d, unflattened_size={%s}", self.dim,
        table.concat(self.unflattened_size, ", "))
end

S.define(Unflatten, { names = { "dim", "unflattened_size" }, required = 2, flat = true })

return Unflatten
