-- tide.global_modes: PyTorch's process-wide switches that ported scripts set and read back:
-- inference mode (tide.inference_mode and is_inference_mode_enabled), deterministic
-- algorithms, float32 matmul precision and the inter-op thread count. Each is kept here, one
-- value a Lua state; none changes a kernel (docs/API.md says why each needs none).
local compat = require("tide._compat")
local autograd = require("tide.autograd")
local args = require("tide.op_args")
local raise = autograd.raise

local M = { functions = {}, names = {} }
local fns = M.functions

local function define(name, fn)
    fns[name] = fn
    M.names[#M.names + 1] = name
end

-- ---- inference mode: no_grad, with the mode readable ----

local inference = false

local function callable(fn)
    return type(fn) == "function" or (getmetatable(fn) or {}).__call ~= nil
end

-- inference_mode([mode = true, ]fn, ...): fn(...) with grad mode off and inference mode on;
-- with mode false, grad mode on and inference mode off (PyTorch's inference_mode(False));
-- both restored after, also when fn raises
local function inference_mode(mode, ...)
    local fn, n = mode, 1
    if type(mode) == "boolean" then
        fn, n = (...), 2
    end
    if not callable(fn) then
        raise("tide: inference_mode: expected a function" .. (n == 2 and " after the mode" or
            " (or a boolean mode, then a function)") .. ", got " .. type(fn))
    end
    local on = mode ~= false
    local prev = inference
    inference = on
    local r = compat.pack(pcall(on and autograd.no_grad or autograd.enable_grad,
        select(n, mode, ...)))
    inference = prev
    if not r[1] then
        error(r[2], 0) -- fn's own error, position and all
    end
    return compat.unpack(r, 2, r.n)
end

-- inference_mode() and inference_mode(mode) (no function after): PyTorch's decorator
-- (@torch.inference_mode() def f), a function that wraps fn to run in that mode
define("inference_mode", function(...)
    local mode = ...
    local n = select("#", ...)
    if n == 0 or (n == 1 and type(mode) == "boolean") then
        return function(fn)
            if not callable(fn) then
                raise("tide: inference_mode: expected a function, got " .. type(fn))
            end
            return function(...)
                return inference_mode(mode ~= false, fn, ...)
            end
        end
    end
    return inference_mode(...)
end)

define("is_inference_mode_enabled", function(...)
    args.no_extra("is_inference_mode_enabled", 0, ...)
    return inference
end)

-- ---- deterministic algorithms: kept, and read back ----

local deterministic, warn_only = false, false

-- use_deterministic_algorithms(mode[, {warn_only = false}])
define("use_deterministic_algorithms", function(mode, opts, ...)
    args.no_extra("use_deterministic_algorithms", 2, ...)
    if type(mode) ~= "boolean" then
        raise("tide: use_deterministic_algorithms: expected mode to be a boolean, got " ..
            type(mode) .. "; call use_deterministic_algorithms(true)")
    end
    local o = args.options("use_deterministic_algorithms", opts, { "warn_only" },
        "{warn_only = true}")
    if o.warn_only ~= nil and type(o.warn_only) ~= "boolean" then
        raise("tide: use_deterministic_algorithms: expected warn_only to be a boolean, got " ..
            type(o.warn_only))
    end
    deterministic, warn_only = mode, o.warn_only == true
end)

define("are_deterministic_algorithms_enabled", function(...)
    args.no_extra("are_deterministic_algorithms_enabled", 0, ...)
    return deterministic
end)

define("is_deterministic_algorithms_warn_only_enabled", function(...)
    args.no_extra("is_deterministic_algorithms_warn_only_enabled", 0, ...)
    return warn_only
end)

-- ---- float32 matmul precision: kept, and read back ----

local PRECISIONS = { highest = true, high = true, medium = true }
local precision = "highest"

define("set_float32_matmul_precision", function(p, ...)
    args.no_extra("set_float32_matmul_precision", 1, ...)
    if not PRECISIONS[p] then
        raise(('tide: set_float32_matmul_precision: expected "highest", "high" or "medium", ' ..
            "got %s"):format(type(p) == "string" and ('"' .. p .. '"') or tostring(p)))
    end
    precision = p
end)

define("get_float32_matmul_precision", function(...)
    args.no_extra("get_float32_matmul_precision", 0, ...)
    return precision
end)

-- ---- inter-op threads: tide has no inter-op pool; the count is kept, and read back ----

local interop = 1

define("set_num_interop_threads", function(n, ...)
    args.no_extra("set_num_interop_threads", 1, ...)
    if not compat.is_integer(n) or n < 1 then
        raise("tide: set_num_interop_threads: expected an integer >= 1, got " .. tostring(n))
    end
    interop = n
end)

define("get_num_interop_threads", function(...)
    args.no_extra("get_num_interop_threads", 0, ...)
    return interop
end)

return M
