-- tide.nn.module_hooks: a Module's hooks, as PyTorch's register_forward_pre_hook,
-- register_forward_hook and register_full_backward_hook: functions a call of the module runs
-- before its forward (they may replace the inputs), after it (they may replace the output), and
-- in backward with the gradients of its inputs and outputs; in registration order; each
-- registration returns a handle whose remove() takes the hook away. A module without hooks is
-- called as before (Module.__call's tail call); the lists live on the instance.
local compat = require("tide._compat")
local raise = require("tide.autograd.raise")

local M = {}

local next_id = 0

-- module[list_name] is the list of the hooks themselves, in order (PyTorch's
-- module._forward_pre_hooks.values(): `for _, hook in ipairs(m._forward_pre_hooks)`), and
-- module[list_name .. "_ids"] their ids, position for position (one hook may be registered twice)
local function take(module, list_name, i)
    local l, ids = rawget(module, list_name), rawget(module, list_name .. "_ids")
    table.remove(l, i)
    table.remove(ids, i)
    if #l == 0 then
        rawset(module, list_name, nil)
        rawset(module, list_name .. "_ids", nil)
    end
end

local function register(module, list_name, who, fn)
    if type(fn) ~= "function" and not (getmetatable(fn) or {}).__call then
        raise(("tide: %s: expected a function, got %s"):format(who, type(fn)))
    end
    local list = rawget(module, list_name)
    if not list then
        list = {}
        rawset(module, list_name, list)
        rawset(module, list_name .. "_ids", {})
    end
    local ids = rawget(module, list_name .. "_ids")
    next_id = next_id + 1
    local id = next_id
    list[#list + 1] = fn
    ids[#ids + 1] = id
    local handle = { id = id }
    -- h.remove() or h:remove(): the hook is taken off the list (again: nothing)
    function handle.remove()
        local l = rawget(module, list_name .. "_ids")
        for i = #(l or {}), 1, -1 do
            if l[i] == id then
                take(module, list_name, i)
                return
            end
        end
    end
    return handle
end

-- the module-global hooks (PyTorch's nn.modules.module.register_module_forward_pre_hook,
-- register_module_forward_hook, register_module_full_backward_hook): every module's call runs
-- them, before the module's own; M.globals holds their lists as a module holds its own (empty
-- when there is none, so Module.__call looks at it with one next())
M.globals = {}

function M.register_module_forward_pre_hook(fn)
    return register(M.globals, "_forward_pre_hooks", "register_module_forward_pre_hook", fn)
end

function M.register_module_forward_hook(fn)
    return register(M.globals, "_forward_hooks", "register_module_forward_hook", fn)
end

function M.register_module_full_backward_hook(fn)
    return register(M.globals, "_backward_hooks", "register_module_full_backward_hook", fn)
end

-- the global hooks of a kind, then the module's own: a copy (a hook may remove one)
local function hooks_of(module, list_name)
    local g, own = rawget(M.globals, list_name), rawget(module, list_name)
    local l = {}
    for _, h in ipairs(g or {}) do
        l[#l + 1] = h
    end
    for _, h in ipairs(own or {}) do
        l[#l + 1] = h
    end
    return l
end

-- M.remove_hook(module, list_name, fn): takes the hook fn (the first entry that is fn) off the
-- module's list; true when it was there (tide.nn.utils.prune's hooks, found by identity)
function M.remove_hook(module, list_name, fn)
    for i, h in ipairs(rawget(module, list_name) or {}) do
        if rawequal(h, fn) then
            take(module, list_name, i)
            return true
        end
    end
    return false
end

-- m:register_forward_pre_hook(fn): fn(module, inputs) before forward, inputs the list of the
-- call's arguments; a non-nil result replaces them (a list, or one value)
function M.register_forward_pre_hook(module, fn)
    return register(module, "_forward_pre_hooks", "register_forward_pre_hook", fn)
end

-- m:register_forward_hook(fn): fn(module, inputs, output) after forward (output: forward's
-- result, or the list of its results when it returns several); a non-nil result replaces it
function M.register_forward_hook(module, fn)
    return register(module, "_forward_hooks", "register_forward_hook", fn)
end

-- m:register_full_backward_hook(fn): fn(module, grad_input, grad_output) in backward, once the
-- gradients with respect to the module's tensor inputs are known (grad_input: one per argument,
-- nil for those that need none; grad_output: one per result); a non-nil result replaces
-- grad_input (a list), for a module with one input that needs grad. With no input that needs
-- grad, fn runs when the outputs' gradients are known, grad_input all nil (as PyTorch's).
function M.register_full_backward_hook(module, fn)
    return register(module, "_backward_hooks", "register_full_backward_hook", fn)
end

-- m:register_backward_hook(fn), PyTorch's deprecated non-full hook: its grad_input is the last
-- autograd node's. On a module without parameters (a ReLU, a pooling: guided backprop's hooks)
-- that is the module's input gradient, so it is the full hook there, with PyTorch's warning; on
-- one with parameters it holds their gradients too, which the full hook does not: it raises
function M.register_backward_hook(module, fn)
    if #module:parameters() > 0 then
        raise(("tide: register_backward_hook: the deprecated non-full backward hook of a module " ..
            "with parameters (%s) gives its last operation's gradients, weights' included, " ..
            "which tide does not build; use register_full_backward_hook(fn) (grad_input[1] is " ..
            "the gradient of the module's first input)"):format(module.__name))
    end
    require("tide._warn").once("register_backward_hook", "register_backward_hook is " ..
        "deprecated (PyTorch's words: use register_full_backward_hook); on this module without " ..
        "parameters it is the full hook")
    return register(module, "_backward_hooks", "register_backward_hook", fn)
end

