-- tide.jit: PyTorch's TorchScript entry points (torch.jit), for ported scripts. tide runs every
-- op eagerly and has no graph to compile, so script and trace give the function or module back
-- as it is (as tide.compile does), trace having run it once on the example inputs (the errors a
-- trace meets surface there, as PyTorch's); save and load are tide.save / tide.load of the whole
-- module (tide's file format, not a TorchScript archive); the decorators (ignore, unused,
-- export, script_method) give their function back; is_scripting() and is_tracing() are false.
local autograd = require("tide.autograd")
local args = require("tide.op_args")
local compat = require("tide._compat")
local raise = autograd.raise

local J = {}

local callable = require("tide.op_args").is_callable

local function need_callable(op, obj)
    if not callable(obj) then
        raise(("tide: jit.%s: expected a module or a function, got %s"):format(op,
            autograd.is_tensor(obj) and "a tensor" or type(obj)))
    end
end

-- a scripted or traced module gets what a ScriptModule reads: .code and .graph (strings that say
-- tide keeps no TorchScript, so print(traced.code) prints that and not nil) on it and each of
-- its submodules, and .save (tide.save itself, so traced:save(path) is tide.jit.save(traced,
-- path) and the field survives a save of the whole module); a field the module already has stays
local function as_script_module(obj, how)
    if not (type(obj) == "table" and obj.__ismodule == true and
        type(obj.modules) == "function") then
        return obj
    end
    local tide = require("tide")
    for _, m in ipairs(obj:modules()) do
        local mt = getmetatable(m)
        local name = type(mt) == "table" and rawget(mt, "__name") or "Module"
        local note = ("tide.jit: %s was %s and runs its Lua forward eagerly; tide keeps no " ..
            "TorchScript %%s (no IR: there is nothing to print but this)"):format(name, how)
        if m.code == nil then
            m.code = note:format("code")
        end
        if m.graph == nil then
            m.graph = note:format("graph")
        end
        if m.save == nil then
            m.save = tide.save
        end
    end
    return obj
end

-- script(obj[, {optimize =, _frames_up =, _rcb =, example_inputs =}]): obj itself
function J.script(obj, opts)
    args.options("jit.script", opts, { "optimize", "_frames_up", "_rcb", "example_inputs" })
    need_callable("script", obj)
    return as_script_module(obj, "scripted")
end

-- the example inputs of trace: one tensor, or a list of them (Python's tuple)
local function inputs_of(example)
    if autograd.is_tensor(example) then
        return { example, n = 1 }
    elseif type(example) == "table" then
        return { n = #example, compat.unpack(example) }
    end
    raise(("tide: jit.trace: example_inputs must be a tensor or a list of them, got %s"):format(
        type(example)))
end

local TRACE_OPTIONS = { "optimize", "check_trace", "check_inputs", "check_tolerance", "strict",
    "_force_outplace", "_module_class", "_compilation_unit", "example_kwarg_inputs",
    "_store_inputs" }

-- trace(func, example_inputs[, {check_trace =, strict =, ...}]): func itself, after one call on
-- the example inputs (under no_grad, as a trace records no gradient)
function J.trace(func, example_inputs, opts)
    args.options("jit.trace", opts, TRACE_OPTIONS)
    need_callable("trace", func)
    local ins = inputs_of(example_inputs)
    autograd.no_grad(function()
        func(compat.unpack(ins, 1, ins.n))
    end)
    return as_script_module(func, "traced")
end

-- trace_module(mod, {method = example_inputs, ...}): mod, each method run once
function J.trace_module(mod, inputs, opts)
    args.options("jit.trace_module", opts, TRACE_OPTIONS)
    need_callable("trace_module", mod)
    if type(inputs) ~= "table" or autograd.is_tensor(inputs) then
        raise("tide: jit.trace_module: inputs must be a table {method = example_inputs}, got " ..
            type(inputs))
    end
    for method, example in pairs(inputs) do
        local f = mod[method]
        if type(f) ~= "function" then
            raise(("tide: jit.trace_module: the module has no method %s"):format(tostring(method)))
        end
        local ins = inputs_of(example)
        autograd.no_grad(function()
            f(mod, compat.unpack(ins, 1, ins.n))
        end)
    end
    return as_script_module(mod, "traced")
end

-- save(m, path) / load(path[, map_location]): the whole module, by tide.save and tide.load
function J.save(m, path, ...)
    args.no_extra("jit.save", 2, ...)
    return require("tide").save(m, path)
end

function J.load(path, map_location, ...)
    args.no_extra("jit.load", 2, ...)
    local tide = require("tide")
    if type(map_location) == "table" and not getmetatable(map_location) then
        return tide.load(path, map_location) -- {map_location =}
    end
    return tide.load(path, map_location ~= nil and { map_location = map_location } or nil)
end

-- decorators that give the function back: ignore, unused, export, script_method; ignore and
-- unused also take {drop = bool} alone (Python's @torch.jit.ignore(drop=True))
local function decorator(name)
    return function(fn, ...)
        args.no_extra("jit." .. name, 1, ...)
        if type(fn) == "table" and not callable(fn) then
            args.options("jit." .. name, fn, { "drop" })
            return function(f)
                need_callable(name, f)
                return f
            end
        end
        need_callable(name, fn)
        return fn
    end
end
J.ignore, J.unused = decorator("ignore"), decorator("unused")
J.export, J.script_method = decorator("export"), decorator("script_method")

function J.is_scripting()
    return false
end

function J.is_tracing()
    return false
end

-- annotate(type, value) / Attribute(value, type): the value (Lua has no types to declare)
function J.annotate(_, value)
    return value
end

function J.Attribute(value)
    return value
end

-- fork(fn, ...) runs fn now; its future's wait() (or jit.wait(future)) gives the results
local Future = {}
Future.__index = Future

function Future:wait()
    return compat.unpack(self.results, 1, self.results.n)
end

function J.fork(fn, ...)
    need_callable("fork", fn)
    return setmetatable({ results = compat.pack(fn(...)) }, Future)
end

function J.wait(future)
    if getmetatable(future) ~= Future then
        raise("tide: jit.wait: expected a future from tide.jit.fork, got " .. type(future))
    end
    return future:wait()
end

-- freeze(m[, preserved_attrs]) and optimize_for_inference(m): m itself, in eval mode as PyTorch
-- requires of a frozen module
function J.freeze(m, preserved_attrs, ...)
    args.no_extra("jit.freeze", 2, ...)
    need_callable("freeze", m)
    if type(m) == "table" and m.__ismodule and m.training then
        raise("tide: jit.freeze: freezing is for modules in eval mode (as PyTorch's); call " ..
            "m:eval() first")
    end
    return m
end

function J.optimize_for_inference(m, ...)
    need_callable("optimize_for_inference", m)
    if type(m) == "table" and m.__ismodule then
        m:eval()
    end
    return m
end

function J.enable_onednn_fusion(on)
    if type(on) ~= "boolean" then
        raise("tide: jit.enable_onednn_fusion: expected true or false, got " .. type(on))
    end
end

return J
