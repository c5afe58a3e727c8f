-- tide.nn._resize_check: size / scale_factor of the upsampling wrappers (F.upsample*,
-- UpsamplingNearest2d / Bilinear2d) checked before F.interpolate builds its per-position index
-- tables: positive finite values, and an output (tensor and tables) within the memory budget
local autograd = require("tide.autograd")
local args = require("tide.op_args")

local raise = autograd.raise

-- v (a number or a list) as a list of n
local function each(v, n)
    if type(v) == "table" and not autograd.is_tensor(v) then
        return v
    end
    local r = {}
    for i = 1, n do
        r[i] = v
    end
    return r
end

local function finite_positive(v)
    return type(v) == "number" and v > 0 and v < math.huge
end

return function(who, input, size, scale_factor)
    if not autograd.is_tensor(input) or input:dim() < 3 then
        return -- F.interpolate names what is wrong
    end
    local nsp = input:dim() - 2
    local elems, tables = input:size(1) * input:size(2), 0
    if size ~= nil then
        for _, s in ipairs(each(size, nsp)) do
            if not finite_positive(s) then
                raise(("tide: %s: size must be positive integers, got %s"):format(who,
                    tostring(s)))
            end
            elems, tables = elems * s, tables + s
        end
    elseif scale_factor ~= nil then
        for i, f in ipairs(each(scale_factor, nsp)) do
            if not finite_positive(f) then
                raise(("tide: %s: scale_factor must be positive finite numbers, got %s")
                    :format(who, tostring(f)))
            end
            local s = math.floor((input:size(2 + i) or 1) * f)
            elems, tables = elems * s, tables + s
        end
    end
    -- the output's elements, and the index and weight tables (a few Lua values per position)
    args.check_budget(who, elems * 8 + tables * 64, 1, "the output",
        "pass a smaller size or scale_factor")
end
