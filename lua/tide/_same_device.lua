-- tide._same_device: same_device(op, a, b, ...) raises tide's device error, naming op, unless
-- every tensor among the arguments (numbers and nil are skipped) is on one device. The ops
-- written in Lua check first, so that the error names the op the user called rather than the
-- gather or index_add_ inside it, and comes before any partial work.
local core = require("tide.core")
local raise = require("tide.autograd.raise")

return function(op, ...)
    local first
    for i = 1, select("#", ...) do
        local v = select(i, ...)
        if core.is_tensor(v) then
            if not first then
                first = v.device
            elseif v.device ~= first then
                raise(("tide: %s: expected all tensors on the same device, found %s and %s; " ..
                    "move one with :to(\"%s\")"):format(op, tostring(first), tostring(v.device),
                    tostring(v.device)))
            end
        end
    end
end
