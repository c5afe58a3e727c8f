-- nn.Parameter(t[, requires_grad = true]): PyTorch's nn.Parameter: a leaf that shares t's
-- storage (t:detach()), with requires_grad set, marked as a parameter: assigned as a module's
-- field it registers as one even with requires_grad = false (a frozen weight still belongs in
-- parameters() and state_dict())
local autograd = require("tide.autograd")
local PARAMS = require("tide.nn._parameters")

local raise = autograd.raise

return function(t, requires_grad, ...)
    if not autograd.is_tensor(t) then
        raise("tide: Parameter: expected a tensor, got " .. type(t))
    end
    if requires_grad ~= nil and type(requires_grad) ~= "boolean" then
        raise("tide: Parameter: requires_grad must be true or false, got " ..
            tostring(requires_grad))
    end
    if select("#", ...) > 0 then
        raise("tide: Parameter: expected (t[, requires_grad]), got " ..
            (2 + select("#", ...)) .. " arguments")
    end
    local p = t:detach()
    if requires_grad ~= false then
        p:requires_grad_(true)
    end
    PARAMS[p] = true
    return p
end
