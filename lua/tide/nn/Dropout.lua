-- nn.Dropout([p = 0.5[, inplace = false]]), any of them by name (Dropout({p =, inplace =}),
-- Dropout(0.5, {inplace = true})): in training, zeroes each element with probability p and
-- scales the rest by 1/(1-p); identity in eval mode
local raise = require("tide.autograd").raise
local Module = require("tide.nn.Module")
local I = require("tide.nn._internal")
local A = require("tide.nn._activation")

local Dropout = Module:extend("Dropout")

-- also the other dropouts' (errors name self's class)
function Dropout:init(...)
    local who = self.__name
    local o = A.constructor_options(who, { "p", "inplace" }, ...)
    self.inplace = A.inplace_flag(o.inplace, who)
    local p = o.p == nil and 0.5 or o.p
    if type(p) ~= "number" or p < 0 or p > 1 then
        raise("tide: " .. who .. ": expected a probability p in [0, 1], got " .. tostring(p))
    end
    self.p = p
end

function Dropout:forward(x)
    I.check_tensor(x, "Dropout")
    if not self.training or self.p == 0 then
        return x -- as PyTorch's: the input itself (no write, even with inplace)
    end
    if self.inplace then
        return I.inplace(x, function(t)
            return I.dropout(t, self.p)
        end, "Dropout")
    end
    return I.dropout(x, self.p)
end

-- as PyTorch prints it (all the dropouts)
function Dropout:extra_repr()
    return string.format("p=%s, inplace=%s", tostring(self.p), tostring(self.inplace == true))
end

return Dropout
