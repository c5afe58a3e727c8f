-- tide.nn._args3d: what the 3-D layers share (_functional_3d.lua and Conv3d, MaxPool3d, ...):
-- a size given as an integer or {d, h, w}, and the printing of such a value in a module's
-- extra_repr (PyTorch's fields, Lua's literals: {3, 3, 3}, true, nil), the pools' arguments and
-- the convolutions' extra_repr.
local compat = require("tide._compat")
local core = require("tide.core")
local autograd = require("tide.autograd")
local raise = autograd.raise

local M = {}

-- a value as an error message or a module's print shows it
function M.show(v)
    if autograd.is_tensor(v) then
        return "a tensor"
    end
    if type(v) ~= "table" then
        return tostring(v)
    end
    local parts, n = {}, 0
    for _ in pairs(v) do
        n = n + 1
    end
    for i = 1, #v do
        parts[i] = type(v[i]) == "table" and "{...}" or tostring(v[i])
    end
    if n > #v then -- keys beyond the list: shown as such, not silently dropped
        parts[#parts + 1] = "..."
    end
    return "{" .. table.concat(parts, ", ") .. "}"
end

-- v (default when nil) as {d, h, w}: an integer for all three or a table of three integers,
-- each >= min
function M.triple(v, default, who, what, min)
    if v == nil then
        v = default
    end
    local t
    if compat.is_integer(v) then
        t = { v, v, v }
    elseif type(v) == "table" and not autograd.is_tensor(v) then
        local n = 0
        for _ in pairs(v) do
            n = n + 1
        end
        if n == 3 and compat.is_integer(v[1]) and compat.is_integer(v[2]) and
            compat.is_integer(v[3]) then
            t = { v[1], v[2], v[3] }
        end
    end
    if not t then
        raise(string.format("tide: %s: expected %s to be an integer or {d, h, w}, got %s", who,
            what, M.show(v)))
    end
    if t[1] < min or t[2] < min or t[3] < min then
        raise(string.format("tide: %s: expected %s to be an integer >= %d, got %s", who, what,
            min, M.show(v)))
    end
    return t
end

-- the options of a 3-D pool given as (kernel_size, stride, padding) or (kernel_size, opts),
-- checked against the names `known` and with kernel_size, stride and padding checked as triples
function M.pool_options(who, known, kernel_size, stride, padding)
    local o
    if type(stride) == "table" and stride[1] == nil then
        core._check_options(stride, who, known)
        o = stride
    else
        o = { stride = stride, padding = padding }
    end
    M.triple(kernel_size, nil, who, "kernel_size", 1)
    M.triple(o.stride, kernel_size, who, "stride", 1)
    M.triple(o.padding, 0, who, "padding", 0)
    return o
end

-- an adaptive pool's extra_repr: output_size, a hole (nil) in {d, h, w} shown as such, as
-- PyTorch's None
function M.output_size_repr(o)
    if type(o) == "table" then
        o = "{" .. tostring(o[1]) .. ", " .. tostring(o[2]) .. ", " .. tostring(o[3]) .. "}"
    end
    return "output_size=" .. tostring(o)
end

-- the convolutions' extra_repr (Conv1d/2d/3d, ConvTranspose1d/2d/3d), PyTorch's _ConvNd one:
-- the channels, kernel_size and stride, then padding, dilation, output_padding, groups, bias
-- and padding_mode where set to other than the default
local CONV_DEFAULTS = { { "padding", 0 }, { "dilation", 1 }, { "output_padding", 0 } }
function M.conv_repr(m)
    local s = string.format("%d, %d, kernel_size=%s, stride=%s", m.in_channels,
        m.out_channels, M.show(m.kernel_size), M.show(m.stride))
    for _, f in ipairs(CONV_DEFAULTS) do
        local t, v = m[f[1]], f[2]
        local differs = type(t) ~= "table" and t ~= nil and t ~= v -- "same", or a number
        for i = 1, type(t) == "table" and #t or 0 do
            differs = differs or t[i] ~= v
        end
        if differs then
            s = s .. ", " .. f[1] .. "=" .. M.show(t)
        end
    end
    if m.groups ~= 1 then
        s = s .. ", groups=" .. m.groups
    end
    if not m.bias then
        s = s .. ", bias=false"
    end
    if m.padding_mode and m.padding_mode ~= "zeros" then
        s = s .. ", padding_mode=" .. m.padding_mode
    end
    return s
end

-- "2x3x4" and "1,1,1": sizes and geometry as the 2-D layers' messages write them
function M.by(t)
    return table.concat(t, "x")
end

function M.commas(t)
    return table.concat(t, ",")
end

return M
