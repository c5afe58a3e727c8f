-- nn.Hardtanh([min_val = -1[, max_val = 1[, inplace = false]]]), any of them by name
-- (Hardtanh({min_val =, max_val =, inplace =})): x clamped to [min_val, max_val]; its gradient 1
-- strictly inside, 0 at the bounds, as PyTorch's
local autograd = require("tide.autograd")
local Module = require("tide.nn.Module")
local I = require("tide.nn._internal")
local A = require("tide.nn._activation")
local F = require("tide.nn.functional")

local Hardtanh = Module:extend("Hardtanh")

function Hardtanh:init(...)
    local o = A.constructor_options("Hardtanh", { "min_val", "max_val", "inplace" }, ...)
    local min_val, max_val = o.min_val, o.max_val
    self.inplace = A.inplace_flag(o.inplace, "Hardtanh")
    self.min_val = I.check_number(min_val, -1, "min_val", "Hardtanh")
    self.max_val = I.check_number(max_val, 1, "max_val", "Hardtanh")
    if self.min_val > self.max_val then
        autograd.raise(string.format("tide: Hardtanh: expected min_val <= max_val, got %s > %s",
            self.min_val, self.max_val))
    end
end

function Hardtanh:forward(x)
    I.check_tensor(x, "Hardtanh")
    local o = { min_val = self.min_val, max_val = self.max_val }
    if self.inplace then
        return I.inplace(x, function(t)
            return F.hardtanh(t, o)
        end, "Hardtanh")
    end
    return F.hardtanh(x, o) -- its gradient's graph is PyTorch's hardtanh_backward
end

function Hardtanh:extra_repr() -- PyTorch's
    return "min_val=" .. tostring(self.min_val) .. ", max_val=" .. tostring(self.max_val)
        .. (self.inplace and ", inplace=true" or "")
end

return Hardtanh
