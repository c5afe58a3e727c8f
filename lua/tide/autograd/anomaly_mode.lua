-- tide.autograd.anomaly_mode: PyTorch's anomaly detection, for finding the forward op behind a
-- NaN gradient. With the mode on, every node recorded keeps the Lua traceback of the forward
-- call that made it, and backward raises at the first gradient formula that returns NaN values
-- (with check_nan, the default), naming the op, which argument's gradient, and that traceback;
-- any other error in a node's backward gets the traceback appended. The engine keeps the mode
-- (tide.autograd.engine: one boolean test per node while it is off).
--
--     tide.autograd.detect_anomaly(function()
--         local y = model(x)
--         loss_fn(y, t):backward()   -- tide: backward: the gradient of sqrt (its argument #1)
--     end)                           -- has NaN values; the forward call of sqrt ...
--
-- tide.set_anomaly_enabled(b[, check_nan = true]), tide.is_anomaly_enabled() and
-- tide.is_anomaly_check_nan_enabled() are torch's; autograd.set_detect_anomaly(b[, check_nan])
-- is the function form of torch.autograd.set_detect_anomaly.
local compat = require("tide._compat")
local engine = require("tide.autograd.engine")
local raise = require("tide.autograd.raise")
local args = require("tide.op_args")
local warn = require("tide._warn")

local M = { functions = {} }

local function check_bool(who, name, v)
    if type(v) ~= "boolean" then
        raise(string.format("tide: %s: expected %s to be a boolean, got %s; pass true or false",
            who, name, type(v) == "nil" and "nothing" or type(v)))
    end
end

-- sets the mode; check_nan defaults to true; returns the previous mode
local function set(who, on, check_nan, ...)
    args.no_extra(who, 2, ...)
    check_bool(who, "the mode", on)
    if check_nan == nil then
        check_nan = true
    end
    check_bool(who, "check_nan", check_nan)
    local was = engine.anomaly_mode()
    engine.set_anomaly(on, check_nan)
    return was
end

-- tide.set_anomaly_enabled(b[, check_nan = true])
function M.functions.set_anomaly_enabled(on, check_nan, ...)
    set("set_anomaly_enabled", on, check_nan, ...)
end

function M.functions.is_anomaly_enabled(...)
    args.no_extra("is_anomaly_enabled", 0, ...)
    return (engine.anomaly_mode())
end

-- true while the mode is on and checks gradients for NaN
function M.functions.is_anomaly_check_nan_enabled(...)
    args.no_extra("is_anomaly_check_nan_enabled", 0, ...)
    local _, nan = engine.anomaly_mode()
    return nan
end

-- autograd.set_detect_anomaly(b[, check_nan = true]): PyTorch's called as a function (it sets
-- the mode at once); returns the previous mode
function M.set_detect_anomaly(on, check_nan, ...)
    return set("autograd.set_detect_anomaly", on, check_nan, ...)
end

local function callable(fn)
    return type(fn) == "function" or (getmetatable(fn) or {}).__call ~= nil
end

-- autograd.detect_anomaly([check_nan = true, ]fn, ...): fn(...) with the mode on; the previous
-- mode is back when fn returns or raises (tide.no_grad's form of PyTorch's context manager)
function M.detect_anomaly(first, ...)
    local fn, n, check_nan = first, 1, true
    if type(first) == "boolean" then
        fn, n, check_nan = (...), 2, first
    end
    if not callable(fn) then
        raise("tide: autograd.detect_anomaly: expected a function" .. (n == 2 and
            " after check_nan" or " (or check_nan, then a function)") .. ", got " .. type(fn))
    end
    warn.once("detect_anomaly", "anomaly detection is on (autograd.detect_anomaly): it slows " ..
        "the forward and backward passes down; use it for debugging only")
    local was, was_nan = engine.anomaly_mode()
    engine.set_anomaly(true, check_nan)
    local r = compat.pack(pcall(select(n, first, ...)))
    engine.set_anomaly(was, was_nan)
    if not r[1] then
        error(r[2], 0) -- fn's own error, position and all
    end
    return compat.unpack(r, 2, r.n)
end

return M
