-- tide.missing_dtypes: PyTorch's casts to dtypes tide does not have, t:char() (int8) and
-- t:short() (int16), which raise naming tide's dtypes and the cast to use instead, rather than
-- reading nil. Loaded on first use (lua/tide/_lazy_ops.lua).
local core = require("tide.core")
local args = require("tide.op_args")
local raise = require("tide.autograd.raise")

local Tensor = core.Tensor

local M = { functions = {} }

local DTYPES = "float32, float64, float16, bfloat16, int32, int64, uint8 and bool"

local function missing(name, dtype)
    Tensor[name] = function(t, ...)
        args.no_extra(name, 1, ...)
        args.check(name, t)
        raise(("tide: %s: tide has no %s dtype (its dtypes are %s); use :int() (int32) " ..
            "instead, or :byte() (uint8) for values in 0..255"):format(name, dtype, DTYPES))
    end
end
missing("char", "int8")
missing("short", "int16")

M.names = {}
return M
