-- tide.autograd: reverse-mode automatic differentiation.
--
--   registry.lua  the ops autograd differentiates, each declared by one def{...}: its
--                 gradient formula, what the formula reads, what may be freed early
--   formulas.lua  the defs of the ops the binding records
--   engine.lua    the graph: recording (the binding's hook), version checks, backward
--   raise.lua     errors at the user's line
--   anomaly_mode.lua, gradcheck.lua, variable.lua, grad_mode.lua: PyTorch's debugging and
--                 checking tools and legacy names (detect_anomaly, gradcheck, Variable, ...)
--
-- Why Lua: the gradient formulas are a few lines of tensor calls each, readable next to the
-- ops they differentiate and identical on every device; the cost per recorded op is one hook
-- call, paid only by tensors that need grad. nn's hot layers (Linear, Conv2d, cross-entropy)
-- record one fused node each (tide.nn._fused) instead of three or four, through this module's
-- def and record, as a layer of one's own would.
local compat = require("tide._compat")
local core = require("tide.core")
local registry = require("tide.autograd.registry")
local engine = require("tide.autograd.engine")

local M = {}

local Tensor = core.Tensor
local TMT = getmetatable(core.zeros(1))
local set_grad_enabled = core.set_grad_enabled
local getmetatable, type = getmetatable, type
local run_backward = engine.backward
local raise = require("tide.autograd.raise")
local args = require("tide.op_args")
-- tide.pytorch_args requires this module: read it at the call
local function merge(...)
    return require("tide.pytorch_args").merge(...)
end

local function is_tensor(x)
    return getmetatable(x) == TMT
end
M.is_tensor = is_tensor
M.hook = engine.hook
M.register_grad_ready_hook = engine.register_grad_ready_hook
M.queue_callback = engine.queue_callback

-- true when autograd has a backward formula for the op called name (tide.core._ops names)
M.has_formula = registry.has_formula

-- ---- ops of one's own ----

-- def{name =, backward =, reads =, reads_if =, frees =, list =, view =, forward =}: declares an
-- op's gradient (tide.autograd.registry says what each key means), checked here; with a forward,
-- returns the op as a function
function M.def(op)
    local e = registry.def(op)
    if e.forward then
        return engine.define(e.name)
    end
end

-- record(name, out, a, b, c[, d]): out is the result of the op name (declared with def) on a..d,
-- computed without recording; returns the node, where the caller keeps what the formula reads
M.record = engine.record
-- needs_record(a, b, c): true when grad mode is on and one of them requires grad
M.needs_record = engine.needs_record
-- is_view(t): true when t is the result of a view op autograd recorded (view = true)
M.is_view = engine.is_view
-- _inplace_refusal(t): nil when an in-place op on t may be recorded, else {why, fix} (internal)
M._inplace_refusal = engine.inplace_refusal
-- _alias(t), _take_view(t, v, torch_name): an in-place view op's recording (internal)
M._alias, M._take_view = engine.alias, engine.take_view
-- _in_grad_pass(): true inside autograd.grad's pass or backward{inputs =}'s (internal)
M._in_grad_pass = engine.in_grad_pass

-- ---- user API ----

-- PyTorch's parameters of Tensor.backward and autograd.backward after the first, in order
local BACKWARD_OPTIONS = { "gradient", "retain_graph", "create_graph", "inputs" }

-- inputs (backward's option): a tensor or a list of tensors that require grad, as a list
local function backward_inputs(who, v)
    if is_tensor(v) then
        v = { v }
    elseif type(v) ~= "table" then
        raise(("tide: %s: inputs must be a tensor or a list of tensors, got %s"):format(who,
            type(v)))
    end
    if #v == 0 then
        raise(("tide: %s: inputs cannot be empty; list the tensors whose .grad to fill, or " ..
            "leave inputs out to fill every leaf's"):format(who))
    end
    for i = 1, #v do
        local x = v[i]
        if not is_tensor(x) then
            raise(("tide: %s: expected inputs[%d] to be a tensor, got %s"):format(who, i,
                type(x)))
        elseif not x.requires_grad then
            raise(("tide: %s: inputs[%d] does not require grad; create it with " ..
                "{requires_grad = true}"):format(who, i))
        end
    end
    return v
end

-- backward(roots, seeds, opts) for t:backward and autograd.backward: opts checked, then one
-- pass that accumulates into every leaf's .grad, or only into inputs' (opts.inputs)
local function backward(who, roots, seeds, opts)
    for _, k in ipairs({ "retain_graph", "create_graph" }) do
        if opts[k] ~= nil and type(opts[k]) ~= "boolean" then
            raise(("tide: %s: %s must be a boolean, got %s"):format(who, k, type(opts[k])))
        end
    end
    local inputs = opts.inputs
    if inputs ~= nil then
        inputs = backward_inputs(who, inputs)
    end
    return run_backward(roots, seeds, opts.retain_graph, opts.create_graph, inputs)
end

--- t:backward([gradient[, retain_graph[, create_graph[, inputs]]]][, {gradient =,
--- retain_graph =, create_graph =, inputs =}]): PyTorch's Tensor.backward, its parameters by
--- position or by name
function Tensor.backward(self, ...)
    local second = select(2, ...) -- retain_graph, or tide's options after a gradient
    if second ~= nil and type(second) ~= "boolean" and type(second) ~= "table" then
        raise("tide: backward: options must be a table such as {retain_graph = true}, got " ..
            type(second))
    end
    local opts = merge("backward", BACKWARD_OPTIONS, ...)
    opts = opts or {}
    core._check_options(opts, "backward", BACKWARD_OPTIONS)
    backward("backward", { self }, { opts.gradient }, opts)
end

--- tide.autograd.backward(tensors[, grad_tensors[, retain_graph[, create_graph[, inputs]]]][,
--- {grad_tensors =, retain_graph =, create_graph =, inputs =}]): PyTorch's: tensors a tensor or
--- a list, grad_tensors likewise (nil for a one-element tensor), one pass from all of them
function M.backward(tensors, ...)
    local names = { "grad_tensors", "retain_graph", "create_graph", "inputs" }
    local opts = merge("autograd.backward", names, ...) or {}
    if type(opts) ~= "table" then
        raise("tide: autograd.backward: options must be a table such as {retain_graph = " ..
            "true}, got " .. type(opts))
    end
    core._check_options(opts, "autograd.backward", names)
    local roots, seeds = tensors, opts.grad_tensors
    if is_tensor(tensors) then
        roots = { tensors }
        -- its gradient alone, or in a list of one (torch.autograd.backward(t, [g]))
        seeds = (seeds == nil or is_tensor(seeds)) and { seeds } or seeds
    elseif type(tensors) ~= "table" or #tensors == 0 then
        raise("tide: autograd.backward: expected a tensor or a non-empty list of tensors, got " ..
            type(tensors))
    elseif is_tensor(seeds) then
        seeds = { seeds }
    end
    seeds = seeds or {}
    if type(seeds) ~= "table" then
        raise("tide: autograd.backward: grad_tensors must be a tensor or a list of tensors, " ..
            "got " .. type(seeds))
    end
    local copy = {}
    for i = 1, #roots do
        copy[i] = seeds[i]
    end
    backward("autograd.backward", roots, copy, opts)
end

-- fn(...) with gradient recording set to enabled, restored after (also when fn raises)
local function with_grad(enabled, who, fn, ...)
    if type(fn) ~= "function" and not (getmetatable(fn) or {}).__call then
        raise("tide: " .. who .. ": expected a function, got " .. type(fn))
    end
    local prev = set_grad_enabled(enabled)
    local r = compat.pack(pcall(fn, ...))
    set_grad_enabled(prev)
    if not r[1] then
        error(r[2], 0)
    end
    return compat.unpack(r, 2, r.n)
end

-- no_grad() with no argument: PyTorch's decorator (@torch.no_grad() def generate): fn checked,
-- then wrapped to run with recording set to enabled
local function decorator(enabled, who)
    return function(fn)
        if type(fn) ~= "function" and not (getmetatable(fn) or {}).__call then
            raise("tide: " .. who .. ": expected a function, got " .. type(fn))
        end
        return function(...)
            return with_grad(enabled, who, fn, ...)
        end
    end
end

-- the one no_grad (tide.no_grad is this function)
function M.no_grad(...)
    if select("#", ...) == 0 then
        return decorator(false, "no_grad")
    end
    return with_grad(false, "no_grad", ...)
end

function M.enable_grad(...)
    if select("#", ...) == 0 then
        return decorator(true, "enable_grad")
    end
    return with_grad(true, "enable_grad", ...)
end

-- the gradient of a tensor, and its reset (optimizers, zero_grad, Module:to)
function M.get_grad(t)
    return t.grad
end

-- tide.autograd.grad(outputs, inputs[, {grad_outputs =, retain_graph =, create_graph =,
-- allow_unused =}]): the gradients as a list, .grad untouched. Every parameter may also come by
-- name in one table, as PyTorch's grad(outputs=..., inputs=..., grad_outputs=..., ...), and
-- only_inputs (PyTorch's deprecated option) is taken as PyTorch does: true is the only
-- behaviour, false warns that it is ignored
local engine_grad = engine.grad
local GRAD_NAMED = { outputs = true, inputs = true, grad_outputs = true, retain_graph = true,
    create_graph = true, only_inputs = true, allow_unused = true, is_grads_batched = true }
local function strip_only_inputs(opts)
    if type(opts) ~= "table" or getmetatable(opts) == TMT or opts.only_inputs == nil then
        return opts
    end
    if type(opts.only_inputs) ~= "boolean" then
        error("tide: autograd.grad: only_inputs must be a boolean, got " ..
            type(opts.only_inputs) .. " (PyTorch's deprecated option; leave it out)", 3)
    end
    if opts.only_inputs == false then
        require("tide._warn").once("autograd.grad.only_inputs", "autograd.grad: only_inputs " ..
            "argument is deprecated and is ignored now (defaults to true). To accumulate " ..
            "gradient for other parts of the graph, please use tide.autograd.backward")
    end
    local o = {}
    for k, v in pairs(opts) do
        if k ~= "only_inputs" then
            o[k] = v
        end
    end
    return o
end
function M.grad(outputs, inputs, opts, opts2)
    if inputs == nil and opts == nil and type(outputs) == "table" and
        getmetatable(outputs) ~= TMT and outputs[1] == nil and
        (outputs.outputs ~= nil or outputs.inputs ~= nil) then
        -- grad{outputs = ..., inputs = ..., ...}: all by name
        local named, o = outputs, {}
        for k, v in pairs(named) do
            if not GRAD_NAMED[k] then
                error(("tide: autograd.grad: unknown argument '%s'; PyTorch's are outputs, " ..
                    "inputs, grad_outputs, retain_graph, create_graph, only_inputs, " ..
                    "allow_unused, is_grads_batched"):format(tostring(k)), 2)
            end
            if k ~= "outputs" and k ~= "inputs" then
                o[k] = v
            end
        end
        if named.outputs == nil or named.inputs == nil then
            error("tide: autograd.grad: by name it needs both outputs = and inputs =, got only " ..
                (named.outputs == nil and "inputs" or "outputs"), 2)
        end
        return engine_grad(named.outputs, named.inputs, strip_only_inputs(o))
    end
    if opts2 ~= nil then
        return engine_grad(outputs, inputs, opts, strip_only_inputs(opts2))
    end
    return engine_grad(outputs, inputs, strip_only_inputs(opts))
end

-- tide.autograd.next_functions(grad_fn): PyTorch's grad_fn.next_functions (engine.lua)
M.next_functions = engine.next_functions

-- t:retain_grad(): a non-leaf keeps its gradient in t.grad after backward (a no-op on leaves)
function Tensor.retain_grad(self, ...)
    args.no_extra("retain_grad", 1, ...)
    engine.check_requires_grad(self, "retain_grad", "the tensor does not require grad; " ..
        "retain_grad() is for results of ops on tensors created with {requires_grad = true}")
    engine.retain_grad(self)
    return self
end

-- t:register_hook(fn): fn(grad) runs when t's gradient is computed, and may return a tensor to
-- use instead; returns a handle whose remove() unregisters it
function Tensor.register_hook(self, fn, ...)
    args.no_extra("register_hook", 2, ...)
    engine.check_requires_grad(self, "register_hook",
        "cannot register a hook on a tensor that does not require grad")
    if type(fn) ~= "function" and not (getmetatable(fn) or {}).__call then
        raise("tide: register_hook: expected a function, got " .. type(fn))
    end
    return engine.register_hook(self, fn)
end

function M.set_grad(t, g)
    t.grad = g
end

M.raise = require("tide.autograd.raise")
M.is_grad_enabled = core.is_grad_enabled
M.set_grad_enabled = set_grad_enabled
M.FLOAT = engine.FLOAT

core.set_autograd_hook(engine.hook)

-- a lazy field that installs the names `names` of module `mod` (its functions table, else the
-- module itself) on first use of any of them
local function from(mod, names)
    return function()
        local m = require(mod)
        for _, k in ipairs(names) do
            rawset(M, k, (m.functions or {})[k] or m[k])
        end
    end
end

local ANOMALY = { "detect_anomaly", "set_detect_anomaly" }
local GRADCHECK = { "gradcheck", "gradgradcheck" }

-- tide.autograd.functional (jacobian, hessian, vjp, jvp, vhp, hvp) and tide.autograd.Function
-- (PyTorch's custom ops), anomaly mode, gradcheck, and PyTorch's other names (Variable,
-- inference_mode, the grad_mode namespace): loaded on first use
return require("tide._lazy")(M, { functional = "tide.autograd.functional",
    Function = "tide.autograd.function", detect_anomaly = from("tide.autograd.anomaly_mode",
        ANOMALY), set_detect_anomaly = from("tide.autograd.anomaly_mode", ANOMALY),
    gradcheck = from("tide.autograd.gradcheck", GRADCHECK),
    gradgradcheck = from("tide.autograd.gradcheck", GRADCHECK),
    Variable = "tide.autograd.variable", grad_mode = "tide.autograd.grad_mode",
    profiler = "tide.autograd.profiler",
    inference_mode = from("tide.global_modes", { "inference_mode" }) })
