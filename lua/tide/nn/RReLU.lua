-- nn.RReLU([lower = 1/8[, upper = 1/3]]) or RReLU({lower =, upper =, inplace =}): the
-- randomized leaky ReLU, a slope drawn in [lower, upper] for each negative element while
-- training, (lower + upper) / 2 in eval mode (F.rrelu)
local core = require("tide.core")
local Module = require("tide.nn.Module")
local I = require("tide.nn._internal")
local F = require("tide.nn.functional")

local RReLU = Module:extend("RReLU")

function RReLU:init(lower, upper)
    local o = { lower = lower, upper = upper }
    if type(lower) == "table" then
        core._check_options(lower, "RReLU", { "lower", "upper", "inplace" })
        o = lower
    end
    self.lower, self.upper, self.inplace = o.lower or 1 / 8, o.upper or 1 / 3, o.inplace
end

function RReLU:forward(x)
    I.check_tensor(x, "RReLU")
    return F.rrelu(x, { lower = self.lower, upper = self.upper, training = self.training,
        inplace = self.inplace })
end

function RReLU:extra_repr()
    return string.format("lower=%s, upper=%s", tostring(self.lower), tostring(self.upper))
end

return RReLU
