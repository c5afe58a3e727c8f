--- tide.data.default_convert(data): PyTorch's torch.utils.data.default_convert, the collate_fn
-- of a DataLoader without automatic batching: one sample's values with their structure kept.
-- PyTorch turns NumPy arrays and NumPy scalars into tensors and rebuilds lists, tuples and
-- dicts around the converted values, leaving everything else (tensors, Python numbers,
-- strings) as it is. Lua has no NumPy values, so nothing converts: tensors, numbers, booleans
-- and strings come back as they are (a number stays a number, as a Python number does), and a
-- plain table (no metatable) is rebuilt key by key, nested tables included (a packed sample
-- keeps its n), so the result shares no plain table with data; a table with a metatable is an
-- object, kept as it is. A table seen twice is rebuilt once; a cycle raises.
local raise = require("tide.autograd.raise")

local convert

local function convert_table(t, seen, path)
    if seen[t] == true then
        raise("tide: default_convert: " .. path .. " is a table that contains it (a cycle); " ..
            "a sample must be a tree of tables")
    elseif seen[t] then
        return seen[t]
    end
    seen[t] = true
    local out = {}
    for k, v in pairs(t) do
        out[k] = convert(v, seen, path .. "." .. tostring(k))
    end
    seen[t] = out
    return out
end

function convert(v, seen, path)
    if type(v) == "table" and getmetatable(v) == nil then
        return convert_table(v, seen, path)
    end
    return v
end

return function(data, ...)
    if select("#", ...) > 0 then
        raise("tide: default_convert: expected one value (a sample), got " ..
            (1 + select("#", ...)) .. " arguments")
    end
    return convert(data, {}, "the data")
end
