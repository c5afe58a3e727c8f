-- nn.Parameter(t[, requires_grad = true]) or nn.Parameter(t, {requires_grad =}) (PyTorch's
-- keyword): PyTorch's nn.Parameter: a leaf that shares t's
-- storage (t:detach()), with requires_grad set, marked as a parameter: assigned as a module's
-- field it registers as one even with requires_grad = false (a frozen weight still belongs in
-- parameters() and state_dict()). A complex t makes a complex parameter, as PyTorch's: its
-- leaf is the real pair under it (view_as_real), which the optimizers step (PyTorch's step a
-- complex parameter through view_as_real) and Module:to moves in place.
local autograd = require("tide.autograd")
local PARAMS = require("tide.nn._parameters")
local Complex = require("tide.complex.tensor")
local is_complex = Complex.is

local raise = autograd.raise

-- a trailing options table: PyTorch's requires_grad= by name
local function by_name(requires_grad, opts)
    for k in pairs(opts) do
        if k ~= "requires_grad" then
            raise("tide: Parameter: unknown option " .. tostring(k) .. "; the only one is " ..
                "requires_grad (nn.Parameter(t, {requires_grad = false}))")
        end
    end
    if requires_grad ~= nil and opts.requires_grad ~= nil then
        raise("tide: Parameter: requires_grad given both by position and by name; give it once")
    end
    if opts.requires_grad ~= nil then
        return opts.requires_grad
    end
    return requires_grad
end

local function is_options(v)
    return type(v) == "table" and not autograd.is_tensor(v)
end

-- nn.Parameter is a class as tide.isinstance sees it: tide.isinstance(p, nn.Parameter) is
-- Python's isinstance(p, nn.Parameter), true for the tensors nn.Parameter made and for every
-- tensor a module registered as a parameter (PyTorch registers Parameters only)
local Parameter = { __name = "Parameter" }

function Parameter.__instancecheck(_, obj)
    return (autograd.is_tensor(obj) or is_complex(obj)) and PARAMS[obj] == true
end

-- the tensor that holds a parameter's values and gradient: a complex parameter's real pair
-- [..., 2] (its view_as_real), a real one itself. Optimizers, Module:to and zero_grad work on it.
function Parameter.real_of(p)
    if is_complex(p) then
        return Complex.ri(p)
    end
    return p
end

local function new(t, requires_grad, ...)
    if not autograd.is_tensor(t) and not is_complex(t) then
        raise("tide: Parameter: expected a tensor, got " .. type(t))
    end
    local n = select("#", ...)
    if is_options(requires_grad) and n == 0 then
        requires_grad = by_name(nil, requires_grad)
    elseif n == 1 and is_options((...)) then
        requires_grad = by_name(requires_grad, (...))
        n = 0
    end
    if requires_grad ~= nil and type(requires_grad) ~= "boolean" then
        raise("tide: Parameter: requires_grad must be true or false, got " ..
            tostring(requires_grad))
    end
    if n > 0 then
        raise("tide: Parameter: expected (t[, requires_grad]), got " ..
            (2 + n) .. " arguments")
    end
    local p = t:detach() -- a complex t's: a new wrapper over its pair detached
    if requires_grad ~= false then
        p:requires_grad_(true)
    end
    PARAMS[p] = true
    return p
end

return setmetatable(Parameter, {
    __call = function(_, ...)
        return new(...)
    end,
})
