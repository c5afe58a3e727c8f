-- tide.autograd.Variable(t[, requires_grad = false]), or Variable(t, {requires_grad =,
-- volatile =}): PyTorch's legacy wrapper, for ported scripts. As PyTorch 1.13's, it returns a
-- tensor: a new leaf sharing t's storage (t:detach()) with requires_grad as given, so t keeps
-- its own requires_grad and graph. volatile (removed from PyTorch) has no effect, with
-- PyTorch's warning: run the code under tide.no_grad instead.
local engine = require("tide.autograd.engine")
local raise = require("tide.autograd.raise")
local core = require("tide.core")
local warn = require("tide._warn")

local is_tensor = core.is_tensor

return function(t, requires_grad, ...)
    if select("#", ...) > 0 then
        raise("tide: autograd.Variable: expected (t[, requires_grad]), got " ..
            (2 + select("#", ...)) .. " arguments")
    end
    if not is_tensor(t) then
        raise("tide: autograd.Variable: expected a tensor, got " .. type(t) ..
            "; make one with tide.tensor(data) first")
    end
    if type(requires_grad) == "table" then
        local opts = requires_grad
        core._check_options(opts, "autograd.Variable", { "requires_grad", "volatile" })
        if opts.volatile ~= nil then
            warn.once("Variable.volatile", "autograd.Variable: volatile was removed and has " ..
                "no effect; run the code under tide.no_grad instead")
        end
        requires_grad = opts.requires_grad
    end
    if requires_grad ~= nil and type(requires_grad) ~= "boolean" then
        raise("tide: autograd.Variable: expected requires_grad to be true or false, got " ..
            type(requires_grad))
    end
    if requires_grad and not engine.FLOAT[t.dtype] then
        raise("tide: autograd.Variable: only floating-point tensors can require grad, this " ..
            "one is " .. t.dtype .. "; convert it first (t:double())")
    end
    local v = t:detach()
    if requires_grad then
        v:requires_grad_(true)
    end
    return v
end
