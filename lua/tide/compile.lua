-- tide.compile(model_or_fn[, opts]): PyTorch's torch.compile, which tide has no need of: tide
-- runs every op eagerly, so the module or function comes back unchanged (a ported
-- `model = torch.compile(model)` keeps working). torch.compile's options are accepted and
-- checked: fullgraph, dynamic, backend, mode, options, disable; any other raises. Without a
-- model (tide.compile(nil, opts)) it returns a function that gives its argument back, as
-- torch.compile(**opts) returns a decorator.
local autograd = require("tide.autograd")
local args = require("tide.op_args")
local raise = autograd.raise

local OPTIONS = { "fullgraph", "dynamic", "backend", "mode", "options", "disable" }
local MODES = { default = true, ["reduce-overhead"] = true, ["max-autotune"] = true,
    ["max-autotune-no-cudagraphs"] = true }

local callable = require("tide.op_args").is_callable

local function check(opts)
    local o = args.options("compile", opts, OPTIONS, '{mode = "max-autotune"}')
    for _, k in ipairs({ "fullgraph", "dynamic", "disable" }) do
        if o[k] ~= nil and type(o[k]) ~= "boolean" then
            raise(("tide: compile: %s must be true or false, got %s"):format(k, type(o[k])))
        end
    end
    if o.backend ~= nil and type(o.backend) ~= "string" and not callable(o.backend) then
        raise("tide: compile: backend must be a name or a function, got " .. type(o.backend))
    end
    if o.mode ~= nil and not MODES[o.mode] then
        raise(('tide: compile: mode = %s; expected "default", "reduce-overhead", ' ..
            '"max-autotune" or "max-autotune-no-cudagraphs"'):format(tostring(o.mode)))
    end
    if o.options ~= nil and (type(o.options) ~= "table" or autograd.is_tensor(o.options)) then
        raise("tide: compile: options must be a table, got " .. type(o.options))
    end
end

return function(model, opts, ...)
    args.no_extra("compile", 2, ...)
    check(opts)
    if model == nil then
        return function(m)
            return m
        end
    end
    if not callable(model) then
        raise("tide: compile: expected a module or a function, got " ..
            (autograd.is_tensor(model) and "a tensor" or type(model)))
    end
    return model
end
