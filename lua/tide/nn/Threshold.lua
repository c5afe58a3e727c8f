-- nn.Threshold(threshold, value[, inplace = false]) (or {inplace =} last): value where
-- x <= threshold, else x (F.threshold)
local core = require("tide.core")
local raise = require("tide.autograd").raise
local Module = require("tide.nn.Module")
local I = require("tide.nn._internal")
local F = require("tide.nn.functional")
local C = require("tide.nn._args")
local A = require("tide.nn._activation")

local Threshold = Module:extend("Threshold")

function Threshold:init(threshold, value, ...)
    if type(threshold) ~= "number" or type(value) ~= "number" then
        raise(string.format("tide: Threshold: expected the numbers threshold and value, got " ..
            "%s and %s; call nn.Threshold(threshold, value)", type(threshold), type(value)))
    end
    local o = C.positional("Threshold", 2, { "inplace" }, ...)
    core._check_options(o, "Threshold", { "inplace" })
    self.threshold, self.value = threshold, value
    self.inplace = A.inplace_flag(o.inplace, "Threshold")
end

function Threshold:forward(x)
    I.check_tensor(x, "Threshold")
    return F.threshold(x, self.threshold, self.value, { inplace = self.inplace })
end

function Threshold:extra_repr() -- PyTorch's
    return "threshold=" .. tostring(self.threshold) .. ", value=" .. tostring(self.value)
        .. (self.inplace and ", inplace=true" or "")
end

require("tide.nn._signature").define(Threshold, { names = { "threshold", "value", "inplace" },
    required = 2 })

return Threshold
