-- nn.PReLU([num_parameters = 1[, init = 0.25]]) or PReLU({num_parameters =, init =}): x where
-- x > 0, else weight * x (F.prelu); weight {num_parameters}, one per channel or one for all
local core = require("tide.core")
local Module = require("tide.nn.Module")
local I = require("tide.nn._internal")
local F = require("tide.nn.functional")

local PReLU = Module:extend("PReLU")

function PReLU:init(num_parameters, init)
    if type(num_parameters) == "table" then
        core._check_options(num_parameters, "PReLU", { "num_parameters", "init" })
        num_parameters, init = num_parameters.num_parameters, num_parameters.init
    end
    self.num_parameters = I.check_int(num_parameters or 1, "num_parameters", "PReLU")
    init = I.check_number(init, 0.25, "init", "PReLU")
    self:register_parameter("weight", I.const_param({ self.num_parameters }, init))
end

function PReLU:forward(x)
    I.check_tensor(x, "PReLU")
    local weight = self.weight -- read once: a parametrized weight is computed per read
    I.check_input(x, weight, "PReLU")
    return F.prelu(x, weight)
end

function PReLU:extra_repr() -- PyTorch's
    return "num_parameters=" .. tostring(self.num_parameters)
end

return PReLU