-- the largest integer key of t ({g1, nil, g3} counts 3, as PyTorch's tuple (g1, None, g3))
local function maxn(t)
    local n = 0
    for k in pairs(t) do
        if type(k) == "number" and k > n then
            n = k
        end
    end
    return n
end

-- PyTorch's state dict hooks, Module.state_dict and load_state_dict run them:
-- m:_register_state_dict_hook(fn): fn(module, state_dict, prefix, local_metadata) once the
-- state dict holds the module's keys (prefix: "layer1.0."); it may edit the table, and a non-nil
-- result of the module whose state_dict() was called replaces it
function M._register_state_dict_hook(module, fn)
    return register(module, "_state_dict_hooks", "_register_state_dict_hook", fn)
end

-- m:_register_load_state_dict_pre_hook(fn[, with_module]): fn(state_dict, prefix,
-- local_metadata, strict, missing_keys, unexpected_keys, error_msgs) before the load reads a key
-- (state_dict: the load's own copy), with the module first when with_module is true
function M._register_load_state_dict_pre_hook(module, fn, with_module)
    local hook = fn
    if with_module and (type(fn) == "function" or (getmetatable(fn) or {}).__call) then
        hook = function(...)
            return fn(module, ...)
        end
    end
    return register(module, "_load_state_dict_pre_hooks", "_register_load_state_dict_pre_hook",
        hook)
end

-- m:register_load_state_dict_post_hook(fn): fn(module, incompatible_keys) after the load, before
-- a strict load's check of the keys; it may edit incompatible_keys.missing_keys and
-- .unexpected_keys in place, and must return nil
function M.register_load_state_dict_post_hook(module, fn)
    return register(module, "_load_state_dict_post_hooks", "register_load_state_dict_post_hook",
        fn)
end

local function is_tensor(v)
    return require("tide.core").is_tensor(v)
end

-- the inputs that need grad wrapped in an identity view of their own, whose gradient is the
-- module's alone; the outputs' and those inputs' gradient hooks gather grad_output and
-- grad_input and run the module's backward hooks once both are known
local function wire_backward(module, inputs, run)
    local core = require("tide.core")
    if not core.is_grad_enabled() then
        return run(inputs)
    end
    local wrapped, n_wrapped = {}, 0
    for i = 1, inputs.n do
        local x = inputs[i]
        if is_tensor(x) and x.requires_grad then
            inputs[i] = x:view_as(x)
            wrapped[i], n_wrapped = true, n_wrapped + 1
        end
    end
    local outs = run(inputs)
    local grad_output, grad_input, seen_in = {}, {}, 0
    local function fire()
        local result
        for _, h in ipairs(hooks_of(module, "_backward_hooks")) do
            -- each hook its own copy, as PyTorch's tuples: one the hook keeps stays as given
            local gi, go = {}, {}
            for k, v in pairs(grad_input) do
                gi[k] = v
            end
            for k, v in pairs(grad_output) do
                go[k] = v
            end
            local r = h(module, gi, go)
            if r ~= nil then
                -- (one value, not a list, stands for the one input that needs grad: tide's)
                local count = type(r) == "table" and getmetatable(r) == nil and
                    (r.n or maxn(r)) or nil
                if count and count ~= inputs.n then
                    raise(("tide: register_full_backward_hook: the hook returned %d grad_input, " ..
                        "expected %d (PyTorch's \"Backward hook returned an invalid number of " ..
                        "grad_input\")"):format(count, inputs.n))
                end
                if n_wrapped ~= 1 then
                    raise("tide: register_full_backward_hook: a hook may replace grad_input " ..
                        "only for a module with one input that needs grad")
                end
                result = r
                for i in pairs(wrapped) do
                    grad_input[i] = type(r) == "table" and getmetatable(r) == nil and r[i] or r
                end
            end
        end
        return result
    end
    for k = 1, outs.n do
        local o = outs[k]
        if is_tensor(o) and o.requires_grad then
            o:register_hook(function(g)
                grad_output[k] = g
                if n_wrapped == 0 then
                    fire()
                end
            end)
        end
    end
    for i in pairs(wrapped) do
        inputs[i]:register_hook(function(g)
            grad_input[i] = g
            seen_in = seen_in + 1
            if seen_in == n_wrapped then
                seen_in = 0
                local r = fire()
                if r ~= nil then
                    return grad_input[i]
                end
            end
        end)
    end
    return outs
end

-- the call of a module that has hooks
function M.call(module, ...)
    local inputs = compat.pack(...)
    for _, h in ipairs(hooks_of(module, "_forward_pre_hooks")) do
        local r = h(module, { compat.unpack(inputs, 1, inputs.n) })
        if r ~= nil then
            if type(r) == "table" and getmetatable(r) == nil then
                inputs = compat.pack(compat.unpack(r))
            else
                inputs = compat.pack(r)
            end
        end
    end
    local function run(args)
        return compat.pack(module:forward(compat.unpack(args, 1, args.n)))
    end
    local outs
    if rawget(module, "_backward_hooks") or rawget(M.globals, "_backward_hooks") then
        outs = wire_backward(module, inputs, run)
    else
        outs = run(inputs)
    end
    local post = hooks_of(module, "_forward_hooks")
    if #post == 0 then
        return compat.unpack(outs, 1, outs.n)
    end
    local several = outs.n > 1
    local output = several and { compat.unpack(outs, 1, outs.n) } or outs[1]
    local args = { compat.unpack(inputs, 1, inputs.n) }
    for _, h in ipairs(post) do
        local r = h(module, args, output)
        if r ~= nil then
            output = r
        end
    end
    if several and type(output) == "table" and getmetatable(output) == nil then
        return compat.unpack(output)
    end
    return output
end

return M
