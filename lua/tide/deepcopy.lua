-- tide.deepcopy: Python's copy.deepcopy as PyTorch scripts use it (a DQN's target network, an
-- EMA copy of a model, a snapshot of the best weights): v with its tables and tensors copied,
-- shared structure kept (a tensor or table reached twice is copied once: tied weights stay
-- tied, cycles end). A tensor copies as PyTorch's: a leaf with the same values, dtype, device
-- and requires_grad, its .grad copied too; a tensor computed by a recorded op raises, as
-- PyTorch's. Functions, devices, strings and numbers are shared or kept; metatables are
-- shared, and so is a table that is a class (its own __index), so a copied Module is an
-- instance of the same class. Loaded on first use (lua/tide/_lazy_ops.lua).
local core = require("tide.core")
local autograd = require("tide.autograd")

local raise = autograd.raise
local is_tensor = core.is_tensor

local M = { functions = {} }

local function copy_tensor(t, path)
    if t.grad_fn ~= nil then
        raise(("tide: deepcopy: %s is the result of %s, not a leaf; only leaves copy (as " ..
            "in PyTorch): copy t:detach() and set requires_grad on the copy"):format(path,
            tostring(t.grad_fn)))
    end
    local c = autograd.no_grad(function()
        return t:detach():clone()
    end)
    if t.requires_grad then
        c:requires_grad_(true)
    end
    local g = autograd.get_grad(t)
    if g then
        autograd.set_grad(c, g:detach():clone())
    end
    return c
end

local copy

local function copy_table(t, memo, path)
    local c = {}
    memo[t] = c
    for k, v in next, t do
        local kc = type(k) == "table" and copy(k, memo, path) or k
        c[kc] = copy(v, memo, path .. "." .. tostring(k))
    end
    local mt = getmetatable(t)
    if mt ~= nil then
        setmetatable(c, mt)
    end
    return c
end

function copy(v, memo, path)
    local seen = memo[v]
    if seen ~= nil then
        return seen
    end
    if is_tensor(v) then
        local c = copy_tensor(v, path)
        memo[v] = c
        return c
    elseif type(v) == "table" and rawget(v, "__index") == nil then
        return copy_table(v, memo, path)
    end
    return v -- functions, classes, devices and other userdata, strings, numbers, booleans
end

-- tide.deepcopy(v): the copy
function M.functions.deepcopy(v, ...)
    require("tide.op_args").no_extra("deepcopy", 1, ...)
    return copy(v, {}, "the value")
end

M.names = { "deepcopy" }
return M
