-- nn.Flatten([start_dim = 2, end_dim = -1]): merges dims start..end (1-based, the batch dim stays)
local raise = require("tide.autograd").raise
local Module = require("tide.nn.Module")
local I = require("tide.nn._internal")
local compat = require("tide._compat")
local S = require("tide.nn._signature")

local Flatten = Module:extend("Flatten")

function Flatten:init(start_dim, end_dim)
    self.start_dim, self.end_dim = start_dim or 2, end_dim or -1
    for _, d in ipairs { { "start_dim", self.start_dim }, { "end_dim", self.end_dim } } do
        if not compat.is_integer(d[2]) then
            raise("tide: Flatten: expected " .. d[1] .. " to be an integer, got " ..
                (type(d[2]) == "number" and tostring(d[2]) or type(d[2])))
        end
    end
    if self.start_dim == 0 or self.end_dim == 0 then
        -- 0 is no dim in tide: the port kept PyTorch's 0-based dims
        raise(("tide: Flatten: %s is 0, and dims are 1-based (negative from the end): " ..
            "PyTorch's nn.Flatten(0, 1) is nn.Flatten(1, 2)"):format(self.start_dim == 0 and
            "start_dim" or "end_dim"))
    end
end

function Flatten:forward(x)
    I.check_tensor(x, "Flatten")
    local shape, nd = x.shape, x:dim()
    local s, e = self.start_dim, self.end_dim
    if s < 0 then
        s = s + nd + 1
    end
    if e < 0 then
        e = e + nd + 1
    end
    if s < 1 or e > nd or s > e then
        if nd == 0 or (s == e) then
            return x
        end
        raise(string.format("tide: Flatten: dims %d..%d out of range for a %d-D input",
            self.start_dim, self.end_dim, nd))
    end
    local out, m = {}, 1
    for i = 1, s - 1 do
        out[#out + 1] = shape[i]
    end
    for i = s, e do
        m = m * shape[i]
    end
    out[#out + 1] = m
    for i = e + 1, nd do
        out[#out + 1] = shape[i]
    end
    return x:reshape(out)
end

S.define(Flatten, { names = { "start_dim", "end_dim" }, flat = true })

function Flatten:extra_repr() -- PyTorch's (tide's 1-based dims)
    return string.format("start_dim=%d, end_dim=%d", self.start_dim, self.end_dim)
end

return Flatten
