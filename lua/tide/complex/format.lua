-- tide.complex.format: tostring(z) of a complex tensor: PyTorch's layout (torch/_tensor_str.py:
-- one formatter over the real parts, one over the imaginary ones, "a+bj" per element), without
-- the "tensor(" around it and with tide's last line, as tostring(t) of a real tensor.
local Complex = require("tide.complex.tensor")

-- LuaJIT's string.format rounds a value exactly halfway up ("%.0f" of 2.5 is "3", "%.4e" of
-- 149.625 "1.4963e+02"); Python's (PyTorch's) and C's round it to even ("2", "1.4962e+02")
local HALF_UP = ("%.0f"):format(2.5) == "3"

-- whether |v| lies exactly halfway between two values of `digits` digits after the point: then
-- 2 |v| 10^digits is an odd integer (digits < 0: places before the point)
local function halfway(a, digits)
    if digits >= 0 then
        local y = a * 2 ^ (digits + 1) -- exact; y >= 2^53 is even
        return y < 2 ^ 53 and y % 2 == 1
    end
    local k = -digits
    local y, five = a / 2 ^ (k - 1), 5 ^ k -- y odd times 5^k, so y < 2^53
    return y < 2 ^ 53 and y % 1 == 0 and five < 2 ^ 53 and y % five == 0 and (y / five) % 2 == 1
end

-- spec ("%.Nf" / "%.Ne") of v with an exact tie rounded to even, as Python's format
local function tie_even(spec, v)
    local s = spec:format(v)
    local n, kind = spec:match("^%%%.(%d+)([ef])$")
    if not n or v == 0 then
        return s
    end
    local a, digits = math.abs(v), tonumber(n)
    if kind == "e" then
        digits = digits - tonumber(("%.17e"):format(a):match("e(.*)$"))
    end
    if not halfway(a, digits) then
        return s
    end
    local _, e = math.frexp(a)
    local down = spec:format((a - 2 ^ (e - 53)) * (v < 0 and -1 or 1)) -- the tie toward zero
    local last = down:match(kind == "e" and "(%d)e" or "(%d)$")
    return tonumber(last) % 2 == 0 and down or s
end

-- Python's "{:.Nf}" / "{:.Ne}" / "{:.0f}" of v (nan and inf as Python spells them)
local function fmt(spec, v)
    if v ~= v then
        return "nan"
    elseif v == math.huge then
        return "inf"
    elseif v == -math.huge then
        return "-inf"
    end
    if HALF_UP then
        return tie_even(spec, v)
    end
    return spec:format(v)
end

