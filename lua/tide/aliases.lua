-- tide.aliases: PyTorch's other names for tide's ops, the same functions (method, in-place
-- twin and tide.X): numpy's arcsin ... arctan2, and absolute, negative, multiply, divide,
-- subtract, greater, greater_equal, less, less_equal, not_equal; and the in-place twins of the
-- comparisons and logical ops (eq_ ... ge_, logical_and_ ...: the 0/1 result written into the
-- tensor in its own dtype, as PyTorch's).
local core = require("tide.core")
local args = require("tide.op_args")
local autograd = require("tide.autograd")

local Tensor = core.Tensor
local M = { functions = {}, names = {} }

local ALIASES = {
    arcsin = "asin", arccos = "acos", arctan = "atan", arcsinh = "asinh", arccosh = "acosh",
    arctanh = "atanh", arctan2 = "atan2", absolute = "abs", negative = "neg", multiply = "mul",
    divide = "div", subtract = "sub", greater = "gt", greater_equal = "ge", less = "lt",
    less_equal = "le", not_equal = "ne",
}
M.of = ALIASES -- alias -> the op's own name (its errors carry that one)

-- the 0/1 of a comparison of x (and other) in x's float dtype, recorded with a zero gradient
-- to both, as PyTorch's in-place comparisons: x:gt_(y) with y requiring grad leaves x in the
-- graph, not silently detached
local function zeros_of(t)
    return core.is_tensor(t) and core.zeros(t.shape, { dtype = t.dtype, device = t.device }) or nil
end
local compared = autograd.def {
    name = "compared",
    forward = function(_, r)
        return r:clone()
    end,
    backward = function(nd)
        return nil, zeros_of(nd[2]), zeros_of(nd[3])
    end,
}

-- x:op_(other): x takes op's 0/1 (or bool) result in its own dtype
local function written_back(x, r, other)
    r = r:to(x.dtype)
    if autograd.needs_record(x, other) and r.is_floating_point and r:is_floating_point() then
        r = compared(r, x, other)
    end
    return x:copy_(r)
end
for _, op in ipairs({ "eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or",
    "logical_xor" }) do
    local name = op .. "_"
    Tensor[name] = function(x, other, ...)
        args.no_extra(name, 2, ...)
        return written_back(x, x[op](x, other), other)
    end
end
function Tensor.logical_not_(x, ...)
    args.no_extra("logical_not_", 1, ...)
    return written_back(x, x:logical_not())
end

local sorted = {}
for alias in pairs(ALIASES) do
    sorted[#sorted + 1] = alias
end
table.sort(sorted)
for _, alias in ipairs(sorted) do
    local name = ALIASES[alias]
    Tensor[alias] = Tensor[name]
    Tensor[alias .. "_"] = Tensor[name .. "_"]
    M.functions[alias] = core[name] or Tensor[name]
    M.names[#M.names + 1] = alias
end

return M
