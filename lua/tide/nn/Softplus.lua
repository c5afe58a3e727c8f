-- nn.Softplus([beta = 1[, threshold = 20]]) or Softplus({beta =, threshold =}):
-- log(1 + exp(beta x)) / beta, x itself where beta x > threshold
local core = require "tide.core"
local Module = require "tide.nn.Module"
local I = require "tide.nn._internal"
local F = require "tide.nn.functional"

local Softplus = Module:extend("Softplus")

function Softplus:init(beta, threshold)
    if type(beta) == "table" then
        core._check_options(beta, "Softplus", { "beta", "threshold" })
        beta, threshold = beta.beta, beta.threshold
    end
    self.beta = I.check_number(beta, 1, "beta", "Softplus")
    self.threshold = I.check_number(threshold, 20, "threshold", "Softplus")
end

function Softplus:forward(x)
    I.check_tensor(x, "Softplus")
    return F.softplus(x, { beta = self.beta, threshold = self.threshold })
end

function Softplus:extra_repr()
    return "beta " .. self.beta .. ", threshold " .. self.threshold
end

return Softplus
