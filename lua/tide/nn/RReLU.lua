-- nn.RReLU([lower = 1/8[, upper = 1/3[, inplace = false]]]), any of them by name (RReLU({lower
-- =, upper =, inplace =})): the randomized leaky ReLU, a slope drawn in [lower, upper] for each
-- negative element while training, (lower + upper) / 2 in eval mode (F.rrelu)
local Module = require("tide.nn.Module")
local I = require("tide.nn._internal")
local F = require("tide.nn.functional")
local A = require("tide.nn._activation")

local RReLU = Module:extend("RReLU")

function RReLU:init(...)
    local o = A.constructor_options("RReLU", { "lower", "upper", "inplace" }, ...)
    self.lower = I.check_number(o.lower, 1 / 8, "lower", "RReLU")
    self.upper = I.check_number(o.upper, 1 / 3, "upper", "RReLU")
    self.inplace = A.inplace_flag(o.inplace, "RReLU")
end

function RReLU:forward(x)
    I.check_tensor(x, "RReLU")
    return F.rrelu(x, { lower = self.lower, upper = self.upper, training = self.training,
        inplace = self.inplace })
end

function RReLU:extra_repr() -- PyTorch's
    return string.format("lower=%s, upper=%s", tostring(self.lower), tostring(self.upper))
        .. (self.inplace and ", inplace=true" or "")
end

return RReLU
