-- nn.GELU([approximate = "none"]) or GELU({approximate =}): elementwise gelu (F.gelu; "tanh" its
-- tanh approximation)
local raise = require("tide.autograd").raise
local Module = require("tide.nn.Module")
local I = require("tide.nn._internal")
local F = require("tide.nn.functional")
local A = require("tide.nn._activation")

local GELU = Module:extend("GELU")

function GELU:init(...)
    local approximate = A.constructor_options("GELU", { "approximate" }, ...).approximate
    if approximate ~= nil and approximate ~= "none" and approximate ~= "tanh" then
        raise("tide: GELU: unknown approximate \"" .. tostring(approximate) ..
            "\"; use \"none\" or \"tanh\"")
    end
    self.approximate = approximate or "none"
end

function GELU:forward(x)
    I.check_tensor(x, "GELU")
    if self.approximate == "none" then
        return x:gelu()
    end
    return F.gelu(x, { approximate = self.approximate })
end

-- the approximation, when not the exact form
function GELU:extra_repr() -- PyTorch's
    return "approximate='" .. self.approximate .. "'"
end

return GELU
