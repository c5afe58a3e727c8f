-- the padding modules' shared body (ZeroPad2d, ConstantPad1d/2d/3d, ReflectionPad1d/2d/3d,
-- ReplicationPad1d/2d/3d): F.pad with the module's mode over the last n / 2 dims. padding is an
-- integer (every side) or a table of n integers {left, right[, top, bottom[, front, back]]}, as
-- PyTorch's.
local core = require("tide.core")
local compat = require("tide._compat")
local raise = require("tide.autograd").raise
local Module = require("tide.nn.Module")
local I = require("tide.nn._internal")
local F = require("tide.nn.functional")

local SIDES = { [2] = "{left, right}", [4] = "{left, right, top, bottom}",
    [6] = "{left, right, top, bottom, front, back}" }

-- the class name; n sizes; mode ("constant", "reflect", "replicate"); takes_value: init's
-- second argument is the fill value (ConstantPad), else the fill is 0 (ZeroPad2d) or none
return function(name, n, mode, takes_value)
    local cls = Module:extend(name)
    function cls:init(padding, value)
        local pad = {}
        if compat.is_integer(padding) then
            for i = 1, n do
                pad[i] = padding
            end
        elseif type(padding) == "table" and #padding == n then
            for i = 1, n do
                pad[i] = padding[i]
                if not compat.is_integer(pad[i]) then
                    pad = nil
                    break
                end
            end
        else
            pad = nil
        end
        if not pad then
            raise(string.format("tide: %s: expected padding to be an integer or a table of %d " ..
                "integers %s, got %s", name, n, SIDES[n], type(padding) == "table" and
                #padding .. " values" or tostring(padding)))
        end
        self.padding = pad
        if takes_value then
            if type(value) ~= "number" then
                raise(string.format("tide: %s: expected the fill value to be a number, got %s; " ..
                    "call nn.%s(padding, value)", name, type(value), name))
            end
            self.value = value
        elseif value ~= nil then
            raise(string.format("tide: %s: takes only padding, got a second argument (%s)",
                name, type(value)))
        end
    end
    function cls:forward(x)
        I.check_tensor(x, name)
        return F.pad(x, self.padding, { mode = mode, value = self.value })
    end
    function cls:extra_repr()
        local p = "{" .. table.concat(self.padding, ", ") .. "}" -- PyTorch's
        return self.value and "padding=" .. p .. ", value=" .. tostring(self.value) or p
    end
    -- PyTorch's arguments, positionally or by name (tide.nn._signature)
    return require("tide.nn._signature").define(cls, { names = takes_value and
        { "padding", "value" } or { "padding" }, required = takes_value and 2 or 1, flat = true })
end
