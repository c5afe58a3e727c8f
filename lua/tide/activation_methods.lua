-- tide.activation_methods: PyTorch's activations that are Tensor methods and torch functions
-- too: t:prelu(weight) / tide.prelu(t, weight) and t:hardshrink([lambd = 0.5]) /
-- tide.hardshrink(t[, lambd]), tide.nn.functional's prelu and hardshrink (their values,
-- gradients and errors). Loaded on first use (lua/tide/_lazy_ops.lua).
local core = require("tide.core")
local args = require("tide.op_args")

local Tensor = core.Tensor

local M = { functions = {} }

local function F()
    return require("tide.nn.functional")
end

function Tensor.prelu(x, weight, ...)
    args.no_extra("prelu", 2, ...)
    args.check("prelu", x)
    args.check("prelu", weight, 2)
    return F().prelu(x, weight)
end

function Tensor.hardshrink(x, lambd, ...)
    args.no_extra("hardshrink", 2, ...)
    args.check("hardshrink", x)
    if lambd ~= nil and type(lambd) ~= "number" then
        require("tide.autograd.raise")(("tide: hardshrink: lambd must be a number, got %s")
            :format(type(lambd)))
    end
    return F().hardshrink(x, lambd)
end

M.functions.prelu, M.functions.hardshrink = Tensor.prelu, Tensor.hardshrink
M.names = { "prelu", "hardshrink" }
return M
