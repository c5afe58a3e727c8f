-- tide.nn.module_hooks: a Module's forward hooks, as PyTorch's register_forward_pre_hook and
-- register_forward_hook: functions a call of the module runs before its forward (they may
-- replace the inputs) and after it (they may replace the output), in registration order; each
-- registration returns a handle whose remove() takes the hook away. A module without hooks is
-- called as before (Module.__call's tail call); the lists live on the instance.
local compat = require("tide._compat")
local raise = require("tide.autograd.raise")

local M = {}

local next_id = 0

local function register(module, list_name, who, fn)
    if type(fn) ~= "function" and not (getmetatable(fn) or {}).__call then
        raise(("tide: %s: expected a function, got %s"):format(who, type(fn)))
    end
    local list = rawget(module, list_name)
    if not list then
        list = {}
        rawset(module, list_name, list)
    end
    next_id = next_id + 1
    local entry = { fn = fn, id = next_id }
    list[#list + 1] = entry
    local handle = { id = entry.id }
    -- h.remove() or h:remove(): the hook is taken off the list (again: nothing)
    function handle.remove()
        local l = rawget(module, list_name)
        for i = #(l or {}), 1, -1 do
            if l[i] == entry then
                table.remove(l, i)
            end
        end
        if l and #l == 0 then
            rawset(module, list_name, nil)
        end
    end
    return handle
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

-- the call of a module that has hooks
function M.call(module, ...)
    local inputs = compat.pack(...)
    local pre = rawget(module, "_forward_pre_hooks")
    for _, h in ipairs(pre and { compat.unpack(pre) } or {}) do -- (a copy: a hook may remove)
        local r = h.fn(module, { compat.unpack(inputs, 1, inputs.n) })
        if r ~= nil then
            if type(r) == "table" and getmetatable(r) == nil then
                inputs = compat.pack(compat.unpack(r))
            else
                inputs = compat.pack(r)
            end
        end
    end
    local outs = compat.pack(module:forward(compat.unpack(inputs, 1, inputs.n)))
    local post = rawget(module, "_forward_hooks")
    if not post then
        return compat.unpack(outs, 1, outs.n)
    end
    local several = outs.n > 1
    local output = several and { compat.unpack(outs, 1, outs.n) } or outs[1]
    local args = { compat.unpack(inputs, 1, inputs.n) }
    for _, h in ipairs({ compat.unpack(post) }) do
        local r = h.fn(module, args, output)
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
