-- tide.log_ranges: PyTorch's logspace: tide.logspace(start, end, steps[, base = 10][, {dtype =
-- "float32", device =, requires_grad =}]), steps values base^e for e evenly spaced from start
-- to end (both included). The exponents and powers are computed in float64 and rounded once
-- to the dtype (an integer dtype truncates, as a cast). Loaded on first use
-- (lua/tide/_lazy_ops.lua).
local core = require("tide.core")
local args = require("tide.op_args")
local raise = require("tide.autograd.raise")

local M = { functions = {} }

local OPTIONS = { "dtype", "device", "requires_grad" }

function M.functions.logspace(start, stop, steps, base, opts, ...)
    local op = "logspace"
    if type(base) == "table" then -- (start, end, steps, opts)
        args.no_extra(op, 4, opts, ...)
        base, opts = nil, base
    else
        args.no_extra(op, 5, ...)
    end
    for _, v in ipairs({ { "start", start }, { "end", stop } }) do
        if type(v[2]) ~= "number" then
            raise(("tide: %s: %s must be a number, got %s"):format(op, v[1], type(v[2])))
        end
    end
    steps = args.integer(op, steps, "steps")
    if steps < 0 then
        raise(("tide: %s: steps = %d; expected an integer >= 0"):format(op, steps))
    end
    if base ~= nil and type(base) ~= "number" then
        raise(("tide: %s: base must be a number, got %s"):format(op, type(base)))
    end
    local o = args.options(op, opts, OPTIONS, "{dtype = \"float64\"}")
    local dtype = o.dtype or core.get_default_dtype()
    if o.requires_grad and not args.FLOAT[dtype] then
        raise(("tide: %s: %s tensors cannot require grad; drop requires_grad"):format(op,
            tostring(dtype)))
    end
    args.check_budget(op, steps, 8, ("%d values"):format(steps), "ask for fewer steps")
    local e = require("tide").linspace(start, stop, steps, { dtype = "float64",
        device = o.device })
    local r = ((base or 10) ^ e):to(dtype)
    return o.requires_grad and r:requires_grad_(true) or r
end

M.names = { "logspace" }
return M
