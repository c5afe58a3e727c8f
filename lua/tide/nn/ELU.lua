-- nn.ELU([alpha = 1]) or ELU({alpha =, inplace = false}): x where x > 0, else alpha (exp(x) - 1)
local core = require "tide.core"
local Module = require "tide.nn.Module"
local I = require "tide.nn._internal"
local F = require "tide.nn.functional"

local ELU = Module:extend("ELU")

function ELU:init(alpha)
    if type(alpha) == "table" then
        core._check_options(alpha, "ELU", { "alpha", "inplace" })
        self.inplace = alpha.inplace
        alpha = alpha.alpha
    end
    self.alpha = I.check_number(alpha, 1, "alpha", "ELU")
end

function ELU:forward(x)
    I.check_tensor(x, "ELU")
    return F.elu(x, { alpha = self.alpha, inplace = self.inplace })
end

function ELU:extra_repr()
    return "alpha " .. self.alpha
end

return ELU