-- PyTorch's _Formatter over the values shown
local function formatter(values, o, sci_opt)
    local f = { int_mode = true, sci_mode = false, max_width = 1, precision = o.precision }
    local finite, lo, hi = {}, math.huge, 0
    for _, v in ipairs(values) do
        if v == v and v ~= math.huge and v ~= -math.huge and v ~= 0 then
            finite[#finite + 1] = v
            local a = math.abs(v)
            lo, hi = math.min(lo, a), math.max(hi, a)
        end
    end
    local p = o.precision
    if #finite > 0 then
        for _, v in ipairs(finite) do
            if v ~= math.ceil(v) then
                f.int_mode = false
                break
            end
        end
        if f.int_mode then
            if hi / lo > 1000 or hi > 1e8 then
                f.sci_mode = true
            end
        elseif hi / lo > 1000 or hi > 1e8 or lo < 1e-4 then
            f.sci_mode = true
        end
        for _, v in ipairs(finite) do
            local s
            if f.sci_mode then
                s = #fmt("%." .. p .. "e", v)
            elseif f.int_mode then
                s = #fmt("%.0f", v) + 1
            else
                s = #fmt("%." .. p .. "f", v)
            end
            f.max_width = math.max(f.max_width, s)
        end
    end
    if sci_opt ~= nil then
        f.sci_mode = sci_opt
    end
    return f
end

local function format_one(f, v)
    local s
    if f.sci_mode then
        s = fmt("%." .. f.precision .. "e", v)
    elseif f.int_mode then
        s = fmt("%.0f", v)
        if v == v and v ~= math.huge and v ~= -math.huge then
            s = s .. "."
        end
    else
        s = fmt("%." .. f.precision .. "f", v)
    end
    return string.rep(" ", f.max_width - #s) .. s
end

local function value_str(fr, fi, pair)
    local re = format_one(fr, pair[1])
    local im = (format_one(fi, pair[2]) .. "j"):gsub("^%s+", "")
    local c = im:sub(1, 1)
    if c == "+" or c == "-" then
        return re .. im
    end
    return re .. "+" .. im
end

-- the corners of ri for a summary: each complex dim longer than 2 * edge cut to its first and
-- last edge items on the device, so that only those cross to the host; cut[d] marks those dims
local function corners(ri, depth, edge)
    local cut = {}
    for d = 1, depth do
        local n = ri:size(d)
        if n > 2 * edge then
            ri = require("tide").cat({ ri:narrow(d, 1, edge), ri:narrow(d, n - edge + 1, edge) }, d)
            cut[d] = true
        end
    end
    return ri, cut
end

-- t: nested tables of {re, im} pairs (the corners' totable()), dims level..depth of them; false
-- put in the "..." place of each cut dim (after its first edge items)
local function summarized(t, level, depth, edge, cut)
    if level > depth then
        return t
    end
    local out = {}
    for i = 1, #t do
        if cut[level] and i == edge + 1 then
            out[#out + 1] = false
        end
        out[#out + 1] = summarized(t[i], level + 1, depth, edge, cut)
    end
    return out
end

local function gather(t, depth, re, im)
    if depth == 0 then
        re[#re + 1], im[#im + 1] = t[1], t[2]
        return
    end
    for i = 1, #t do
        if t[i] then
            gather(t[i], depth - 1, re, im)
        end
    end
end

local function render(t, depth, indent, fr, fi, o)
    if depth == 0 then
        return value_str(fr, fi, t)
    end
    if depth == 1 then
        local width = fr.max_width + 2 + fi.max_width + 1
        local per_line = math.max(1, math.floor((o.linewidth - indent) / width))
        local data = {}
        for i = 1, #t do
            data[i] = t[i] and value_str(fr, fi, t[i]) or " ..."
        end
        local lines = {}
        for i = 1, #data, per_line do
            lines[#lines + 1] = table.concat(data, ", ", i, math.min(#data, i + per_line - 1))
        end
        return "[" .. table.concat(lines, ",\n" .. string.rep(" ", indent + 1)) .. "]"
    end
    local slices = {}
    for i = 1, #t do
        slices[i] = t[i] and render(t[i], depth - 1, indent + 1, fr, fi, o) or "..."
    end
    return "[" .. table.concat(slices, "," .. string.rep("\n", depth - 1) ..
        string.rep(" ", indent + 1)) .. "]"
end

return function(z)
    local ri = z._ri
    local o, sci = require("tide.print_options").current()
    local depth = ri:dim() - 1
    local numel = ri:numel() / 2
    local body
    if numel == 0 then
        body = "[]"
    else
        local data
        if numel > o.threshold then
            local small, cut = corners(ri:detach(), depth, o.edgeitems)
            data = summarized(small:to("cpu"):totable(), 1, depth, o.edgeitems, cut)
        else
            data = ri:detach():to("cpu"):totable()
        end
        local re, im = {}, {}
        gather(data, depth, re, im)
        local fr, fi = formatter(re, o, sci), formatter(im, o, sci)
        body = render(data, depth, 0, fr, fi, o)
    end
    return ("%s\n[tide.Tensor of shape %s, %s, %s]"):format(body,
        Complex.shape_str(Complex.complex_sizes(z)), z.dtype, tostring(ri.device))
end
