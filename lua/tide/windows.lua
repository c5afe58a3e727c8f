-- tide.windows: the window functions of signal processing, PyTorch 1.13's hann_window,
-- hamming_window, blackman_window, bartlett_window and kaiser_window: n points of the window
-- over 0..n-1 (symmetric) or of the window of n + 1 points without its last (periodic, the
-- default, as for a spectrogram's frames). Computed in float64 on the device and rounded once
-- to the dtype (float32 unless opts says otherwise).
local core = require("tide.core")
local raise = require("tide.autograd.raise")
local args = require("tide.op_args")
local compat = require("tide._compat")

local M = { functions = {} }
local F = M.functions

local COMMON = { "periodic", "dtype", "device", "requires_grad" }

-- PyTorch's positional parameters after n (periodic, then the window's own: hamming_window(n,
-- periodic, alpha, beta), kaiser_window(n, periodic, beta)) and a last options table, as one
-- options table; a parameter given both ways raises
local function gather(op, own, ...)
    local nargs = select("#", ...)
    local opts = nargs > 0 and select(nargs, ...) or nil
    if type(opts) == "table" then
        nargs = nargs - 1
    else
        opts = nil
    end
    if nargs == 0 then
        return opts
    end
    local names = { "periodic", compat.unpack(own or {}) }
    if nargs > #names then
        raise(("tide: %s: takes at most %d positional parameters after window_length (%s), got %d")
            :format(op, #names, table.concat(names, ", "), nargs))
    end
    local o = {}
    for k, v in pairs(opts or {}) do
        o[k] = v
    end
    for i = 1, nargs do
        local v = select(i, ...)
        if v ~= nil then
            if o[names[i]] ~= nil then
                raise(("tide: %s: %s given both by position and in the options table")
                    :format(op, names[i]))
            end
            o[names[i]] = v
        end
    end
    return o
end

-- the options of window `op` (its own keys after the common ones) and the length n
local function window_args(op, n, opts, own, example)
    n = args.integer(op, n, "window_length")
    if n < 0 then
        raise(("tide: %s: window_length must be >= 0, got %d"):format(op, n))
    end
    local known = { compat.unpack(COMMON) }
    for _, k in ipairs(own or {}) do
        known[#known + 1] = k
    end
    opts = args.options(op, opts, known, example)
    local dtype = opts.dtype or core.get_default_dtype()
    if not args.FLOAT[dtype] then
        raise(("tide: %s: a window needs a floating-point dtype, got %s"):format(op, dtype))
    end
    local periodic = opts.periodic
    if periodic == nil then
        periodic = true
    elseif type(periodic) ~= "boolean" then
        raise(("tide: %s: periodic must be a boolean, got %s"):format(op, type(periodic)))
    end
    return n, opts, periodic
end

-- the window: shape(k, m) over the float64 positions k = 0..n-1 of a symmetric window of m
-- points (m = n + 1 when periodic)
local function window(op, n, own, example, shape, ...)
    local len, o, periodic = window_args(op, n, gather(op, own, ...), own, example)
    local make = { dtype = o.dtype or core.get_default_dtype(), device = o.device }
    local r
    if len <= 1 then
        r = core.ones({ len }, make)
    else
        local m = periodic and len + 1 or len
        local k = core.arange(0, len, { dtype = "float64", device = o.device })
        r = shape(k, m, o):to(make.dtype)
    end
    return o.requires_grad and r:requires_grad_(true) or r
end

local TWO_PI = 2 * math.pi

local function number_option(op, o, key, default)
    local v = o[key]
    if v == nil then
        return default
    elseif type(v) ~= "number" then
        raise(("tide: %s: %s must be a number, got %s"):format(op, key, type(v)))
    end
    return v
end

-- alpha - beta cos(2 pi k / (m - 1))
function F.hamming_window(n, ...)
    return window("hamming_window", n, { "alpha", "beta" }, "{alpha = 0.54, beta = 0.46}",
        function(k, m, o)
            local alpha = number_option("hamming_window", o, "alpha", 0.54)
            local beta = number_option("hamming_window", o, "beta", 0.46)
            return (k * (TWO_PI / (m - 1))):cos():mul(-beta):add(alpha)
        end, ...)
end

-- 1/2 - 1/2 cos(2 pi k / (m - 1))
function F.hann_window(n, ...)
    return window("hann_window", n, nil, "{periodic = false}", function(k, m)
        return (k * (TWO_PI / (m - 1))):cos():mul(-0.5):add(0.5)
    end, ...)
end

-- 0.42 - 0.5 cos(2 pi k / (m - 1)) + 0.08 cos(4 pi k / (m - 1))
function F.blackman_window(n, ...)
    return window("blackman_window", n, nil, "{periodic = false}", function(k, m)
        local t = k * (TWO_PI / (m - 1))
        return t:cos():mul(-0.5):add((t * 2):cos():mul(0.08)):add(0.42)
    end, ...)
end

-- 1 - |2k / (m - 1) - 1|
function F.bartlett_window(n, ...)
    return window("bartlett_window", n, nil, "{periodic = false}", function(k, m)
        return (k * (2 / (m - 1))):sub(1):abs():neg():add(1)
    end, ...)
end

-- I0(beta sqrt(1 - ((k - a) / a)^2)) / I0(beta), a = (m - 1) / 2
function F.kaiser_window(n, ...)
    return window("kaiser_window", n, { "beta" }, "{beta = 12}", function(k, m, o)
        local beta = number_option("kaiser_window", o, "beta", 12)
        local a = (m - 1) / 2
        local r = (k - a) / a
        local inside = (r * r):neg():add(1):clamp(0, nil):sqrt():mul(beta)
        return inside:i0():div(core.full({}, beta, { dtype = "float64", device = k.device }):i0())
    end, ...)
end

M.names = { "hann_window", "hamming_window", "blackman_window", "bartlett_window",
    "kaiser_window" }
return M
