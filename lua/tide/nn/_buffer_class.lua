-- nn.Buffer([t][, {persistent = true}]) or nn.Buffer(t, persistent): PyTorch 2.5's
-- torch.nn.Buffer: t (a zero-size float tensor when nil), marked so that assigned as a module's
-- field (self.running = nn.Buffer(tide.zeros(3))) it registers as a buffer, as
-- self:register_buffer("running", t, persistent) does; persistent = false keeps it out of
-- state_dict(). The tensor itself is returned (its requires_grad as it was, as PyTorch's).
local autograd = require("tide.autograd")
local BUFFERS = require("tide.nn._buffers")

local raise = autograd.raise

return function(t, persistent, ...)
    if select("#", ...) > 0 then
        raise("tide: Buffer: expected (t[, {persistent = true}]), got " ..
            (2 + select("#", ...)) .. " arguments")
    end
    if t == nil then
        t = require("tide").empty(0)
    elseif not autograd.is_tensor(t) then
        raise("tide: Buffer: expected a tensor, got " .. type(t) ..
            "; write nn.Buffer(tide.zeros(3)) or nn.Buffer(t, {persistent = false})")
    end
    if type(persistent) == "table" and not autograd.is_tensor(persistent) then
        for k in pairs(persistent) do
            if k ~= "persistent" then
                raise("tide: Buffer: unknown option " .. tostring(k) .. "; the only one is " ..
                    "persistent (nn.Buffer(t, {persistent = false}))")
            end
        end
        persistent = persistent.persistent
    end
    if persistent == nil then
        persistent = true
    elseif type(persistent) ~= "boolean" then
        raise("tide: Buffer: persistent must be true or false, got " .. tostring(persistent))
    end
    BUFFERS[t] = persistent
    return t
end
