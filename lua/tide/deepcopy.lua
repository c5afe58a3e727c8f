-- tide.deepcopy: Python's copy.deepcopy as PyTorch scripts use it (a DQN's target network, an
-- EMA copy of a model, a snapshot of the best weights): v with its tables and tensors copied,
-- shared structure kept (a tensor or table reached twice is copied once: tied weights stay
-- tied, cycles end). A tensor copies as PyTorch's: a leaf with the same values, dtype, device
-- and requires_grad, its .grad copied too; a tensor computed by a recorded op raises, as
-- PyTorch's. Devices, strings and numbers are kept; metatables are shared, and so is a table
-- that is a class (its own __index), so a copied Module is an instance of the same class.
-- Functions are shared, but for a Lua function in a copied table that closes over a copied
-- table or tensor (a hook over self): it is copied with those upvalues rebound (rebind).
-- Loaded on first use (lua/tide/_lazy_ops.lua).
local core = require("tide.core")
local autograd = require("tide.autograd")
local PARAMS = require("tide.nn._parameters")

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
    PARAMS[c] = PARAMS[t] -- a Parameter's copy is a Parameter (a frozen one still registers)
    return c
end

local copy
local FUNCTION_SLOTS = {} -- memo's key for the function values met in copied tables

-- a Lua function that closes over tables the copy copied (a hook over self, Python's bound
-- method self._hook, whose deepcopy copies its __self__) is copied with those upvalues pointing
-- at their copies; its other upvalues stay shared with the original's, and a function that
-- closes over none of them (C functions, tide's own) is shared as it is
local load_chunk = loadstring or load -- luacheck: ignore (5.1's name)
local function copied(v, memo)
    return (type(v) == "table" or is_tensor(v)) and memo[v] ~= nil and memo[v] ~= v
end
local function rebind(f, memo)
    if memo[f] ~= nil then
        return memo[f]
    end
    local info = debug.getinfo(f, "Su")
    local found = false
    for i = 1, info.nups or 0 do
        local _, v = debug.getupvalue(f, i)
        if copied(v, memo) then
            found = true
            break
        end
    end
    local ok, chunk = false, nil
    if found and info.what ~= "C" then
        ok, chunk = pcall(string.dump, f)
    end
    if not ok then
        memo[f] = f
        return f
    end
    local c = load_chunk(chunk)
    for i = 1, info.nups do
        local _, v = debug.getupvalue(f, i)
        if copied(v, memo) then
            debug.setupvalue(c, i, memo[v])
        elseif debug.upvaluejoin then -- the same variable as the original's
            debug.upvaluejoin(c, i, f, i)
        else -- Lua 5.1: its value
            debug.setupvalue(c, i, v)
        end
    end
    memo[f] = c
    return c
end

local function copy_table(t, memo, path)
    local c = {}
    memo[t] = c
    for k, v in next, t do
        local kc = type(k) == "table" and copy(k, memo, path) or k
        c[kc] = copy(v, memo, path .. "." .. tostring(k))
        if type(v) == "function" then -- looked at once the whole copy is made (rebind)
            local slots = memo[FUNCTION_SLOTS]
            slots[#slots + 1] = { c, kc, v }
        end
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
        local c = copy_table(v, memo, path)
        if PARAMS[v] then -- a complex Parameter (a table over its real pair) copies as one
            PARAMS[c] = PARAMS[v]
        end
        return c
    end
    return v -- functions, classes, devices and other userdata, strings, numbers, booleans
end

-- tide.deepcopy(v): the copy
function M.functions.deepcopy(v, ...)
    require("tide.op_args").no_extra("deepcopy", 1, ...)
    local memo = { [FUNCTION_SLOTS] = {} }
    local c = copy(v, memo, "the value")
    local slots = memo[FUNCTION_SLOTS]
    memo[FUNCTION_SLOTS] = nil -- (not a copied table's)
    for _, slot in ipairs(slots) do
        rawset(slot[1], slot[2], rebind(slot[3], memo))
    end
    return c
end

M.names = { "deepcopy" }
return M
