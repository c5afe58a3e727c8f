-- nn.Threshold(threshold, value[, {inplace = false}]): value where x <= threshold, else x
-- (F.threshold)
local core = require("tide.core")
local raise = require("tide.autograd").raise
local Module = require("tide.nn.Module")
local I = require("tide.nn._internal")
local F = require("tide.nn.functional")

local Threshold = Module:extend("Threshold")

function Threshold:init(threshold, value, opts)
    if type(threshold) ~= "number" or type(value) ~= "number" then
        raise(string.format("tide: Threshold: expected the numbers threshold and value, got " ..
            "%s and %s; call nn.Threshold(threshold, value)", type(threshold), type(value)))
    end
    core._check_options(opts or {}, "Threshold", { "inplace" })
    self.threshold, self.value = threshold, value
    self.inplace = (opts or {}).inplace
end

function Threshold:forward(x)
    I.check_tensor(x, "Threshold")
    return F.threshold(x, self.threshold, self.value, { inplace = self.inplace })
end

function Threshold:extra_repr()
    return "threshold " .. self.threshold .. ", value " .. self.value
end

return Threshold
