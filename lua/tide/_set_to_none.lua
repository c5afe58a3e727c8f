-- tide._set_to_none: zero_grad's set_to_none, PyTorch's parameter of Module:zero_grad and
-- Optimizer:zero_grad, by position (m:zero_grad(false)) or by name ({set_to_none = false}):
-- nil or true sets each gradient to nil (PyTorch 2's default, tide's); false zeroes each
-- existing gradient in place, detached from any graph (PyTorch 1.13's default), so a script
-- that reads p.grad after zero_grad(set_to_none=False) finds zeros, as in PyTorch. Anything
-- else raises before a gradient is touched.
local autograd = require("tide.autograd")
local Complex = require("tide.complex.tensor")

-- zero_grad(who, params, ...): ... the caller's arguments after self
return function(who, params, ...)
    local set_to_none = nil
    if select("#", ...) > 0 then
        set_to_none = require("tide.nn._args").positional(who, 0, { "set_to_none" }, ...)
        require("tide.op_args").options(who, set_to_none, { "set_to_none" })
        set_to_none = set_to_none.set_to_none
        if set_to_none ~= nil and type(set_to_none) ~= "boolean" then
            autograd.raise(("tide: %s: set_to_none must be a boolean, got %s"):format(who,
                type(set_to_none)))
        end
    end
    for _, p in ipairs(params) do
        if Complex.is(p) then -- a complex parameter's gradient is its real pair's
            p = Complex.ri(p)
        end
        if set_to_none == false then
            local g = p.grad
            if g ~= nil then
                if g.requires_grad then
                    g:detach_()
                end
                g:zero_()
            end
        else
            autograd.set_grad(p, nil)
        end
    end
end
