-- tide.broadcasting: PyTorch's broadcasting helpers. tide.broadcast_shapes(s1, s2, ...) (shapes
-- as tables, or integers as 1-D shapes) gives the broadcast shape as a table;
-- tide.broadcast_tensors(t1, t2, ...) gives each tensor expanded to it (views, so gradients
-- flow back through expand), as many results, or a list for a list. Loaded on first use
-- (lua/tide/_lazy_ops.lua).
local core = require("tide.core")
local args = require("tide.op_args")
local raise = require("tide.autograd.raise")
local same_device = require("tide._same_device")
local compat = require("tide._compat")
local broadcast = require("tide._broadcast_rule").shape

local M = { functions = {} }
local F = M.functions

-- s as a list of sizes: a table of integers >= 0, or one integer (a 1-D shape)
local function shape_arg(op, s, pos)
    if type(s) == "number" then
        s = { s }
    elseif type(s) ~= "table" or core.is_tensor(s) then
        raise(("tide: broadcast_shapes: argument #%d must be a shape (a table of sizes) or " ..
            "an integer, got %s"):format(pos, core.is_tensor(s) and "a tensor" or type(s)))
    end
    args.check_list(op, s, "a shape")
    local out = {}
    for i = 1, #s do
        local v = args.integer(op, s[i], "a size")
        if v < 0 then
            raise(("tide: %s: size %d of argument #%d is negative; sizes are >= 0")
                :format(op, v, pos))
        end
        out[i] = v
    end
    return out
end

-- tide.broadcast_shapes(s1, s2, ...): the shape tensors of these shapes broadcast to
function F.broadcast_shapes(...)
    local shapes = {}
    for i = 1, select("#", ...) do
        shapes[i] = shape_arg("broadcast_shapes", (select(i, ...)), i)
    end
    return broadcast("broadcast_shapes", shapes)
end

-- tide.broadcast_tensors(t1, t2, ...) or ({t1, t2, ...}): each expanded to the common shape
function F.broadcast_tensors(...)
    local op = "broadcast_tensors"
    local n, ts = select("#", ...), { ... }
    local as_list = n == 1 and type(ts[1]) == "table" and not core.is_tensor(ts[1])
    if as_list then
        ts = args.check_list(op, ts[1], "the list of tensors")
        n = #ts
    end
    local shapes = {}
    for i = 1, n do
        if not core.is_tensor(ts[i]) then
            raise(("tide: %s: expected a tensor at argument #%d, got %s"):format(op, i,
                type(ts[i])))
        end
        shapes[i] = ts[i]:size()
    end
    same_device(op, compat.unpack(ts, 1, n))
    local shape = broadcast(op, shapes)
    local out = {}
    for i = 1, n do
        out[i] = ts[i]:expand(shape)
    end
    if as_list then
        return out
    end
    return compat.unpack(out, 1, n)
end

M.names = { "broadcast_shapes", "broadcast_tensors" }
return M
