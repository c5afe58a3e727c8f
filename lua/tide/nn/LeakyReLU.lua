-- nn.LeakyReLU([negative_slope = 0.01]) or LeakyReLU({negative_slope =, inplace = false}): x
-- where x > 0, else
-- negative_slope * x
local core = require "tide.core"
local Module = require "tide.nn.Module"
local I = require "tide.nn._internal"
local F = require "tide.nn.functional"

local LeakyReLU = Module:extend("LeakyReLU")

function LeakyReLU:init(negative_slope)
    if type(negative_slope) == "table" then
        core._check_options(negative_slope, "LeakyReLU", { "negative_slope", "inplace" })
        self.inplace = negative_slope.inplace
        negative_slope = negative_slope.negative_slope
    end
    self.negative_slope = I.check_number(negative_slope, 0.01, "negative_slope", "LeakyReLU")
end

function LeakyReLU:forward(x)
    I.check_tensor(x, "LeakyReLU")
    return F.leaky_relu(x, { negative_slope = self.negative_slope, inplace = self.inplace })
end

function LeakyReLU:extra_repr()
    return "negative_slope " .. self.negative_slope
end

return LeakyReLU
